"""CQL windows on Spark against the Python engine (the reference): random small streams (LONG
timestamps with ties, an arrival sequence, a partition attribute, a value) through every window
kind, then back to streams with ISTREAM, DSTREAM and RSTREAM."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import sira
from sira import FLOAT, INT, LONG, STRING, TIMESTAMP, Relation
from sira.errors import SiraValueError

from conftest import every_sequence_split, spark_available

pytestmark = pytest.mark.skipif(not spark_available(), reason="Spark is not available here")

# the Python engine's families, loaded before Spark runs (see test_spark_engine.py)
from sira.engine import windows  # noqa: E402,F401

HEADING = {"ts": LONG, "seq": INT, "p": STRING, "v": INT}

#: every window kind, in groups evaluated together (one Spark query per group and stream);
#: rows(17) slide(17) takes the batch-join path (slides beyond 16 rows), on(v) the self-join
#: path (v is not ordered by time), on(ts) and on(seq) the marker path
GROUPS = [
    ("now", "range(5)", "range(unbounded)", "range(7) slide(3)"),
    ("range(6) slide(6)", "rows(1)", "rows(3)", "rows(4) slide(2)"),
    ("rows(3) slide(3)", "rows(17) slide(17)", "partition(p) rows(2)", "rows(2) slide(3)",
     "partition(p) rows(1) slide(4)", "rows(2) slide(17)"),
    ("partition(p) rows(2) range(6)", "partition(p) rows(3) range(7) slide(2)",
     "partition(p) rows(3) slide(2)"),
    ("range(5) on(ts)", "range(3) on(seq)", "range(4) on(v)"),
]
KINDS = [k for group in GROUPS for k in group]

# Spark runs about a second per window here: few examples per group, 20 in all
EXAMPLES = settings(max_examples=4, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def streams(draw, max_size=20):
    """A stream: timestamps 0..50 in arrival order (ties allowed), two partitions."""
    times = sorted(draw(st.lists(st.integers(0, 50), max_size=max_size)))
    rows = [{"ts": t, "seq": i, "p": draw(st.sampled_from("ab")), "v": draw(st.integers(0, 5))}
            for i, t in enumerate(times)]
    return Relation.from_rows(HEADING, rows)


def window(spec, arrival):
    return f"window(S, ts, {spec}{' arrival(seq)' if arrival else ''})"


def tagged_union(queries):
    """One query for many: each result tagged with its index (k)."""
    if len(queries) == 1:
        return f"extend({queries[0]}, (k(0)))"
    return "union(" + ", ".join(f"extend({q}, (k({i})))" for i, q in enumerate(queries)) + ")"


def both(query, relvars):
    return sira.evaluate(query, relvars), sira.evaluate(query, relvars, engine="spark")


def first_difference(queries, relvars):
    """The first query whose results differ (run one by one, on failure only)."""
    for q in queries:
        py, sp = both(q, relvars)
        if py != sp:
            return f"{q}\npython: {py!r}\nspark:  {sp!r}"
    return "no single query differs"


@pytest.mark.parametrize("group", GROUPS, ids=lambda g: g[0])
@EXAMPLES
@given(stream=streams(), arrival=st.booleans())
def test_every_window_kind_gives_the_python_intervals(group, stream, arrival):
    queries = [window(k, arrival) for k in group]
    relvars = {"S": stream}
    py, sp = both(tagged_union(queries), relvars)
    assert py == sp, first_difference(queries, relvars)


@settings(max_examples=5, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(streams(), st.lists(st.sampled_from(KINDS), min_size=1, max_size=2, unique=True),
       st.booleans(), st.lists(st.integers(0, 60), min_size=1, max_size=8))
def test_istream_dstream_rstream_give_the_python_streams(stream, kinds, arrival, ticks):
    # projected on (p, v), so equal tuples may leave and enter at the same instant
    ticks = Relation.from_rows({"at": LONG}, [(t,) for t in ticks])
    queries = []
    for k in kinds:
        w = f"project({window(k, arrival)}, (p, v, during))"
        queries += [f"istream({w}, at)", f"dstream({w}, at)", f"rstream({w}, at, TICKS)"]
    relvars = {"S": stream, "TICKS": ticks}
    py, sp = both(tagged_union(queries), relvars)
    assert py == sp, first_difference(queries, relvars)


@settings(max_examples=2, deadline=None, derandomize=True)
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
    py, sp = both(tagged_union(queries), relvars)
    assert py == sp, first_difference(queries, relvars)
    changes = f"changes({window('range(7 second) slide(5 second)', True)}, at)"
    py, sp = both(changes, relvars)
    assert py == sp


def test_an_out_of_order_stream_is_refused_with_the_same_error():
    stream = Relation.from_rows(HEADING, [{"ts": 1, "seq": 0, "p": "a", "v": 0},
                                          {"ts": 5, "seq": 1, "p": "a", "v": 0},
                                          {"ts": 3, "seq": 2, "p": "a", "v": 0},
                                          {"ts": 2, "seq": 3, "p": "b", "v": 0}])
    errors = []
    for engine in ("python", "spark"):
        with pytest.raises(SiraValueError) as info:
            sira.evaluate(window("rows(2)", True), {"S": stream}, engine=engine)
        errors.append((info.value.operator, info.value.value))
    assert errors[0] == errors[1] == ("WINDOW", 1)


def test_range_on_a_float_that_c_cannot_move_falls_back_to_the_self_join():
    # f never decreases, but 1e17 + 1.0 == 1e17: an element's threshold is its own value, which
    # the marker search would take for the element itself; only later elements may count
    stream = Relation.from_rows({"ts": LONG, "f": FLOAT},
                                [{"ts": t, "f": f} for t, f in
                                 [(0, 1e17), (1, 1e17), (2, 1e17 + 64), (3, 1e17 + 64)]])
    py, sp = both("window(S, ts, range(1.0) on(f))", {"S": stream})
    assert py == sp


# --- windowed aggregates compiled without the window relation (sira_spark/windows.py) and
# WINDOWBY segmentations and label frames (sira_spark/windowby.py); both engines'
# fused paths against the families' reference evaluation -------------------------------------

def reference(query, relvars):
    """The Python engine with the family's own SUMMARIZEBY (no fused window sweep)."""
    from sira.algebra.aggregation import SummarizeBy
    from sira.engine import _EVALUATORS
    from sira.engine import aggregation
    fused = _EVALUATORS[SummarizeBy]
    _EVALUATORS[SummarizeBy] = aggregation._summarizeby
    try:
        return sira.evaluate(query, relvars)
    finally:
        _EVALUATORS[SummarizeBy] = fused


POINTWISE = [
    "summarizebyusing(window(S, ts, partition(p) rows(3)), (p, during), "
    "(total(plus(v)) n(plus(1)) hi(max(v)) lo(min(seq))), (during))",
    "summarizebyusing(window(S, ts, rows(2) arrival(seq)), (during), (total(plus(v))), (during))",
    "summarizebyusing(window(S, ts, partition(p) rows(1)), (p, during), (n(plus(1))), (during))",
    "summarizebyusing(window(S, ts, range(5)), (p, during), (total(plus(v)) n(plus(1))), "
    "(during))",
    "summarizebyusing(window(S, ts, range(6) slide(4)), (during), (total(plus(v))), (during))",
    "summarizebyusing(window(S, ts, range(unbounded)), (p, during), (total(plus(v))), (during))",
]


@settings(max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(stream=streams(max_size=25))
def test_pointwise_aggregates_over_windows_equal_the_split_and_summarize_reference(stream):
    relvars = {"S": stream}
    for query in POINTWISE:  # headings differ: one query at a time
        expected = reference(query, relvars)
        py, sp = both(query, relvars)
        assert py == expected, f"{query}\npython: {py!r}\nreference: {expected!r}"
        assert sp == expected, f"{query}\nspark: {sp!r}\nreference: {expected!r}"


def test_a_fused_window_sum_that_overflows_raises_as_the_reference_does():
    from sira.errors import IntOverflow
    stream = Relation.from_rows(HEADING, [{"ts": t, "seq": t, "p": "a", "v": 2_000_000_000}
                                          for t in range(2)])
    with pytest.raises(IntOverflow):
        sira.evaluate("summarizebyusing(window(S, ts, range(5)), (p, during), "
                      "(total(plus(v))), (during))", {"S": stream})


SEGMENTS = [
    # sessions: a window ends where the next element comes more than 3 after the last one
    "windowby(S, partition(p) order(ts) tumbling, start(as(s) at(sp) prev(ps)), "
    "end(as(e) at(ep) next(en) when(en.ts - e.ts > 3)))",
    "windowby(S, partition(p) order(ts) tumbling, start(), end(as(e) when(e.v = 0)), only)",
    "windowby(S, order(ts) tumbling, start(next(ns)), end(as(e) prev(pe) at(ep) when(pe.v > e.v)), "
    "aggregates(n(count(w)) total(sum(w, v)) hi(max(w, p)) a(avg(w, v)) lo(min(w, ts))))",
    "windowby(S, partition(p) order(v) tumbling, start(), end(unbounded))",
    "windowby(S, partition(p) order(ts) tumbling, start(), end(at(ep) when(mod(ep, 3) = 0)))",
]


@settings(max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(stream=streams(max_size=25))
def test_windowby_segmentations_give_the_python_windows(stream):
    relvars = {"S": stream}
    for q in SEGMENTS:
        py, sp = both(q, relvars)
        assert py == sp, f"{q}\npython: {py!r}\nspark:  {sp!r}"


LABEL_FRAMES = [
    "windowby(S, partition(p) order(ts) sliding, label(as(l) at(lp)), "
    "start(at(sp) when(lp - sp = 3)), end(at(ep) when(ep = lp)))",
    "windowby(S, partition(p) order(ts) sliding, label(as(l) at(lp) when(l.v < 3)), "
    "start(as(s) at(sp) when(lp - sp = 1)), end(as(e) at(ep) when(lp = ep)), "
    "aggregates(n(count(w)) total(sum(w, v)) a(avg(w, v)) hi(max(w, ts))))",
    "windowby(S, order(ts) sliding, label(at(lp)), start(unbounded), end(at(ep) when(ep = lp)), "
    "aggregates(a(avg(w, v))))",
    "windowby(S, partition(p) order(v) sliding, label(at(lp)), start(at(sp) when(lp - sp = 0)), "
    "end(at(ep) when(ep = lp)))",
]


@settings(max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(stream=streams(max_size=25))
def test_windowby_label_frames_give_the_python_windows(stream):
    relvars = {"S": stream}
    for q in LABEL_FRAMES:
        py, sp = both(q, relvars)
        assert py == sp, f"{q}\npython: {py!r}\nspark:  {sp!r}"


HOP_AGGREGATES = [
    "summarizeby(hop(S, ts, size(10) slide(4)), (p, window_start, window_end), "
    "(total(plus(v)) n(plus(1)) hi(max(p)) lo(min(seq))))",
    "summarizeby(hop(S, ts, size(10) slide(5) offset(3)), (p, window_start), (total(plus(v))))",
    "summarizebyusing(hop(S, ts, size(25) slide(10) offset(-7)), (window_end, window_time), "
    "(n(plus(1))), ())",
]


@settings(max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(stream=streams(max_size=25))
def test_hop_aggregates_by_panes_give_the_python_windows(stream):
    from sira_spark.windowtables import fused_hop
    relvars = {"S": stream}
    for q in HOP_AGGREGATES:
        assert fused_hop(sira.parse(q, {"S": stream.heading})) is not None, q
        py, sp = both(q, relvars)
        assert py == sp, f"{q}\npython: {py!r}\nspark:  {sp!r}"


def test_a_hop_aggregate_not_per_window_is_not_compiled_by_panes():
    from sira_spark.windowtables import fused_hop
    heading = sira.Heading.of(HEADING)
    for q in ("summarizeby(hop(S, ts, size(10) slide(5)), (p), (n(plus(1))))",
              "summarizeby(hop(S, ts, size(10) slide(5)), (p, window_start), "
              "(last(max(window_end))))"):
        assert fused_hop(sira.parse(q, {"S": heading})) is None, q


WINDOW_TABLES = ["tumble(S, ts, size(7) offset(2))", "hop(S, ts, size(10) slide(4))",
                 "hop(S, ts, size(6) slide(6) offset(-1))", "cumulate(S, ts, step(3) size(9))",
                 "session(S, ts, gap(4) partition(p))", "session(S, ts, gap(3))"]


@settings(max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(stream=streams(max_size=25))
def test_window_tables_give_the_python_windows(stream):
    relvars = {"S": stream}
    py, sp = both(tagged_union(WINDOW_TABLES), relvars)
    assert py == sp, first_difference(WINDOW_TABLES, relvars)


def test_an_int_window_ending_beyond_int_overflows_on_both_engines():
    from sira.errors import IntOverflow
    stream = Relation.from_rows({"ts": INT, "v": INT}, [(2_147_483_000, 1)])
    for engine in ("python", "spark"):
        with pytest.raises(IntOverflow):
            sira.evaluate("tumble(S, ts, size(1000))", {"S": stream}, engine=engine)


def test_sessions_take_elements_at_one_time_together_on_spark():
    """Elements at one time are one session's (the running count of session starts takes them
    together: a RANGE frame), with LONG and TIMESTAMP times and a partition."""
    times = [0] * 19 + [1] * 4 + [6] * 2 + [20] * 3
    epoch = datetime.datetime(2024, 2, 29, 23, 59, 59)
    rows = [(t, i, "ab"[i % 2], 0) for i, t in enumerate(times)]
    stream = Relation.from_rows({"ts": LONG, "seq": INT, "p": STRING, "v": INT}, rows)
    stamped = Relation.from_rows({"ts": TIMESTAMP, "seq": INT, "p": STRING, "v": INT},
                                 [(epoch + datetime.timedelta(seconds=t), i, p, v)
                                  for t, i, p, v in rows])
    for s, gap in ((stream, "gap(4)"), (stamped, "gap(4 second)")):
        for query in (f"session(S, ts, {gap})", f"session(S, ts, {gap} partition(p))"):
            assert sira.evaluate(query, {"S": s}, engine="spark") == \
                sira.evaluate(query, {"S": s}), query


@settings(max_examples=3, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 120), st.integers(0, 3)), min_size=1, max_size=60),
       st.integers(1, 6))
# two long sessions with a break: a bucket where one session runs in and the next starts
@example(rows=[(t, t % 4) for t in [*range(0, 31), *range(40, 71)]], gap=3)
def test_a_session_split_across_buckets_gives_the_python_windows(rows, gap):
    """SESSION on Spark, cut into buckets of time (windowtables._sessions; every stream split
    here, however short): over one sequence (no partition), and per partition with one
    partition holding most elements (v below 3 of 0..3); ties on the time, sessions running over
    several buckets, against the Python engine."""
    stream = Relation.from_rows({"ts": LONG, "v": INT}, sorted(set(rows)))
    with every_sequence_split():
        for text in (f"session(s, ts, gap({gap}))",
                     f"session(extend(s, (p(lt(v, 3)))), ts, gap({gap}) partition(p))"):
            assert sira.evaluate(text, {"s": stream}, engine="spark") == \
                sira.evaluate(text, {"s": stream}), text


@settings(max_examples=3, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(-4, 8), st.sampled_from("aaaab")),
                min_size=1, max_size=60),
       st.integers(1, 12), st.integers(1, 5), st.sampled_from(["", " range(7)"]))
def test_rows_windows_split_across_buckets_give_the_python_windows(rows, n, m, with_range):
    """CQL ``rows(N)`` windows on Spark over a stream cut into buckets of time (every stream
    split here, however short): each element's position counted over buckets
    (``windows._positioned``) and the times N positions on, or at the slide's positions, read
    by joins on positions; the fused sums over ``rows(N)`` the same way. Over one sequence,
    and per partition (positions counted per partition, the joins on (partition, position)),
    one partition holding most elements. Ties on the time, windows reaching over several
    buckets, against the Python engine."""
    stream = Relation.from_rows({"ts": LONG, "v": INT, "p": STRING}, sorted(set(rows)))
    texts = []
    for part, by in (("", ""), ("partition(p) ", "p, ")):
        texts += [f"window(s, ts, {part}rows({n}){with_range})",
                  f"window(s, ts, {part}rows({n}) slide({m}))",
                  f"summarizebyusing(window(s, ts, {part}rows({n})), ({by}during),"
                  f" (t(plus(v)), c(plus(1)), hi(max(v))), (during))"]
    with every_sequence_split():
        for text in texts:
            assert sira.evaluate(text, {"s": stream}, engine="spark") == \
                sira.evaluate(text, {"s": stream}), text


def _outcome(run):
    """A window's relation, or the error's class and the arrival it names (the engines word
    the rest of the message differently)."""
    try:
        return run()
    except SiraValueError as e:
        return ("SiraValueError", e.value)


@settings(max_examples=4, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.sampled_from("aaab")), min_size=1,
                max_size=40, unique_by=lambda r: r[0]),
       st.lists(st.integers(0, 3), min_size=40, max_size=40), st.booleans())
def test_arrival_out_of_order_is_refused_as_on_the_python_engine(rows, shifts, split):
    """CQL ``arrival(seq)`` on Spark: an element that arrived before an element of its
    partition with an earlier time is refused, naming the first such arrival over every
    partition, as on the Python engine, over one sequence and per partition (one holding most
    elements), cut into buckets of time or not; in-order streams pass. Arrivals are the times,
    some pushed later."""
    stream = Relation.from_rows({"ts": LONG, "seq": INT, "p": STRING}, [
        (t, t + shift * (t % 3 == 0) * 5, p) for (t, p), shift in zip(rows, shifts)])
    with every_sequence_split(split):
        for text in ("window(S, ts, rows(2) arrival(seq))",
                     "window(S, ts, partition(p) rows(2) arrival(seq))"):
            assert _outcome(lambda: sira.evaluate(text, {"S": stream}, engine="spark")) == \
                _outcome(lambda: sira.evaluate(text, {"S": stream})), text


@pytest.mark.parametrize("split", [False, True])
def test_range_on_finds_the_first_later_element_reaching_e_plus_c(split):
    """``range(C) on(E)`` on Spark: E rising with time (the search per bucket of value, the
    least time carried back from the later buckets) and E going up and down (binary lifting
    over positions), ties on the time, thresholds never reached; ``split``: every sequence
    cut into buckets however short, else one bucket; against the Python engine."""
    import random

    rng = random.Random(7)
    rows = [{"ts": i // 3, "seq": i, "up": i // 2 + i % 2, "v": rng.randrange(-9, 9)}
            for i in range(70)]
    stream = Relation.from_rows({"ts": LONG, "seq": INT, "up": INT, "v": INT}, rows)
    texts = [f"window(s, ts, range({c}) on({e}) arrival(seq))"
             for e, c in (("up", 3), ("up", 40), ("v", 1), ("v", 6))]
    with every_sequence_split(split):
        for text in texts:
            assert sira.evaluate(text, {"s": stream}, engine="spark") == \
                sira.evaluate(text, {"s": stream}), text


@pytest.mark.parametrize("split", [False, True])
def test_sums_max_and_min_over_rows_windows_need_no_frame_of_n_rows(split):
    """SUMMARIZEBYUSING of sums, max and min over a ``rows(N)`` window, fused on Spark without a
    sliding frame (running totals; max and min from two blocks of a sparse table of block
    maxima): N of one, a power of two and between, longer than a partition; partitioned and
    one sequence (``split``: every sequence cut into buckets, positions read by joins); ties on
    the time; against the Python engine."""
    import random
    rng = random.Random(11)
    rows = [{"ts": i // 2, "seq": i, "p": rng.choice("ab"), "v": rng.randrange(-50, 50)}
            for i in range(60)]
    stream = Relation.from_rows(HEADING, rows)
    texts = []
    for n in (1, 2, 3, 8, 13, 70):
        for part, by in (("", ""), ("partition(p) ", "p, ")):
            texts.append(f"summarizebyusing(window(s, ts, {part}rows({n}) arrival(seq)), "
                         f"({by}during), (t(plus(v)), hi(max(v)), lo(min(v)), "
                         f"w(max(p))), (during))")
    with every_sequence_split(split):
        for text in texts:
            assert sira.evaluate(text, {"s": stream}, engine="spark") == \
                sira.evaluate(text, {"s": stream}), text
