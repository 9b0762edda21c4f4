"""WINDOWBY (seed 003, the SQL++ WindowBy clause): window semantics, heading checks, the text
syntax, the aggregate push-down rewrite, and the Spark translation against the Python engine
(including one sequence split across several Spark partitions)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sira
from sira import INT, STRING, Relation
from sira.algebra.basic import Extend, Project
from sira.algebra.windowby import Boundary, WindowBy, push_down_aggregates, windowby
from sira.errors import DuplicateAttribute, SiraTypeError, SiraValueError, UnknownAttribute
from sira.expressions.nodes import FieldOf, attr

from conftest import duckdb_available, spark_available

L = sira.literal



def ghcn(rows) -> Relation:
    """A GHCN-like relation from (station, day, val, datatype) rows."""
    return Relation.from_rows({"station": INT, "day": INT, "val": INT, "datatype": STRING},
                              [dict(zip(("station", "day", "val", "datatype"), r)) for r in rows])


#: station 1: days 1..6, day 3 not TMIN (Fig. 10 style); station 2: days 1..3
G = ghcn(
    [(1, 1, 20, "TMIN"), (1, 2, 28, "TMIN"), (1, 3, 30, "TMAX"), (1, 4, 23, "TMIN"),
     (1, 5, 26, "TMIN"), (1, 6, 21, "TMIN"), (2, 1, 22, "TMIN"), (2, 2, 27, "TMIN"),
     (2, 3, 19, "TMIN")])
TMIN = "restrict(g, datatype = 'TMIN')"


def run(text, engine="python", relvars=None):
    return sira.evaluate(text, relvars or {"g": G}, engine=engine)


def windows(text, engine="python", relvars=None, *names):
    """The result's rows as sorted tuples of (station, first day, last day, closed, names...)."""
    out = []
    for row in run(text, engine, relvars).to_rows():
        days = sorted(t[1] for t in row["w"].body) if "w" in row else []
        key = (row.get("station"), days[0] if days else None, days[-1] if days else None,
               row["closed"]) + tuple(row[n] for n in names)
        out.append(key)
    return sorted(out)


# --------------------------------------------------------------------------- semantics
def test_fig10_three_windows_two_unclosed(engine):
    q = (f"windowby({TMIN}, partition(station) order(day) sliding, "
         f"start(as(s) at(sp) when(s.val < 25)), end(at(ep) when(ep - sp = 2)))")
    # station 1 sequence (TMIN): days 1, 2, 4, 5, 6 at positions 1..5
    assert windows(q, engine, None, "sp", "ep") == [
        (1, 1, 4, True, 1, 3), (1, 4, 6, True, 3, 5), (1, 6, 6, False, 5, 5),
        (2, 1, 3, True, 1, 3), (2, 3, 3, False, 3, 3)]


def test_tumbling_starts_a_window_only_after_the_previous_one_ended(engine):
    q = (f"windowby({TMIN}, partition(station) order(day) tumbling, "
         f"start(at(sp)), end(at(ep) when(ep - sp = 1)))")
    assert windows(q, engine) == [(1, 1, 2, True), (1, 4, 5, True), (1, 6, 6, False),
                                  (2, 1, 2, True), (2, 3, 3, False)]


def test_an_unclosed_tumbling_window_ends_the_scan():
    q = (f"windowby({TMIN}, partition(station) order(day) tumbling, "
         f"start(as(s) when(s.val < 25)), end(as(e) when(e.val > 100)))")
    assert windows(q) == [(1, 1, 6, False), (2, 1, 3, False)]


def test_sliding_and_tumbling_differ_only_in_overlap():
    base = (f"partition(station) order(day) {{}}, start(as(s) when(s.val < 25)), "
            f"end(next(en) when(en.val >= 25))")
    sliding = windows(f"windowby({TMIN}, {base.format('sliding')})")
    tumbling = windows(f"windowby({TMIN}, {base.format('tumbling')})")
    assert set(tumbling) <= set(sliding)
    assert (1, 6, 6, False) in tumbling  # the last run reaches the end without its END


def test_unclosed_window_binds_its_end_variables_to_the_last_tuple():
    q = (f"windowby({TMIN}, partition(station) order(day) sliding, "
         f"start(as(s) when(s.day = 4)), end(as(e) at(ep) prev(pe) next(en) when(e.val > 100)))")
    (row,) = run(q).to_rows()
    assert row["closed"] is False
    assert row["e"]["day"] == 6 and row["ep"] == 5
    assert [t[1] for t in row["pe"].body] == [5]
    assert row["en"].cardinality == 0  # no next tuple: an empty relation, never a null


def test_a_comparison_with_a_missing_prev_never_fires(engine):
    # starts where the previous tuple is warmer: never at a sequence's first tuple (MISSING)
    q = (f"windowby({TMIN}, partition(station) order(day) sliding, "
         f"start(as(s) prev(ps) when(ps.val > s.val)), end(next(en) when(en.val > 0)))")
    assert windows(q, engine) == [(1, 4, 4, True), (1, 6, 6, False), (2, 3, 3, False)]


def test_a_declared_but_unused_missing_prev_does_not_falsify_a_condition(engine):
    q = (f"windowby({TMIN}, partition(station) order(day) sliding, "
         f"start(as(s) prev(ps) when(s.val < 21)), end(unbounded))")
    assert windows(q, engine) == [(1, 1, 6, True), (2, 3, 3, True)]


def test_prev_and_next_are_relations_of_zero_or_one_tuple(engine):
    q = (f"windowby({TMIN}, partition(station) order(day) sliding, "
         f"start(prev(ps) next(ns)), end(when(true)))")
    r = run(q, engine)
    assert r.heading.type_of("ps") == sira.RelationType(r.heading.type_of("w").heading)
    sizes = sorted((row["ps"].cardinality, row["ns"].cardinality) for row in r.to_rows())
    assert sizes == [(0, 1)] * 2 + [(1, 0)] * 2 + [(1, 1)] * 4


def test_label_without_a_start_match_opens_at_the_first_tuple(engine):
    q = (f"windowby({TMIN}, partition(station) order(day) sliding, label(as(l) at(lp)), "
         f"start(at(sp) when(lp - sp = 2)), end(at(ep) when(ep = lp)))")
    rows = sorted((r["station"], r["l"]["day"], r["sp"], r["ep"], r["opened"], r["closed"])
                  for r in run(q, engine).to_rows())
    assert rows[:3] == [(1, 1, 1, 1, False, True), (1, 2, 1, 2, False, True),
                        (1, 4, 1, 3, True, True)]


def test_start_unbounded_gives_one_window_per_partition(engine):
    for kind in ("sliding", "tumbling"):
        q = (f"windowby({TMIN}, partition(station) order(day) {kind}, start(unbounded), "
             f"end(as(e) when(e.val > 25)))")
        assert windows(q, engine) == [(1, 1, 2, True), (2, 1, 2, True)]


def test_end_unbounded_runs_to_the_end_and_is_closed(engine):
    q = (f"windowby({TMIN}, partition(station) order(day) sliding, "
         f"start(as(s) when(s.val < 21)), end(unbounded))")
    assert windows(q, engine) == [(1, 1, 6, True), (2, 3, 3, True)]


def test_only_drops_the_unclosed_windows(engine):
    q = (f"windowby({TMIN}, partition(station) order(day) sliding, "
         f"start(at(sp)), end(at(ep) when(ep - sp = 2)), only)")
    assert [w[3] for w in windows(q, engine)] == [True] * 4


def test_without_partition_the_whole_relation_is_one_sequence(engine):
    q = f"windowby({TMIN}, order(day, station) tumbling, start(at(sp)), end(at(ep) when(ep - sp = 2)))"
    r = run(q, engine)
    assert sorted(row["w"].cardinality for row in r.to_rows()) == [2, 3, 3]
    empty = run("windowby(restrict(g, false), order(day), start(as(s)), end(as(e)))", engine)
    assert empty.cardinality == 0


def test_ties_on_the_order_attributes_break_by_the_canonical_order(engine):
    r = Relation.from_rows({"k": INT, "t": INT, "v": STRING},
                           [{"k": 1, "t": 1, "v": v} for v in "bac"] + [{"k": 1, "t": 2, "v": "a"}])
    q = "windowby(r, order(t) sliding, start(as(s) at(sp)), end(at(ep) when(ep = sp)))"
    rows = sorted((row["sp"], row["s"]["v"]) for row in run(q, engine, {"r": r}).to_rows())
    assert rows == [(1, "a"), (2, "b"), (3, "c"), (4, "a")]


def test_conditions_may_use_relation_valued_operands(engine):
    limits = Relation.from_rows({"x": INT}, [(1,)])
    q = (f"windowby({TMIN}, partition(station) order(day) sliding, "
         f"start(as(s) when(s.val < 21 and cardinality(limits) = 1)), end(unbounded))")
    assert len(windows(q, engine, {"g": G, "limits": limits})) == 2


# --------------------------------------------------------------------------- three-valued logic
# SQL++'s truth tables (seed 003 is SQL++; XQuery's empty-sequence comparisons agree): a
# comparison with a PREV/NEXT that does not exist is MISSING, a clause fires only on TRUE
T, F, M = True, False, "MISSING"
AND_TABLE = {(T, T): T, (T, F): F, (T, M): M, (F, T): F, (F, F): F, (F, M): F,
             (M, T): M, (M, F): F, (M, M): M}
OR_TABLE = {(T, T): T, (T, F): T, (T, M): T, (F, T): T, (F, F): F, (F, M): M,
            (M, T): T, (M, F): M, (M, M): M}
NOT_TABLE = {T: F, F: T, M: M}
#: X is TRUE, FALSE or MISSING at the marked tuple as its previous tuple has x = 1, x = 0, or
#: does not exist; Y the same with the next tuple's y
X, Y = "ps.x = 1", "ns.y = 1"


def truth_relation() -> Relation:
    """One partition k per (X, Y) pair: a marked tuple, with a previous tuple unless X is
    MISSING and a next tuple unless Y is MISSING."""
    rows = []
    for k, (x, y) in enumerate(AND_TABLE):
        t = 1
        if x is not M:
            rows.append((k, t, int(x is T), 0, 0))
            t += 1
        rows.append((k, t, 0, 0, 1))
        if y is not M:
            rows.append((k, t + 1, 0, int(y is T), 0))
    return Relation.from_rows({"k": INT, "t": INT, "x": INT, "y": INT, "mark": INT}, rows)


def truth_values(condition, engine) -> dict:
    """{(X, Y): TRUE/FALSE/MISSING of ``condition`` at the marked tuple}, from where START
    fires for ``condition`` (TRUE) and for ``is_missing(condition)`` (MISSING)."""
    def fired(cond):
        q = (f"windowby(r, partition(k) order(t) sliding, start(as(s) prev(ps) next(ns) "
             f"when({cond})), end(unbounded))")
        rows = run(q, engine, {"r": truth_relation()}).to_rows()
        return {row["k"] for row in rows if row["s"]["mark"] == 1}
    true, missing = fired(condition), fired(f"is_missing({condition})")
    assert not true & missing
    return {pair: T if k in true else M if k in missing else F
            for k, pair in enumerate(AND_TABLE)}


def test_and_follows_the_three_valued_truth_table(engine):
    assert truth_values(f"{X} and {Y}", engine) == AND_TABLE


def test_or_follows_the_three_valued_truth_table(engine):
    assert truth_values(f"{X} or {Y}", engine) == OR_TABLE


def test_not_of_missing_is_missing(engine):
    got = truth_values(f"not({X})", engine)
    assert {x: got[(x, T)] for x in NOT_TABLE} == NOT_TABLE


def test_is_missing_opens_a_window_at_each_first_tuple(engine):
    # seed 003, Fig. 14b: a run of val < 25 starts at a first tuple or after a val > 24
    q = (f"windowby({TMIN}, partition(station) order(day) sliding, start(as(s) prev(ps) "
         f"when(s.val < 25 and (is_missing(ps) or ps.val > 24))), "
         f"end(next(en) when(en.val >= 25)))")
    assert windows(q, engine) == [(1, 1, 1, True), (1, 4, 4, True), (1, 6, 6, False),
                                  (2, 1, 1, True), (2, 3, 3, False)]


def test_an_end_closes_at_the_last_tuple_when_its_other_disjunct_holds(engine):
    q = (f"windowby({TMIN}, partition(station) order(day) tumbling, start(as(s)), "
         f"end(as(e) next(en) when((e.val < 25 and en.val >= 25) or e.day = 3)))")
    # station 2's last tuple (day 3): (FALSE and MISSING) or TRUE; station 1's: MISSING or FALSE
    assert windows(q, engine) == [(1, 1, 1, True), (1, 2, 4, True), (1, 5, 6, False),
                                  (2, 1, 1, True), (2, 2, 3, True)]


def test_is_missing_of_a_field_is_is_missing_of_its_variable(engine):
    whole = (f"windowby({TMIN}, partition(station) order(day) sliding, "
             f"start(as(s) next(ns) when(is_missing(ns))), end(unbounded))")
    field = whole.replace("is_missing(ns)", "is_missing(ns.val + s.val)")
    assert windows(whole, engine) == windows(field, engine) == [(1, 6, 6, True),
                                                                (2, 3, 3, True)]


def test_is_missing_of_a_variable_that_always_exists_is_false(engine):
    q = (f"windowby({TMIN}, order(day) sliding, start(as(s) at(sp) when(is_missing(s) or "
         f"is_missing(sp))), end(unbounded))")
    assert run(q, engine).cardinality == 0


def test_an_operator_of_a_three_valued_argument_is_missing_when_it_is(engine):
    # eq(MISSING or FALSE, ...) is MISSING: eq decides only where both operands are known
    q = (f"windowby({TMIN}, partition(station) order(day) sliding, start(as(s) prev(ps) "
         f"next(ns) when(eq(ps.val < 25 or ns.val < 25, s.val > 24))), end(unbounded))")
    # station 1, vals 20 28 23 26 21 on days 1 2 4 5 6: day 1 MISSING or FALSE (no start);
    # day 2 TRUE = TRUE; day 4 FALSE = FALSE; day 5 TRUE = TRUE; day 6 FALSE or MISSING (no
    # start). Station 2, vals 22 27 19: days 1 and 3 MISSING, day 2 TRUE = TRUE
    assert [w[:2] for w in windows(q, engine)] == [(1, 2), (1, 4), (1, 5), (2, 2)]


def test_is_missing_outside_a_windowby_condition_is_refused_naming_it():
    with pytest.raises(SiraTypeError) as info:
        sira.parse("restrict(g, not(is_missing(val)))", {"g": G})
    assert info.value.operator == "is_missing" and "WINDOWBY condition" in str(info.value)


def test_the_python_api_builds_is_missing():
    from sira.algebra.windowby import is_missing
    node = windowby(L(G), "day", partition="station",
                    start=Boundary(as_="s", prev="ps",
                                   when=is_missing(attr("ps")) | (FieldOf(attr("ps"), "val") > 24)))
    assert sira.parse(repr(node), {"g": G}) == node
    # every tuple of G (TMAX included) whose previous tuple is missing or above 24
    assert windows(repr(node)) == [(1, 1, 1, True), (1, 3, 3, True), (1, 4, 4, True),
                                   (1, 6, 6, True), (2, 1, 1, True), (2, 3, 3, True)]


# --------------------------------------------------------------------------- heading checks
@pytest.mark.parametrize("text, error, fields", [
    ("windowby(g, partition(nosuch) order(day), start(as(s)), end(as(e)))",
     UnknownAttribute, {"attribute": "nosuch"}),
    ("windowby(g, order(nosuch), start(as(s)), end(as(e)))",
     UnknownAttribute, {"attribute": "nosuch"}),
    ("windowby(g, order(day), start(as(s) when(e.val > 1)), end(as(e)))",
     UnknownAttribute, {"attribute": "e"}),
    ("windowby(g, order(day), label(when(s.val > 1)), start(as(s)), end(as(e)))",
     UnknownAttribute, {"attribute": "s"}),
    ("windowby(g, order(day), start(at(sp) when(sp)), end(as(e)))",
     SiraTypeError, {"operator": "WINDOWBY"}),
    ("windowby(g, order(day), start(as(s)), end(as(s)))",
     DuplicateAttribute, {"attribute": "s"}),
    ("windowby(g, partition(station) order(day), start(as(station)), end(as(e)))",
     DuplicateAttribute, {"attribute": "station"}),
    ("windowby(g, order(day), start(as(closed)), end(as(e)))",
     DuplicateAttribute, {"attribute": "closed"}),
    ("windowby(g, order(day) tumbling, label(as(l)), start(as(s)), end(as(e)))",
     SiraValueError, {"operator": "WINDOWBY"}),
    ("windowby(g, order(day), start(as(s) prev(ps) when(is_missing(ps, s))), end(as(e)))",
     SiraTypeError, {"operator": "is_missing", "expected": "1 argument"}),
    ("windowby(g, order(day), start(as(s) prev(ps) when(is_missing(pz))), end(as(e)))",
     UnknownAttribute, {"attribute": "pz"}),
    ("windowby(g, order(day), start(prev(ps) when(is_missing(ps.nosuch))), end(as(e)))",
     UnknownAttribute, {"attribute": "nosuch"}),
    ("windowby(g, order(day), start(prev(ps) when(plus(ps.val, is_missing(ps)) > 1)), end())",
     SiraTypeError, {"operator": "plus"}),
    ("restrict(g, is_missing(val))", SiraTypeError, {"operator": "is_missing"}),
    ("extend(g, (m(is_missing(val))))", SiraTypeError, {"operator": "is_missing"}),
])
def test_the_heading_is_checked_when_the_node_is_built(text, error, fields):
    with pytest.raises(error) as info:
        sira.parse(text, {"g": G})
    for key, value in fields.items():
        assert getattr(info.value, key) == value


def test_the_python_api_checks_the_same():
    g = L(G)
    node = windowby(g, "day", partition="station",
                    start=Boundary(as_="s", at="sp", when=FieldOf(attr("s"), "val") < 25),
                    end=Boundary(at="ep", when=attr("ep") - attr("sp") > 1))
    assert node.heading.names == ("closed", "ep", "s", "sp", "station", "w")
    assert sira.parse(repr(node), {"g": G}) == node
    with pytest.raises(UnknownAttribute):
        windowby(g, "day", start=Boundary(when=attr("ep") > 1), end=Boundary(at="ep"))


@pytest.mark.parametrize("text", [
    "windowby(g, order(day), start(as(s)), end(as(e)))",
    "windowby(g, partition(station) order(day, val) tumbling, start(as(s) at(sp) prev(ps) "
    "next(ns) when(s.val < 25 and ps.val > 1)), end(as(e) at(ep) prev(pe) next(en) "
    "when(en.day - s.day >= 7)), only, result(win))",
    "windowby(g, order(day) sliding, label(as(l) at(lp) prev(lq) next(ln) when(l.val < 25)), "
    "start(unbounded), end(unbounded))",
    "windowby(g, order(day), start(at(sp)), end(at(ep) when(ep = sp)), "
    "aggregates(a(avg(w, val)) n(count(w)) m(max(w, day))))",
    "windowby(g, order(day), start(as(s) prev(ps) when(is_missing(ps) or ps.val > s.val)), "
    "end(as(e) next(en) when(not(is_missing(en.val)) and eq(en.val > 1, is_missing(s)))))",
])
def test_text_round_trip(text):
    node = sira.parse(text, {"g": G})
    assert sira.parse(repr(node), {"g": G}) == node
    assert isinstance(node, WindowBy)


# --------------------------------------------------------------------------- push-down
PUSHABLE = (f"project(extend(windowby({TMIN}, partition(station) order(day) sliding, "
            f"start(as(s) at(sp)), end(at(ep) when(ep - sp = 2))), "
            f"(sday(s.day) a(avg(w, val)) n(count(w)) top(max(w, val)) total(sum(w, val)))), "
            f"(station, sday, a, n, top, total, closed))")


def test_push_down_replaces_the_window_relation_by_aggregates():
    node = sira.parse(PUSHABLE, {"g": G})
    pushed = push_down_aggregates(node)
    assert isinstance(pushed, Project) and isinstance(pushed.source, Extend)
    wb = pushed.source.source
    assert isinstance(wb, WindowBy) and [n for n, _ in wb.aggregates] == ["a", "n", "top", "total"]
    assert "w" not in wb.heading
    assert pushed.heading == node.heading
    assert sira.parse(repr(pushed), {"g": G}) == pushed


def test_push_down_gives_the_same_relation(engine):
    node = sira.parse(PUSHABLE, {"g": G})
    pushed = push_down_aggregates(node)
    expected = sira.evaluate(node, {"g": G})
    assert sira.evaluate(pushed, {"g": G}, engine=engine) == expected
    assert expected.cardinality == 8


def test_push_down_of_aggregates_only_is_one_windowby_node():
    text = (f"project(extend(windowby({TMIN}, partition(station) order(day) tumbling, "
            f"start(at(sp)), end(at(ep) when(ep - sp = 1))), (a(avg(w, val)))), "
            f"(station, sp, ep, closed, a))")
    node = sira.parse(text, {"g": G})
    pushed = push_down_aggregates(node)
    assert isinstance(pushed, WindowBy)
    assert sira.evaluate(pushed, {"g": G}) == sira.evaluate(node, {"g": G})


def test_push_down_keeps_the_window_when_it_is_used_otherwise():
    kept = sira.parse(f"project(extend(windowby({TMIN}, order(day), start(as(s)), end(as(e))), "
                      f"(a(avg(w, val)))), (a, w))", {"g": G})
    assert push_down_aggregates(kept) == kept
    other = sira.parse(f"project(extend(windowby({TMIN}, order(day), start(as(s)), end(as(e))), "
                       f"(a(plus(count(w), 1)))), (a))", {"g": G})
    assert push_down_aggregates(other) == other


def test_push_down_rewrites_below_other_operators():
    node = sira.parse(f"restrict({PUSHABLE}, n = 3)", {"g": G})
    pushed = push_down_aggregates(node)
    assert pushed != node
    assert sira.evaluate(pushed, {"g": G}) == sira.evaluate(node, {"g": G})


# --------------------------------------------------------------------------- Spark
spark_only = pytest.mark.skipif(not spark_available(), reason="Spark is not available here")


def _random_relation(rng, stations=3, per_station=12):
    rows = set()
    for st in range(1, stations + 1):
        for _ in range(per_station):
            rows.add((st, rng.randint(1, 20), rng.randint(15, 35), rng.choice(["TMIN", "TMAX"])))
    return ghcn(rows)


QUERIES = [
    "windowby(g, partition(station) order(day) sliding, start(as(s) at(sp) when(s.val < 25)), "
    "end(at(ep) when(ep - sp = 2)))",
    "windowby(g, partition(station) order(day) tumbling, start(as(s)), "
    "end(next(en) when(en.day - s.day >= 7)))",
    "windowby(g, partition(station, datatype) order(day) tumbling, start(as(s) when(s.val < 25)),"
    " end(next(en) when(en.val >= 25)), only)",
    "windowby(g, partition(station) order(day) tumbling, start(as(s)), "
    "end(as(e) next(en) when(en.day - e.day > 1)))",
    "windowby(g, partition(station) order(day) sliding, label(as(l) at(lp) prev(lq) when(l.val < 25)),"
    " start(at(sp) prev(ps) when(lp - sp = 1)), end(at(ep) next(en) when(ep - lp = 1)))",
    "windowby(g, partition(station) order(day) sliding, label(as(l)), start(unbounded), "
    "end(as(e) when(e = l)))",
    "windowby(g, order(val) sliding, start(as(s) when(s.datatype = 'TMAX')), end(unbounded))",
    "windowby(g, partition(datatype) order(day) tumbling, start(unbounded), "
    "end(as(e) when(e.val > 30)), result(win))",
    # three-valued conditions: PREV/NEXT that do not exist, is_missing, an unopened LABEL window
    "windowby(g, partition(station) order(day) sliding, start(as(s) prev(ps) when(s.val < 25 and "
    "(is_missing(ps) or ps.val > 24))), end(as(e) next(en) when((e.val < 25 and en.val >= 25) "
    "or e.val > 33)))",
    "windowby(g, partition(station) order(day) tumbling, start(as(s)), "
    "end(as(e) next(en) when(is_missing(en) or not(en.day - e.day <= 2))))",
    "windowby(g, partition(station) order(day) sliding, label(as(l) at(lp) prev(lq) "
    "when(not(is_missing(lq)) and lq.val < l.val)), start(at(sp) prev(ps) when(lp - sp = 2 and "
    "ps.val > 20)), end(at(ep) next(en) when(ep - sp = 3 or is_missing(en))))",
]


@spark_only
@pytest.mark.parametrize("query", QUERIES)
def test_spark_matches_the_python_engine_on_random_data(query):
    rng = random.Random(hash(query) % 1000)
    for _ in range(1):  # more shapes in test_spark_windowby_split.py
        relvars = {"g": _random_relation(rng)}
        node = sira.parse(query, relvars)
        expected = sira.evaluate(node, relvars)
        assert sira.evaluate(node, relvars, engine="spark") == expected
        keep = [n for n in node.heading.names if n != node.result] + ["a"]
        pushed = push_down_aggregates(node.extend(a=_avg(node)).project(*keep))
        assert isinstance(pushed, WindowBy)
        assert sira.evaluate(pushed, relvars, engine="spark") == sira.evaluate(pushed, relvars)


def _avg(node):
    from sira.expressions.nodes import Aggregated, AttrRef
    return Aggregated("avg", AttrRef(node.result), "val")


@spark_only
def test_a_sequence_split_across_three_spark_partitions_gives_the_python_result():
    from pyspark.sql import functions as F

    from sira_spark import default_engine
    from sira_spark.convert import to_dataframe
    engine = default_engine()
    rng = random.Random(7)
    rows = [(1, day, rng.randint(15, 35), "TMIN") for day in range(1, 61)]
    rows += [(2, day, rng.randint(15, 35), "TMIN") for day in range(1, 11)]
    rel = ghcn(rows)
    df = to_dataframe(engine.spark, rel).repartition(3)
    spread = df.where(F.col("station") == 1).select(F.spark_partition_id().alias("p")) \
        .distinct().count()
    assert spread >= 3  # station 1's sequence really is in three partitions
    for query in (QUERIES[0], QUERIES[1], QUERIES[4],
                  "windowby(g, partition(station) order(day) sliding, start(at(sp)), "
                  "end(at(ep) when(ep - sp = 25)))"):
        expected = sira.evaluate(query, {"g": rel})
        assert engine.evaluate(query, {"g": df}) == expected
        assert expected.cardinality > 0


# --------------------------------------------------------------------------- random conditions
# Conditions drawn as small trees over the START variables s, ps, ns and the END variables e,
# pe, en, written in the text syntax and evaluated by a three-valued oracle written from the
# truth tables above (None: a variable that does not exist).
START_VARS, END_VARS = ("s", "ps", "ns"), ("e", "pe", "en")


def condition_trees(variables):
    """Trees of comparisons (with PREV/NEXT variables among others), is_missing of a variable,
    of a field or of a sub-condition, not/and/or, and eq of two conditions."""
    leaf = st.one_of(
        st.tuples(st.just("cmp"), st.sampled_from(variables), st.sampled_from("<>="),
                  st.integers(0, 2)),
        st.tuples(st.just("diff"), st.sampled_from(variables), st.sampled_from(variables)),
        st.tuples(st.just("missing"), st.sampled_from(variables), st.booleans()))
    return st.recursive(leaf, lambda kids: st.one_of(
        st.tuples(st.sampled_from(["not", "absent"]), kids),
        st.tuples(st.sampled_from(["and", "or", "eq"]), kids, kids)), max_leaves=4)


def condition_text(c) -> str:
    kind = c[0]
    if kind == "cmp":
        return f"{c[1]}.v {c[2]} {c[3]}"
    if kind == "diff":
        return f"{c[1]}.v - {c[2]}.v > 0"
    if kind == "missing":
        return f"is_missing({c[1]}.v)" if c[2] else f"is_missing({c[1]})"
    if kind in ("not", "absent"):
        return f"{'not' if kind == 'not' else 'is_missing'}({condition_text(c[1])})"
    if kind == "eq":
        return f"eq({condition_text(c[1])}, {condition_text(c[2])})"
    return f"({condition_text(c[1])} {kind} {condition_text(c[2])})"


def oracle(c, env):
    """TRUE, FALSE or MISSING of condition tree ``c`` where ``env`` gives each variable's v."""
    kind = c[0]
    if kind == "cmp":
        v = env[c[1]]
        return M if v is None else {"<": v < c[3], ">": v > c[3], "=": v == c[3]}[c[2]]
    if kind == "diff":
        a, b = env[c[1]], env[c[2]]
        return M if a is None or b is None else a - b > 0
    if kind == "missing":
        return env[c[1]] is None
    if kind == "not":
        return NOT_TABLE[oracle(c[1], env)]
    if kind == "absent":
        return oracle(c[1], env) is M
    a, b = oracle(c[1], env), oracle(c[2], env)
    if kind == "eq":
        return M if a is M or b is M else a == b
    return (AND_TABLE if kind == "and" else OR_TABLE)[(a, b)]


def oracle_windows(sequences, kind, start, end) -> set:
    """{(k, sp, ep, closed)} by the definitions: START and END fire only on TRUE."""
    out = set()
    for k, vs in sequences.items():
        n = len(vs)

        def at(prefix, p):
            return {prefix[0]: vs[p - 1], prefix[1]: vs[p - 2] if p > 1 else None,
                    prefix[2]: vs[p] if p < n else None}

        def end_of(s):
            for q in range(s, n + 1):
                if end is None or oracle(end, {**at(START_VARS, s), **at(END_VARS, q)}) is T:
                    return q, True
            return n, False
        p = 1
        while p <= n:
            if start is None or oracle(start, at(START_VARS, p)) is T:
                e, closed = end_of(p)
                out.add((k, p, e, closed))
                if kind == "tumbling":
                    if not closed:
                        break
                    p = e
            p += 1
    return out


def windowby_text(kind, start, end) -> str:
    def when(c):
        return "" if c is None else f" when({condition_text(c)})"
    return (f"windowby(r, partition(k) order(t) {kind}, start(as(s) at(sp) prev(ps) next(ns)"
            f"{when(start)}), end(as(e) at(ep) prev(pe) next(en){when(end)}))")


@st.composite
def random_windowby(draw):
    """(relation, sequences, kind, start tree, end tree): a third of them the shape Spark
    computes as a segmentation (tumbling, START without condition, END on its own variables)."""
    sequences = {k: draw(st.lists(st.integers(0, 2), max_size=5)) for k in (1, 2)}
    rel = Relation.from_rows({"k": INT, "t": INT, "v": INT},
                             [(k, t, v) for k, vs in sequences.items()
                              for t, v in enumerate(vs, 1)])
    if draw(st.integers(0, 2)) == 0:
        return rel, sequences, "tumbling", None, draw(condition_trees(END_VARS))
    return (rel, sequences, draw(st.sampled_from(["sliding", "tumbling"])),
            draw(condition_trees(START_VARS)), draw(condition_trees(START_VARS + END_VARS)))


def _absent(c):
    return None if c is None else ("absent", c)


@settings(max_examples=60, deadline=None)
@given(random_windowby())
def test_windows_open_and_close_exactly_where_three_valued_conditions_are_true(case):
    rel, sequences, kind, start, end = case
    # the conditions, then is_missing of each: where each is MISSING decides the windows
    for s_tree, e_tree in ((start, end), (_absent(start), _absent(end))):
        q = windowby_text(kind, s_tree, e_tree)
        got = {(row["k"], row["sp"], row["ep"], row["closed"])
               for row in run(q, "python", {"r": rel}).to_rows()}
        assert got == oracle_windows(sequences, kind, s_tree, e_tree), q


@spark_only
@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(random_windowby())
def test_spark_matches_the_python_engine_on_random_three_valued_conditions(case):
    rel, _, kind, start, end = case
    relvars = {"r": rel}
    q = windowby_text(kind, start, end)
    assert sira.evaluate(q, relvars, engine="spark") == sira.evaluate(q, relvars), q


# ------------------------------------------------------------------------------ the searches
PINNED_QUERIES = [
    "windowby(r, order(t) sliding, label(as(l) at(lp) when(l.v < 10)), "
    "start(as(s) at(sp) when(s.v > 25)), end(at(ep) when(ep - lp = 2)))",
    "windowby(r, order(t) sliding, label(as(l) at(lp)), start(at(sp) when(lp - sp = 3)), "
    "end(at(ep) when(lp - ep = 1)))",
    "windowby(r, order(t) sliding, label(as(l) at(lp)), start(at(sp) when(sp = lp)), "
    "end(as(e) at(ep) when(e.v > 20 and ep - sp = 2)))",
    "windowby(r, order(t) sliding, start(as(s) at(sp) when(s.v < 5)), "
    "end(at(ep) when(ep - sp = 3)))",
]


@pytest.mark.parametrize("text", PINNED_QUERIES)
@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 30), max_size=30))
def test_pinned_and_shared_searches_find_what_the_plain_scan_finds(text, values):
    import sira.engine.windowby as engine_windowby
    r = Relation.from_rows({"t": INT, "v": INT}, list(enumerate(values)))
    fast = sira.evaluate(text, {"r": r})
    pin, reads = engine_windowby._pin, engine_windowby._reads_roles
    engine_windowby._pin, engine_windowby._reads_roles = (lambda *a: None), (lambda *a: True)
    try:
        plain = sira.evaluate(text, {"r": r})
    finally:
        engine_windowby._pin, engine_windowby._reads_roles = pin, reads
    assert fast == plain


duckdb_only = pytest.mark.skipif(not duckdb_available(), reason="DuckDB is not available here")


@duckdb_only
@pytest.mark.parametrize("query", QUERIES)
def test_duckdb_matches_the_python_engine_on_random_data(query):
    rng = random.Random(hash(query) % 1000)
    for _ in range(3):
        relvars = {"g": _random_relation(rng)}
        node = sira.parse(query, relvars)
        assert sira.evaluate(node, relvars, engine="duckdb") == sira.evaluate(node, relvars)
        keep = [n for n in node.heading.names if n != node.result] + ["a"]
        pushed = push_down_aggregates(node.extend(a=_avg(node)).project(*keep))
        assert sira.evaluate(pushed, relvars, engine="duckdb") == sira.evaluate(pushed, relvars)


@duckdb_only
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(random_windowby())
def test_duckdb_matches_the_python_engine_on_random_three_valued_conditions(case):
    rel, _, kind, start, end = case
    relvars = {"r": rel}
    q = windowby_text(kind, start, end)
    assert sira.evaluate(q, relvars, engine="duckdb") == sira.evaluate(q, relvars), q
