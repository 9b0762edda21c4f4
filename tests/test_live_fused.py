"""Fused execution of live queries (sira.streams.fused) and the fast row checks: whatever the
input (trains or single rows, producers coming and going, bounds, late rows refused, sums
overflowing), a fused query emits exactly what the same query emits operator by operator, in
the same order, fails the same way, and holds the same state after every step (its checkpoint
content is the same); the fast row check accepts exactly what the general one accepts."""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sira import BOOLEAN, INT, LONG, STRING, Heading
from sira.errors import IntOverflow, SiraError
from sira.streams import LiveQuery, QueryFailed, StreamEngine
from sira.streams.checkpoint import encode_content
from sira.streams.named import fast_body_function
from sira.values import check_row

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_live import CONSTANT, QUERIES  # noqa: E402
from test_live_properties import STREAMS, PAYLOAD, Workload, step  # noqa: E402

BENCHMARK = ("changes(summarizebyusing(window(restrict(s, gt(v, 10)), ts, range(1000)),"
             " (k, during), (total(plus(v))), (during)), at)")


def engine_of(fuse, queries=QUERIES, payload=PAYLOAD):
    engine = StreamEngine(fuse=fuse)
    for name in STREAMS:
        engine.create_stream(name, payload)
    for text in queries:
        engine.register(text, {"t": CONSTANT})
    return engine


def state_of(engine):
    return encode_content(list(engine.streams.values()), engine.queries)


def test_the_usual_live_query_runs_fused_unless_told_not_to(tmp_path):
    fused, unfused = engine_of(True, [BENCHMARK]), engine_of(False, [BENCHMARK])
    assert fused.queries[0].fused and not unfused.queries[0].fused
    fused.save(tmp_path / "e.ckpt")
    assert StreamEngine.load(tmp_path / "e.ckpt").queries[0].fused
    assert not StreamEngine.load(tmp_path / "e.ckpt", fuse=False).queries[0].fused
    fused.queries[0].save(tmp_path / "q.ckpt")
    assert not LiveQuery.load(tmp_path / "q.ckpt", fuse=False).fused


def test_most_queries_of_the_live_tests_have_a_fused_part():
    """SPL and WindowBy windows read the stream through their own operator (a fused chain
    covers only the row operators before them), so they are counted apart."""
    engine = engine_of(True)
    own = [q for q in engine.queries if _reads_spl_or_windowby(q.node)]
    fused = [q for q in engine.queries if q.fused]
    assert len(fused) >= len(engine.queries) - len(own) - 3
    assert [q for q in own if "restrict(s" in repr(q.node) and q.fused]


def _reads_spl_or_windowby(node) -> bool:
    from sira.algebra.spl import SplWindow
    from sira.algebra.windowby import WindowBy
    return isinstance(node, (SplWindow, WindowBy)) or any(
        _reads_spl_or_windowby(c) for c in node.children)


class Lockstep:
    """The same abstract steps on a fused and an unfused engine, comparing after each."""

    def __init__(self, queries=QUERIES, payload=PAYLOAD):
        self.engines = [engine_of(True, queries, payload), engine_of(False, queries, payload)]
        self.works = [Workload(e, check_refusals=False) for e in self.engines]

    def run(self, steps):
        for s in steps:
            for work in self.works:
                getattr(work, s[0])(*s[1:])
            self.assert_same()
        for work in self.works:
            work.end()
        self.assert_same()
        for engine in self.engines:
            engine.finish()
        self.assert_same()

    def assert_same(self):
        fused, unfused = self.engines
        for a, b in zip(fused.queries, unfused.queries):
            assert a.results() == b.results(), repr(a.node)  # the same rows, in the same order
            assert repr(a.error) == repr(b.error), repr(a.node)
        assert state_of(fused) == state_of(unfused)


@settings(max_examples=30, deadline=None)
@given(st.lists(step, max_size=30))
def test_a_fused_query_emits_and_holds_exactly_what_the_unfused_one_does(steps):
    Lockstep().run(steps)


SUMS = [
    "changes(summarizebyusing(window(restrict(s, ge(v, 0)), ts, range(3)), (k, during),"
    " (total(plus(v))), (during)), at)",
    "istream(summarizebyusing(window(s, ts, range(4)), (during), (total(plus(v))),"
    " (during)), at)",
    "changes(summarizebyusing(window(s, ts, range(2)), (k, during), (total(plus(v))"
    " n(plus(1))), (during)), at)",
    "summarizebyusing(window(s, ts, range(3)), (k, during), (total(plus(v))), (during))",
]
big = st.sampled_from([2_000_000_000, 1_500_000_000, -2_000_000_000, 7, 0])
big_step = st.one_of(
    st.tuples(st.just("insert"), st.sampled_from(STREAMS), st.integers(0, 1),
              st.lists(st.tuples(st.tuples(st.integers(0, 2), big), st.integers(0, 2)),
                       min_size=1, max_size=4)),
    st.tuples(st.just("bound"), st.sampled_from(STREAMS), st.integers(0, 1),
              st.integers(0, 3), st.booleans()),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(big_step, max_size=20))
def test_a_fused_sum_overflows_exactly_where_the_unfused_one_does(steps):
    run = Lockstep(SUMS)
    run.run(steps)
    for q in run.engines[0].queries:
        assert q.error is None or isinstance(q.error, (IntOverflow, QueryFailed))


def test_an_overflowing_sum_stops_a_fused_query_with_its_results_so_far():
    engine = engine_of(True, [SUMS[0]])
    (q,) = engine.queries
    p = engine.streams["s"].attach()
    p.insert({"k": 1, "v": 2_000_000_000}, 1)
    p.insert({"k": 1, "v": 2_000_000_000}, 2)  # the INT sum overflows when 2 is final
    p.insert({"k": 1, "v": 5}, 3)
    assert q.fused and isinstance(q.error, IntOverflow)
    assert [r["total"] for r in q.results()] == [2_000_000_000]
    with pytest.raises(QueryFailed):
        q.finish()


# ------------------------------------------------------------------------- fast row checks

HEADINGS = [
    {"k": INT, "v": INT},
    {"k": INT},
    {"big": LONG, "k": INT},
    {"name": STRING, "n": INT, "ok": BOOLEAN},
]
value = st.one_of(st.integers(-2 ** 64, 2 ** 64), st.sampled_from([2 ** 31, -2 ** 31 - 1,
                                                                   2 ** 63, -2 ** 63 - 1]),
                  st.booleans(), st.text(max_size=3), st.floats(allow_nan=True),
                  st.none())


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(HEADINGS), st.data())
def test_the_fast_row_check_accepts_exactly_what_check_row_accepts(payload, data):
    names = list(payload)
    keys = data.draw(st.lists(st.sampled_from(names + ["K", "extra"]), max_size=4,
                              unique=True), label="keys")
    row = {k: data.draw(value, label=k) for k in keys}
    valid = data.draw(st.booleans(), label="valid")
    if valid:
        row = {n: data.draw(_valid(payload[n]), label=n) for n in names}
    rowtime = data.draw(st.one_of(st.integers(-2 ** 64, 2 ** 64), st.just(5), st.booleans(),
                                  st.floats(allow_nan=False)), label="rowtime")
    heading = Heading.of(payload).extend([("ts", LONG), ("seq", LONG)], "STREAM")
    fast = fast_body_function(heading, Heading.of(payload), "ts", "seq")
    got = fast(row, rowtime, 3)
    try:
        expected = check_row(heading, {**row, "ts": rowtime, "seq": 3}, operator="STREAM s")
    except SiraError:
        expected = None
    if got is not None:  # whatever the fast check accepts, check_row accepts the same way
        assert got == expected
        assert [type(v) for v in got] == [type(v) for v in expected]
    if valid and type(rowtime) is int and -2 ** 63 <= rowtime < 2 ** 63:
        assert got is not None  # plain rows take the fast way (the rest the general one)


def _valid(t):
    if t == INT:
        return st.integers(-2 ** 31, 2 ** 31 - 1)
    if t == LONG:
        return st.integers(-2 ** 63, 2 ** 63 - 1)
    if t == STRING:
        return st.text(max_size=3)
    return st.booleans()


@pytest.mark.parametrize("row, why", [
    ({"k": True, "v": 1}, "a BOOLEAN is not an INT"),
    ({"k": 1, "v": 2 ** 31}, "beyond INT"),
    ({"k": 1.0, "v": 1}, "a FLOAT is not an INT"),
    ({"K": 1, "v": 1}, "names are case-insensitive: the general check takes it"),
])
def test_rows_the_fast_check_leaves_to_the_general_one(row, why):
    heading = Heading.of({"k": INT, "v": INT}).extend([("ts", LONG), ("seq", LONG)], "S")
    fast = fast_body_function(heading, Heading.of({"k": INT, "v": INT}), "ts", "seq")
    assert fast(row, 5, 1) is None, why


@pytest.mark.parametrize("text", [BENCHMARK.replace("1000", "3"), SUMS[1],
                                  "dstream(window(restrict(s, gt(v, 1)), ts, range(2)), at)"])
def test_a_subscriber_of_a_query_keeping_nothing_gets_what_the_unfused_one_gives(text):
    got = {}
    for fuse in (True, False):
        engine = StreamEngine(fuse=fuse)
        engine.create_stream("s", PAYLOAD)
        q = engine.register(text, keep=False)
        p = engine.streams["s"].attach()
        p.insert_many([({"k": 1, "v": 5}, 0), ({"k": 2, "v": 7}, 1)])
        got[fuse] = []
        q.subscribe(lambda row, bound, seen=got[fuse]: seen.append((row, bound)))
        for t in range(2, 12):
            p.insert({"k": t % 2, "v": t}, t)
        p.insert_many([({"k": 1, "v": 3}, 12), ({"k": 1, "v": 4}, 12)])
        engine.finish()
        assert q.fused == fuse and q.results() == []
    assert got[True] == got[False] and got[True]
