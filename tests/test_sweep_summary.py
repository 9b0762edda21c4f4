"""SUMMARIZEBYUSING by a sweep line (sira.engine.aggregation.sweep_summary) gives exactly what
the elementary-segment split gives, on random relations with overlapping, meeting, duplicate
and unbounded intervals; and long intervals cost no more than short ones."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sira
import sira.engine.aggregation as aggregation
from sira import INT, LONG, Relation
from sira.intervals import LONGINTERVAL, Interval

from conftest import ENGINES, evaluated_without

QUERIES = [
    "summarizebyusing(r, (k, during), (t(plus(v)) n(plus(1)) hi(max(v)) lo(min(v))"
    " a(and(gt(v, 1))) o(or(eq(v, 3)))), (during))",
    "summarizebyusing(r, (during), (t(plus(v))), (during))",
    "summarizebyusing(project(r, (k, during)), (during), (n(plus(1))), (during))",
    "summarizebyusing(r, (k, during), (p(mult(minus(v, 2))) n(plus(1))), (during))",
]

interval = st.tuples(st.integers(0, 12), st.integers(1, 6), st.booleans()).map(
    lambda t: Interval(t[0], t[0] + t[1] if t[2] else None))
rows = st.lists(st.fixed_dictionaries({"k": st.integers(0, 2), "v": st.integers(0, 4),
                                       "during": interval}), max_size=14)


def _calls(monkeypatch, module, name) -> list:
    """A list that gets an entry at each call of ``module.name`` (which still runs)."""
    called, real = [], getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a: called.append(a) or real(*a))
    return called


def _split_reference(text, relvars):
    return evaluated_without(text, relvars, (aggregation, "sweep_summary"))


@pytest.mark.parametrize("text", QUERIES)
@settings(max_examples=150, deadline=None)
@given(rows)
def test_the_sweep_equals_the_segment_split(text, body):
    r = Relation.from_rows({"k": INT, "v": INT, "during": LONGINTERVAL}, body)
    assert sira.evaluate(text, {"r": r}) == _split_reference(text, {"r": r})


def test_long_intervals_are_swept_not_split(monkeypatch):
    called = _calls(monkeypatch, aggregation, "sweep_summary")
    r = Relation.from_rows({"k": INT, "v": INT, "during": LONGINTERVAL},
                           [{"k": 0, "v": i % 7, "during": Interval(i, i + 100_000)}
                            for i in range(3000)])  # split: 3000 x 3000 pieces
    out = sira.evaluate("summarizebyusing(r, (k, during), (t(plus(v))), (during))", {"r": r})
    assert called and len(out) < 6000


def test_a_sum_leaving_its_type_is_still_the_reference_error():
    r = Relation.from_rows({"k": INT, "v": INT, "during": LONGINTERVAL},
                           [{"k": 0, "v": 2**31 - 1, "during": Interval(0, 5)},
                            {"k": 0, "v": 2**31 - 2, "during": Interval(2, 6)}])
    with pytest.raises(sira.SiraError):
        sira.evaluate("summarizebyusing(r, (k, during), (t(plus(v))), (during))", {"r": r})


@pytest.mark.parametrize("engine", ENGINES)
def test_long_intervals_of_products_are_swept_not_split(engine):
    """A product of INTs over 3,000 intervals that all overlap: swept on the Python engine, a
    segment tree on DuckDB and Spark (the split would make 9,000,000 pieces, refused under
    max_tuples), each segment's product the plain product of the values present there (-1
    every third tuple, 2 every hundredth, else 1)."""
    n, length = 3000, 100_000
    values = [-1 if i % 3 == 0 else 2 if i % 100 == 1 else 1 for i in range(n)]
    r = Relation.from_rows({"i": INT, "v": INT, "during": LONGINTERVAL},
                           [{"i": i, "v": v, "during": Interval(i, i + length)}
                            for i, v in enumerate(values)])
    out = sira.evaluate("summarizebyusing(r, (during), (p(mult(v))), (during))", {"r": r},
                        max_tuples=100_000, engine=engine)
    assert len(out) < 2 * n
    at = {}
    for t in out.to_rows():
        for point in (t["during"].begin, t["during"].end - 1):
            at[point] = t["p"]
    for point in (0, 1, 99, 100, 101, 2999, 50_000, 99_999, 100_000, 101_500, 102_998):
        present = values[max(0, point - length + 1):point + 1]
        expected = 1
        for v in present:
            expected *= v
        assert at.get(point, expected) == expected, point


@pytest.mark.parametrize("values, fits", [
    ([2 ** 20, 2 ** 20], False),  # 2**40: past INT
    ([2] * 64, False),  # 64 factors of 2 at once: past the 63 the sweep multiplies
    ([3] * 90, False),  # 3**90: past a HUGEINT too (DuckDB's tree caps its products)
    ([0] + [3] * 90, True),  # and with a zero among them: 0, not an overflow
    ([0] + [2 ** 31 - 1] * 5, True),  # five factors past a HUGEINT, with a zero: 0
    ([0] + [2] * 64, True),  # a zero among them wherever they are: 0
    ([-3] * 19, True)])  # -3**19 fits an INT
@pytest.mark.parametrize("engine", ENGINES)
def test_a_product_leaving_its_type_is_still_the_reference_error(engine, values, fits):
    r = Relation.from_rows({"i": INT, "v": INT, "during": LONGINTERVAL},
                           [{"i": i, "v": v, "during": Interval(0, 1000 if v == 0 else 100)}
                            for i, v in enumerate(values)])
    text = "summarizebyusing(r, (during), (p(mult(v))), (during))"
    if fits:
        assert sira.evaluate(text, {"r": r}, engine=engine) == _split_reference(text, {"r": r})
    else:
        with pytest.raises(sira.errors.IntOverflow):
            sira.evaluate(text, {"r": r}, engine=engine)
        with pytest.raises(sira.errors.IntOverflow):
            _split_reference(text, {"r": r})


@pytest.mark.parametrize("engine", ENGINES)
def test_a_large_group_s_product_is_exact_at_the_edges_of_long(engine):
    """SUMMARIZEBY's product of LONGs over groups of thousands of tuples, most of them 1 or
    -1 (DuckDB multiplies a group's 128 least magnitudes of at least 2, a bounded list): at
    -2**63 exactly, one past it, 0 with a zero among factors past any type, and a product
    of 30 factors beside 2,000 ones."""
    groups = {0: [2] * 62 + [-2] + [-1] * 500 + [1] * 300,  # -2**63: fits
              1: [3] * 30 + [-1] + [0] + [1] * 1000,  # 0
              2: [2] * 20 + [3] * 10 + [1] * 2000 + [-1] * 2}  # 2**20 * 3**10
    rows = [{"k": k, "i": i, "v": v} for k, vs in groups.items() for i, v in enumerate(vs)]
    r = Relation.from_rows({"k": INT, "i": INT, "v": LONG}, rows)
    out = sira.evaluate("summarizeby(r, (k), (p(mult(v))))", {"r": r}, engine=engine)
    assert {t["k"]: t["p"] for t in out.to_rows()} == {0: -2 ** 63, 1: 0, 2: 2 ** 20 * 3 ** 10}
    past = Relation.from_rows({"k": INT, "i": INT, "v": LONG},
                              [{"k": 0, "i": i, "v": 2 if i < 63 else 1} for i in range(900)])
    with pytest.raises(sira.errors.IntOverflow):
        sira.evaluate("summarizeby(r, (k), (p(mult(v))))", {"r": past}, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("point", ["int", "date", "timestamp", "float"])
def test_iintersect_of_a_group_is_its_largest_begin_and_least_end(engine, point):
    """SUMMARIZEBY's and AGGREGATE's IINTERSECT (on DuckDB and Spark the largest begin, the
    least end and whether an empty interval is among them: no list of the group's values):
    open ends, an empty interval, disjoint intervals, and the identity (from the first
    point) of an empty relation. SUMMARIZEBY's result is packed, so a group whose IINTERSECT
    is empty drops out (specs/intervals/summarizeby-drops-a-group-whose-iintersect-is-empty)."""
    import datetime

    from sira.intervals import DATEINTERVAL, FLOATINTERVAL, INTINTERVAL, TIMESTAMPINTERVAL
    t, at = {"int": (INTINTERVAL, lambda x: x),
             "date": (DATEINTERVAL, lambda x: datetime.date(1500, 1, 1)
                      + datetime.timedelta(days=x)),
             "timestamp": (TIMESTAMPINTERVAL, lambda x: datetime.datetime(2020, 1, 1)
                           + datetime.timedelta(seconds=x)),
             "float": (FLOATINTERVAL, lambda x: x / 4)}[point]
    groups = {0: [(1, 9), (3, None), (2, 7)],  # [3, 7)
              1: [(1, None), (4, None)],  # [4, open)
              2: [(1, 5), (5, 5), (2, 3)],  # an empty one: empty
              3: [(1, 3), (4, 6)]}  # disjoint: empty
    rows = [{"k": k, "i": i, "d": Interval(at(b), None if e is None else at(e))}
            for k, ivs in groups.items() for i, (b, e) in enumerate(ivs)]
    r = Relation.from_rows({"k": INT, "i": INT, "d": t}, rows)
    for text, relvars in (("summarizeby(r, (k), (x(iintersect(d))))", {"r": r}),
                          ("aggregate(r, (x(iintersect(d))))", {"r": r}),
                          ("aggregate(restrict(r, eq(k, 9)), (x(iintersect(d))))", {"r": r})):
        out = sira.evaluate(text, relvars, engine=engine)
        assert out == sira.evaluate(text, relvars), text
    spans = {u["k"]: u["x"] for u in sira.evaluate("summarizeby(r, (k), (x(iintersect(d))))",
                                                    {"r": r}, engine=engine).to_rows()}
    assert spans == {0: Interval(at(3), at(7)), 1: Interval(at(4), None)}  # (packed: no
    for k in (2, 3):  # empty interval; AGGREGATE keeps it)
        (u,) = sira.evaluate(f"aggregate(restrict(r, eq(k, {k})), (x(iintersect(d))))",
                             {"r": r}, engine=engine).to_rows()
        assert u["x"].empty, k


@pytest.mark.skipif("spark" not in ENGINES, reason="Spark is not available here")
def test_spark_multiplies_a_bounded_list_of_factors_per_group_and_partition():
    """``_few_factors``: every row once with no factor, and per group and partition only its
    ``_FACTORS`` least magnitudes of at least 2, however many the group holds."""
    from decimal import Decimal

    from sira_spark import default_engine
    from sira_spark.aggregation import _FACTORS, _few_factors
    spark = default_engine().spark
    rows = [(i % 2, Decimal(1 + i % 7)) for i in range(3000)]
    df = spark.createDataFrame(rows, "g int, m decimal(38,0)").repartition(3)
    out = _few_factors(df, ["g"], ["m"]).collect()
    assert sum(r["m"] is None for r in out) == 3000
    kept = {0: [], 1: []}
    for r in out:
        if r["m"] is not None:
            kept[r["g"]].append(int(r["m"]))
    for g, values in kept.items():
        assert _FACTORS <= len(values) <= 3 * _FACTORS, g
        assert min(values) == 2 and values.count(2) >= _FACTORS // 3, g


@settings(max_examples=60, deadline=None)
@given(rows)
def test_duckdb_sweeps_to_the_same_relation(body):
    r = Relation.from_rows({"k": INT, "v": INT, "during": LONGINTERVAL}, body)
    engine = _duckdb()
    for text in ("summarizebyusing(r, (k, during), (t(plus(v)) n(plus(1))), (during))",
                 "summarizebyusing(r, (during), (t(plus(v))), (during))",
                 "summarizebyusing(r, (k, v, during), (n(plus(1))), (during))",
                 "summarizebyusing(r, (k, during), (p(mult(minus(v, 2))) m(max(v))), (during))"):
        assert engine.evaluate(text, {"r": r}) == sira.evaluate(text, {"r": r}), text


_ENGINE = []


def _duckdb():
    if not _ENGINE:
        from sira_duckdb import DuckDBEngine
        _ENGINE.append(DuckDBEngine())
    return _ENGINE[0]


# ------------------------------------------------------------------------------ JOINUSING

JOINS = ["joinusing(r, rename(q, (v, w)), (during))", "joinusing(r, q, (during))",
         "joinusing(project(r, (k, during)), project(rename(q, (k, j)), (j, during)), (during))"]


def _split_join(text, relvars):
    import sira.engine.joins as joins
    return evaluated_without(text, relvars, (joins, "overlap_attribute"))


@pytest.mark.parametrize("text", JOINS)
@settings(max_examples=150, deadline=None)
@given(rows, rows)
def test_joinusing_by_a_sweep_equals_the_segment_split(text, left, right):
    heading = {"k": INT, "v": INT, "during": LONGINTERVAL}
    relvars = {"r": Relation.from_rows(heading, left), "q": Relation.from_rows(heading, right)}
    assert sira.evaluate(text, relvars) == _split_join(text, relvars)


float_rows = st.lists(st.fixed_dictionaries({
    "k": st.integers(0, 1),
    "v": st.sampled_from([0.1, 0.2, 0.3, -0.1, 1e16, -1e16, 1.5, 5e-324, 1e308, -1e308,
                          1.7976931348623157e308, float("inf"), float("-inf"), -0.0]),
    "during": interval}), max_size=12)


@settings(max_examples=300, deadline=None)
@given(float_rows)
def test_float_sums_are_swept_to_the_split_s_exact_sums(body):
    # the sweep keeps the exact sum of the finite values and counts of infinities, rounded
    # once per segment: the split's float_sum of each segment's values, errors included
    from sira import FLOAT
    r = Relation.from_rows({"k": INT, "v": FLOAT, "during": LONGINTERVAL}, body)
    text = "summarizebyusing(r, (k, during), (t(plus(v)) n(plus(1))), (during))"
    outcomes = []
    for evaluate in (lambda: sira.evaluate(text, {"r": r}),
                     lambda: _split_reference(text, {"r": r})):
        try:
            outcomes.append(evaluate())
        except sira.SiraError as err:
            outcomes.append(type(err).__name__)
    assert _same_outcome(*outcomes)


def _same_outcome(a, b) -> bool:
    """The same relation, or both an error: when several segments fail (an overflow in one,
    infinities of both signs in another), which one an evaluation meets first depends on the
    order it visits the groups in, so the error may be either of the two."""
    errors = {"FloatOverflow", "SiraValueError"}
    return a == b or (isinstance(a, str) and isinstance(b, str) and {a, b} <= errors)


def test_long_intervals_of_float_sums_are_swept_not_split(monkeypatch):
    from sira import FLOAT
    called = _calls(monkeypatch, aggregation, "sweep_summary")
    r = Relation.from_rows({"k": INT, "v": FLOAT, "during": LONGINTERVAL},
                           [{"k": 0, "v": 0.1 * i, "during": Interval(i, i + 100_000)}
                            for i in range(3000)])  # split: 3000 x 3000 pieces
    out = sira.evaluate("summarizebyusing(r, (k, during), (t(plus(v))), (during))", {"r": r})
    assert called and len(out) < 6000


stream_floats = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 1), st.sampled_from(
    [0.1, 0.2, 0.3, -0.3, 1e16, -1e16, 2.5, 1.7976931348623157e308, float("inf")])),
    max_size=25, unique_by=lambda t: t[0])


@pytest.mark.parametrize("window", ["range(4)", "range(3) slide(2)", "range(1)"])
@settings(max_examples=120, deadline=None)
@given(stream_floats)
def test_windowed_float_sums_swept_equal_the_window_relation_s_sums(window, elements):
    # CQL's select k, sum(v) from S[range T] group by k, swept without the window relation
    # (sira.engine.windows.summarize_window) against SUMMARIZEBYUSING over the window relation
    # split at every boundary
    import sira.engine.windows as windows
    from sira import FLOAT, LONG
    s = Relation.from_rows({"ts": LONG, "k": INT, "v": FLOAT},
                           [{"ts": t, "k": k, "v": v} for t, k, v in elements])
    for text in (f"summarizebyusing(window(s, ts, {window}), (k, during), (t(plus(v))),"
                 " (during))",
                 f"summarizebyusing(window(s, ts, {window}), (k, during), (t(plus(v))"
                 " n(plus(1)) u(plus(mult(v, 2.0)))), (during))"):
        outcomes = []
        for evaluate in (lambda: sira.evaluate(text, {"s": s}),
                         lambda: evaluated_without(text, {"s": s},
                                                   (windows, "summarize_window"),
                                                   (aggregation, "sweep_summary"))):
            try:
                outcomes.append(evaluate())
            except sira.SiraError as err:
                outcomes.append(type(err).__name__)
        assert _same_outcome(*outcomes)


wide_floats = st.one_of(st.floats(allow_nan=False, allow_infinity=False, width=64),
                        st.sampled_from([0.1, 0.2, -0.3, 1e16, -1e16, 5e-324, 2.0 ** -1022,
                                         1.7976931348623157e308, -1.7976931348623157e308,
                                         float("inf"), float("-inf"), 0.0]))
float_bodies = st.lists(st.fixed_dictionaries({"k": st.integers(0, 1), "v": wide_floats,
                                               "during": interval}), max_size=12)


@settings(max_examples=60, deadline=None)
@given(float_bodies)
def test_duckdb_sweeps_float_sums_to_the_python_engine_s_exact_sums(body):
    _check_float_sweeps(body, "duckdb")


def _check_float_sweeps(body, engine):
    # the engines' sweeps keep FLOAT sums exactly (limbs of 32 bits by exponent) and round
    # once per segment: the bits of float_sum, its errors (not a number, overflow) included
    from sira import FLOAT
    r = Relation.from_rows({"k": INT, "v": FLOAT, "during": LONGINTERVAL}, body)
    for text in ("summarizebyusing(r, (k, during), (t(plus(v)) n(plus(1)) u(plus(mult(v, 0.5)))),"
                 " (during))", "summarizebyusing(r, (during), (t(plus(v))), (during))",
                 # beside the tree's aggregates: the sums apart (float_sums_apart), joined
                 "summarizebyusing(r, (k, during), (t(plus(v)) m(max(v)) a(and(gt(v, 0.0)))),"
                 " (during))"):
        outcomes = []
        for e in ("python", engine):
            try:
                outcomes.append(sira.evaluate(text, {"r": r}, engine=e))
            except sira.SiraError as err:
                outcomes.append(type(err).__name__)
        assert _same_outcome(*outcomes), text


def test_duckdb_sweeps_float_sums_of_long_intervals_without_the_split():
    from sira import FLOAT
    r = Relation.from_rows({"k": INT, "v": FLOAT, "during": LONGINTERVAL},
                           [{"k": i % 2, "v": 0.1 * i, "during": Interval(i, i + 100_000)}
                            for i in range(3000)])  # split: 3000 x 3000 pieces
    for text in ("summarizebyusing(r, (k, during), (t(plus(v))), (during))",
                 "summarizebyusing(r, (k, during), (t(plus(v)) m(min(v))), (during))"):
        assert "sira_py_float_round" in _duckdb().sql(text, {"r": r})
        assert _duckdb().evaluate(text, {"r": r}) == sira.evaluate(text, {"r": r})


@settings(max_examples=3, deadline=None)  # about 5 s an example on Spark (CI time)
@given(float_bodies)
def test_spark_sweeps_float_sums_to_the_python_engine_s_exact_sums(body):
    _check_float_sweeps(body, "spark")


def test_spark_sweeps_float_sums_of_long_intervals_without_the_split(monkeypatch):
    import sira_spark.aggregation as spark_aggregation
    from sira import FLOAT
    from sira_spark import default_engine
    called = _calls(monkeypatch, spark_aggregation, "_float_segments")
    r = Relation.from_rows({"k": INT, "v": FLOAT, "during": LONGINTERVAL},
                           [{"k": i % 2, "v": 0.1 * i - 5, "during": Interval(i, i + 1000)}
                            for i in range(300)])  # split: 300 x 300 pieces
    text = "summarizebyusing(r, (k, during), (t(plus(v))), (during))"
    assert default_engine().evaluate(text, {"r": r}) == sira.evaluate(text, {"r": r})
    assert called


@pytest.mark.parametrize("values", [
    [0.1, 0.2, 0.3, 2.5, -1.25, 4.0, 3.9, 1e6],  # one group's exact integer (fits)
    [5e-324, 1e308, -1e308, 0.1, 1.7976931348623157e308],  # buckets of exponent (too wide)
    [1e308, 1e308, 1e308, -1e308],  # overflow at some point, not at others
    [1.0, 2.0 ** -53, 2.0 ** -53, 2.0 ** -105],  # ties to even, then past halfway
    # -inf (its count above bit 62 of the infinities' one sum), twice at some points
    [float("-inf"), 1.0, float("-inf"), 2.5, 0.5],
])
def test_duckdb_float_sweep_both_ways_gives_the_python_engine_s_sums(values):
    body = [{"k": i % 2, "v": v, "during": Interval(i, i + 3)} for i, v in enumerate(values)]
    body += [{"k": 2, "v": v, "during": Interval(i % 2, 9)} for i, v in enumerate(values)]
    _check_float_sweeps(body, "duckdb")


GROUP_FLOAT_SUMS = [
    "aggregate(r, (t(plus(v)) n(plus(1)) m(max(v))))",
    "summarizeby(r, (k), (t(plus(v)) u(plus(mult(v, 0.5)))))",
    "summarizeby(r, (k, during), (t(plus(v)) n(plus(1))))",
    "summarizeby(r, (), (t(plus(v))))",
    "aggregate(restrict(r, gt(k, 5)), (t(plus(v))))",
]


def _group_float_sums_relation():
    from sira import FLOAT
    values = [0.1, 0.2, 0.3, 1e16, -1e16, 2.5, -0.0, 5e-324, 1e300, 3.3, -1e300, 0.7, 4.25]
    body = [{"k": i % 3, "v": v, "during": Interval(i % 4, 5)} for i, v in enumerate(values)]
    body.append({"k": 2, "v": float("inf"), "during": Interval(0, 1)})
    return Relation.from_rows({"k": INT, "v": FLOAT, "during": LONGINTERVAL}, body)


@pytest.mark.parametrize("text", GROUP_FLOAT_SUMS)
def test_duckdb_float_sums_of_groups_are_partial_sums_of_exact_limbs(text):
    r = _group_float_sums_relation()
    assert "sira_py_float_sum" not in _duckdb().sql(text, {"r": r})  # no list of the values
    assert _duckdb().evaluate(text, {"r": r}) == sira.evaluate(text, {"r": r})


@pytest.mark.parametrize("text", GROUP_FLOAT_SUMS)
def test_spark_float_sums_of_groups_are_partial_sums_of_exact_limbs(text):
    # a FLOAT sum of a group is no array of the group's values on Spark: partial sums of its
    # limbs per bucket of exponent, gathered per group (a few each) and rounded once
    from sira_spark import default_engine
    r = _group_float_sums_relation()
    plan = default_engine().dataframe(text, {"r": r})._jdf.queryExecution().optimizedPlan()
    assert "collect_list(v#" not in plan.toString()  # the group's values, gathered
    assert default_engine().evaluate(text, {"r": r}) == sira.evaluate(text, {"r": r})


WINDOW_SUMS = ("summarizebyusing(window(s, ts, range(3)), (k, during), (t(plus(v)), "
               "f(plus(x)), n(plus(1))), (during))")


def _window_stream():
    """Three keys: small FLOATs (one exact integer a key), one key's values too wide for it
    (1e300 beside 1e-300: summed by buckets of exponent), and ties on ts."""
    from sira import FLOAT, LONG
    rows = [(t // 2, t % 3, (t * 37) % 11 - 5, 0.1 * ((t * 37) % 11 - 5)) for t in range(40)]
    rows += [(50 + t, 7, t, 1e300 if t % 2 else 1e-300) for t in range(6)]
    return Relation.from_rows({"ts": LONG, "k": INT, "v": INT, "x": FLOAT}, rows)


@pytest.mark.parametrize("engine", [e for e in ("duckdb", "spark") if e in ENGINES])
def test_a_window_is_swept_as_it_is_without_packing_it_again(engine, monkeypatch):
    """A CQL window gives each element of its source (a set) its own period, so it is packed
    by construction (sira.algebra.packing.packed_on): the sweep of a SUMMARIZEBYUSING over it
    reads it without the PACK (a grouping by every attribute), and gives the Python engine's
    sums and counts, exact FLOAT sums included, for keys whose values fit one exact integer
    and for one whose values do not."""
    import sira.algebra.packing
    s = _window_stream()
    expected = sira.evaluate(WINDOW_SUMS, {"s": s})
    packed_on = sira.algebra.packing.packed_on
    asked = []

    def recorded(node, name):
        asked.append(packed_on(node, name))
        return asked[-1]
    monkeypatch.setattr(sira.algebra.packing, "packed_on", recorded)
    if engine == "duckdb":
        sql = _duckdb().sql(WINDOW_SUMS, {"s": s})
        assert 'PARTITION BY "k", "ts", "v", "x"' not in sql, sql  # the PACK's windows
        got = _duckdb().evaluate(WINDOW_SUMS, {"s": s})
    else:
        got = sira.evaluate(WINDOW_SUMS, {"s": s}, engine="spark")
    assert asked and all(asked)
    assert got == expected
    # a relvar is not known packed: packed first (a rest's overlapping periods counted once)
    w = sira.evaluate("window(s, ts, range(3))", {"s": s})
    first = min(w.to_rows(), key=lambda t: (t["ts"], t["k"]))
    w = Relation.from_rows(w.heading, [*w.to_rows(), {**first, "during": Interval(
        first["during"].begin + 1, first["during"].end + 2)}])
    text = WINDOW_SUMS.replace("window(s, ts, range(3))", "w")
    asked.clear()
    assert sira.evaluate(text, {"w": w}, engine=engine) == sira.evaluate(text, {"w": w})
    assert asked == [False]


@pytest.mark.parametrize("engine", [e for e in ("duckdb", "spark") if e in ENGINES])
def test_a_join_of_two_windows_pointwise_reads_them_without_packing_them_again(engine):
    """The overlap join of two CQL windows (a stream join, pointwise on ``during``) reads
    each window as it is (packed by construction), and gives the Python engine's tuples;
    a relvar holding overlapping periods of one rest is still packed first."""
    s = _window_stream()
    text = ("joinusing(window(s, ts, range(3)), rename(window(s, ts, rows(2)), "
            "(ts, t2, v, v2, x, x2)), (during))")
    assert sira.evaluate(text, {"s": s}, engine=engine) == sira.evaluate(text, {"s": s})
    w = sira.evaluate("window(s, ts, range(3))", {"s": s})
    first = min(w.to_rows(), key=lambda t: (t["ts"], t["k"]))
    w = Relation.from_rows(w.heading, [*w.to_rows(), {**first, "during": Interval(
        first["during"].begin + 1, first["during"].end + 2)}])
    text = "joinusing(w, rename(window(s, ts, range(2)), (ts, t2, v, v2, x, x2)), (during))"
    assert sira.evaluate(text, {"s": s, "w": w}, engine=engine) == \
        sira.evaluate(text, {"s": s, "w": w})
