"""The interval sweeps of the DuckDB engine (JOINUSING by an overlap join, SUMMARIZEBYUSING by a
sweep) give exactly what the elementary-segment split gives on the Python engine, on random
relations: INT, DATE, TIMESTAMP and FLOAT points, short and long intervals (overlapping many
others), meeting, duplicate and unbounded ones, one group or several, empty inputs; and long
intervals in one group cost no more than short ones."""

from __future__ import annotations

import datetime as dt
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sira
import sira.engine.aggregation as aggregation
import sira.engine.joins as joins
from sira import INT, Relation
from sira.intervals import DATEINTERVAL, FLOATINTERVAL, INTINTERVAL, TIMESTAMPINTERVAL, Interval

from conftest import ENGINES, evaluated_without, every_sequence_split

_DAY0 = dt.date(2020, 1, 1)
_TS0 = dt.datetime(2020, 1, 1, 12, 0, 0)

#: point type -> (interval type, the point at an integer offset)
POINTS = {
    "int": (INTINTERVAL, lambda i: i),
    "date": (DATEINTERVAL, lambda i: _DAY0 + dt.timedelta(days=i)),
    "timestamp": (TIMESTAMPINTERVAL, lambda i: _TS0 + dt.timedelta(microseconds=i)),
    "float": (FLOATINTERVAL, lambda i: i / 4 - 2.5),  # not ordinal: split at boundaries alone
}

# short intervals (1-3 points) and long ones (over most of the range), some unbounded
_offsets = st.tuples(st.integers(0, 30), st.one_of(st.integers(1, 3), st.integers(10, 40)),
                     st.integers(0, 9))


def _rows(keys: int):
    row = st.tuples(st.integers(0, keys - 1), st.integers(0, 3), _offsets)
    return st.lists(row, max_size=12)


def _relation(kind, rows, value="v"):
    itype, point = POINTS[kind]
    body = [{"k": k, value: v,
             "during": Interval(point(b), None if open_ == 0 else point(b + length))}
            for k, v, (b, length, open_) in rows]
    return Relation.from_rows({"k": INT, value: INT, "during": itype}, body)


_ENGINE = []


def _duckdb():
    if not _ENGINE:
        from sira_duckdb import DuckDBEngine
        _ENGINE.append(DuckDBEngine())
    return _ENGINE[0]


def _split_join(text, relvars):
    """The Python engine's JOINUSING by the pointwise split (its sweep turned off)."""
    return evaluated_without(text, relvars, (joins, "overlap_attribute"))


def _split_summary(text, relvars):
    return evaluated_without(text, relvars, (aggregation, "sweep_summary"))


# ------------------------------------------------------------------------------ JOINUSING

JOINS = [
    "joinusing(r, q, (during))",  # key (k), both sides with other attributes
    "joinusing(project(r, (k, during)), project(rename(q, (k, j)), (j, during)), (during))",
    "joinusing(project(r, (v, during)), project(q, (w, during)), (during))",  # no key at all
    "joinusing(r, rename(q, (w, v)), (during))",  # key (k, v)
]


@pytest.mark.parametrize("kind", sorted(POINTS))
@settings(max_examples=12, deadline=None)
@given(st.integers(1, 3), st.data())
def test_duckdb_joinusing_equals_the_split(kind, keys, data):
    left, right = data.draw(_rows(keys)), data.draw(_rows(keys))
    relvars = {"r": _relation(kind, left), "q": _relation(kind, right, "w")}
    engine = _duckdb()
    for text in JOINS:
        expected = _split_join(text, relvars)
        assert engine.evaluate(text, relvars) == expected, text
        assert sira.evaluate(text, relvars) == expected, text


#: JOINs of three operands, pointwise on the interval
THREE_WAY = [
    "join(r, q, rename(q2, (v, u)))",  # key (k)
    "joinusing(r, q, rename(q2, (v, u)), (during))",
    "join(project(r, (v, during)), project(q, (w, during)), project(q2, (during)))",  # no key
    "join(r, project(q, (k, w)), rename(q2, (v, u)))",  # the first step shares no interval
]


@pytest.mark.parametrize("kind", sorted(POINTS))
@settings(max_examples=8, deadline=None)
@given(st.integers(1, 3), st.data())
def test_a_join_of_three_operands_step_by_step_equals_the_split(kind, keys, data):
    """A JOIN of three operands sharing the interval is a chain of two-operand JOINs, each an
    overlap join (``sira.algebra.derived.binary_joins``): what the split of all three gave."""
    relvars = {"r": _relation(kind, data.draw(_rows(keys))),
               "q": _relation(kind, data.draw(_rows(keys)), "w"),
               "q2": _relation(kind, data.draw(_rows(keys)))}
    for text in THREE_WAY:
        expected = evaluated_without(text, relvars, (joins, "binary_joins"))
        assert sira.evaluate(text, relvars) == expected, text
        assert _duckdb().evaluate(text, relvars) == expected, text


@settings(max_examples=15, deadline=None)
@given(_rows(2), _rows(2), st.lists(_offsets, min_size=12, max_size=12))
def test_a_join_packed_on_an_operand_s_own_interval_too_equals_the_split(left, right, xs):
    """JOIN and JOINUSING whose result is packed on the joined interval and on an interval only
    one operand has (x): the overlap join's result is packed again on both."""
    itype, point = POINTS["int"]
    r = _relation("int", left)
    r = Relation.from_rows({"k": INT, "v": INT, "during": itype, "x": itype}, [
        dict(zip(r.heading.names, t), x=Interval(point(b), point(b + n)))
        for t, (b, n, _) in zip(r.body, xs)])
    relvars = {"r": r, "q": _relation("int", right, "w")}
    for text in ("joinusing(r, q, (during, x))", "join(r, q)", "joinusing(r, q, (during))"):
        expected = _split_join(text, relvars)
        assert sira.evaluate(text, relvars) == expected, text
        assert _duckdb().evaluate(text, relvars) == expected, text


def test_joinusing_of_long_intervals_in_one_group_is_not_split():
    """3,000 intervals of length 100,000 in one group, each overlapping all others: the split
    makes millions of pieces; the overlap join packs each side to a handful of intervals."""
    n = 3000
    left = Relation.from_rows({"k": INT, "v": INT, "during": INTINTERVAL},
                              [{"k": 0, "v": i % 7, "during": Interval(i, i + 100_000)}
                               for i in range(n)])
    right = Relation.from_rows({"k": INT, "w": INT, "during": INTINTERVAL},
                               [{"k": 0, "w": i % 5, "during": Interval(i + 50, i + 100_050)}
                                for i in range(n)])
    relvars = {"r": left, "q": right}
    text = "joinusing(r, q, (during))"
    out = _duckdb().evaluate(text, relvars, max_tuples=10_000)
    assert out == sira.evaluate(text, relvars) and len(out) == 35


# ------------------------------------------------------------------------------ SUMMARIZEBYUSING

SUMMARIES = [
    "summarizebyusing(r, (k, during), (t(plus(v)) n(plus(1)) hi(max(v)) lo(min(v))"
    " a(and(gt(v, 1))) o(or(eq(v, 3)))), (during))",
    "summarizebyusing(r, (during), (hi(max(v)) lo(min(v))), (during))",
    "summarizebyusing(project(r, (k, during)), (during), (n(plus(1))), (during))",
    "summarizebyusing(r, (k, during), (a(and(gt(v, 1))) o(or(eq(v, 3)))), (during))",
    "summarizebyusing(r, (k, during), (p(mult(minus(v, 1))) hi(max(v))), (during))",
]


@pytest.mark.parametrize("kind", sorted(POINTS))
@settings(max_examples=12, deadline=None)
@given(st.integers(1, 3), st.data())
def test_duckdb_summarizebyusing_equals_the_split(kind, keys, data):
    relvars = {"r": _relation(kind, data.draw(_rows(keys)))}
    engine = _duckdb()
    for text in SUMMARIES:
        expected = _split_summary(text, relvars)
        assert engine.evaluate(text, relvars) == expected, text


@pytest.mark.skipif("spark" not in ENGINES, reason="Spark is not available here")
@settings(max_examples=2, deadline=None)
@given(st.sampled_from(sorted(POINTS)), st.integers(1, 3), st.data())
def test_spark_summarizebyusing_equals_the_split(kind, keys, data):
    """Spark's integer-sum sweep (sira_spark.aggregation._swept) and its segment tree for max,
    min, and, or and a product of INTs (``_tree``), against the Python engine's split."""
    relvars = {"r": _relation(kind, data.draw(_rows(keys)))}
    for text in ("summarizebyusing(r, (k, during), (t(plus(v)) n(plus(1))), (during))",
                 *SUMMARIES):
        expected = _split_summary(text, relvars)
        assert sira.evaluate(text, relvars, engine="spark") == expected, text


def _long_intervals(n):
    return Relation.from_rows({"k": INT, "v": INT, "during": INTINTERVAL},
                              [{"k": 0, "v": (i * 7919) % 1000,
                                "during": Interval(i, i + 100_000)} for i in range(n)])


def test_summarizebyusing_max_of_long_intervals_in_one_group_is_not_split():
    r = _long_intervals(3000)
    text = "summarizebyusing(r, (k, during), (hi(max(v)) lo(min(v))), (during))"
    out = _duckdb().evaluate(text, {"r": r}, max_tuples=100_000)
    assert out == sira.evaluate(text, {"r": r})


@pytest.mark.skipif("spark" not in ENGINES, reason="Spark is not available here")
def test_spark_summarizebyusing_max_of_long_intervals_is_not_split():
    """The segment tree (sira_spark.aggregation._tree) over 600 intervals that each cover
    every later one's begin: the split would cut 180,000 pieces, past max_tuples; the tree
    joins 600 intervals with a few blocks each. Every group cut into buckets, every level
    of the tree broadcast (the join of a large group's top levels)."""
    import sira_spark.aggregation as spark_aggregation
    r = _long_intervals(600)
    text = ("summarizebyusing(r, (k, during), (hi(max(v)) lo(min(v)) t(plus(v)) "
            "a(and(gt(v, 1))) o(or(eq(v, 3)))), (during))")
    expected = sira.evaluate(text, {"r": r})
    saved = spark_aggregation._BROADCAST_LEVEL
    try:
        for level in (saved, 0):
            spark_aggregation._BROADCAST_LEVEL = level
            with every_sequence_split():
                out = sira.evaluate(text, {"r": r}, engine="spark", max_tuples=50_000)
            assert out == expected, level
    finally:
        spark_aggregation._BROADCAST_LEVEL = saved


#: IINTERSECT kept as [largest begin, least end) and a count of empty intervals (the Python
#: sweep's _Intersection, the engines' segment trees): empty results, an empty interval among
#: the values (y, where also and during do not meet), unbounded ends
INTERSECTIONS = [
    "summarizebyusing(extend(r, (y(iintersect(also, during)))), (k, during),"
    " (x(iintersect(y)) m(max(v))), (during))",
    "summarizebyusing(r, (during), (x(iintersect(also))), (during))",
]


def _with_also(kind, rows):
    """``_relation`` with a second interval ``also`` of the same type, drawn from the same
    numbers: short and long, unbounded where v = 2 and the tuple's ``during`` is bounded."""
    itype, point = POINTS[kind]

    def also(v, b, length, open_):
        begin = (v * 7 + b * 3 + open_) % 31
        return Interval(point(begin), None if v == 2 and open_ else
                        point(begin + 1 + (v * length + open_) % 20))
    body = [{"k": k, "v": v,
             "during": Interval(point(b), None if open_ == 0 else point(b + length)),
             "also": also(v, b, length, open_)} for k, v, (b, length, open_) in rows]
    return Relation.from_rows({"k": INT, "v": INT, "during": itype, "also": itype}, body)


@pytest.mark.parametrize("kind", sorted(POINTS))
@settings(max_examples=12, deadline=None)
@given(st.integers(1, 3), st.data())
def test_summarizebyusing_iintersect_sweeps_equal_the_split(kind, keys, data):
    relvars = {"r": _with_also(kind, data.draw(_rows(keys)))}
    for text in INTERSECTIONS:
        expected = _split_summary(text, relvars)
        assert sira.evaluate(text, relvars) == expected, text
        assert _duckdb().evaluate(text, relvars) == expected, text


@pytest.mark.skipif("spark" not in ENGINES, reason="Spark is not available here")
@pytest.mark.parametrize("kind", ["int", "timestamp"])
def test_spark_summarizebyusing_iintersect_equals_the_split(kind):
    """Spark's segment tree keeps IINTERSECT as its parts (sira_spark.aggregation._parts),
    every group cut into buckets, against the Python engine's split: 16 random groups of 7
    tuples in one relation (a few Spark queries, not one per example)."""
    rnd = random.Random(11)
    rows = [(k, rnd.randint(0, 3), (rnd.randint(0, 30), rnd.choice([1, 2, 3, 15, 40]),
                                    rnd.randint(0, 9)))
            for k in range(16) for _ in range(7)]
    relvars = {"r": _with_also(kind, rows)}
    with every_sequence_split():
        for text in INTERSECTIONS:
            assert sira.evaluate(text, relvars, engine="spark") == \
                _split_summary(text, relvars), text


# ------------------------------------------------------------------------------ by coverage

#: set operations and semijoins pointwise on one attribute: by coverage on the Python engine
COVERED = [
    "minususing(r, q2, (during))",
    "intersectusing(r, q2, (during))",
    "xminususing(r, q2, (during))",
    "intersectusing(r, q2, project(r, (k, v, during)), (during))",
    "xminususing(r, q2, project(r, (k, v, during)), (during))",
    "semijoinusing(r, q, (during))",  # key (k); the right side's w does not count
    "semiminususing(r, q, (during))",
    "semijoinusing(r, project(q, (w, during)), (during))",  # no key at all
    "semiminususing(r, rename(q, (w, v)), (during))",  # key (k, v)
]


def _split_everywhere(text, relvars):
    """The Python engine's result by the pointwise split (its coverage paths, and LEFTJOIN's
    through them, turned off)."""
    import sira.engine.setops as setops
    return evaluated_without(text, relvars, (setops, "by_coverage"),
                             (joins, "semi_by_coverage"), (joins, "leftjoin_parts"))


@pytest.mark.parametrize("kind", sorted(POINTS))
@settings(max_examples=12, deadline=None)
@given(st.integers(1, 3), st.data())
def test_coverage_operators_equal_the_split(kind, keys, data):
    left, right = data.draw(_rows(keys)), data.draw(_rows(keys))
    relvars = {"r": _relation(kind, left), "q": _relation(kind, right, "w"),
               "q2": _relation(kind, right)}
    for text in COVERED:
        expected = _split_everywhere(text, relvars)
        assert sira.evaluate(text, relvars) == expected, text
        assert _duckdb().evaluate(text, relvars) == expected, text  # by its overlap join


def _with_second_interval(kind, rows):
    """Rows with a second interval attribute ``y``, matched by equality under USING (during):
    [v, v+1), or unbounded when v is 0."""
    itype, point = POINTS[kind]
    body = [{"k": k, "y": Interval(point(v), None if v == 0 else point(v + 1)),
             "during": Interval(point(b), None if open_ == 0 else point(b + length))}
            for k, v, (b, length, open_) in rows]
    return Relation.from_rows({"k": INT, "y": itype, "during": itype}, body)


@pytest.mark.parametrize("kind", sorted(POINTS))
@settings(max_examples=12, deadline=None)
@given(st.integers(1, 3), st.data())
def test_a_second_shared_interval_attribute_is_matched_by_equality(kind, keys, data):
    """Found by the differential test: DuckDB ran SEMIJOINUSING(L, R, (x)) as a JOIN with
    PROJECT(R, shared), and that PROJECT packed the other shared interval attribute too, so a
    left tuple whose y equalled a right tuple's y before the packing was lost."""
    relvars = {"r": _with_second_interval(kind, data.draw(_rows(keys))),
               "q": _with_second_interval(kind, data.draw(_rows(keys)))}
    for text in ("semijoinusing(r, q, (during))", "semiminususing(r, q, (during))"):
        expected = _split_everywhere(text, relvars)
        assert sira.evaluate(text, relvars) == expected, text
        assert _duckdb().evaluate(text, relvars) == expected, text


LEFTJOINS = [
    "leftjoin(r, q, (w(int(-1))))",  # key (k)
    "leftjoinusing(r, q, (w(int(-1))), (during))",
    "leftjoin(r, project(q, (w, during)), (w(int(0))))",  # no key: v stays the left's own
    "leftjoin(r, rename(q, (w, v)), ())",  # key (k, v): the right adds nothing
]


@pytest.mark.parametrize("kind", sorted(POINTS))
@settings(max_examples=10, deadline=None)
@given(st.integers(1, 3), st.data())
def test_a_leftjoin_by_the_overlap_join_equals_the_split(kind, keys, data):
    """LEFTJOIN pointwise on one interval is its JOIN (an overlap join) and its SEMIMINUS (by
    coverage) extended with the defaults: what the split gave, on every engine but Spark
    (``test_spark_overlap_join_equals_the_python_engine``); a default reading the interval
    sees the SEMIMINUS's packed pieces."""
    relvars = {"r": _relation(kind, data.draw(_rows(keys))),
               "q": _relation(kind, data.draw(_rows(keys)), "w"),
               "y": _with_second_interval(kind, data.draw(_rows(keys)))}
    texts = LEFTJOINS + ["leftjoin(project(r, (k, during)), y, (y(during)))"]
    for text in texts:
        expected = _split_everywhere(text, relvars)
        assert sira.evaluate(text, relvars) == expected, text
        assert _duckdb().evaluate(text, relvars) == expected, text


def test_a_leftjoin_s_default_equal_to_a_joined_value_packs_the_pieces_that_meet():
    """DuckDB packs only the rests found in both parts of LEFTJOIN (``_packed_union``): a
    default equal to a value the join made meets that join's piece and is one tuple with it;
    other rests are kept as their parts made them."""
    r = Relation.from_rows({"k": INT, "during": INTINTERVAL},
                           [(1, Interval(0, 10)), (2, Interval(0, 10)), (3, Interval(4, None))])
    q = Relation.from_rows({"k": INT, "w": INT, "during": INTINTERVAL},
                           [(1, 5, Interval(3, 6)), (2, 7, Interval(3, 6)), (3, 5, Interval(0, 6)),
                            (3, 5, Interval(8, 9))])
    text = "leftjoin(r, q, (w(int(5))))"
    expected = Relation.from_rows(
        {"k": INT, "w": INT, "during": INTINTERVAL},
        [(1, 5, Interval(0, 10)),  # [0, 3) and [6, 10) by default, [3, 6) joined: one tuple
         (2, 5, Interval(0, 3)), (2, 7, Interval(3, 6)), (2, 5, Interval(6, 10)),
         (3, 5, Interval(4, None))])
    assert sira.evaluate(text, {"r": r, "q": q}) == expected
    engine = _duckdb()
    assert engine.evaluate(text, {"r": r, "q": q}) == expected
    assert "__sira" in engine.sql(text, {"r": r, "q": q}) and \
        "_shared" in engine.sql(text, {"r": r, "q": q})


def test_the_differential_test_s_semijoin_with_two_shared_intervals():
    both = Relation.from_rows({"k": INT, "x": INTINTERVAL, "y": INTINTERVAL},
                              [(0, Interval(0, None), Interval(0, 1)),
                               (0, Interval(0, None), Interval(0, None))])
    relvars = {"l": both, "r": both}
    for run in (sira.evaluate, _duckdb().evaluate):
        assert run("semijoinusing(l, r, (x))", relvars) == both
        assert len(run("semiminususing(l, r, (x))", relvars)) == 0


def test_set_operations_of_long_intervals_in_one_group_are_not_split():
    """4,000 overlapping intervals of one group, holes punched every other point: the split
    made 8 million pieces (36 s) for a result of 4,000 tuples; max_tuples=20,000 would refuse
    any split. Coverage cuts each packed interval at the holes only."""
    n = 4000
    r = Relation.from_rows({"k": INT, "v": INT, "during": INTINTERVAL},
                           [(0, 0, Interval(i, i + n)) for i in range(n)])
    q = Relation.from_rows({"k": INT, "v": INT, "during": INTINTERVAL},
                           [(0, 0, Interval(2 * i, 2 * i + 1)) for i in range(n)])
    rx = Relation.from_rows({"k": INT, "v": INT, "during": INTINTERVAL},
                            [(0, i, Interval(0, n)) for i in range(n)])
    qx = Relation.from_rows({"k": INT, "w": INT, "during": INTINTERVAL},
                            [(0, i, Interval(0, 2 * n)) for i in range(n)])
    relvars = {"r": r, "q": q, "rx": rx, "qx": qx}
    minus = sira.evaluate("minususing(r, q, (during))", relvars, max_tuples=20_000)
    assert len(minus) == n - 1 and Interval(1, 2) in {t["during"] for t in minus.to_rows()}
    both = sira.evaluate("intersectusing(r, q, (during))", relvars, max_tuples=20_000)
    assert len(both) == n
    kept = sira.evaluate("semijoinusing(rx, qx, (during))", relvars, max_tuples=20_000)
    assert kept == rx
    assert len(sira.evaluate("semiminususing(rx, qx, (during))", relvars,
                             max_tuples=20_000)) == 0
    for text in ("semijoinusing(rx, qx, (during))", "semiminususing(rx, q, (during))"):
        assert (_duckdb().evaluate(text, relvars, max_tuples=20_000)
                == sira.evaluate(text, relvars)), text


@pytest.mark.skipif("duckdb" not in ENGINES, reason="duckdb is not installed")
def test_duckdb_sweeps_find_island_boundaries_hand_checked():
    """The sweep keeps the points where coverage enters or leaves what the operator keeps:
    overlapping, adjacent, duplicated (once projected) and unbounded intervals, and islands
    that meet across the operands, hand-checked on DuckDB and the Python engine."""
    iv = Interval
    r = Relation.from_rows({"k": INT, "v": INT, "during": INTINTERVAL}, [
        (0, 1, iv(0, 4)), (0, 2, iv(2, 6)), (0, 3, iv(6, 8)), (0, 4, iv(0, 4)),
        (1, 1, iv(10, None)), (1, 2, iv(12, 14)), (2, 1, iv(0, 2))])
    q = Relation.from_rows({"k": INT, "v": INT, "during": INTINTERVAL}, [
        (0, 1, iv(8, 9)), (0, 2, iv(3, 5)), (1, 1, iv(0, 11)), (1, 2, iv(20, 30)),
        (3, 1, iv(5, 6))])
    relvars = {"r": r, "q": q}

    def rows(text):
        got = _duckdb().evaluate(text, relvars)
        assert got == sira.evaluate(text, relvars), text
        return sorted((t["k"], t["during"].begin, t["during"].end) for t in got.to_rows())

    a, b = "project(r, (k, during))", "project(q, (k, during))"
    assert rows(f"unionusing({a}, {b}, (during))") == [
        (0, 0, 9), (1, 0, None), (2, 0, 2), (3, 5, 6)]
    assert rows(f"minususing({a}, {b}, (during))") == [
        (0, 0, 3), (0, 5, 8), (1, 11, 20), (1, 30, None), (2, 0, 2)]
    assert rows(f"intersectusing({a}, {b}, (during))") == [(0, 3, 5), (1, 10, 11), (1, 20, 30)]
    assert rows(f"xminususing({a}, {b}, (during))") == [
        (0, 0, 3), (0, 5, 9), (1, 0, 10), (1, 11, 20), (1, 30, None), (2, 0, 2), (3, 5, 6)]
    # operands read as they are, not packed: up to three intervals of one operand cover a
    # point (both operands' counts share one HUGEINT in the sweep), and one is open
    relvars["r"] = Relation.from_rows({"k": INT, "during": INTINTERVAL}, [
        (0, iv(0, 4)), (0, iv(1, 6)), (0, iv(2, 3)), (1, iv(5, None)), (1, iv(6, 8))])
    relvars["q"] = Relation.from_rows({"k": INT, "during": INTINTERVAL}, [
        (0, iv(1, 5)), (0, iv(2, 7)), (0, iv(3, 4)), (1, iv(0, 6)), (1, iv(7, 9))])
    assert rows("unionusing(r, q, (during))") == [(0, 0, 7), (1, 0, None)]
    assert rows("minususing(r, q, (during))") == [(0, 0, 1), (1, 6, 7), (1, 9, None)]
    assert rows("intersectusing(r, q, (during))") == [(0, 1, 6), (1, 5, 6), (1, 7, 9)]
    assert rows("xminususing(r, q, (during))") == [
        (0, 0, 1), (0, 6, 7), (1, 0, 5), (1, 6, 7), (1, 9, None)]


@pytest.mark.skipif("spark" not in ENGINES, reason="Spark is not available here")
@pytest.mark.parametrize("split", [False, True])
def test_spark_pack_islands_hand_checked(split):
    """PACK on Spark (``sira_spark.packing._local_islands``: one window marks the starts, a
    lead over the starts alone ends each island, the last at its group's greatest end):
    several islands per group, meeting intervals merged, a duplicate once projected, equal
    begins with other ends, an open end in a group's last island, and a group whose last
    island's only end is open; one bucket, or every sequence cut into buckets (islands
    carried across them)."""
    iv = Interval
    r = Relation.from_rows({"k": INT, "v": INT, "during": INTINTERVAL}, [
        (0, 1, iv(0, 3)), (0, 2, iv(0, 5)), (0, 3, iv(5, 6)), (0, 4, iv(8, 9)),
        (0, 5, iv(8, 9)), (0, 6, iv(10, 12)), (1, 1, iv(0, 2)), (1, 2, iv(4, None)),
        (1, 3, iv(6, 7)), (2, 1, iv(3, 4)), (2, 2, iv(1, 2)), (3, 1, iv(0, 2)),
        (3, 2, iv(5, None))])
    text = "pack(project(r, (k, during)), (during))"
    with every_sequence_split(split):
        got = sira.evaluate(text, {"r": r}, engine="spark")
    assert got == sira.evaluate(text, {"r": r})
    assert sorted((t["k"], t["during"].begin, t["during"].end) for t in got.to_rows()) == [
        (0, 0, 6), (0, 8, 9), (0, 10, 12), (1, 0, 2), (1, 4, None), (2, 1, 2), (2, 3, 4),
        (3, 0, 2), (3, 5, None)]


SPARK_TEXTS = ["joinusing(r, q, (during))", "join(r, rename(q2, (v, w)))",
               "semijoinusing(r, q, (during))", "semiminususing(r, q, (during))",
               "leftjoin(r, q, (w(int(-1))))",
               "semijoinusing(r, project(q, (w, during)), (during))",
               "semiminususing(r, rename(q, (w, v)), (during))"]


@pytest.mark.skipif("spark" not in ENGINES, reason="Spark is not available here")
@settings(max_examples=2, deadline=None)
@given(st.sampled_from(sorted(POINTS)), st.integers(1, 3), st.data())
def test_spark_overlap_join_equals_the_python_engine(kind, keys, data):
    """Spark's JOIN pointwise on one interval (sira_spark.joins.overlap_join), and SEMIJOIN and
    SEMIMINUS through it, against the Python engine (and its split)."""
    left, right = data.draw(_rows(keys)), data.draw(_rows(keys))
    relvars = {"r": _relation(kind, left), "q": _relation(kind, right, "w"),
               "q2": _relation(kind, right)}
    for text in SPARK_TEXTS:
        expected = _split_everywhere(text, relvars)
        assert sira.evaluate(text, relvars, engine="spark") == expected, text


def _sequence(kind, rows):
    """A relation whose only attribute is the interval (not packed: overlapping, meeting)."""
    itype, point = POINTS[kind]
    return Relation.from_rows({"during": itype}, [
        {"during": Interval(point(b), None if open_ == 0 else point(b + length))}
        for b, length, open_ in rows])


@pytest.mark.skipif("spark" not in ENGINES, reason="Spark is not available here")
@settings(max_examples=3, deadline=None)
@given(st.sampled_from(sorted(POINTS)), st.lists(_offsets, min_size=1, max_size=40),
       st.lists(_offsets, max_size=30))
def test_spark_sequences_split_across_buckets_equal_the_python_engine(kind, left, right):
    """PACK, the pointwise set operators and SUMMARIZEBYUSING's counts of relations whose only
    attribute is the interval, on Spark, cut into buckets of their order
    (sira_spark.packing._pack_islands and running_sequence; every sequence split here, however
    short): ties, long intervals reaching
    over several buckets, open ends and coverage carried from bucket to bucket, against the
    Python engine."""
    relvars = {"r": _sequence(kind, left), "q": _sequence(kind, right),
               "v": sira.evaluate("extend(r, (v(int(1))))", {"r": _sequence(kind, left)})}
    with every_sequence_split():
        for text in ("pack(r, (during))", "unionusing(r, q, (during))",
                     "minususing(r, q, (during))", "intersectusing(r, q, (during))",
                     "summarizebyusing(r, (during), (n(plus(1))), (during))",
                     "joinusing(v, extend(q, (w(int(2)))), (during))",
                     "semiminususing(v, q, (during))"):
            assert sira.evaluate(text, relvars, engine="spark") == \
                sira.evaluate(text, relvars), text


_grouped = st.tuples(st.sampled_from([0, 0, 0, 0, 1, 2]), st.integers(0, 2), _offsets)


@pytest.mark.skipif("spark" not in ENGINES, reason="Spark is not available here")
@settings(max_examples=3, deadline=None)
@given(st.sampled_from(sorted(POINTS)), st.lists(_grouped, min_size=1, max_size=40))
def test_spark_pack_per_group_split_across_buckets_equals_the_python_engine(kind, rows):
    """PACK with other attributes on Spark, every group cut into buckets of begin and the state
    carried from bucket to bucket per group (sira_spark.packing._pack_islands): one group
    holding most tuples, long and open intervals reaching over several buckets, and a second
    interval attribute among the grouping ones (open ends there: matched null-safe), against
    the Python engine. PACK on both interval attributes splits first (its boundaries numbered
    per group over buckets too), then packs each; so does SUMMARIZEBYUSING of a maximum."""
    itype, point = POINTS[kind]
    body = [{"k": k, "v": v,
             "during": Interval(point(b), None if open_ == 0 else point(b + length)),
             "also": Interval(point(v), None if v == 2 else point(v + 1 + open_ % 2))}
            for k, v, (b, length, open_) in rows]
    relvars = {"r": Relation.from_rows({"k": INT, "v": INT, "during": itype, "also": itype},
                                       body)}
    with every_sequence_split():
        for text in ("pack(project(r, (k, during)), (during))", "pack(r, (during))",
                     "pack(project(r, (k, v, also)), (also))", "pack(r, (also, during))",
                     "pack(project(r, (during, also)), (also, during))",
                     "summarizebyusing(r, (k, during), (m(max(v)) n(min(v)) t(plus(v)) "
                     "a(and(gt(v, 1)))), (during))"):
            assert sira.evaluate(text, relvars, engine="spark") == \
                sira.evaluate(text, relvars), text


@pytest.mark.skipif("spark" not in ENGINES, reason="Spark is not available here")
@settings(max_examples=3, deadline=None)
@given(st.sampled_from(sorted(POINTS)), st.lists(_grouped, min_size=1, max_size=30),
       st.lists(_grouped, max_size=30))
def test_spark_sweeps_per_group_split_across_buckets_equal_the_python_engine(kind, left, right):
    """The pointwise set operators, SUMMARIZEBYUSING's sums and the overlap join with a key on
    Spark, every group cut into buckets of point and its running coverage, sums and counts
    carried from bucket to bucket per group (running_sequence and running_rows with a group):
    one group holding most tuples, long and open intervals over several buckets, against the
    Python engine."""
    relvars = {"r": _relation(kind, [(k, v, o) for k, v, o in left]),
               "q": _relation(kind, [(k, v, o) for k, v, o in right], "w")}
    with every_sequence_split():
        for text in ("unionusing(project(r, (k, during)), project(q, (k, during)), (during))",
                     "minususing(project(r, (k, during)), project(q, (k, during)), (during))",
                     "intersectusing(project(r, (k, during)), project(q, (k, during)),"
                     " (during))",
                     "summarizebyusing(r, (k, during), (t(plus(v)), n(plus(1))), (during))",
                     "joinusing(r, q, (during))",
                     "semiminususing(r, project(q, (k, during)), (during))"):
            assert sira.evaluate(text, relvars, engine="spark") == \
                sira.evaluate(text, relvars), text


@pytest.mark.parametrize("engine", ["python", "duckdb"] + (["spark"] if "spark" in ENGINES
                                                           else []))
def test_a_pointwise_semijoin_by_coverage_keeps_max_tuples(engine):
    """1,000 left tuples over [0, 1000), the right side covering every other point: 500,000
    result tuples, refused under max_tuples=10,000 on every engine."""
    from sira.errors import TooManyTuples
    n = 1000
    left = Relation.from_rows({"k": INT, "v": INT, "during": INTINTERVAL},
                              [(0, i, Interval(0, n)) for i in range(n)])
    right = Relation.from_rows({"k": INT, "w": INT, "during": INTINTERVAL},
                               [(0, 0, Interval(2 * i, 2 * i + 1)) for i in range(n)])
    run = {"python": sira.evaluate, "duckdb": _duckdb().evaluate,
           "spark": lambda *a, **k: sira.evaluate(*a, engine="spark", **k)}[engine]
    with pytest.raises(TooManyTuples, match="SEMIJOIN"):
        run("semijoinusing(l, r, (during))", {"l": left, "r": right}, max_tuples=10_000)
    # one hole in each of 1,000 tuples: the JOIN inside makes 1,000, the SEMIMINUS 2,000
    hole = Relation.from_rows({"k": INT, "w": INT, "during": INTINTERVAL},
                              [(0, 0, Interval(500, 501))])
    assert len(run("semiminususing(l, r, (during))", {"l": left, "r": hole})) == 2 * n
    with pytest.raises(TooManyTuples, match="SEMIMINUS"):
        run("semiminususing(l, r, (during))", {"l": left, "r": hole}, max_tuples=1_500)
