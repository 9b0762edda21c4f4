"""WINDOWBY over sequences split across Spark partitions (seed 003, section 5; issue 18 point 3).

The chunk scan (``sira_spark/windowby_scan.py``) is checked without Spark against the
reference's ``find_windows`` on sequences cut at random places (including every row in its own
chunk); on Spark, the translation is checked against the Python engine with several shuffle
partitions and windows spanning chunk boundaries, and its physical plans are checked to put
no input in one partition.
"""

from __future__ import annotations

import pickle
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sira
from sira import INT, LONG, STRING, Relation
from sira.values import Tuple

from conftest import record_calls, spark_available, windows_in_plan

spark_only = pytest.mark.skipif(not spark_available(), reason="Spark is not available here")


def stream(rng, n, keys=1, values=6, ties=True) -> Relation:
    """``r(k, t, v, c)``: ``keys`` sequences of about n tuples, times with ties (two tuples
    of a sequence may share t, broken by the canonical order)."""
    rows = set()
    for k in range(keys):
        for i in range(n):
            t = rng.randint(0, n // 2) if ties else i
            rows.add((k, t, rng.randint(0, values), rng.choice("ab")))
    return Relation.from_rows({"k": INT, "t": INT, "v": INT, "c": STRING}, list(rows))


#: every form: sliding, tumbling, LABEL (pinned, shared and searched starts), ONLY, partitioned
#: or not, sessions, start/end unbounded, three-valued conditions, aggregates
QUERIES = [
    "windowby(r, order(t) sliding, start(as(s) at(sp) when(s.v < 2)), end(at(ep) when(ep - sp = 5)))",
    "windowby(r, order(t) sliding, start(as(s) when(s.v = 0)), end(as(e) when(e.v - s.v > 4)))",
    "windowby(r, order(t) tumbling, start(as(s)), end(next(en) when(en.t - s.t >= 6)))",
    "windowby(r, order(t) tumbling, start(as(s) when(s.v < 3)), end(as(e) when(e.v = 6)), only)",
    "windowby(r, order(t) tumbling, start(as(s) at(sp) prev(ps)), "
    "end(as(e) at(ep) next(en) when(en.t - e.t > 1)))",
    "windowby(r, order(t) tumbling, start(at(sp) when(sp > 0)), end(at(ep) when(mod(ep, 9) = 0)))",
    "windowby(r, partition(k) order(t) tumbling, start(as(s) at(sp) when(s.v > 1)), "
    "end(at(ep) when(ep - sp = 7)))",
    "windowby(r, partition(k) order(t) sliding, label(as(l) at(lp) prev(lq) when(l.v < 2)), "
    "start(at(sp) prev(ps) when(lp - sp = 3)), end(at(ep) next(en) when(ep - lp = 2)))",
    "windowby(r, order(t) sliding, label(as(l) at(lp) when(l.v = 6)), "
    "start(as(s) when(s.v = 5)), end(as(e) at(ep) when(e.v = 0)))",
    "windowby(r, order(t) sliding, label(as(l) when(l.v = 6)), start(as(s) when(s.v > l.v - 2 and "
    "s.c = l.c)), end(as(e) when(e.v < s.v - 3)))",
    "windowby(r, order(t) sliding, label(as(l) at(lp) when(l.v = 0)), start(unbounded), "
    "end(as(e) when(e = l)), aggregates(n(count(w)) a(avg(w, v))))",
    "windowby(r, order(t) tumbling, start(unbounded), end(as(e) when(e.v = 6)), result(win))",
    "windowby(r, order(t) tumbling, start(as(s) when(s.v = 3)), end(unbounded))",
    "windowby(r, order(v, c) sliding, start(as(s) when(s.c = 'a')), end(unbounded))",
    "windowby(r, order(t) sliding, start(as(s) prev(ps) when(s.v < 3 and (is_missing(ps) or "
    "ps.v > 2))), end(as(e) next(en) when((e.v < 3 and en.v >= 3) or is_missing(en))))",
    "windowby(r, partition(c) order(t) tumbling, start(as(s)), "
    "end(as(e) next(en) when(is_missing(en) or not(en.v - e.v <= 2))), "
    "aggregates(n(count(w)) hi(max(w, v))))",
]


# --------------------------------------------------------------------------- without Spark

def simulate(node, rel, cuts):
    """The windows ``{(sequence, label, start, end, opened, closed)}`` the chunk scan finds
    when the sorted sequences are cut at ``cuts``, done as ``sira_spark.windowby`` does it
    (summaries, first pass, rounds of items, tumbling corrections), in one process."""
    from sira.engine.windowby import ordered_sequences
    from sira_spark.windowby_scan import (ITEM, REPORT, WINDOW, Chunk, Plan, TumblingChain,
                                          chunk_infos, entry_tag, summarize)
    h = rel.heading
    rows, keys = [], []
    for k, seq in enumerate(ordered_sequences(rel, node)):
        rows += [Tuple(h, r) for r in seq]
        keys += [(k,)] * len(seq)
    bounds = [0] + sorted({x for x in cuts if 0 < x < len(rows)}) + [len(rows)]
    data = {3 * i: (keys[a:b], rows[a:b]) for i, (a, b) in enumerate(zip(bounds, bounds[1:]))
            if a < b}  # chunk ids with gaps, as empty partitions leave them
    plan = pickle.loads(pickle.dumps(Plan(node, {}, (LONG,))))  # shipped with the functions
    codec = plan.codec  # what crosses between passes: data only
    infos = chunk_infos([codec.load_summary(codec.dump_summary(summarize(c, *d)))
                         for c, d in data.items()])
    chunks = {c: Chunk(plan, infos[c], *data[c]) for c in data}
    records = [r for c in chunks for r in chunks[c].first_pass()]
    windows = [r for r in records if r[0] == WINDOW]
    items = [r for r in records if r[0] == ITEM]
    while items:
        done = [chunks[r[1]].run(codec.loads(r[11])[1]) for r in items]
        windows += [r for r in done if r[0] == WINDOW]
        items = [r for r in done if r[0] == ITEM]
    if node.kind == "tumbling" and node.label is None and not node.start.unbounded:
        chain = TumblingChain(infos, {r[1]: codec.loads(r[11])[1] for r in records
                                      if r[0] == REPORT})
        fixed = []
        while wanted := chain.wanted():
            for c, entry in wanted:
                job = codec.loads(codec.dumps(("job", entry, entry_tag(entry))))
                for r in chunks[c].tumble(job[1], job[2]):
                    if r[0] == REPORT:
                        chain.learn(r[1], codec.loads(r[11]))
                    else:
                        fixed.append(r)
        decided = chain.decisions()
        windows = [r for r in windows if not (r[9] and r[1] in decided and
                                              r[5] < decided[r[1]][1])]
        windows += [r for r in fixed if r[1] in decided and decided[r[1]][0] == r[10]]
    return {(keys[g0][0], None if gl is None else gl - g0 + 1, gs - g0 + 1, ge - g0 + 1, op, cl)
            for _, _, g0, _, gl, gs, ge, op, cl, *_ in windows}


def reference_windows(node, rel):
    from sira.engine.windowby import _Condition, _Sequence, find_windows, ordered_sequences
    conds = [_Condition(node, w, None) for w in ("label", "start", "end")]
    return {(k,) + tuple(w) for k, seq in enumerate(ordered_sequences(rel, node))
            for w in find_windows(node, _Sequence(rel.heading, seq), *conds)}


@pytest.mark.parametrize("query", QUERIES)
def test_the_chunk_scan_finds_the_reference_windows_wherever_the_sequence_is_cut(query):
    rng = random.Random(query)
    for keys in (1, 3):
        rel = stream(rng, 40, keys=keys)
        node = sira.parse(query, {"r": rel})
        expected = reference_windows(node, rel)
        n = rel.cardinality
        for cuts in [[], list(range(n)), [n // 2]] + \
                [[rng.randint(0, n) for _ in range(rng.randint(1, 12))] for _ in range(12)]:
            assert simulate(node, rel, cuts) == expected, (query, cuts)


START_VARS, END_VARS = ("s", "ps", "ns"), ("e", "pe", "en")


def conditions(variables):
    leaf = st.one_of(
        st.builds(lambda v, op, k: f"{v}.v {op} {k}", st.sampled_from(variables),
                  st.sampled_from("<>="), st.integers(0, 2)),
        st.builds(lambda a, b: f"{a}.v - {b}.v > 0", st.sampled_from(variables),
                  st.sampled_from(variables)),
        st.builds(lambda v: f"is_missing({v})", st.sampled_from(variables)))
    return st.recursive(leaf, lambda kids: st.one_of(
        st.builds(lambda a: f"not({a})", kids), st.builds(lambda a: f"is_missing({a})", kids),
        st.builds(lambda a, op, b: f"({a} {op} {b})", kids, st.sampled_from(["and", "or"]),
                  kids)), max_leaves=4)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.integers(0, 2), max_size=14), st.sampled_from(["sliding", "tumbling"]),
       conditions(START_VARS), conditions(START_VARS + END_VARS), st.randoms())
def test_three_valued_conditions_across_chunk_boundaries(values, kind, start, end, rnd):
    rel = Relation.from_rows({"t": INT, "v": INT}, list(enumerate(values)))
    q = (f"windowby(r, order(t) {kind}, start(as(s) at(sp) prev(ps) next(ns) when({start})), "
         f"end(as(e) at(ep) prev(pe) next(en) when({end})))")
    node = sira.parse(q, {"r": rel})
    cuts = [rnd.randint(0, len(values)) for _ in range(rnd.randint(0, 6))]
    assert simulate(node, rel, cuts) == reference_windows(node, rel), (q, cuts)


# --------------------------------------------------------------------------- Spark

SINGLE_WINDOW = re.compile(r"Window \[(?:[^\[\]]|\[[^\[\]]*\])*\], \[\]")


def assert_no_single_partition(plan_text: str) -> None:
    """Fail when a physical plan moves every row into one partition: an ``Exchange
    SinglePartition`` or a ``Window`` with no partition spec."""
    for line in plan_text.splitlines():
        assert "SinglePartition" not in line, plan_text
        assert not SINGLE_WINDOW.search(line), plan_text


def test_the_plan_check_recognises_a_single_partition():
    with pytest.raises(AssertionError):
        assert_no_single_partition("+- Exchange SinglePartition, ENSURE_REQUIREMENTS, [plan_id=1]")
    with pytest.raises(AssertionError):
        assert_no_single_partition("+- Window [row_number() windowspecdefinition(t#1 ASC NULLS "
                                   "FIRST, specifiedwindowframe(RowFrame, unboundedpreceding$(), "
                                   "currentrow$())) AS r#5], [], [t#1 ASC NULLS FIRST]")
    assert_no_single_partition("+- Window [row_number() windowspecdefinition(k#0, t#1 ASC NULLS "
                               "FIRST, specifiedwindowframe(RowFrame, unboundedpreceding$(), "
                               "currentrow$())) AS r#5], [k#0], [t#1 ASC NULLS FIRST]")


@pytest.fixture(scope="module")
def spark_engine():
    from sira_spark import default_engine
    engine = default_engine()
    conf = engine.spark.conf
    before = conf.get("spark.sql.shuffle.partitions")
    conf.set("spark.sql.shuffle.partitions", "5")
    yield engine
    conf.set("spark.sql.shuffle.partitions", before)


def watched(run):
    """(result, what ``sira_spark.windowby`` reported while ``run()`` ran)."""
    import sira_spark.windowby as wb
    seen = []
    wb.observer = lambda what, value: seen.append((what, value))
    try:
        return run(), seen
    finally:
        wb.observer = None


@spark_only
@pytest.mark.parametrize("query", QUERIES)
def test_spark_equals_the_python_engine_with_windows_across_partitions(query, spark_engine):
    from sira_spark.convert import to_dataframe
    rng = random.Random(query)
    keys = 3 if "partition(k)" in query else 1
    rel = stream(rng, 60 if keys == 1 else 25, keys=keys)
    df = to_dataframe(spark_engine.spark, rel).repartition(3)
    got, seen = watched(lambda: spark_engine.evaluate(query, {"r": df}))
    assert got == sira.evaluate(query, {"r": rel}), query
    assert ("chunks", 5) in seen or any(w == "chunks" and v >= 4 for w, v in seen)


@spark_only
def test_windows_really_cross_chunk_boundaries(spark_engine):
    rel = stream(random.Random(5), 80, ties=False)
    q = "windowby(r, order(t) sliding, start(as(s)), end(as(e) at(ep) when(e.v - s.v > 5)))"
    got, seen = watched(lambda: spark_engine.evaluate(q, {"r": rel}))
    assert got == sira.evaluate(q, {"r": rel})
    assert [v for w, v in seen if w == "round"], "no window was handed over"


@spark_only
@settings(max_examples=4, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.integers(0, 2), min_size=8, max_size=24), st.sampled_from(
    ["sliding", "tumbling"]), conditions(START_VARS), conditions(START_VARS + END_VARS))
def test_spark_three_valued_conditions_across_partitions(values, kind, start, end):
    from sira_spark import default_engine
    engine = default_engine()
    rel = Relation.from_rows({"t": INT, "v": INT}, list(enumerate(values)))
    q = (f"windowby(r, order(t) {kind}, start(as(s) at(sp) prev(ps) next(ns) when({start})), "
         f"end(as(e) at(ep) prev(pe) next(en) when({end})))")
    conf = engine.spark.conf
    before = conf.get("spark.sql.shuffle.partitions")
    conf.set("spark.sql.shuffle.partitions", "4")
    try:
        assert engine.evaluate(q, {"r": rel}) == sira.evaluate(q, {"r": rel}), q
    finally:
        conf.set("spark.sql.shuffle.partitions", before)


@spark_only
@pytest.mark.parametrize("query", [
    "windowby(r, order(t) sliding, start(as(s) when(s.v < 2)), end(as(e) when(e.v - s.v > 3)))",
    "windowby(r, partition(k) order(t) sliding, start(as(s) when(s.v < 2)), "
    "end(as(e) when(e.v - s.v > 3)))",
    "windowby(r, order(t) tumbling, start(as(s)), end(as(e) next(en) when(en.t - e.t > 1)))",
    "windowby(r, order(t) sliding, label(as(l) at(lp)), start(at(sp) when(lp - sp = 3)), "
    "end(at(ep) when(ep = lp)))",
])
def test_no_plan_puts_a_single_sequence_in_one_partition(query, spark_engine):
    from sira_spark.convert import to_dataframe
    rel = stream(random.Random(2), 40)  # one sequence: k is the same everywhere
    df = to_dataframe(spark_engine.spark, rel)
    with windows_in_plan():  # the windows are stored to be counted: see how they are made
        out, seen = watched(lambda: spark_engine.dataframe(query, {"r": df}))
    plans = [v for w, v in seen if w == "plan"] + [out]
    assert len(plans) >= 4
    for plan in plans:
        assert_no_single_partition(plan._jdf.queryExecution().executedPlan().toString())


def test_hand_over_blobs_are_data_that_give_back_every_value():
    # what crosses between passes is JSON (no pickle): every type of a narrow row and of a
    # partition key comes back equal, dates, timestamps, intervals and nested values included
    import datetime
    import json

    from sira import BIGINT, BOOLEAN, DATE, FLOAT, TIMESTAMP
    from sira.intervals import DATEINTERVAL, INTINTERVAL, Interval
    from sira.types import AVERAGE, Average, RelationType, TupleType
    from sira.values import Heading
    from sira_spark.windowby_scan import DONE, Codec, Item

    inner = Heading.of({"x": INT, "d": DATE})
    h = Heading.of({"i": INT, "l": LONG, "b": BIGINT, "f": FLOAT, "s": STRING, "o": BOOLEAN,
                    "d": DATE, "t": TIMESTAMP, "iv": INTINTERVAL, "dv": DATEINTERVAL,
                    "r": RelationType(inner), "u": TupleType(inner), "a": AVERAGE})
    day = datetime.date(2024, 2, 29)
    row = Tuple.from_dict(h, {
        "i": -3, "l": 2 ** 40, "b": 2 ** 80, "f": -0.1, "s": "é\n'", "o": True, "d": day,
        "t": datetime.datetime(2024, 1, 1, 12, 0, 0, 7), "iv": Interval(4, 8),
        "dv": Interval(day, None),
        "r": Relation.from_rows(inner, [{"x": 1, "d": day}, {"x": 2, "d": day}]),
        "u": Tuple.from_dict(inner, {"x": 5, "d": day}), "a": Average(3, 2.5)})
    key_types = (DATEINTERVAL, FLOAT)
    codec = Codec(h, key_types)
    var = (2, None, row, row)
    item = Item(10, 40, None, None, 3, var, True, "E", 5, False)
    for message in (("item", item), ("job", item, 12), ("exit", item), ("exit", DONE),
                    ("exit", None), ("fix", 12, 2 ** 62, item), ("fix", 12, 30, None)):
        blob = codec.dumps(message)
        json.loads(blob)  # plain JSON
        back = codec.loads(blob)
        assert back[0] == message[0]
        for got, want in zip(back[1:], message[1:]):
            if isinstance(want, Item):
                assert all(getattr(got, k) == getattr(want, k) for k in Item.__slots__)
            else:
                assert got == want
    summary = {"c": 4, "count": 9, "first_key": (Interval(day, day + datetime.timedelta(3)),
                                                   1.5),
               "last_key": (Interval(day, None), -2.0), "first_run": 2, "last_run": 7,
               "first_row": row, "last_row": row}
    assert codec.load_summary(codec.dump_summary(summary)) == summary


@spark_only
@pytest.mark.parametrize("query", [q for q in QUERIES if "aggregates" not in q][:7])
def test_tumbling_windows_are_bounded_by_the_sequence_and_not_counted_again(
        query, spark_engine, monkeypatch):
    """Tumbling windows never overlap, so the tuples they hold are at most the input's: the
    count after them (``check_held``, storing every window) runs for sliding windows, and for
    tumbling ones only when ``max_tuples`` is below the input's size; the limit stays exact."""
    import sira_spark.windowby as wb
    from sira_spark.convert import to_dataframe
    counted = record_calls(monkeypatch, wb, "check_held")
    rel = stream(random.Random(query), 40, keys=3 if "partition(k)" in query else 1)
    df = to_dataframe(spark_engine.spark, rel).repartition(3)
    node = sira.parse(query, {"r": rel})
    expected = sira.evaluate(node, {"r": rel})
    assert spark_engine.evaluate(query, {"r": df}) == expected
    assert (counted != []) == (node.kind == "sliding"), query
    held = sum(len(w[node.result]) for w in expected)
    assert spark_engine.evaluate(query, {"r": df}, max_tuples=held) == expected
    with pytest.raises(sira.errors.TooManyTuples):
        spark_engine.evaluate(query, {"r": df}, max_tuples=held - 1)
