"""Interval types, PACK/UNPACK and the USING operators, checked against the UNPACK reference and
against portion (an independent library of interval unions, which also knows unbounded ones)."""

from __future__ import annotations

import datetime

import portion as P
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sira
from sira import DATE, INT, INTINTERVAL, Relation
from sira.errors import IntervalError, SiraTypeError, TooManyTuples, UnknownAttribute
from sira.intervals import DATEINTERVAL, FLOATINTERVAL, Interval

from interval_reference import ref_pack, ref_unpack, ref_using

intervals = st.tuples(st.integers(0, 7), st.integers(1, 4)).map(
    lambda t: Interval(t[0], t[0] + t[1]))


def relations(names=("x",), keys=("k",), max_size=6):
    heading = {**{k: INT for k in keys}, **{n: INTINTERVAL for n in names}}
    row = st.fixed_dictionaries({**{k: st.integers(0, 1) for k in keys},
                                 **{n: intervals for n in names}})
    return st.lists(row, max_size=max_size).map(lambda rows: Relation.from_rows(heading, rows))


def lit(r):
    return sira.literal(r)


SETTINGS = settings(max_examples=150, deadline=None)


@SETTINGS
@given(relations(("x", "y")), st.sampled_from([("x",), ("y",), ("x", "y"), ("y", "x")]))
def test_pack_equals_its_unpack_definition(r, names):
    assert sira.evaluate(lit(r).pack(*names)) == ref_pack(r, names)


@SETTINGS
@given(relations(("x", "y")), st.sampled_from([("x",), ("x", "y"), ("y", "x")]))
def test_pack_is_idempotent(r, names):
    once = sira.evaluate(lit(r).pack(*names))
    assert sira.evaluate(lit(once).pack(*names)) == once


@SETTINGS
@given(relations(("x", "y")), st.sampled_from([("x",), ("x", "y"), ("y", "x")]))
def test_unpack_of_pack_equals_unpack(r, names):
    packed = sira.evaluate(lit(r).pack(*names))
    assert sira.evaluate(lit(packed).unpack(*names)) == ref_unpack(r, names)


@SETTINGS
@given(relations(("x",), ("k", "j")))
def test_packed_results_have_no_overlapping_or_meeting_tuples(r):
    packed = sira.evaluate(lit(r).pack("x"))
    rows = packed.to_rows()
    for a in rows:
        for b in rows:
            if a is not b and (a["k"], a["j"]) == (b["k"], b["j"]):
                x, y = a["x"], b["x"]
                assert x.end < y.begin or y.end < x.begin


OPS = ["union", "intersect", "minus", "xminus", "join", "semijoin", "semiminus"]
BUILD = {
    "union": lambda a, b, u: a.union(b) if u is None else _using(a.union(b), u),
    "intersect": lambda a, b, u: _using(a.intersect(b), u),
    "minus": lambda a, b, u: _using(a.minus(b), u),
    "xminus": lambda a, b, u: _using(a.xminus(b), u),
    "join": lambda a, b, u: _using(a.join(b), u),
    "semijoin": lambda a, b, u: _using(a.semijoin(b), u),
    "semiminus": lambda a, b, u: _using(a.semiminus(b), u),
}


def _using(node, using):
    import attrs
    return node if using is None else attrs.evolve(node, using=using)


@SETTINGS
@given(st.sampled_from(OPS), relations(("x", "y")), relations(("x", "y")),
       st.sampled_from([("x",), ("y",), ("x", "y"), ("y", "x")]))
def test_using_operators_equal_their_definition(op, r1, r2, names):
    got = sira.evaluate(BUILD[op](lit(r1), lit(r2), names))
    assert got == ref_using(op, r1, r2, names)


@SETTINGS
@given(st.sampled_from(OPS), relations(("x",)), relations(("x",)))
def test_default_operators_are_pointwise_on_every_interval_attribute(op, r1, r2):
    got = sira.evaluate(BUILD[op](lit(r1), lit(r2), None))
    assert got == ref_using(op, r1, r2, ("x",))


@SETTINGS
@given(relations(("x",)), relations(("x",)))
def test_using_nothing_is_the_plain_operator(r1, r2):
    got = sira.evaluate(_using(lit(r1).intersect(lit(r2)), ()))
    assert got.body == r1.body & r2.body


@SETTINGS
@given(relations(("x",), ("k",)), relations(("x",), ("j",)))
def test_join_on_an_interval_attribute_matches_overlaps(r1, r2):
    got = sira.evaluate(lit(r1).join(lit(r2)))
    assert got == ref_using("join", r1, r2, ("x",))


@SETTINGS
@given(relations(("x",), ("k", "v"), max_size=8))
def test_pointwise_summarizeby_counts_at_each_point(r):
    node = sira.parse("summarizebyusing(R, (k, x), (n(plus(1))), (x))", {"r": r})
    got = sira.evaluate(node, {"r": r})
    unpacked = ref_unpack(r, ["x"])
    counts = {}
    for row in unpacked.to_rows():
        counts[(row["k"], row["x"])] = counts.get((row["k"], row["x"]), 0) + 1
    expected_units = Relation.from_rows({"k": INT, "x": INTINTERVAL, "n": INT},
                                        [{"k": k, "x": x, "n": n} for (k, x), n in counts.items()])
    assert got == ref_pack(expected_units, ["x"])


def test_pack_may_increase_cardinality():
    r = sira.parse("relation(body(tuple(x(intinterval(begin(1)end(10))) y(intinterval(begin(1)"
                   "end(10)))) tuple(x(intinterval(begin(7)end(24))) y(intinterval(begin(8)"
                   "end(34))))))")
    assert len(sira.evaluate(sira.literal(sira.evaluate(r)).pack("y", "x"))) == 3


def test_cost_does_not_depend_on_interval_length():
    # a billion-point interval packs and intersects instantly: nothing is unpacked
    big = Relation.from_rows({"k": INT, "x": INTINTERVAL},
                             [(1, Interval(0, 10**9)), (1, Interval(5 * 10**8, 2 * 10**9))])
    other = Relation.from_rows({"k": INT, "x": INTINTERVAL}, [(1, Interval(10**8, 10**8 + 5))])
    assert sira.evaluate(lit(big).pack("x")).to_rows() == [{"k": 1, "x": Interval(0, 2 * 10**9)}]
    assert len(sira.evaluate(lit(big).minus(lit(other)))) == 2


def test_unpack_refuses_beyond_the_limit_and_the_limit_can_be_raised():
    r = Relation.from_rows({"x": INTINTERVAL}, [(Interval(0, 50),)])
    with pytest.raises(TooManyTuples) as err:
        sira.evaluate(lit(r).unpack("x"), max_tuples=10)
    assert err.value.limit == 10
    assert len(sira.evaluate(lit(r).unpack("x"), max_tuples=50)) == 50


def test_unpack_refuses_unbounded_and_float_intervals():
    r = Relation.from_rows({"x": INTINTERVAL}, [(Interval(0, None),)])
    with pytest.raises(IntervalError):
        sira.evaluate(lit(r).unpack("x"))
    f = Relation.from_rows({"x": FLOATINTERVAL}, [(Interval(0.5, 1.5),)])
    with pytest.raises(SiraTypeError) as err:
        lit(f).unpack("x")
    assert "x" in str(err.value)


def test_pack_list_must_name_interval_attributes():
    r = Relation.from_rows({"k": INT, "x": INTINTERVAL}, [])
    with pytest.raises(SiraTypeError) as err:
        lit(r).pack("k")
    assert "'k'" in str(err.value)
    with pytest.raises(UnknownAttribute) as err2:
        lit(r).pack("nosuch")
    assert err2.value.attribute == "nosuch"


def test_interval_selectors_reject_empty_and_inverted_intervals():
    for text in ("intinterval(begin(5)end(5))", "intinterval(from(7)to(4))",
                 "dateinterval(begin(2015-08-02)end(2015-07-30))"):
        with pytest.raises(IntervalError):
            sira.evaluate(f"extend(TABLE_DEE, (x({text})))")


def test_interval_operators():
    def ev(text):
        return sira.evaluate(text)
    assert ev("the_to(intinterval(from(4)to(7)))") == 7
    assert ev("the_begin(intinterval(from(4)to(7)))") == 4
    assert ev("the_end(intinterval(from(4)to(7)))") == 8
    assert ev("iunion(intinterval(begin(1)end(3)), intinterval(begin(3)end(5)))") == Interval(1, 5)
    with pytest.raises(IntervalError):
        ev("iunion(intinterval(begin(1)end(3)), intinterval(begin(4)end(5)))")
    with pytest.raises(IntervalError):
        ev("iminus(intinterval(begin(1)end(10)), intinterval(begin(4)end(5)))")
    assert ev("iminus(intinterval(begin(1)end(10)), intinterval(begin(4)end(12)))") == \
        Interval(1, 4)
    assert ev("meets(intinterval(begin(1)end(3)), intinterval(begin(3)end(5)))") is True
    assert ev("overlaps(intinterval(begin(1)end(3)), intinterval(begin(3)end(5)))") is False
    assert ev("during(intinterval(begin(2)end(3)), intinterval(begin(1)end(5)))") is True
    assert ev("contains(intinterval(begin(1)end(5)), 4)") is True
    assert ev("duration(dateinterval(from(2015-07-30)to(2015-08-01)))") == 3
    assert ev("the_to(dateinterval(from(2015-07-30)to(2015-08-01)))") == datetime.date(2015, 8, 1)
    with pytest.raises(SiraTypeError):
        ev("overlaps(intinterval(begin(1)end(3)), dateinterval(begin(2015-07-30)end(2015-08-01)))")


ALLEN = ["before", "after", "meets", "met_by", "allen_overlaps", "overlapped_by", "starts",
         "started_by", "during", "allen_contains", "finishes", "finished_by", "iequals"]


@SETTINGS
@given(intervals, intervals)
def test_exactly_one_allen_relation_holds(a, b):
    holding = [name for name in ALLEN
               if sira.evaluate(sira.call(name, sira.lit(a, INTINTERVAL), sira.lit(b, INTINTERVAL)))]
    assert len(holding) == 1, holding


def test_dates_print_as_the_seed_shows_them():
    r = Relation.from_rows({"d": DATEINTERVAL},
                           [(Interval(datetime.date(2015, 7, 30), datetime.date(2015, 8, 2)),)])
    assert "BEGIN(2015-07-30)END(2015-08-02)" in str(r)


# --------------------------------------------------------------------------- portion
# portion (a library of interval unions) is an oracle independent of sira's sweep lines and of
# the UNPACK reference above, and it knows unbounded intervals, which UNPACK cannot list.

open_intervals = st.tuples(st.integers(0, 7), st.one_of(st.none(), st.integers(1, 4))).map(
    lambda t: Interval(t[0], None if t[1] is None else t[0] + t[1]))


def open_relations(keys=("k",), max_size=6):
    heading = {**{k: INT for k in keys}, "x": INTINTERVAL}
    row = st.fixed_dictionaries({**{k: st.integers(0, 1) for k in keys}, "x": open_intervals})
    return st.lists(row, max_size=max_size).map(lambda rows: Relation.from_rows(heading, rows))


def portion_union(intervals):
    out = P.empty()
    for interval in intervals:
        out |= interval.to_portion()
    return out


def by_group(r: Relation, keys) -> dict:
    """Key values -> the portion union of the intervals of the tuples with those values."""
    groups = {}
    for row in r.to_rows():
        key = tuple(row[k] for k in keys)
        groups[key] = groups.get(key, P.empty()) | row["x"].to_portion()
    return groups


def from_groups(groups: dict, keys) -> Relation:
    """A relation {keys..., x} with one tuple per atomic interval of each group's union."""
    heading = {**{k: INT for k in keys}, "x": INTINTERVAL}
    return Relation.from_rows(heading, [
        {**dict(zip(keys, key)), "x": Interval.from_portion(atomic)}
        for key, union in groups.items() for atomic in union])


PORTION_OPS = {"union": lambda a, b: a | b, "intersect": lambda a, b: a & b,
               "minus": lambda a, b: a - b, "xminus": lambda a, b: (a | b) - (a & b)}


@SETTINGS
@given(open_relations(("k", "j"), max_size=8))
def test_pack_is_per_group_the_portion_union_split_into_atomic_intervals(r):
    expected = from_groups(by_group(r, ("j", "k")), ("j", "k"))
    assert sira.evaluate(lit(r).pack("x")) == expected


@SETTINGS
@given(st.sampled_from(sorted(PORTION_OPS)), open_relations(), open_relations())
def test_pointwise_set_operators_agree_with_portion(op, r1, r2):
    g1, g2 = by_group(r1, ("k",)), by_group(r2, ("k",))
    combined = {key: PORTION_OPS[op](g1.get(key, P.empty()), g2.get(key, P.empty()))
                for key in set(g1) | set(g2)}
    got = sira.evaluate(BUILD[op](lit(r1), lit(r2), None))
    assert got == from_groups(combined, ("k",))


@SETTINGS
@given(st.sampled_from(["join", "semijoin", "semiminus"]), open_relations(("k", "j")),
       open_relations(("k",)))
def test_pointwise_joins_agree_with_portion(op, r1, r2):
    g1, g2 = by_group(r1, ("j", "k")), by_group(r2, ("k",))
    if op == "semiminus":
        combined = {(j, k): u - g2.get((k,), P.empty()) for (j, k), u in g1.items()}
    else:  # r2's heading is within r1's: JOIN and SEMIJOIN both keep r1's points that r2 has
        combined = {(j, k): u & g2.get((k,), P.empty()) for (j, k), u in g1.items()}
    got = sira.evaluate(BUILD[op](lit(r1), lit(r2), None))
    assert got == from_groups(combined, ("j", "k"))


@SETTINGS
@given(open_intervals)
def test_an_interval_survives_the_round_trip_through_portion(x):
    assert Interval.from_portion(x.to_portion()) == x
    assert Interval.from_portion(x.to_portion(), INTINTERVAL) == x


def test_portion_intervals_of_dates_and_closed_bounds_convert_with_a_type():
    d = datetime.date
    assert Interval.from_portion(P.closed(d(2015, 7, 30), d(2015, 8, 1)), DATEINTERVAL) == \
        Interval(d(2015, 7, 30), d(2015, 8, 2))
    assert Interval.from_portion(P.open(3, 7), INTINTERVAL) == Interval(4, 7)
    assert Interval.from_portion(P.closedopen(2, P.inf)) == Interval(2, None)
    assert Interval(d(2015, 7, 30), d(2015, 8, 2)).to_portion() == \
        P.closedopen(d(2015, 7, 30), d(2015, 8, 2))
    assert DATE.check(Interval(d(2015, 7, 30)).to_portion().lower) == d(2015, 7, 30)


@pytest.mark.parametrize("interval, interval_type", [
    (P.empty(), None),
    (P.closedopen(1, 3) | P.closedopen(5, 7), None),
    (P.closedopen(-P.inf, 3), INTINTERVAL),
    (P.closed(1, 3), None),
    (P.open(1, 3), None),
    (P.closed(0.5, 1.5), FLOATINTERVAL),
    (P.closed(5, 5), None),
])
def test_portion_intervals_sira_cannot_hold_are_interval_errors(interval, interval_type):
    with pytest.raises(IntervalError) as err:
        Interval.from_portion(interval, interval_type)
    assert err.value.operator == "from_portion"


def test_from_portion_checks_points_against_the_type_and_refuses_other_values():
    with pytest.raises(SiraTypeError):
        Interval.from_portion(P.closedopen("a", "c"), INTINTERVAL)
    with pytest.raises(SiraTypeError):
        Interval.from_portion((1, 3))


# ----------------------------------------------------------------------------- the empty interval

def _empties():
    """Two empty intervals shown at different begins (3 and 5), as data from outside arrives."""
    import pyarrow as pa
    return pa.table({"k": pa.array([1, 2], pa.int64()),
                     "iv": pa.array([{"begin": 3, "end": 3}, {"begin": 5, "end": 5}],
                                    pa.struct([("begin", pa.int64()), ("end", pa.int64())]))})


@pytest.mark.parametrize("kind", ["arrow", "pandas", "parquet", "relation"])
def test_empty_intervals_read_from_outside_are_one_value_on_every_engine(engine, kind,
                                                                          tmp_path):
    """An empty interval (end equal to begin) is one value whatever its begin: the DuckDB and
    Spark engines grouped and joined two such structs as different values (a count of 1 where
    the Python engine counts 2; an empty equality join)."""
    import pyarrow.parquet as pq
    table = _empties()
    if kind == "pandas":
        value = table.to_pandas()
    elif kind == "parquet":
        pq.write_table(table, tmp_path / "e.parquet")
        value = f"parquet:{tmp_path / 'e.parquet'}"
    elif kind == "relation":
        value = Relation.from_rows({"k": sira.LONG, "iv": sira.LONGINTERVAL},
                                   [(1, Interval(3, 3)), (2, Interval(5, 5))])
    else:
        value = table
    counted = sira.evaluate("summarizebyusing(r, (iv), (n(plus(1))), ())", {"r": value},
                            engine=engine)
    assert [row["n"] for row in counted.to_rows()] == [2]
    joined = sira.evaluate("joinusing(restrict(r, eq(k, 1)), rename(restrict(r, eq(k, 2)), "
                           "(k, j)), ())", {"r": value}, engine=engine)
    assert len(joined) == 1


def test_an_empty_interval_is_written_as_one_struct_whatever_begin_it_is_shown_at(tmp_path):
    """The Python engine shows IINTERSECT's empty result at the lower begin (as the seed
    does); what it writes out is the one struct the DuckDB and Spark engines hold, so a result
    written from any engine is the same data."""
    import json
    pss = Relation.from_rows({"ps": sira.INTINTERVAL}, [(Interval(16384, 16385),),
                                                         (Interval(49152, 49153),)])
    res = sira.evaluate("aggregate(PSS, (iintersect(iintersect(ps))))", {"PSS": pss})
    assert "BEGIN(16384)END(16384)" in str(res)
    assert res.to_arrow().column("iintersect").to_pylist() == [{"begin": 0, "end": 0}]
    res.write_json(tmp_path / "e.json")
    assert "16384" not in (tmp_path / "e.json").read_text()
    assert json.loads((tmp_path / "e.json").read_text())["body"] \
        == [{"iintersect": {"begin": 0, "end": 0}}]
    res.write_csv(tmp_path / "e.csv")  # a literal: IINTERSECT of two intervals that meet
    assert sira.read_csv(tmp_path / "e.csv") == res


def test_in_asks_for_a_point_of_the_interval_not_one_of_its_two_ends():
    # an Interval is a tuple underneath: ``5 in Interval(1, 5)`` was True (5 is its end) and
    # ``3 in Interval(1, 5)`` False
    iv = Interval(1, 5)
    assert [p in iv for p in (0, 1, 3, 4, 5)] == [False, True, True, True, False]
    assert 10**12 in Interval(3) and 2 not in Interval(3)
    assert 4 not in Interval(4, 4)  # the empty interval has no point
