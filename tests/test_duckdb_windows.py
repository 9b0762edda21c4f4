"""Windows on DuckDB against the Python engine (the reference): the random streams and queries of
the Spark window tests (CQL windows of every kind, relation-to-stream operators, fused windowed
aggregates, WINDOWBY segmentations and label frames, window tables, HOP sums by panes) and of
the SPL tests, with more examples than on Spark (DuckDB answers in milliseconds)."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sira
from sira import BIGINT, FLOAT, INT, LONG, STRING, TIMESTAMP, Relation
from sira.errors import IntOverflow, SiraValueError

from conftest import ENGINES
from test_spark_windows import (GROUPS, HEADING, HOP_AGGREGATES, KINDS, LABEL_FRAMES, POINTWISE,
                                SEGMENTS, WINDOW_TABLES, reference, streams, tagged_union, window)
from test_spl import _stream_rows, stream as spl_stream, window_texts

pytestmark = pytest.mark.skipif("duckdb" not in ENGINES, reason="needs duckdb and pyarrow")

EXAMPLES = settings(max_examples=6, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def both(query, relvars):
    return sira.evaluate(query, relvars), sira.evaluate(query, relvars, engine="duckdb")


def first_difference(queries, relvars):
    for q in queries:
        py, dk = both(q, relvars)
        if py != dk:
            return f"{q}\npython: {py!r}\nduckdb: {dk!r}"
    return "no single query differs"


@pytest.mark.parametrize("group", GROUPS, ids=lambda g: g[0])
@EXAMPLES
@given(stream=streams(), arrival=st.booleans())
def test_every_window_kind_gives_the_python_intervals(group, stream, arrival):
    queries = [window(k, arrival) for k in group]
    relvars = {"S": stream}
    py, dk = both(tagged_union(queries), relvars)
    assert py == dk, first_difference(queries, relvars)


@EXAMPLES
@given(streams(), st.lists(st.sampled_from(KINDS), min_size=1, max_size=2, unique=True),
       st.booleans(), st.lists(st.integers(0, 60), min_size=1, max_size=8))
def test_istream_dstream_rstream_give_the_python_streams(stream, kinds, arrival, ticks):
    ticks = Relation.from_rows({"at": LONG}, [(t,) for t in ticks])
    queries = []
    for k in kinds:
        w = f"project({window(k, arrival)}, (p, v, during))"
        queries += [f"istream({w}, at)", f"dstream({w}, at)", f"rstream({w}, at, TICKS)",
                    f"changes({w}, at)"]
    relvars = {"S": stream, "TICKS": ticks}
    for q in queries:  # changes has another heading
        py, dk = both(q, relvars)
        assert py == dk, f"{q}\npython: {py!r}\nduckdb: {dk!r}"


@settings(max_examples=4, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 6)), max_size=12))
def test_timestamp_windows_count_in_microseconds(points):
    epoch = datetime.datetime(2024, 2, 29, 23, 59, 50)
    rows = [{"ts": epoch + datetime.timedelta(seconds=s), "seq": i,
             "e": epoch + datetime.timedelta(days=d), "f": d / 4}
            for i, (s, d) in enumerate(sorted(points))]
    stream = Relation.from_rows({"ts": TIMESTAMP, "seq": INT, "e": TIMESTAMP, "f": FLOAT}, rows)
    kinds = ["now", "range(10 second) slide(4 second)", "range(2 day) on(e)", "range(0.5) on(f)",
             "rows(3) slide(2)"]
    queries = [window(k, True) for k in kinds]
    relvars = {"S": stream}
    py, dk = both(tagged_union(queries), relvars)
    assert py == dk, first_difference(queries, relvars)


def test_an_out_of_order_stream_is_refused_with_the_same_error():
    stream = Relation.from_rows(HEADING, [{"ts": 1, "seq": 0, "p": "a", "v": 0},
                                          {"ts": 5, "seq": 1, "p": "a", "v": 0},
                                          {"ts": 3, "seq": 2, "p": "a", "v": 0},
                                          {"ts": 2, "seq": 3, "p": "b", "v": 0}])
    errors = []
    for engine in ("python", "duckdb"):
        with pytest.raises(SiraValueError) as info:
            sira.evaluate(window("rows(2)", True), {"S": stream}, engine=engine)
        errors.append((info.value.operator, info.value.value))
    assert errors[0] == errors[1] == ("WINDOW", 1)


def test_range_on_a_float_that_c_cannot_move_falls_back_to_the_self_join():
    stream = Relation.from_rows({"ts": LONG, "f": FLOAT},
                                [{"ts": t, "f": f} for t, f in
                                 [(0, 1e17), (1, 1e17), (2, 1e17 + 64), (3, 1e17 + 64)]])
    py, dk = both("window(S, ts, range(1.0) on(f))", {"S": stream})
    assert py == dk


@pytest.mark.parametrize("shape", ["random", "falling", "sawtooth"])
def test_range_on_values_in_any_order_finds_the_first_later_element_reaching_them(shape):
    # the search by binary lifting (E not ordered by time): values repeat, go up and down,
    # many thresholds are never reached, the sequence is long enough for several levels
    import random
    rng = random.Random(len(shape))
    value = {"random": lambda i: rng.randrange(-20, 20), "falling": lambda i: 300 - i + i % 7,
             "sawtooth": lambda i: i % 37 - (i // 100)}[shape]
    stream = Relation.from_rows(HEADING, [{"ts": i // 3, "seq": i, "p": "a", "v": value(i)}
                                          for i in range(300)])
    for c in (1, 3, 15, 39):
        query = f"window(S, ts, range({c}) on(v) arrival(seq))"
        py, dk = both(query, {"S": stream})
        assert py == dk, query


def test_range_on_values_in_any_order_per_partition_far_and_near_the_ends(monkeypatch):
    """The exits found by ``sira_duckdb.lifting.first_beyond`` (counted, so the test knows that
    path ran): a slow random walk whose exits lie hundreds of elements on (past its blocks of
    64), INT, LONG near both ends (E + C past LONG is never reached), FLOAT with a float C, and
    TIMESTAMP with a unit."""
    import random

    import sira_duckdb.windows as windows
    lifting = _counted(windows._bounds_by_lifting)
    monkeypatch.setattr(windows, "_bounds_by_lifting", lifting)
    rng = random.Random(3)
    walk, rows = 0, []
    for i in range(900):
        walk += rng.choice((-1, -1, 0, 1, 1, 1)) if i < 700 else -2
        rows.append({"ts": i // 2, "seq": i, "p": "abc"[rng.randrange(3)] if i % 4 else "a",
                     "v": walk})
    stream = Relation.from_rows(HEADING, rows)
    for c in (1, 9, 40):
        query = f"window(S, ts, range({c}) on(v) arrival(seq))"
        py, dk = both(query, {"S": stream})
        assert py == dk, query
    top = 2 ** 63 - 1
    ends = Relation.from_rows({"ts": LONG, "e": LONG, "f": FLOAT}, [
        {"ts": t, "e": (top - rng.randrange(60)) if t % 3 else (-top - 1 + rng.randrange(60)),
         "f": rng.randrange(-40, 40) / 4} for t in range(200)])
    for query in ("window(S, ts, range(7) on(e))", f"window(S, ts, range({top}) on(e))",
                  "window(S, ts, range(1) on(e))", "window(S, ts, range(2.5) on(f))",
                  "window(S, ts, range(0.25) on(f))"):
        py, dk = both(query, {"S": ends})
        assert py == dk, query
    start = datetime.datetime(2024, 1, 1)
    timed = Relation.from_rows({"ts": LONG, "at": TIMESTAMP}, [
        {"ts": t, "at": start + datetime.timedelta(seconds=rng.randrange(300))}
        for t in range(150)])
    py, dk = both("window(S, ts, range(40 second) on(at))", {"S": timed})
    assert py == dk
    assert lifting.calls == 9  # every query above


@pytest.mark.parametrize("c", ["2", "2.5", "0.5", "12"])
def test_range_on_a_bigint_past_long_compares_exactly(c):
    """BIGINT E beyond LONG, up and down (the lifting compares ranks of E and E + C among both),
    with an integer C and a FLOAT one (E + C a double, reached by E' >= its ceiling)."""
    big = 10 ** 20
    stream = Relation.from_rows({"ts": LONG, "e": BIGINT}, [
        (0, big), (1, big - 5), (2, big + 3), (3, 2), (4, big + 9), (5, -big), (6, big + 12),
        (7, 2 ** 53 + 3), (8, 2 ** 53 + 5)])
    py, dk = both(f"window(S, ts, range({c}) on(e))", {"S": stream})
    assert py == dk


def _counted(real):
    """``real``, counting its calls in ``.calls``."""
    def run(*args):
        run.calls += 1
        return real(*args)
    run.calls = 0
    return run


@EXAMPLES
@given(stream=streams(max_size=25))
def test_pointwise_aggregates_over_windows_equal_the_split_and_summarize_reference(stream):
    relvars = {"S": stream}
    for query in POINTWISE:
        expected = reference(query, relvars)
        assert sira.evaluate(query, relvars, engine="duckdb") == expected, query


@EXAMPLES
@given(stream=streams(max_size=25))
def test_windowby_segmentations_and_label_frames_give_the_python_windows(stream):
    from sira_duckdb.windowby import _segmentation
    relvars = {"S": stream}
    for q in SEGMENTS:
        assert _segmentation(sira.parse(q, {"S": stream.heading})), q
    for q in SEGMENTS + LABEL_FRAMES:
        py, dk = both(q, relvars)
        assert py == dk, f"{q}\npython: {py!r}\nduckdb: {dk!r}"


#: sliding WINDOWBY without LABEL whose END is pinned to the start, unbounded or without
#: condition: found in SQL (``sira_duckdb.windowby._pinned_windows``); START reading its
#: PREV/NEXT, END reading the start's variables, its own NEXT (MISSING past the end), negative
#: and zero offsets, ONLY
PINNED = [
    "windowby(S, order(ts) sliding, start(as(a) at(sp) when(a.v = 0)), "
    "end(at(ep) when(ep - sp = 3)))",
    "windowby(S, partition(p) order(ts) sliding, start(as(a) at(sp) when(a.v < 2)), "
    "end(as(e) at(ep) when(ep - sp = 2 and e.v > a.v)), aggregates(n(count(w)) t(sum(w, v))))",
    "windowby(S, order(ts) sliding, start(as(a) at(sp) prev(pa) "
    "when(is_missing(pa) or a.v > pa.v)), end(at(ep) next(ne) when(ep - sp = 1 and "
    "is_missing(ne))))",
    "windowby(S, partition(p) order(v) sliding, start(as(a) next(na) when(na.v = a.v)), "
    "end(unbounded))",
    "windowby(S, order(ts) sliding, start(as(a) at(sp) when(a.v = 1)), end(as(e)))",
    "windowby(S, order(ts) sliding, start(as(a) at(sp) when(a.v = 1)), "
    "end(at(ep) when(sp - ep = 2)))",
    "windowby(S, partition(p) order(ts) sliding, start(at(sp)), "
    "end(as(e) at(ep) prev(pe) when(ep - sp = 1 and pe.v <= e.v)), only)",
]


#: LABEL windows found in SQL (``sira_duckdb.windowby._label_windows``), with the seed's label
#: frames: a start shared by every label (START reads no label variable), pinned to the label
#: before or after it, unbounded; an END pinned to the label or to a start that may not open
#: (its variables MISSING), unbounded or without condition; PREV/NEXT everywhere
LABEL_PINNED = LABEL_FRAMES + [
    "windowby(S, order(ts) sliding, label(as(l) at(lp) when(l.v = 3)), "
    "start(as(s) at(sp) when(s.v = 1)), end(as(e) at(ep) when(ep - sp = 2)))",
    "windowby(S, partition(p) order(ts) sliding, label(as(l) at(lp) prev(pl) "
    "when(is_missing(pl) or l.v > pl.v)), start(as(s) at(sp) prev(ps) "
    "when(lp - sp = 2 and (is_missing(ps) or ps.v < l.v))), "
    "end(as(e) at(ep) next(ne) when(ep - lp = 1 and (is_missing(ne) or ne.v >= s.v))))",
    "windowby(S, order(ts) sliding, label(as(l) at(lp) when(l.v = 2)), "
    "start(as(s) at(sp) when(sp - lp = 1)), "
    "end(as(e) at(ep) when(ep - sp = 1 and (is_missing(s) or e.v > 0))))",
    "windowby(S, order(ts) sliding, label(at(lp) when(lp > 2)), start(unbounded), "
    "end(unbounded))",
    "windowby(S, order(ts) sliding, label(as(l) at(lp) when(l.v = 4)), "
    "start(as(s) when(s.v = 5)), end(as(e)), only)",
    "windowby(S, order(ts) sliding, label(as(l) at(lp) when(l.v = 4)), "
    "start(as(s) at(sp) when(lp - sp = 1)), end(at(ep) when(lp - ep = -3)), "
    "aggregates(n(count(w)) t(sum(w, v))))",
    "windowby(S, order(ts) sliding, label(as(l) at(lp) when(l.v = 1)), "
    "start(as(s) at(sp) when(s.v = 0 and sp > 1)), "
    "end(as(e) at(ep) when(ep - lp = 2 and e.v < 5)))",
]


#: TUMBLING WINDOWBY with a START condition and an END pinned to the start, unbounded or
#: unconditional (``sira_duckdb.windowby._chained_windows``): the chain of windows walked over
#: the START positions SQL finds; windows that do not close (an END that fails, a negative
#: offset) end the chain
CHAINED = [
    "windowby(S, order(ts) tumbling, start(as(a) at(sp) when(a.v = 0)), "
    "end(at(ep) when(ep - sp = 3)))",
    "windowby(S, partition(p) order(ts) tumbling, start(as(a) at(sp) when(a.v < 3)), "
    "end(as(e) at(ep) when(ep - sp = 2 and e.v >= a.v)), aggregates(n(count(w)) t(sum(w, v))))",
    "windowby(S, partition(p) order(v) tumbling, start(as(a) when(a.v = 2)), end(unbounded))",
    "windowby(S, order(ts) tumbling, start(as(a) at(sp) when(a.v = 1)), end(as(e)))",
    "windowby(S, order(ts) tumbling, start(as(a) at(sp) when(a.v > 1)), "
    "end(at(ep) when(sp - ep = 2)))",
    "windowby(S, partition(p) order(ts) tumbling, start(as(a) at(sp) when(a.v != 3)), "
    "end(as(e) at(ep) when(ep - sp = 1)), only)",
    "windowby(S, order(ts) tumbling, start(as(a) at(sp) when(a.v < 4)), "
    "end(at(ep) when(ep - sp = 0)))",
]


@EXAMPLES
@given(stream=streams(max_size=25))
def test_windowby_pinned_ends_are_found_in_sql_and_give_the_python_windows(stream):
    from sira_duckdb.windowby import _chain_offset, _end_offset, _label_frame
    relvars = {"S": stream}
    for q in PINNED + LABEL_PINNED + CHAINED:
        node = sira.parse(q, {"S": stream.heading})
        assert any(f(node) is not None for f in (_end_offset, _label_frame, _chain_offset)), q
        py, dk = both(q, relvars)
        assert py == dk, f"{q}\npython: {py!r}\nduckdb: {dk!r}"


@EXAMPLES
@given(stream=streams(max_size=25))
def test_hop_aggregates_by_panes_and_window_tables_give_the_python_windows(stream):
    from sira_duckdb.windowtables import fused_hop
    relvars = {"S": stream}
    for q in HOP_AGGREGATES:
        assert fused_hop(sira.parse(q, {"S": stream.heading})) is not None, q
        py, dk = both(q, relvars)
        assert py == dk, f"{q}\npython: {py!r}\nduckdb: {dk!r}"
    py, dk = both(tagged_union(WINDOW_TABLES), relvars)
    assert py == dk, first_difference(WINDOW_TABLES, relvars)


def test_an_int_window_ending_beyond_int_overflows_on_both_engines():
    stream = Relation.from_rows({"ts": INT, "v": INT}, [(2_147_483_000, 1)])
    for engine in ("python", "duckdb"):
        with pytest.raises(IntOverflow):
            sira.evaluate("tumble(S, ts, size(1000))", {"S": stream}, engine=engine)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_stream_rows(), window_texts())
def test_spl_windows_agree_with_the_python_engine(rows, text):
    s = spl_stream(*rows)
    node = sira.parse(text, {"s": s})
    expected = sira.evaluate(node, {"s": s})
    got = sira.evaluate(node, {"s": s}, engine="duckdb")
    assert got == expected, f"{text}\n{s}\npython:\n{expected}\nduckdb:\n{got}"


def _tied_stream(firsts, ties, partitions="a"):
    """``firsts`` elements at 0, four at 1, ``ties`` at 6, ``ties`` at 20 and ``firsts`` at 24,
    in arrival order, spread over ``partitions``."""
    times = [0] * firsts + [1] * 4 + [6] * ties + [20] * ties + [24] * firsts
    return Relation.from_rows({"ts": LONG, "seq": INT, "p": STRING, "v": INT},
                              [(t, i, partitions[i % len(partitions)], 0)
                               for i, t in enumerate(times)])


@pytest.mark.parametrize("query", ["session(S, ts, gap(4))",
                                   "session(S, ts, gap(4) partition(p))"])
def test_sessions_take_elements_at_one_time_together(query):
    """Elements at one time are one session's: the running count of session starts used a ROWS
    frame, so when lag and the count ordered equal times differently a later element at 6 was
    numbered into the session before it ([0, 10) instead of [0, 5) and [6, 10))."""
    for firsts in (4, 16, 19, 25):
        for ties in (2, 3, 9):
            for partitions in ("a", "ab"):
                stream = _tied_stream(firsts, ties, partitions)
                py, dk = both(query, {"S": stream})
                assert py == dk, (query, firsts, ties, partitions)


def test_a_shared_label_start_that_may_fail_is_tested_only_up_to_its_first_position():
    # START (div by zero at v = 0) holds first at position 1; the reference never tests it at
    # position 3, where it would fail: DuckDB must not either
    from sira_duckdb.windowby import _label_frame
    s = Relation.from_rows({"ts": LONG, "v": INT},
                           [{"ts": i, "v": [1, 3, 0, 2, 5][i % 5]} for i in range(12)])
    q = ("windowby(s, order(ts) sliding, label(as(l) at(lp) when(l.v = 2)), "
         "start(as(a) when(div(6, a.v) = 6)), end(as(e)))")
    assert _label_frame(sira.parse(q, {"s": s})) is None
    py, dk = both(q, {"s": s})
    assert py == dk and len(py) == 2


def test_rows_window_summaries_by_frames_on_timestamps_strings_and_overflow():
    """SUMMARIZEBYUSING over a ``rows(N)`` window by DuckDB's frames of N rows
    (``aggregation._rows_framed``): TIMESTAMP and INT times with ties, the MAX of a STRING
    (code point order, as Python's), AND of a BOOLEAN formula and an INT sum, partitioned and
    not, equal to the Python engine's; an INT sum past INT is IntOverflow on both."""
    t0 = datetime.datetime(2020, 1, 1, 12)
    names = ["b", "B", "é", "a", "z", "Z", "ä", "aa"]
    for ts_type, at in ((TIMESTAMP, lambda i: t0 + datetime.timedelta(microseconds=i // 2)),
                        (INT, lambda i: i // 3 - 2 ** 31)):
        rows = [(at(i), "pq"[i % 2], names[i % len(names)], (i * 7) % 11 - 5)
                for i in range(40)]
        s = Relation.from_rows({"ts": ts_type, "p": STRING, "name": STRING, "v": INT}, rows)
        for n in (1, 2, 5, 50):
            for part, by in (("", ""), ("partition(p) ", "p, ")):
                text = (f"summarizebyusing(window(s, ts, {part}rows({n})), ({by}during), "
                        f"(m(max(name)), l(min(name)), a(and(gt(v, -4))), t(plus(v))), "
                        f"(during))")
                py, dk = both(text, {"s": s})
                assert py == dk, text
    big = Relation.from_rows({"ts": INT, "v": INT}, [(i, 2 ** 31 - 1) for i in range(3)])
    text = "summarizebyusing(window(s, ts, rows(2)), (during), (m(max(v)), t(plus(v))), (during))"
    for engine in ("python", "duckdb"):
        with pytest.raises(IntOverflow):
            sira.evaluate(text, {"s": big}, engine=engine)
