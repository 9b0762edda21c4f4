"""The Python engine's fast paths give the answers of the slow ones.

* Intervals are tuples underneath: equal by value, every empty interval one value, never mixed
  up with plain tuples inside relations.
* Pipelined evaluation (operators handing rows to their one parent, a PROJECT over a JOIN
  making only the projected tuples) gives what evaluating every node to a relation gives, on
  random trees and on trees sharing subtrees; a shared node is evaluated once; errors still
  name the tuple of the operator's input; guards still count distinct tuples.
* ``Relation.from_rows`` checks rows of the right Python types a column at a time, and gives
  the relation, or the error, that ``check_row`` gives row by row.
* SUMMARIZEBY folds exact aggregations as the tuples come, checked as a whole-list fold is.
"""

from __future__ import annotations

import copy
import datetime
import pickle

import portion
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sira
from sira import (BOOLEAN, DATE, FLOAT, INT, INTINTERVAL, LONG, LONGINTERVAL, STRING, TIMESTAMP,
                  Heading, Interval, Relation, attr, call, lit)
from sira import engine
from sira.engine import Context, Rows, evaluate_node
from sira.engine.aggregation import fold
from sira.engine.packing import pack_one
from sira.errors import SiraError, SiraTypeError, TooManyTuples
from sira.rewrite import optimize
from sira.values import Tuple, check_row, positional_reorder, reorder_row, written_order

from test_rewrite import rewritable_trees

CHECKS = settings(max_examples=150, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ------------------------------------------------------------------------------- intervals

def test_intervals_are_equal_and_hash_alike_by_their_ends():
    assert Interval(1, 5) == Interval(1, 5) and hash(Interval(1, 5)) == hash(Interval(1, 5))
    assert Interval(1, 5) != Interval(1, 6)
    assert Interval(1) == Interval(1, None) != Interval(1, 5)


def test_every_empty_interval_is_one_value():
    empties = [Interval(3, 3), Interval(7, 7), Interval(9, 2)]
    assert all(e.empty for e in empties) and len(set(empties)) == 1
    assert Interval(3, 3) == Interval(7, 7) and not Interval(3, 3) != Interval(7, 7)
    for other in (Interval(3, 4), Interval(3)):
        assert Interval(3, 3) != other and other != Interval(3, 3)
        assert not Interval(3, 3) == other and not other == Interval(3, 3)


def test_an_interval_prints_and_reads_as_before():
    iv = Interval(4, 8)
    assert repr(iv) == "Interval(begin=4, end=8)" and repr(Interval(4)) == \
        "Interval(begin=4, end=None)"
    assert (iv.begin, iv.end, iv.unbounded, iv.empty) == (4, 8, False, False)
    assert INTINTERVAL.format(iv) == "BEGIN(4)END(8)"
    with pytest.raises(AttributeError):
        iv.begin = 5


@pytest.mark.parametrize("iv", [Interval(4, 8), Interval(4), Interval(3, 3),
                                Interval(datetime.date(2020, 1, 1), datetime.date(2020, 2, 1))])
def test_an_interval_survives_pickle_and_copy(iv):
    for clone in (pickle.loads(pickle.dumps(iv)), copy.copy(iv), copy.deepcopy(iv)):
        assert clone == iv and type(clone) is type(iv) and repr(clone) == repr(iv)


def test_a_plain_tuple_is_not_an_interval_value():
    # equal as Python tuples (hashing and comparing at C speed), never taken for one by sira
    assert Interval(1, 2) == (1, 2) and hash(Interval(1, 2)) == hash((1, 2))
    with pytest.raises(SiraTypeError, match="'x'"):
        Relation.from_rows({"x": INTINTERVAL}, [((1, 2),)])
    r = Relation.from_rows({"x": INTINTERVAL}, [(Interval(1, 2),)])
    assert (Interval(1, 2),) in r and ((1, 2),) not in r


def test_tuple_equality_of_intervals_does_not_leak_into_relation_equality():
    # the same Python tuples as bodies, under headings of different types, are different
    # relations: relations and tuples compare their headings first
    ints = Relation.from_rows({"x": INTINTERVAL}, [(Interval(1, 2),)])
    longs = Relation.from_rows({"x": LONGINTERVAL}, [(Interval(1, 2),)])
    assert ints.body == longs.body and ints != longs
    assert Tuple.from_dict({"x": INTINTERVAL}, {"x": Interval(1, 2)}) != \
        Tuple.from_dict({"x": LONGINTERVAL}, {"x": Interval(1, 2)})
    nested = Relation.from_rows({"r": sira.RelationType(ints.heading)}, [(ints,)])
    assert nested != Relation.from_rows({"r": sira.RelationType(longs.heading)}, [(longs,)])


def test_intervals_sort_by_their_type_with_unbounded_last():
    r = Relation.from_rows({"x": INTINTERVAL}, [(Interval(1),), (Interval(1, 5),),
                                                (Interval(0, 9),)])
    assert [row["x"] for row in r.to_rows()] == [Interval(0, 9), Interval(1, 5), Interval(1)]


def test_pack_drops_tuples_whose_interval_is_empty():
    r = Relation.from_rows({"k": INT, "x": INTINTERVAL},
                           [(1, Interval(5, 5)), (2, Interval(5, 5)), (2, Interval(6, 8)),
                            (3, Interval(2, 4)), (3, Interval(4, 4)), (3, Interval(4, 6))])
    packed = sira.evaluate(sira.literal(r).pack("x"))
    assert packed == Relation.from_rows({"k": INT, "x": INTINTERVAL},
                                        [(2, Interval(6, 8)), (3, Interval(2, 6))])


def test_pack_merges_everything_after_an_unbounded_interval():
    r = Relation.from_rows({"k": INT, "x": INTINTERVAL},
                           [(1, Interval(1, 3)), (1, Interval(2)), (1, Interval(9, 12)),
                            (1, Interval(20, 30)), (2, Interval(40, 41))])
    assert sira.evaluate(sira.literal(r).pack("x")) == Relation.from_rows(
        {"k": INT, "x": INTINTERVAL}, [(1, Interval(1)), (2, Interval(40, 41))])


_SPANS = st.tuples(st.integers(0, 12), st.integers(0, 4) | st.none()).map(
    lambda p: Interval(p[0], None if p[1] is None else p[0] + p[1]))


@CHECKS
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from("xy"), _SPANS), max_size=25))
def test_pack_finds_the_same_groups_by_sorting_as_by_hashing(rows):
    # body tuples (k, s, x): the groups agree on k and s
    by_sorting = pack_one(rows, 2, ordered=True)
    by_hashing = pack_one(rows, 2, ordered=False)
    assert len(by_sorting) == len(set(by_sorting))
    assert set(by_sorting) == set(by_hashing)
    expected = {}
    for k, s, iv in rows:  # the points each group covers, from the portion oracle
        expected[k, s] = expected.get((k, s), portion.empty()) | iv.to_portion()
    assert {(k, s, Interval.from_portion(p)) for (k, s), union in expected.items()
            for p in union} == set(by_sorting)


# ------------------------------------------------------------------------ pipelined evaluation

def _materialised(tree, relvars):
    """The tree evaluated with every node made a relation (a Context that knows no parents
    hands no rows on)."""
    engine._load_families()
    return Context(relvars).eval(tree)


def _outcome(fn, tree, relvars):
    try:
        return "ok", fn(tree, relvars)
    except SiraError as err:
        return "error", type(err).__name__


def _same_outcome(tree, relvars):
    piped = _outcome(evaluate_node, tree, relvars)
    whole = _outcome(_materialised, tree, relvars)
    assert piped == whole, f"{tree!r}\n{relvars!r}\npipelined: {piped}\nmaterialised: {whole}"


@CHECKS
@given(rewritable_trees())
def test_pipelined_evaluation_equals_evaluating_every_node(tree_and_relvars):
    tree, relvars = tree_and_relvars
    _same_outcome(tree, relvars)
    _same_outcome(optimize(tree), relvars)  # projections pushed into joins and the like


@CHECKS
@given(rewritable_trees(depth=3), st.data())
def test_pipelined_evaluation_of_trees_sharing_a_subtree(tree_and_relvars, data):
    tree, relvars = tree_and_relvars
    h = tree.heading
    keep = data.draw(st.lists(st.sampled_from(h.names), unique=True)) if h.degree else []
    shared = tree.join(tree.project(*keep) if keep else tree.project(()))
    _same_outcome(shared, relvars)
    _same_outcome(tree.semiminus(tree.restrict(call("not", lit(True)))), relvars)


@pytest.fixture
def restrict_calls(monkeypatch) -> list:
    """The RESTRICT nodes the Python engine evaluates, in order (the evaluator is wrapped)."""
    calls = []
    restrict = engine._EVALUATORS[sira.algebra.basic.Restrict]
    monkeypatch.setitem(engine._EVALUATORS, sira.algebra.basic.Restrict,
                        lambda node, ctx: calls.append(node) or restrict(node, ctx))
    return calls


def _shared_restriction():
    r = Relation.from_rows({"a": INT, "b": INT}, [(1, 2), (2, 3), (3, 4)])
    return sira.literal(r).restrict(attr("a") > 1)


def test_a_node_shared_by_two_parents_is_evaluated_once(restrict_calls):
    shared = _shared_restriction()
    tree = shared.join(shared.project("a")).union(shared)
    assert evaluate_node(tree) == Relation.from_rows({"a": INT, "b": INT}, [(2, 3), (3, 4)])
    assert len(restrict_calls) == 1


def test_a_tree_made_while_evaluating_shares_its_operands_with_the_query(restrict_calls):
    # a derived operator lowered to core ones builds such a tree over its own operands
    shared = _shared_restriction()
    query = shared.project("a")
    engine._load_families()
    ctx = Context({}, {}, query)
    side = ctx.eval(shared.join(shared.project("a")))
    assert side == ctx.eval(shared)
    assert ctx.eval(query) == Relation.from_rows({"a": INT}, [(2,), (3,)])
    assert len(restrict_calls) == 1


def _relvars():
    r = Relation.from_rows({"k": INT, "s": INT, "e": INT},
                           [(k, s, 10 * k + s) for k in range(4) for s in range(3)])
    s = Relation.from_rows({"k": INT, "c": INT}, [(0, 7), (1, 7), (1, 8), (2, 9)])
    return {"r": r, "s": s}


def test_a_project_over_a_join_makes_only_the_projected_tuples():
    relvars = _relvars()
    join = sira.relvar("r", relvars["r"].heading).join(sira.relvar("s", relvars["s"].heading))
    tree = join.project("c", "s")
    engine._load_families()
    ctx = Context(relvars, {}, tree)
    rows = ctx.rows(join, ("c", "s"))
    assert rows.heading.names == ("c", "s") and isinstance(rows.rows, set)
    assert evaluate_node(tree, relvars) == Relation.from_rows(
        {"c": INT, "s": INT}, [(c, s) for c in (7, 8, 9) for s in range(3)])


def test_errors_name_the_tuple_of_the_operators_input_through_a_projection():
    r = Relation.from_rows({"a": INT, "b": INT}, [(0, 5), (1, 6)])
    narrowed = sira.literal(r).project("a")
    for tree in (narrowed.restrict(call("div", lit(1), attr("a")) > 0),
                 narrowed.extend(x=call("div", lit(1), attr("a")))):
        with pytest.raises(sira.DivisionByZero) as err:
            sira.evaluate(tree, rewrite=False)
        assert err.value.tuple == "tuple(a(0))"


def test_names_blanked_by_a_projection_never_shadow_new_ones():
    r = Relation.from_rows({"a": INT, "b": INT}, [(1, 100), (2, 200)])
    narrowed = sira.literal(r).project("a")
    assert sira.evaluate(narrowed.rename(a="b"), rewrite=False) == \
        Relation.from_rows({"b": INT}, [(1,), (2,)])
    assert sira.evaluate(narrowed.extend(b=attr("a") + 1), rewrite=False) == \
        Relation.from_rows({"a": INT, "b": INT}, [(1, 2), (2, 3)])
    s = Relation.from_rows({"a": INT, "b": INT}, [(1, 7), (2, 8)])
    assert sira.evaluate(narrowed.join(sira.literal(s)), rewrite=False) == s


def test_a_join_counts_the_distinct_tuples_of_a_projected_operand():
    # 100 rows of R project onto 4 (k, z) pairs: the join holds 4 x 10 tuples, not 100 x 10
    r = Relation.from_rows({"k": INT, "z": INT, "x": INT},
                           [(i % 2, i // 2 % 2, i) for i in range(100)])
    s = Relation.from_rows({"k": INT, "y": INT}, [(k, y) for k in range(2) for y in range(10)])
    tree = sira.literal(r).project("k", "z").join(sira.literal(s))
    assert len(sira.evaluate(tree, rewrite=False, max_tuples=40)) == 40
    with pytest.raises(TooManyTuples):
        sira.evaluate(tree, rewrite=False, max_tuples=39)


def test_a_join_with_nothing_to_match_still_fails_on_its_other_operand():
    r = Relation.from_rows({"a": INT}, [(0,), (1,)])
    failing = sira.literal(r).extend(x=call("div", lit(1), attr("a")))
    empty = sira.literal(Relation.from_rows({"a": INT, "y": INT}, []))
    for tree in (failing.join(empty), empty.join(failing), failing.semijoin(empty),
                 failing.semiminus(empty)):
        with pytest.raises(sira.DivisionByZero):
            sira.evaluate(tree)


def test_rows_project_on_a_heading_as_a_set():
    r = Relation.from_rows({"a": INT, "b": INT}, [(1, 2), (1, 3)])
    rows = Rows.of(r)
    assert rows.exact(r.heading) and not rows.exact(r.heading.project(["a"]))
    assert rows.body(r.heading.project(["a"])) == frozenset({(1,)})
    assert rows.distinct_on(r.heading.project(["b"])).rows == frozenset({(2,), (3,)})


# ----------------------------------------------------------------------- from_rows fast path

HEADING = {"i": INT, "s": STRING, "f": FLOAT, "b": BOOLEAN, "d": DATE, "t": TIMESTAMP,
           "x": INTINTERVAL, "l": LONG}

GOOD = {
    INT: st.integers(-2**31, 2**31 - 1), LONG: st.integers(-2**63, 2**63 - 1),
    STRING: st.text(max_size=3), FLOAT: st.floats(allow_nan=False), BOOLEAN: st.booleans(),
    DATE: st.dates(), TIMESTAMP: st.datetimes(),
    INTINTERVAL: st.tuples(st.integers(-5, 5), st.integers(0, 5) | st.none()).map(
        lambda p: Interval(p[0], None if p[1] is None else p[0] + p[1])),
}
BAD = (st.integers(2**31, 2**40) | st.just(True) | st.just(float("nan")) | st.just("1") |
       st.just(1) | st.just(1.5) | st.just((1, 2)) | st.just(Interval(3, 1)) |
       st.datetimes(timezones=st.just(datetime.timezone.utc)) | st.just(-0.0) |
       st.just(Interval(2, 2)) | st.just(datetime.datetime(2020, 1, 1)))


@st.composite
def _rows(draw):
    names = draw(st.lists(st.sampled_from(sorted(HEADING)), unique=True, min_size=1,
                          max_size=4))
    heading = {n: HEADING[n] for n in names}
    rows = []
    for _ in range(draw(st.integers(1, 6))):
        values = {n: draw(BAD if draw(st.integers(0, 9)) == 0 else GOOD[t])
                  for n, t in heading.items()}
        shape = draw(st.sampled_from(["dict", "dict", "tuple", "list", "odd dict"]))
        if shape == "dict":
            rows.append(values)
        elif shape == "odd dict":  # an upper-case name, a missing or an extra attribute
            odd = dict(values)
            odd[draw(st.sampled_from(["I", "zz", names[0]]))] = 1
            if draw(st.booleans()):
                odd.pop(names[-1], None)
            rows.append(odd)
        else:
            seq = [values[n] for n in names]
            rows.append(tuple(seq) if shape == "tuple" else seq)
    return heading, rows


def _row_by_row(heading, rows):
    order = written_order(heading)
    h = Heading.of(heading)
    positions = positional_reorder(h, order)
    if positions is None:
        return Relation(h, frozenset(check_row(h, row) for row in rows))
    return Relation(h, frozenset(check_row(h, reorder_row(row, positions, h)) for row in rows))


def _built(fn, heading, rows):
    try:
        r = fn(heading, rows)
    except SiraError as err:
        return "error", type(err).__name__, str(err)
    return "ok", r, sorted(map(repr, r.body))  # repr: -0.0 and 0.0 are equal, not alike


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_rows())
def test_from_rows_gives_the_relation_or_the_error_check_row_gives(heading_and_rows):
    heading, rows = heading_and_rows
    assert _built(Relation.from_rows, heading, rows) == _built(_row_by_row, heading, rows)


def test_from_rows_names_the_attribute_of_a_wrong_value_among_good_rows():
    rows = [{"a": i, "b": "x"} for i in range(1000)] + [{"a": 2**31, "b": "y"}]
    with pytest.raises(sira.IntOverflow, match="attribute 'a'"):
        Relation.from_rows({"a": INT, "b": STRING}, rows)
    rows = [(i, "x") for i in range(1000)] + [(3, 4)]
    with pytest.raises(SiraTypeError, match="attribute 'b'"):
        Relation.from_rows({"a": INT, "b": STRING}, rows)


def test_from_rows_takes_positional_rows_in_the_written_order():
    r = Relation.from_rows({"name": STRING, "dept": STRING, "n": INT}, [("Al", "Sales", 1)])
    assert r.to_rows() == [{"dept": "Sales", "n": 1, "name": "Al"}]
    floats = Relation.from_rows({"f": FLOAT}, [(-0.0,), (1.5,)])
    assert sorted(map(repr, floats.body)) == ["(0.0,)", "(1.5,)"]


# ------------------------------------------------------------------------ SUMMARIZEBY folds

EXACT = ["plus", "mult", "max", "min"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(-20, 20)), max_size=30,
                unique=True),
       st.sampled_from(EXACT))
def test_summarizeby_folds_as_the_whole_list_fold(pairs, op):
    r = Relation.from_rows({"k": INT, "v": INT}, pairs)
    tree = sira.literal(r).summarizeby(("k",), t=(op, attr("v")))
    agg = sira.expressions.library.aggregation(op, INT)
    groups: dict = {}
    for k, v in pairs:
        groups.setdefault(k, []).append(v)
    try:
        expected = Relation.from_rows({"k": INT, "t": INT},
                                      [(k, fold(agg, vs)) for k, vs in groups.items()])
    except sira.IntOverflow:  # a product too large for INT: the running fold says so too
        with pytest.raises(sira.IntOverflow):
            sira.evaluate(tree)
        return
    assert sira.evaluate(tree) == expected


def test_summarizeby_checks_each_groups_sum_not_the_partial_sums():
    big = 2**31 - 1
    fits = Relation.from_rows({"k": INT, "i": INT, "v": INT},
                              [(1, 0, big), (1, 1, big), (1, 2, -big), (2, 0, 5)])
    tree = sira.literal(fits).summarizeby(("k",), t=("plus", attr("v")))
    assert sira.evaluate(tree) == Relation.from_rows({"k": INT, "t": INT}, [(1, big), (2, 5)])
    too_big = Relation.from_rows({"k": INT, "i": INT, "v": INT},
                                 [(1, 0, big), (1, 1, 1), (2, 0, -big), (2, 1, -1)])
    tree = sira.literal(too_big).summarizeby(("k",), t=("plus", attr("v")))
    with pytest.raises(sira.IntOverflow):
        sira.evaluate(tree)


def test_summarizeby_names_the_tuple_its_formula_fails_on():
    r = Relation.from_rows({"k": INT, "v": INT}, [(1, 2), (1, 0), (2, 4)])
    tree = sira.literal(r).summarizeby(("k",), t=("plus", call("div", lit(8), attr("v"))))
    with pytest.raises(sira.DivisionByZero) as err:
        sira.evaluate(tree)
    assert err.value.tuple == "tuple(k(1) v(0))"
