"""SPL windows and WindowBy on the live runtime, beyond the shared live query list of
``test_live.py``: timeInterval panes over an event time that comes late (arrival order),
emissions leaving as soon as they are final, bounded memory, what is refused and why."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sira
from sira import INT, LONG, Relation
from sira.streams import LiveQuery, NotSupportedLive, StreamEngine

LATE_PANES = [
    "splwindow(e, et, timeinterval, intervalduration(4) creationperiod(2) discardage(3)"
    " arrival(ts) partitioned(k))",
    "splwindow(e, et, timeinterval, intervalduration(3) arrival(ts))",
    "project(ungroup(splwindow(e, et, timeinterval, intervalduration(5) creationperiod(5)"
    " intervaloffset(1) discardage(6) arrival(ts)), tuples), (at, instance, pane, et, v))",
]

# (key, value, event time's distance before the arrival time, arrival gap, bound ahead)
arrival = st.tuples(st.integers(0, 2), st.integers(0, 4), st.integers(-2, 8), st.integers(0, 3),
                    st.integers(0, 2))


def _engine(text):
    engine = StreamEngine()
    e = engine.create_stream("e", {"k": INT, "v": INT, "et": LONG})
    seen = []
    e.subscribe(lambda row, bound: row and seen.append(dict(row)))
    return engine, e, engine.register(text), seen


def _feed(producer, events, clock):
    for k, v, back, gap, ahead in events:
        clock[0] += gap
        producer.insert({"k": k, "v": v, "et": max(0, clock[0] - back)}, clock[0])
        if ahead:
            clock[0] += ahead
            producer.bound(clock[0])


@pytest.mark.parametrize("text", LATE_PANES)
@settings(max_examples=40, deadline=None)
@given(st.lists(arrival, max_size=30), st.integers(0, 30))
def test_panes_over_a_late_event_time_equal_the_batch_operator_across_a_checkpoint(
        tmp_path_factory, text, events, cut):
    engine, e, q, seen = _engine(text)
    clock = [0]
    p = e.attach("P")
    _feed(p, events[:cut], clock)
    path = tmp_path_factory.mktemp("ckpt") / "q.ckpt"
    q.save(path)
    restored = LiveQuery.load(path)
    engine.adopt(restored)
    _feed(p, events[cut:], clock)
    p.detach()
    engine.finish()
    batch = sira.evaluate(text, {"e": Relation.from_rows(e.heading, seen)})
    for query in (q, restored):
        results = [tuple(sorted(r.items())) for r in query.results()]
        assert len(results) == len(set(results)), "a result was emitted twice"
    assert q.relation() == batch
    assert restored.sink.results == q.sink.results  # the saved ones, then the same rows


def test_a_count_window_leaves_once_its_instant_is_complete():
    engine = StreamEngine()
    s = engine.create_stream("s", {"v": INT})
    q = engine.register("splwindow(s, ts, tumbling, count(2))")
    p = s.attach()
    p.insert({"v": 1}, 1)
    p.insert({"v": 2}, 2)
    assert q.results() == []  # another tuple at 2 could still come and sort before v = 2
    p.bound(3)
    assert [r["at"] for r in q.results()] == [2]


def test_a_time_tick_leaves_only_once_a_tuple_reaches_it():
    """The batch operator ticks up to the last tuple's ts: a bound past a tick is not enough,
    since the stream might end before any tuple reaches it."""
    engine = StreamEngine()
    s = engine.create_stream("s", {"v": INT})
    q = engine.register("splwindow(s, ts, tumbling, time(5))")
    p = s.attach()
    p.insert({"v": 1}, 1)
    p.bound(20)
    assert q.results() == []
    p.insert({"v": 2}, 20)
    p.bound(21)
    assert [(r["at"], len(r["tuples"])) for r in q.results()] == [(6, 1)]
    engine.finish()
    assert [r["at"] for r in q.results()] == [6]  # the tick at 21 never happened


def test_a_pane_in_rowtime_order_leaves_when_the_bound_reaches_its_end():
    engine = StreamEngine()
    s = engine.create_stream("s", {"v": INT})
    q = engine.register("splwindow(s, ts, timeinterval, intervalduration(10))")
    p = s.attach()
    p.insert({"v": 1}, 3)
    p.bound(9)
    assert q.results() == []
    p.bound(10)
    assert [(r["at"], r["pane"].begin, r["pane"].end) for r in q.results()] == [(10, 0, 10)]


def test_a_windowby_window_reading_next_waits_for_the_next_tuple_and_finish_closes_the_rest():
    engine = StreamEngine()
    s = engine.create_stream("s", {"v": INT})
    q = engine.register("windowby(s, order(ts) sliding, start(at(sp)), end(at(ep) next(n) "
                        "when(or(is_missing(n), lt(n.v, 0)))), aggregates(c(count(w))))")
    p = s.attach()
    p.insert_many([({"v": 1}, 1), ({"v": -1}, 2)])
    p.bound(5)
    assert q.results() == [{"c": 1, "closed": True, "ep": 1, "n": Relation.from_rows(
        s.heading, [{"v": -1, "ts": 2, "seq": 2}]), "sp": 1}]
    engine.finish()  # position 2 has no next tuple: MISSING, so END holds there
    assert sorted((r["sp"], r["ep"], r["closed"]) for r in q.results()) == [(1, 1, True),
                                                                             (2, 2, True)]


def test_a_windowby_keeps_only_the_rows_its_open_windows_need():
    engine = StreamEngine()
    s = engine.create_stream("s", {"k": INT, "v": INT})
    q = engine.register("windowby(s, partition(k) order(ts) sliding, start(at(sp)), "
                        "end(at(ep) when(eq(minus(ep, sp), 3))), aggregates(t(sum(w, v))))",
                        keep=False)
    p = s.attach()
    p.insert_many([({"k": i % 3, "v": i}, i) for i in range(20_000)])
    op = q.sink
    windowby_op = next(o for o in _operators(q) if type(o).__name__ == "WindowByRows")
    assert all(len(seq.rows) <= 2 * 64 for seq in windowby_op.parts.values())
    assert op.results == []


def _operators(query):
    from sira.streams.checkpoint import operators_of
    return operators_of(query)


def test_a_project_of_windows_that_may_merge_them_emits_each_row_once():
    engine = StreamEngine()
    s = engine.create_stream("s", {"v": INT})
    q = engine.register("project(windowby(s, order(ts) tumbling, start(as(a)), "
                        "end(at(ep) when(eq(mod(ep, 2), 0))), aggregates(n(count(w)))), (n))")
    p = s.attach()
    p.insert_many([({"v": i}, i) for i in range(1, 9)])
    engine.finish()
    assert q.results() == [{"n": 2}]


@pytest.mark.parametrize("text, reason", [
    ("windowby(s, order(v) sliding, start(at(sp)), end(at(ep)))", "ordered by 'v'"),
    ("splwindow(s, v, tumbling, count(2))", "ts 'v' is not the rowtime"),
    ("splwindow(s, ts, timeinterval, intervalduration(3) arrival(v))",
     "arrival attribute 'v' is not the rowtime"),
])
def test_what_a_live_window_cannot_read_in_order_is_refused_naming_it(text, reason):
    engine = StreamEngine()
    engine.create_stream("s", {"v": LONG})
    with pytest.raises(NotSupportedLive, match=reason):
        engine.register(text)
    assert engine.queries == []


def test_a_pane_ending_past_long_stops_the_query_with_an_overflow():
    """As the batch operator: a pane bound that does not fit LONG is IntOverflow (the live
    runtime stops the query and keeps the error), never a LONG out of range."""
    from sira.errors import IntOverflow
    engine = StreamEngine()
    e = engine.create_stream("e", {"k": INT, "v": INT, "et": LONG})
    q = engine.register("splwindow(e, et, timeinterval, intervalduration(10) arrival(ts))")
    p = e.attach("P")
    p.insert({"k": 0, "v": 1, "et": 2 ** 63 - 4}, 2 ** 63 - 4)
    p.detach()
    engine.finish()
    assert isinstance(q.error, IntOverflow) and "does not fit LONG" in str(q.error)


@pytest.mark.parametrize("text, last", [
    ("splwindow(s, ts, sliding, count(2) trigger(time(1)) partitioned(k, tuplecount(3)))",
     10 ** 12),  # a trillion ticks over a quiet stretch, each emitting the partitions held
    ("splwindow(s, ts, timeinterval, intervalduration(1000000000000) creationperiod(1))", 3),
])
def test_a_train_making_more_windows_than_the_limit_fails_the_query_not_the_engine(text, last):
    # as max_tuples refuses the batch result; the batch engine refuses both
    engine = StreamEngine()
    s = engine.create_stream("s", {"k": INT})
    q, other = engine.register(text), engine.register("restrict(s, gt(k, 0))")
    p = s.attach()
    p.insert_many([({"k": 1}, 0), ({"k": 2}, 1), ({"k": 1}, 2)])
    p.insert({"k": 3}, last)
    p.bound(last, strict=True)
    assert isinstance(q.error, sira.errors.TooManyTuples) and "SPLWINDOW" in str(q.error)
    p.insert({"k": 4}, last + 1)  # the stream and the other queries go on
    assert [r["k"] for r in other.results()] == [1, 2, 1, 3, 4]
    batch = Relation.from_rows({"k": INT, "ts": LONG},
                               [(1, 0), (2, 1), (1, 2), (3, last), (4, last + 1)])
    with pytest.raises(sira.errors.TooManyTuples):
        sira.evaluate(text, {"s": batch})


def test_the_live_limit_counts_what_each_train_makes(monkeypatch):
    # a query running for ever emits without end: the limit is per train of rows or bound
    import sira.streams.spl
    monkeypatch.setattr(sira.streams.spl, "LIVE_MAX_TUPLES", 6)
    text = "splwindow(s, ts, sliding, count(3) trigger(time(1)))"
    engine = StreamEngine()
    s = engine.create_stream("s", {"k": INT})
    q = engine.register(text)
    p = s.attach()
    rows = [(k, t) for k, t in zip(range(40), range(0, 80, 2))]
    for k, t in rows:
        p.insert({"k": k}, t)
    p.bound(80, strict=True)
    assert q.error is None
    batch = sira.evaluate(text, {"s": Relation.from_rows({"k": INT, "ts": LONG}, rows)})
    def windows(results):
        return sorted((r["at"], sorted(t["k"] for t in r["tuples"])) for r in results)
    assert windows(q.results()) == windows(batch) and len(batch) == 78
    p.insert({"k": 50}, 90)  # a quiet stretch of 10 ticks holding 3 tuples each
    p.bound(90, strict=True)
    assert isinstance(q.error, sira.errors.TooManyTuples)


@pytest.mark.parametrize("aggregates", ["", ", aggregates(n(count(w)) t(sum(w, v)))"])
def test_label_windows_sharing_one_start_over_a_long_stream_equal_the_batch_operator(aggregates):
    # every label window starts at START's first position (START reads no label), so a
    # partition keeps its rows from there on and drops the ones before; a label may come
    # before that start, and END reads the label and the start's PREV
    text = ("windowby(s, partition(k) order(ts) sliding, label(as(l) at(lp) when(eq(l.v, 1))),"
            " start(as(a) at(sp) prev(pa) when(eq(a.v, 2))),"
            " end(at(ep) when(ge(minus(ep, lp), 3)))" + aggregates + ")")
    engine = StreamEngine()
    s = engine.create_stream("s", {"k": INT, "v": INT})
    q = engine.register(text)
    rows = [({"k": i % 2, "v": (i * 7919) % 5 if i > 300 else i % 2}, i) for i in range(600)]
    s.attach().insert_many(rows)
    op = next(o for o in _operators(q) if type(o).__name__ == "WindowByRows")
    assert all(seq.base > 100 for seq in op.parts.values())  # the rows before START dropped
    engine.finish()
    stream = Relation.from_rows({"k": INT, "v": INT, "ts": LONG, "seq": LONG},
                                [dict(r, ts=t, seq=n + 1) for n, (r, t) in enumerate(rows)])
    assert q.relation() == sira.evaluate(text, {"s": stream})
    assert len(q.relation()) > 100
