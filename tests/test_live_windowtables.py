"""Window tables (tumble, hop, cumulate, session) and per-window SUMMARIZEBY on the live
runtime: results equal the batch algebra, leave as soon as they are final (and no sooner),
and survive a checkpoint."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sira
from sira import INT, Relation
from sira.streams import LiveQuery, NotSupportedLive, StreamEngine

WINDOW_TABLE_QUERIES = [
    "summarizeby(tumble(s, ts, size(10)), (window_start, window_end, k), (total(plus(v))"
    " n(plus(1))))",
    "summarizeby(hop(s, ts, size(6) slide(4) offset(1)), (window_start, window_end, k),"
    " (total(plus(v))))",
    "summarizeby(cumulate(s, ts, step(2) size(6)), (window_start, window_end),"
    " (m(max(v)) f(plus(tofloat(v)))))",
    "summarizeby(session(s, ts, gap(3) partition(k)), (window_start, window_end, k),"
    " (total(plus(v))))",
    "session(s, ts, gap(2))",
    "restrict(hop(s, ts, size(4) slide(2)), gt(v, 1))",
    "summarizeby(restrict(session(s, ts, gap(2)), gt(v, 0)), (window_start, window_end,"
    " window_time), (n(plus(1))))",
    "union(summarizeby(tumble(s, ts, size(3)), (window_start, window_end), (n(plus(1)))),"
    " summarizeby(tumble(r, ts, size(4)), (window_start, window_end), (n(plus(1)))))",
]

# (stream, key, value, gap before it, bound ahead after it)
event = st.tuples(st.sampled_from(["s", "r"]), st.integers(0, 2), st.integers(0, 4),
                  st.integers(0, 3), st.integers(0, 3))


def new_engine(text):
    engine = StreamEngine()
    streams = {n: engine.create_stream(n, {"k": INT, "v": INT}) for n in ("s", "r")}
    seen = {n: [] for n in streams}
    for n, stream in streams.items():
        stream.subscribe(lambda row, bound, n=n: row and seen[n].append(dict(row)))
    return engine, streams, engine.register(text), seen


def feed(streams, events, producers=None):
    producers = producers or {n: s.attach(n) for n, s in streams.items()}
    t = {n: max(s.passed_bound or 0, 0) for n, s in streams.items()}
    for name, k, v, gap, ahead in events:
        t[name] += gap
        producers[name].insert({"k": k, "v": v}, t[name])
        if ahead:
            t[name] += ahead
            producers[name].bound(t[name])
    return producers


def batch(streams, seen, text):
    relvars = {n: Relation.from_rows(s.heading, seen[n]) for n, s in streams.items()}
    return sira.evaluate(text, relvars)


@pytest.mark.parametrize("text", WINDOW_TABLE_QUERIES)
@settings(max_examples=25, deadline=None)
@given(st.lists(event, max_size=25))
def test_live_window_tables_equal_the_batch_algebra(text, events):
    engine, streams, q, seen = new_engine(text)
    for p in feed(streams, events).values():
        p.detach()
    engine.finish()
    results = [tuple(sorted(r.items())) for r in q.results()]
    assert len(results) == len(set(results)), "a result was emitted twice"
    assert q.relation() == batch(streams, seen, text)


@pytest.mark.parametrize("text", WINDOW_TABLE_QUERIES)
@settings(max_examples=15, deadline=None)
@given(st.lists(event, max_size=25), st.integers(0, 25))
def test_live_window_tables_continue_the_same_after_a_checkpoint(tmp_path_factory, text,
                                                                  events, cut):
    path = tmp_path_factory.mktemp("ckpt") / "q.ckpt"
    engine, streams, q, seen = new_engine(text)
    feed(streams, events[:cut])
    engine.save(path)
    restored = StreamEngine.load(path)
    for n, stream in restored.streams.items():
        stream.subscribe(lambda row, bound, n=n: row and seen[n].append(dict(row)))
    (rq,) = restored.queries
    producers = {n: s.producer(n) for n, s in restored.streams.items()}
    for p in feed(restored.streams, events[cut:], producers).values():
        p.detach()
    restored.finish()
    assert rq.relation() == batch(streams, seen, text)
    assert rq.relation().body >= q.relation().body  # what left before the checkpoint stays


def test_a_tumbling_window_is_final_when_the_bound_reaches_its_end():
    engine, streams, q, _ = new_engine(
        "summarizeby(tumble(s, ts, size(10)), (window_start, window_end), (n(plus(1))))")
    p = streams["s"].attach()
    p.insert({"k": 0, "v": 1}, 3)
    p.bound(9)
    assert q.results() == []  # a row at 9 would still belong to [0, 10)
    p.bound(10)
    assert q.results() == [{"n": 1, "window_end": 10, "window_start": 0}]


def test_a_session_closes_only_when_the_bound_passes_last_plus_gap():
    engine, streams, q, _ = new_engine("session(s, ts, gap(3))")
    p = streams["s"].attach()
    p.insert({"k": 0, "v": 1}, 5)
    p.bound(8)
    assert q.results() == []  # a row at 8 = 5 + 3 would join the session
    p.insert({"k": 0, "v": 2}, 8)  # and it does
    p.bound(11)
    assert q.results() == []  # nor is it closed at 8 + 3
    p.bound(12)
    got = q.results()
    assert [(r["v"], r["window_start"], r["window_end"], r["window_time"]) for r in got] == \
        [(1, 5, 11, 10), (2, 5, 11, 10)]


def test_a_hopping_window_tags_each_element_at_once():
    engine, streams, q, _ = new_engine("hop(s, ts, size(4) slide(2))")
    streams["s"].attach().insert({"k": 0, "v": 7}, 5)
    assert sorted((r["window_start"], r["window_end"]) for r in q.results()) == [(2, 6), (4, 8)]


def test_a_window_summary_without_window_end_is_not_supported_live():
    engine = StreamEngine()
    engine.create_stream("s", {"k": INT, "v": INT})
    with pytest.raises(NotSupportedLive, match="window_end"):
        engine.register("summarizeby(tumble(s, ts, size(10)), (window_start, k), (n(plus(1))))")
    with pytest.raises(NotSupportedLive, match="not the rowtime"):
        engine.register("tumble(s, v, size(10))")


def test_a_restored_window_summary_keeps_its_open_groups(tmp_path):
    text = "summarizeby(session(s, ts, gap(3) partition(k)), (window_start, window_end, k)," \
           " (total(plus(v))))"
    engine, streams, q, _ = new_engine(text)
    p = streams["s"].attach("P")
    p.insert_many([({"k": 1, "v": 2}, 1), ({"k": 1, "v": 3}, 3), ({"k": 2, "v": 4}, 4)])
    path = tmp_path / "q.ckpt"
    q.save(path)
    restored = LiveQuery.load(path)
    restored.producer("s", "P").bound(100)
    assert sorted(map(lambda r: (r["k"], r["total"]), restored.results())) == [(1, 5), (2, 4)]


@pytest.mark.parametrize("text", ["hop(s, ts, size(1000000000000) slide(1))",
                                  "cumulate(s, ts, step(1) size(1000000000000))"])
def test_an_element_in_billions_of_windows_fails_the_query_not_the_engine(text):
    # counted before they are made, against sira.streams.operators.LIVE_MAX_TUPLES per train
    engine = StreamEngine()
    s = engine.create_stream("s", {"k": INT})
    q, other = engine.register(text), engine.register("restrict(s, gt(k, 0))")
    p = s.attach()
    p.insert({"k": 1}, 5)
    assert isinstance(q.error, sira.errors.TooManyTuples) and text[:3].upper() in str(q.error)
    p.insert({"k": 2}, 6)
    assert [r["k"] for r in other.results()] == [1, 2]
