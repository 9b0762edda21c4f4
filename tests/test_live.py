"""Live streams: named streams and producers (seed 002) and continuous queries whose emitted
results always equal the batch algebra."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sira
from sira import INT, STRING, Heading, Relation
from sira.errors import SiraTypeError, UnknownAttribute
from sira.streams import LateRowError, LiveQuery, NotSupportedLive, StreamEngine, StreamError

# --------------------------------------------------------------------------- named streams


def _recorder(stream):
    out = []
    stream.subscribe(lambda row, bound: out.append(("row", row["ticker"], row["ts"]) if row
                                         else ("bound", bound)))
    return out


def test_rows_leave_in_rowtime_order_and_each_row_advances_the_bound():
    engine = StreamEngine()
    orders = engine.create_stream("orders", {"ticker": STRING})
    out = _recorder(orders)
    p = orders.attach()
    for ticker, t in (("ORCL", 1200), ("MSFT", 1201), ("IBM", 1202)):
        p.insert({"ticker": ticker}, t)
    assert [e for e in out if e[0] == "row"] == [("row", "ORCL", 1200), ("row", "MSFT", 1201),
                                                 ("row", "IBM", 1202)]
    assert out[-1] == ("bound", 1202)
    p.bound(1205)
    assert out[-1] == ("bound", 1205)


def test_a_late_row_is_rejected_and_changes_nothing():
    orders = StreamEngine().create_stream("orders", {"ticker": STRING})
    out = _recorder(orders)
    p = orders.attach("P")
    p.insert({"ticker": "ORCL"}, 1000)
    before = list(out)
    with pytest.raises(LateRowError) as err:
        p.insert({"ticker": "GOOG"}, 999)
    assert err.value.stream == "orders" and err.value.bound == 1000
    assert err.value.row == {"ticker": "GOOG"}
    assert out == before and orders.clock == 1000 and orders.seq == 1
    p.insert({"ticker": "IBM"}, 1000)  # the stream still works
    assert out[-1] == ("row", "IBM", 1000)


def test_bad_rows_and_bounds_are_rejected():
    orders = StreamEngine().create_stream("orders", {"ticker": STRING})
    p = orders.attach()
    with pytest.raises(UnknownAttribute):
        p.insert({"ticker": "A", "price": 3}, 1)
    with pytest.raises(SiraTypeError):
        p.insert({"ticker": 5}, 1)
    p.bound(10)
    with pytest.raises(StreamError):
        p.bound(5)  # a bound going backwards
    with pytest.raises(LateRowError):
        p.insert({"ticker": "A"}, 9)  # before the producer's own bound
    p.detach()
    with pytest.raises(StreamError):
        p.insert({"ticker": "A"}, 20)
    assert orders.seq == 0


def test_a_train_goes_in_whole_or_not_at_all():
    orders = StreamEngine().create_stream("orders", {"ticker": STRING})
    out = _recorder(orders)
    p = orders.attach()
    with pytest.raises(SiraTypeError):
        p.insert_many([({"ticker": "A"}, 1), ({"ticker": 5}, 2), ({"ticker": "C"}, 3)])
    with pytest.raises(LateRowError) as err:  # out of rowtime order inside the train
        p.insert_many([({"ticker": "A"}, 5), ({"ticker": "B"}, 4)])
    assert err.value.row == {"ticker": "B"} and err.value.bound == 5
    assert out == [] and orders.seq == 0 and orders.clock is None
    p.insert_many([({"ticker": "A"}, 1), ({"ticker": "B"}, 1), ({"ticker": "C"}, 3)])
    assert out == [("row", "A", 1), ("row", "B", 1), ("row", "C", 3), ("bound", 3)]
    with pytest.raises(LateRowError):
        p.insert_many([({"ticker": "D"}, 4), ({"ticker": "E"}, 2)])
    assert orders.seq == 3 and orders.clock == 3


def test_the_union_example_waits_for_a_bound_on_trades():
    """Seed 002: MSFT 10:04 cannot flow through the union until Trades is bounded."""
    engine = StreamEngine()
    orders = engine.create_stream("orders", {"ticker": STRING})
    trades = engine.create_stream("trades", {"ticker": STRING})
    q = engine.register("union(orders, trades)")
    po, pt = orders.attach(), trades.attach()
    po.insert({"ticker": "ORCL"}, 1001)
    pt.insert({"ticker": "YHOO"}, 1002)
    pt.insert({"ticker": "IBM"}, 1003)
    po.insert({"ticker": "MSFT"}, 1004)
    po.bound(1006)
    assert [r["ticker"] for r in q.results()] == ["ORCL", "YHOO", "IBM"]
    pt.insert({"ticker": "GOOG"}, 1003)  # possible: so MSFT had to wait
    assert [r["ticker"] for r in q.results()] == ["ORCL", "YHOO", "IBM", "GOOG"]
    pt.bound(1005)
    assert [r["ticker"] for r in q.results()][-1] == "MSFT"


def test_a_filter_drops_rows_but_passes_every_bound():
    engine = StreamEngine()
    orders = engine.create_stream("orders", {"ticker": STRING})
    q = engine.register("restrict(orders, eq(ticker, 'ORCL'))")
    bounds = []
    q.subscribe(lambda row, bound: None)
    p = orders.attach()
    p.insert({"ticker": "ORCL"}, 1000)
    p.insert({"ticker": "MSFT"}, 1001)
    p.bound(1002)
    p.insert({"ticker": "IBM"}, 1002)
    p.bound(1005)
    assert [r["ticker"] for r in q.results()] == ["ORCL"]
    assert q.sink.bound == 1005
    del bounds


def test_producers_entering_and_leaving():
    """Seed 002, "Producers Entering and Leaving a Stream": the P1/P2/P3 story."""
    s = StreamEngine().create_stream("s", {"ticker": STRING})
    out = _recorder(s)
    p1 = s.attach("P1")
    p1.bound(1000)
    assert s.clock is None  # no row yet: the stream has no bound of its own
    p1.insert({"ticker": "a"}, 1000)
    assert s.clock == 1000
    p2 = s.attach("P2")
    p2.bound(1005)
    p2.insert({"ticker": "b"}, 1005)
    assert [e for e in out if e[0] == "row"] == [("row", "a", 1000)]  # waits for P1
    with pytest.raises(LateRowError):
        p2.insert({"ticker": "c"}, 959)
    p1.detach()
    assert [e for e in out if e[0] == "row"][-1] == ("row", "b", 1005)
    assert s.clock == 1005
    p2.detach()
    p3 = s.attach("P3")
    with pytest.raises(LateRowError):
        p3.insert({"ticker": "d"}, 1004)  # the stream remembers its bound
    p3.insert({"ticker": "d"}, 1005)


def test_a_newcomer_barges_in_ahead():
    s = StreamEngine().create_stream("s", {"ticker": STRING})
    out = _recorder(s)
    p1 = s.attach("P1")
    p1.insert({"ticker": "a"}, 10)
    p1.insert({"ticker": "b"}, 20)  # waits for nobody: P1 is alone
    p2 = s.attach("P2")
    p2.insert({"ticker": "x"}, 25)
    p1.insert({"ticker": "c"}, 30)
    assert s.clock == 25  # x went out; c (30) waits for P2
    p3 = s.attach("P3")
    p3.insert({"ticker": "early"}, 27)  # not before the clock, ahead of P1's waiting row
    p2.bound(40)
    p3.bound(40)
    rows = [e[1] for e in out if e[0] == "row"]
    assert rows == ["a", "b", "x", "early", "c"]


def test_a_strict_bound_is_a_bound_one_unit_later():
    s = StreamEngine().create_stream("s", {"ticker": STRING})
    p = s.attach()
    p.bound(10, strict=True)
    with pytest.raises(LateRowError):
        p.insert({"ticker": "a"}, 10)
    p.insert({"ticker": "a"}, 11)


def test_a_subscriber_that_raises_does_not_corrupt_the_query(caplog):
    engine = StreamEngine()
    s = engine.create_stream("s", {"v": INT})
    q = engine.register("istream(window(s, ts, now), at)")

    def boom(row, bound):
        raise RuntimeError("subscriber failure")
    q.subscribe(boom)
    p = s.attach()
    p.insert({"v": 1}, 1)
    p.insert({"v": 2}, 2)
    p.bound(5)
    assert [r["v"] for r in q.results()] == [1, 2]


def test_a_query_that_keeps_no_results_still_tells_its_subscribers():
    engine = StreamEngine()
    s = engine.create_stream("s", {"v": INT})
    q = engine.register("restrict(s, gt(v, 1))", keep=False)
    seen = []
    q.subscribe(lambda row, bound: seen.append(row["v"]))
    s.attach().insert_many([({"v": 1}, 1), ({"v": 2}, 2), ({"v": 3}, 3)])
    assert seen == [2, 3] and q.results() == []


def test_unsupported_queries_are_refused_clearly():
    engine = StreamEngine()
    engine.create_stream("s", {"v": INT})
    engine.create_stream("r", {"v": INT})
    with pytest.raises(NotSupportedLive) as err:
        engine.register("group(s, (vs(v)))")
    assert err.value.node == "GROUP" and "GROUP" in str(err.value)
    with pytest.raises(NotSupportedLive, match="window the stream first"):
        engine.register("join(s, r)")
    with pytest.raises(NotSupportedLive, match="relvar 'u'"):
        engine.register("join(s, u)", {"u": Heading.of({"v": INT})})
    with pytest.raises(NotSupportedLive, match="reads no stream"):
        engine.register("u", {"u": Relation.from_rows({"v": INT}, [])})
    assert engine.queries == []


# --------------------------------------------------------------------------- live = batch

QUERIES = [
    "istream(project(window(s, ts, range(5)), (k, v, during)), at)",
    "dstream(project(window(s, ts, rows(2)), (k, during)), at)",
    "changes(window(s, ts, partition(k) rows(2) range(4)), at)",
    "changes(window(s, ts, partition(k) rows(1) range(4) slide(3)), at)",
    "istream(summarizebyusing(window(s, ts, range(6)), (k, during), (total(plus(v)) n(plus(1))),"
    " (during)), at)",
    "changes(summarizebyusing(project(window(s, ts, rows(3)), (k, v, during)), (k, during),"
    " (top(max(v))), (during)), at)",
    "restrict(s, gt(v, 2))",
    "extend(restrict(s, ne(k, 1)), (w(mult(v, 2))))",
    "window(s, ts, now)",
    "project(window(s, ts, range(3) slide(2)), (v, during))",
    "changes(window(s, ts, range(3) on(v)), at)",
    "changes(window(s, ts, rows(3) slide(2)), at)",
    "changes(window(s, ts, rows(2) slide(3)), at)",  # N < M: each batch's last N only
    "changes(window(s, ts, partition(k) rows(1) slide(4)), at)",
    "changes(window(s, ts, range(unbounded)), at)",
    "window(s, ts, partition(k) rows(2))",
    "istream(union(project(window(s, ts, range(3)), (v, during)),"
    " project(window(r, ts, rows(1)), (v, during))), at)",
    "union(s, r)",
    "summarizebyusing(window(union(s, r), ts, range(4)), (k, during), (total(plus(v))),"
    " (during))",
    # joins: pointwise between windows, and streams or windows with a constant relation t
    "changes(join(project(window(s, ts, range(3)), (k, v, during)),"
    " project(window(r, ts, rows(2)), (k, during))), at)",
    "join(project(window(s, ts, range(2)), (v, during)), project(window(r, ts, range(3)),"
    " (k, during)))",
    "istream(semijoin(project(window(s, ts, range(4)), (k, v, during)),"
    " project(window(r, ts, range(2)), (v, during))), at)",
    "changes(semiminus(project(window(s, ts, range(4)), (k, v, during)),"
    " project(window(r, ts, now), (k, during))), at)",
    "join(restrict(s, gt(v, 0)), t)",
    "semiminus(s, t)",
    "changes(join(project(window(s, ts, range(3)), (k, v, during)), t), at)",
    "join(restrict(t, gt(w, 10)), project(window(s, ts, rows(2)), (k, during)))",
    "semijoin(window(s, ts, range(2)), project(t, (k)))",
    # a summary straight over a window that is not a FIFO, or with a folded (FLOAT) aggregate
    "changes(summarizebyusing(window(s, ts, rows(2)), (k, during), (n(plus(1))), (during)), at)",
    "summarizebyusing(window(s, ts, range(3)), (k, during), (m(max(v)) f(plus(tofloat(v)))),"
    " (during))",
    # pointwise set operators between windows
    "changes(intersect(project(window(s, ts, range(3)), (k, during)),"
    " project(window(r, ts, rows(2)), (k, during))), at)",
    "minus(project(window(s, ts, range(4)), (v, during)), project(window(r, ts, range(2)),"
    " (v, during)))",
    "changes(xminus(project(window(s, ts, now), (k, during)), project(window(r, ts, range(2)),"
    " (k, during)), project(window(s, ts, rows(1)), (k, during))), at)",
    # fused chains (sira.streams.fused): stream operators before a window or running summary
    "changes(summarizebyusing(window(restrict(s, gt(v, 1)), ts, range(4)), (k, during),"
    " (total(plus(v))), (during)), at)",
    "istream(summarizebyusing(window(extend(s, (w(mult(v, 2)))), ts, range(3)), (k, during),"
    " (total(plus(w))), (during)), at)",
    "dstream(summarizebyusing(window(project(s, (v, ts)), ts, now), (during), (n(plus(1))),"
    " (during)), at)",
    "changes(summarizebyusing(window(rename(s, (v, x)), ts, range(5)), (k, x, during),"
    " (total(plus(x))), (during)), at)",
    "changes(summarizebyusing(window(semijoin(s, project(t, (k))), ts, range(3)), (k, during),"
    " (total(plus(v))), (during)), at)",
    "changes(summarizebyusing(window(join(s, t), ts, range(3)), (k, during), (total(plus(w))),"
    " (during)), at)",
    "changes(summarizebyusing(window(restrict(s, ne(k, 2)), ts, range(3)), (k, during),"
    " (m(max(v)) total(plus(v))), (during)), at)",
    "summarizebyusing(window(restrict(s, gt(v, 0)), ts, range(3)), (k, during),"
    " (total(plus(v))), (during))",
    "changes(window(restrict(s, gt(v, 0)), ts, rows(2)), at)",
    # IBM SPL windows (sira.streams.spl): every policy, partitions, composed before and after
    "splwindow(s, ts, tumbling, count(3))",
    "splwindow(s, ts, sliding, count(3) trigger(count(2)) partitioned(k))",
    "splwindow(s, ts, tumbling, time(4) partitioned(k))",
    "splwindow(s, ts, sliding, time(3) trigger(time(2)))",
    "splwindow(s, ts, tumbling, delta(v, 2) partitioned(k))",
    "splwindow(s, ts, sliding, delta(v, 1) trigger(delta(v, 2)))",
    "splwindow(extend(s, (p(eq(v, 0)))), ts, tumbling, punct(p))",
    "splwindow(s, ts, sliding, count(2) partitioned(k, partitionage(3)))",
    "splwindow(restrict(s, gt(v, 0)), ts, tumbling, count(2) partitioned(k, tuplecount(3)))",
    "splwindow(s, ts, timeinterval, intervalduration(4) creationperiod(2) intervaloffset(1)"
    " partitioned(k))",
    "restrict(project(splwindow(union(s, r), ts, tumbling, count(2)), (at, instance)),"
    " gt(at, 1))",
    "join(project(splwindow(s, ts, sliding, count(2) partitioned(k, partitioncount(2))),"
    " (k, at, instance)), t)",
    # SQL++ WindowBy (sira.streams.windowby): sliding, tumbling, LABEL, ONLY, PREV/NEXT
    "windowby(s, order(ts) sliding, start(as(a) at(sp) when(eq(a.v, 0))),"
    " end(as(b) at(ep) when(eq(b.v, 3))))",
    "windowby(s, order(ts) tumbling, start(as(a) at(sp) when(eq(a.v, 0))),"
    " end(at(ep) when(eq(minus(ep, sp), 2))))",
    "windowby(s, partition(k) order(ts) sliding, start(as(s1) at(sp) prev(ps)),"
    " end(at(ep) next(en) when(gt(en.v, s1.v))))",
    "windowby(s, order(ts) sliding, label(as(l) at(lp) when(eq(l.v, 1))),"
    " start(at(sp) when(eq(minus(lp, sp), 1))), end(at(ep) when(eq(minus(ep, lp), 1))))",
    "windowby(s, partition(k) order(ts) sliding, label(at(lp)), start(unbounded),"
    " end(at(ep) when(eq(ep, lp))), aggregates(n(count(w))))",
    "windowby(s, order(ts) sliding, label(as(l) at(lp) when(eq(l.v, 2))),"
    " start(as(a) at(sp) when(gt(a.v, l.v))), end(at(ep) next(en)"
    " when(or(is_missing(en), eq(en.v, 0)))), only)",
    "windowby(union(s, r), partition(k) order(ts) tumbling, start(as(a) at(sp)"
    " when(eq(a.v, 0))), end(as(b) at(ep) prev(pb) when(lt(b.v, pb.v))))",
    "join(project(windowby(restrict(s, gt(v, 0)), partition(k) order(ts) sliding,"
    " start(at(sp)), end(at(ep) when(eq(minus(ep, sp), 1))), only, aggregates(n(count(w))"
    " top(max(w, v)))), (k, sp, top)), t)",
]

CONSTANT = Relation.from_rows({"k": INT, "w": INT}, [{"k": 0, "w": 10}, {"k": 1, "w": 11},
                                                     {"k": 1, "w": 12}, {"k": 3, "w": 13}])

event = st.tuples(st.sampled_from(["s", "r"]), st.integers(0, 1), st.integers(0, 3),
                  st.integers(0, 4), st.integers(0, 2), st.integers(0, 3))


def run_live(query_text, events, extra_bounds=True, single_producer=False):
    """Feed events; returns (query, batch relvars, emission step of each result).

    With two producers per stream, rows of one stream come from either; with extra bounds, the
    other producer (or, single_producer, the same one) promises the next rowtime in advance.
    """
    engine = StreamEngine()
    streams = {name: engine.create_stream(name, {"k": INT, "v": INT}) for name in ("s", "r")}
    batch = {name: [] for name in streams}
    for name, stream in streams.items():
        stream.subscribe(lambda row, bound, n=name: row and batch[n].append(dict(row)))
    q = engine.register(query_text, {"t": CONSTANT})
    steps = {}
    step = [0]
    q.subscribe(lambda row, bound: steps.setdefault(tuple(sorted(row.items())), step[0]))
    producers = {name: [s.attach(), s.attach()] for name, s in streams.items()}
    t = {"s": 0, "r": 0}
    timed = []
    for name, who, k, v, gap, bound_ahead in events:
        t[name] += gap
        timed.append((name, 0 if single_producer else who, k, v, t[name], bound_ahead))
    for i, (name, who, k, v, at, bound_ahead) in enumerate(timed):
        step[0] += 1
        p = producers[name][who]
        p.insert({"k": k, "v": v}, at)
        if extra_bounds and bound_ahead:
            if single_producer:
                later = [e[4] for e in timed[i + 1:] if e[0] == name]
                if later:
                    p.bound(later[0])
            else:
                producers[name][1 - who].bound(at)
    for plist in producers.values():
        for p in plist:
            p.detach()
    step[0] += 1
    engine.finish()
    relvars = {name: Relation.from_rows(streams[name].heading, rows)
               for name, rows in batch.items()}
    relvars["t"] = CONSTANT
    return q, relvars, steps


@pytest.mark.parametrize("query_text", QUERIES)
@settings(max_examples=30, deadline=None)
@given(st.lists(event, max_size=25))
def test_live_results_equal_the_batch_algebra(query_text, events):
    q, relvars, _ = run_live(query_text, events)
    expected = sira.evaluate(query_text, relvars)
    got = q.relation()
    assert len(q.results()) == len(set(map(lambda r: tuple(sorted(r.items())), q.results()))), \
        "a result was emitted twice"
    assert got == expected


@pytest.mark.parametrize("query_text", QUERIES)
@settings(max_examples=15, deadline=None)
@given(st.lists(event, max_size=20))
def test_adding_bounds_never_delays_an_output(query_text, events):
    _, _, with_bounds = run_live(query_text, events, extra_bounds=True, single_producer=True)
    _, _, without = run_live(query_text, events, extra_bounds=False, single_producer=True)
    assert set(with_bounds) == set(without)
    for result, step in with_bounds.items():
        assert step <= without[result]


@pytest.mark.parametrize("query_text", QUERIES)
@settings(max_examples=15, deadline=None)
@given(st.lists(event, max_size=25), st.data())
def test_trains_give_the_same_results_as_rows_one_by_one(query_text, events, data):
    one_by_one, relvars, _ = run_live(query_text, events, extra_bounds=False,
                                      single_producer=True)
    engine = StreamEngine()
    streams = {name: engine.create_stream(name, {"k": INT, "v": INT}) for name in ("s", "r")}
    q = engine.register(query_text, {"t": CONSTANT})
    producers = {name: s.attach() for name, s in streams.items()}
    t = {"s": 0, "r": 0}
    train, train_of = [], None
    for name, _, k, v, gap, _ in events:
        t[name] += gap
        if train and (name != train_of or data.draw(st.booleans(), label="cut")):
            producers[train_of].insert_many(train)
            train = []
        train.append(({"k": k, "v": v}, t[name]))
        train_of = name
    if train:
        producers[train_of].insert_many(train)
    for p in producers.values():
        p.detach()
    engine.finish()
    assert q.relation() == one_by_one.relation() == sira.evaluate(query_text, relvars)


ORDERS_TRADES = [
    ("orders", "ORCL", 1001), ("trades", "YHOO", 1002), ("trades", "IBM", 1003),
    ("orders", "MSFT", 1004), ("trades", "GOOG", 1003), ("trades", "IBM", 1005),
    ("orders", "ORCL", 1009), ("trades", "MSFT", 1012),
]


def _checkpoint_script(path, events, start):
    return f"""
import json, sys
sys.path.insert(0, {os.getcwd()!r})
from sira.streams import LiveQuery
q = LiveQuery.load({str(path)!r})
for name, row, bound in json.loads({json.dumps(events[start:])!r}):
    q.feed(name, row, bound)
q.finish()
print(json.dumps(sorted(map(str, q.sink.results))))
"""


def test_checkpoint_and_restore_in_a_new_process_continue_the_same(tmp_path):
    text = ("changes(summarizebyusing(window(union(orders, trades), ts, range(5)), "
            "(ticker, during), (n(plus(1))), (during)), at)")
    engine = StreamEngine()
    orders = engine.create_stream("orders", {"ticker": STRING})
    trades = engine.create_stream("trades", {"ticker": STRING})
    fed = []
    for s in (orders, trades):
        s.subscribe(lambda row, bound, n=s.name: fed.append((n, row, bound)))
    q = engine.register(text)
    po, pt = orders.attach(), trades.attach()
    for name, ticker, t in ORDERS_TRADES:
        (po if name == "orders" else pt).insert({"ticker": ticker}, t)
    po.detach()
    pt.detach()
    half = len(fed) // 2
    # an uninterrupted run over the same feed
    fresh = StreamEngine()
    fresh.create_stream("orders", {"ticker": STRING})
    fresh.create_stream("trades", {"ticker": STRING})
    whole = fresh.register(text)
    for name, row, bound in fed[:half]:
        whole.feed(name, row, bound)
    path = tmp_path / "q.ckpt"
    whole.save(path)
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".sira-checkpoint-")]
    for name, row, bound in fed[half:]:
        whole.feed(name, row, bound)
    whole.finish()
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run([sys.executable, "-c", _checkpoint_script(path, fed, half)],
                         capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout) == sorted(map(str, whole.sink.results))
    q.finish()
    assert q.relation() == whole.relation()


def test_a_crash_while_saving_leaves_the_old_checkpoint(tmp_path, monkeypatch):
    engine = StreamEngine()
    engine.create_stream("s", {"v": INT})
    q = engine.register("istream(window(s, ts, now), at)")
    path = tmp_path / "q.ckpt"
    q.save(path)
    good = path.read_bytes()
    s = engine.streams["s"]
    s.attach().insert({"v": 1}, 1)

    def crash(*args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(OSError):
        q.save(path)
    assert path.read_bytes() == good
    assert os.listdir(tmp_path) == ["q.ckpt"]  # no temporary file left
    assert isinstance(LiveQuery.load(path), LiveQuery)


def test_a_checkpointed_join_continues_the_same(tmp_path):
    text = ("changes(join(project(window(s, ts, range(3)), (k, v, during)),"
            " project(window(r, ts, rows(2)), (k, during))), at)")
    feed = [("s", 0, 1, 1), ("r", 0, 5, 1), ("s", 1, 2, 2), ("r", 1, 6, 3), ("s", 0, 3, 4),
            ("r", 0, 7, 4), ("s", 1, 4, 6), ("r", 1, 8, 7)]

    def start():
        engine = StreamEngine()
        producers = {n: engine.create_stream(n, {"k": INT, "v": INT}).attach() for n in "sr"}
        return engine, producers, engine.register(text)

    engine, producers, whole = start()
    for name, k, v, t in feed:
        producers[name].insert({"k": k, "v": v}, t)
    engine.finish()
    engine, producers, q = start()
    for name, k, v, t in feed[:4]:
        producers[name].insert({"k": k, "v": v}, t)
    q.save(tmp_path / "join.ckpt")
    restored = LiveQuery.load(tmp_path / "join.ckpt")
    engine.queries = [restored]  # the rest of the feed goes to the restored query only
    for name, k, v, t in feed[4:]:
        producers[name].insert({"k": k, "v": v}, t)
    engine.finish()
    assert restored.relation() == whole.relation() and len(whole.results()) > 0


def test_a_query_failing_at_run_time_stops_alone(caplog):
    from sira.errors import IntOverflow
    engine = StreamEngine()
    s = engine.create_stream("s", {"k": INT, "v": INT})
    failing = engine.register("changes(summarizebyusing(window(s, ts, range(10)), (k, during),"
                              " (total(plus(v))), (during)), at)")
    fine = engine.register("restrict(s, gt(v, 0))")
    p = s.attach()
    p.insert({"k": 1, "v": 2_000_000_000}, 1)
    p.insert({"k": 1, "v": 2_000_000_000}, 2)  # the running INT sum overflows at 2
    p.insert({"k": 1, "v": 5}, 3)
    assert isinstance(failing.error, IntOverflow) and "failed and stopped" in caplog.text
    assert [r["total"] for r in failing.results()] == [2_000_000_000]
    assert [r["v"] for r in fine.results()] == [2_000_000_000, 2_000_000_000, 5]
    assert s.seq == 3 and fine.error is None
    engine.finish()
    assert len(fine.results()) == 3


def test_a_second_stream_of_the_same_name_is_refused_and_the_first_kept():
    # create_stream("S", ...) after "s" replaced the stream the queries read, silently
    from sira.streams import StreamEngine
    from sira.streams.named import StreamError
    engine = StreamEngine()
    engine.create_stream("s", {"k": INT, "v": INT})
    with pytest.raises(StreamError, match="stream 's' exists already"):
        engine.create_stream("S", {"k": INT})
    assert engine.streams["s"].heading.names == ("k", "seq", "ts", "v")


def test_after_finish_a_stream_refuses_rows_and_its_queries_keep_their_results(tmp_path):
    # a row inserted after StreamEngine.finish() was accepted, reached the finished queries
    # as a late row and stopped them (logged, not raised to the producer)
    from sira.streams import StreamEngine
    from sira.streams.named import StreamError
    engine = StreamEngine()
    s = engine.create_stream("s", {"k": INT})
    query = engine.register("istream(window(s, ts, range(3)), at)")
    producer = s.attach()
    producer.insert({"k": 1}, 10)
    engine.finish()
    for late in (lambda: producer.insert({"k": 2}, 60),
                 lambda: producer.insert_many([({"k": 2}, 60)]),
                 lambda: producer.bound(100), lambda: s.attach("another")):
        with pytest.raises(StreamError, match="stream 's' has ended"):
            late()
    assert query.error is None and query.results() == [{"at": 10, "k": 1, "seq": 1, "ts": 10}]
    engine.save(tmp_path / "ended.ckpt")  # the end is part of the checkpoint
    again = StreamEngine.load(tmp_path / "ended.ckpt")
    with pytest.raises(StreamError, match="has ended"):
        again.streams["s"].producer(producer.name).insert({"k": 2}, 70)


def test_a_finished_query_takes_no_more_input_and_the_stream_goes_on(tmp_path, caplog):
    # a row after LiveQuery.finish() reached the query as a late row: logged as "failed and
    # stopped", yet the query went on (its error was never set)
    engine = StreamEngine()
    s = engine.create_stream("s", {"v": INT})
    done = engine.register("restrict(s, gt(v, 0))")
    other = engine.register("restrict(s, gt(v, 1))")
    producer = s.attach("P")
    producer.insert({"v": 1}, 5)
    done.finish()
    producer.insert({"v": 3}, 6)
    producer.bound(9)
    assert not caplog.records
    assert done.error is None and done.results() == [{"seq": 1, "ts": 5, "v": 1}]
    assert other.results() == [{"seq": 2, "ts": 6, "v": 3}]
    done.finish()  # again: nothing changes
    with pytest.raises(LateRowError):
        done.feed("s", {"seq": 2, "ts": 7, "v": 4}, None)
    assert done.error is None and len(done.results()) == 1
    engine.save(tmp_path / "one.ckpt")  # still finished once restored
    again = StreamEngine.load(tmp_path / "one.ckpt")
    again.streams["s"].producer("P").insert({"v": 5}, 10)
    first, second = again.queries
    assert [r["v"] for r in first.results()] == [1] and first.error is None
    assert [r["v"] for r in second.results()] == [3, 5]


def test_a_row_late_for_one_query_stops_it_and_says_so():
    # a query given a bound by feed() and then a stream row before it: the row was logged as
    # stopping the query, which went on without it (its error never set): a result lost silently
    engine = StreamEngine()
    s = engine.create_stream("s", {"v": INT})
    ahead = engine.register("restrict(s, gt(v, 0))")
    ahead.feed("s", None, 50)
    producer = s.attach("P")
    producer.insert({"v": 1}, 5)
    assert isinstance(ahead.error, LateRowError)
    from sira.streams.runtime import QueryFailed
    with pytest.raises(QueryFailed):
        ahead.finish()


@pytest.mark.parametrize("text", [
    "summarizebyusing(window(s, ts, range(3)), (k, during), (t(plus(v))), (during))",
    "summarizebyusing(window(s, ts, range(4) slide(2)), (k, during), (t(plus(v)) n(plus(1))),"
    " (during))",
    "summarizeby(tumble(s, ts, size(3)), (window_start, window_end, k), (t(plus(v))))",
])
def test_live_float_sums_run_exactly_across_a_checkpoint_and_equal_the_batch_sums(tmp_path,
                                                                                  text):
    # a FLOAT sum is the exact sum rounded once: live, it is kept as an integer and counts of
    # infinities (_RunningFloatSum), taken back exactly as elements leave, and checkpointed
    from sira import FLOAT
    values = [0.1, 0.2, 0.3, 1e16, -1e16, 2.5, 1e308, 1e308, -1e308, 5e-324, float("inf"), 0.7]
    engine = StreamEngine()
    s = engine.create_stream("s", {"k": INT, "v": FLOAT})
    engine.register(text)
    producer = s.attach("P")
    for i, v in enumerate(values[:6]):
        producer.insert({"k": i % 2, "v": v}, i)
    engine.save(tmp_path / "float.ckpt")
    again = StreamEngine.load(tmp_path / "float.ckpt")
    producer = again.streams["s"].producer("P")
    for i, v in enumerate(values[6:], start=6):
        producer.insert({"k": i % 2, "v": v}, i)
    again.finish()
    (query,) = again.queries
    stream = Relation.from_rows({"k": INT, "v": FLOAT, "ts": sira.LONG, "seq": sira.LONG},
                                [{"k": i % 2, "v": v, "ts": i, "seq": i + 1}
                                 for i, v in enumerate(values)])
    assert query.error is None
    assert query.relation() == sira.evaluate(text, {"s": stream})
