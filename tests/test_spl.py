"""SPL windows (seed 001, "Window clause"): SPLWINDOW on the Python engine, the text syntax, the
errors raised when a tree is built, and differential tests against the DuckDB and Spark
engines."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sira
from sira import BOOLEAN, INT, LONG, STRING, TIMESTAMP, Relation
from sira.algebra.spl import SplWindow
from sira.errors import (DuplicateAttribute, SiraTypeError, SiraValueError, UnknownAttribute)
from sira.explain import explain

from conftest import duckdb_available, spark_available

HEADING = {"ts": LONG, "seq": LONG, "k": STRING, "i": INT, "p": BOOLEAN}


def stream(*rows):
    """A stream relation from (ts, i) / (ts, i, k) / (ts, i, k, p) rows; seq = listing order."""
    out = []
    for seq, row in enumerate(rows, 1):
        ts, i, k, p = tuple(row) + ("a", False)[len(row) - 2:]
        out.append({"ts": ts, "seq": seq, "k": k, "i": i, "p": p})
    return Relation.from_rows(HEADING, out)


def windows(query: str, s: Relation, engine="python") -> list:
    """[(partition key..., instance, at, [i of the tuples in ts order])] sorted."""
    node = sira.parse(query, {"s": s})
    r = sira.evaluate(node, {"s": s}, engine=engine)
    out = []
    for t in r.to_rows():
        content = [x["i"] for x in sorted(t["tuples"].to_rows(), key=lambda x: (x["ts"], x["seq"]))]
        key = tuple(t[n] for n in node.partition)
        pane = (t["pane"].begin, t["pane"].end) if "pane" in t else None
        out.append(key + (t["instance"], t["at"]) + ((pane,) if pane else ()) + (content,))
    return sorted(out)


S = stream((1, 1, "a", False), (2, 3, "b", False), (4, 6, "a", True), (7, 8, "a", False),
           (11, 9, "b", False), (12, 14, "a", True), (15, 15, "b", False),
           (21, 16, "a", False), (22, 23, "b", False))


# --------------------------------------------------------------------------- tumbling

def test_tumbling_count_never_emits_a_trailing_partial_window():
    assert windows("splwindow(s, ts, tumbling, count(4))", S) == [
        (1, 7, [1, 3, 6, 8]), (2, 21, [9, 14, 15, 16])]


def test_tumbling_time_flushes_at_each_tick_of_a_fixed_period_from_the_first_tuple():
    assert windows("splwindow(s, ts, tumbling, time(10))", S) == [
        (1, 11, [1, 3, 6, 8]), (2, 21, [9, 14, 15])]


def test_tumbling_time_windows_do_not_drift_after_a_quiet_stretch():
    # IBM: "all tuples are evicted every T seconds independent of tuple arrival"; ticks at
    # 10, 20, 30 from the first tuple (0): {0} at 10, {15} at 20; 21 is still open at the end
    s = stream((0, 1), (15, 2), (21, 3))
    assert windows("splwindow(s, ts, tumbling, time(10))", s) == [(1, 10, [1]), (2, 20, [2])]


def test_tumbling_time_ticks_are_shared_by_every_partition():
    s = stream((0, 1, "a"), (4, 2, "b"), (12, 3, "a"), (13, 4, "b"), (20, 5, "a"))
    assert windows("splwindow(s, ts, tumbling, time(10) partitioned(k))", s) == [
        ("a", 1, 10, [1]), ("a", 2, 20, [3]), ("b", 1, 10, [2]), ("b", 2, 20, [4])]


def test_tumbling_delta_compares_with_the_oldest_tuple_only():
    s = stream((1, 1), (2, 8), (3, 4), (4, 11), (5, 12), (6, 13))
    assert windows("splwindow(s, ts, tumbling, delta(i, 10))", s) == [(1, 5, [1, 8, 4, 11])]


def test_tumbling_punct_flushes_after_each_marked_tuple():
    assert windows("splwindow(s, ts, tumbling, punct(p))", S) == [
        (1, 4, [1, 3, 6]), (2, 12, [8, 9, 14])]


def test_ties_in_ts_are_read_in_arrival_order():
    s = stream((1, 10), (1, 5), (1, 7))
    assert windows("splwindow(s, ts, tumbling, count(2) arrival(seq))", s) == [(1, 1, [10, 5])]


# --------------------------------------------------------------------------- sliding

def test_sliding_without_trigger_emits_on_every_tuple():
    s = stream((1, 1), (2, 3), (4, 6))
    assert windows("splwindow(s, ts, sliding, count(2))", s) == [
        (1, 1, [1]), (2, 2, [1, 3]), (3, 4, [3, 6])]


def test_sliding_time_keeps_a_tuple_exactly_t_old():
    # IBM's eviction thread evicts when now - ts > T
    s = stream((2, 1), (5, 2), (12, 3), (13, 4))
    assert windows("splwindow(s, ts, sliding, time(10))", s)[-2:] == [
        (3, 12, [1, 2, 3]), (4, 13, [2, 3, 4])]


def test_sliding_delta_evicts_every_tuple_of_the_window_beyond_d():
    # IBM: "existing tuples in the window for which the delta ... is greater than the eviction
    # policy size are evicted": 10 - 1 and 10 - 2 exceed 5, 10 - 9 does not
    s = stream((1, 1), (2, 9), (3, 2), (4, 10))
    assert windows("splwindow(s, ts, sliding, delta(i, 5))", s)[-1] == (4, 4, [9, 10])
    s = stream((1, 10), (2, 3), (3, 12))  # the case: the middle tuple leaves
    assert windows("splwindow(s, ts, sliding, delta(i, 5) trigger(count(1)))", s)[-1] == (
        3, 3, [10, 12])


def test_sliding_count_trigger_fires_every_mth_tuple():
    assert windows("splwindow(s, ts, sliding, count(3) trigger(count(4)))", S) == [
        (1, 7, [3, 6, 8]), (2, 21, [14, 15, 16])]


def test_sliding_time_trigger_fires_at_every_tick_before_the_tuples_of_its_time():
    s = stream((0, 1), (3, 2), (25, 3), (29, 4), (30, 5))
    # ticks 10, 20, 30 from the first tuple, each whether or not a tuple arrives; the tick at
    # 30 comes before the tuple of ts 30
    assert windows("splwindow(s, ts, sliding, count(5) trigger(time(10)))", s) == [
        (1, 10, [1, 2]), (2, 20, [1, 2]), (3, 30, [1, 2, 3, 4])]


def test_sliding_delta_trigger_fires_before_the_tuple_is_inserted():
    # IBM: the TRIGGER event precedes the EVICTION and INSERTION events; the reference is the
    # last triggering tuple (the first tuple to begin with)
    s = stream((1, 0), (2, 5), (3, 6), (4, 11), (5, 12))
    assert windows("splwindow(s, ts, sliding, count(2) trigger(delta(i, 5)))", s) == [
        (1, 3, [0, 5]), (2, 5, [6, 11])]
    s = stream((1, 0), (2, 1), (3, 2), (4, 3))  # the case
    assert windows("splwindow(s, ts, sliding, count(5) trigger(delta(i, 2)))", s) == [
        (1, 4, [0, 1, 2])]


# --------------------------------------------------------------------------- partitions

def test_partitioned_windows_number_their_instances_per_partition():
    assert windows("splwindow(s, ts, tumbling, count(2) partitioned(k))", S) == [
        ("a", 1, 4, [1, 6]), ("a", 2, 12, [8, 14]), ("b", 1, 11, [3, 9]),
        ("b", 2, 22, [15, 23])]


def test_partitionage_drops_an_idle_partitions_window():
    got = windows("splwindow(s, ts, tumbling, count(2) partitioned(k, partitionage(5)))", S)
    # a partition is evicted when now - its last insertion > 5 (IBM: last + age < now):
    # a: 1, 6 flush at 4; 8 at 7 is still there at 12 (12 - 7 = 5): 8, 14 flush at 12;
    # b: 3 at 2 is evicted at 11; 9, 15 flush at 15; 16 and 23 stay alone
    assert got == [("a", 1, 4, [1, 6]), ("a", 2, 12, [8, 14]), ("b", 1, 15, [9, 15])]


def test_partitioncount_evicts_the_least_recently_updated_partition():
    got = windows("splwindow(s, ts, tumbling, count(2) partitioned(k, partitioncount(1)))", S)
    assert got == [("a", 1, 7, [6, 8])]


def test_tuplecount_evicts_whole_partitions_least_recently_updated_first():
    got = windows("splwindow(s, ts, sliding, count(2) partitioned(k, tuplecount(3)))", S)
    assert ("a", 4, 12, [14]) in got and ("b", 4, 22, [23]) in got


# --------------------------------------------------------------------------- timeInterval

def test_timeinterval_assigns_a_tuple_to_every_pane_holding_it():
    s = stream((7, 1))
    got = windows("splwindow(s, ts, timeinterval, intervalduration(10) creationperiod(5))", s)
    assert got == [(1, 10, (0, 10), [1]), (2, 15, (5, 15), [1])]


def test_timeinterval_late_tuple_triggers_its_pane_again():
    s = stream((3, 1), (12, 2), (4, 3))  # i 3 arrives after the watermark passed 10
    got = windows("splwindow(s, ts, timeinterval, intervalduration(10) discardage(100) "
                  "arrival(seq))", s)
    assert got == [(1, 10, (0, 10), [1]), (2, 12, (0, 10), [1, 3]), (3, 20, (10, 20), [2])]


def test_timeinterval_drops_tuples_later_than_the_discard_age():
    s = stream((3, 1), (30, 2), (4, 3), (25, 4))
    got = windows("splwindow(s, ts, timeinterval, intervalduration(10) discardage(5) "
                  "arrival(seq))", s)
    assert got == [(1, 10, (0, 10), [1]), (2, 30, (20, 30), [4]), (3, 40, (30, 40), [2])]


def test_timeinterval_without_discard_age_drops_every_late_tuple():
    s = stream((3, 1), (12, 2), (4, 3))
    got = windows("splwindow(s, ts, timeinterval, intervalduration(10) arrival(seq))", s)
    assert [w[-1] for w in got] == [[1], [2]]


def test_timeinterval_creation_period_longer_than_the_duration_leaves_gaps():
    s = stream((1, 1), (6, 2))
    got = windows("splwindow(s, ts, timeinterval, intervalduration(2) creationperiod(5))", s)
    assert got == [(1, 2, (0, 2), [1]), (2, 7, (5, 7), [2])]


def test_timestamp_streams_take_durations_with_units():
    t0 = datetime.datetime(2024, 1, 1, 12)
    rows = [{"et": t0 + datetime.timedelta(seconds=s), "i": i} for i, s in enumerate([0, 4, 9, 11])]
    z = Relation.from_rows({"et": TIMESTAMP, "i": INT}, rows)
    r = sira.evaluate("splwindow(z, et, tumbling, time(10 second))", {"z": z})
    (t,) = r.to_rows()
    assert t["at"] == t0 + datetime.timedelta(seconds=10)  # the tick, 10 s after the first
    assert sorted(x["i"] for x in t["tuples"].to_rows()) == [0, 1, 2]
    r = sira.evaluate("splwindow(z, et, timeinterval, intervalduration(1 minute))", {"z": z})
    assert r.heading["pane"].name == "TIMESTAMPINTERVAL"


# --------------------------------------------------------------------------- heading and text

def test_heading_has_partition_instance_at_pane_and_tuples():
    h = sira.parse("splwindow(s, ts, timeinterval, intervalduration(5) partitioned(k))",
                   {"s": S}).heading
    assert h.names == ("at", "instance", "k", "pane", "tuples")
    assert h["instance"] == LONG and h["at"] == LONG and h["tuples"].heading == S.heading


@pytest.mark.parametrize("text", [
    "splwindow(s,ts,tumbling,count(5))",
    "splwindow(s,ts,tumbling,time(10 second) unit(millisecond))",
    "splwindow(s,ts,tumbling,delta(i,10))",
    "splwindow(s,ts,tumbling,punct(p) partitioned(k))",
    "splwindow(s,ts,sliding,count(5) trigger(count(2)))",
    "splwindow(s,ts,sliding,time(10) trigger(time(3)) arrival(seq))",
    "splwindow(s,ts,sliding,delta(i,0) trigger(delta(i,3)) partitioned(k,tuplecount(4)))",
    "splwindow(s,ts,sliding,count(3) partitioned(k,partitionage(60)))",
    "splwindow(s,ts,tumbling,count(3) partitioned(k,partitioncount(2)))",
    "splwindow(s,ts,timeinterval,intervalduration(60) creationperiod(10) discardage(3600) "
    "intervaloffset(5) partitioned(k) arrival(seq))",
])
def test_text_round_trip(text):
    node = sira.parse(text, {"s": S})
    assert isinstance(node, SplWindow)
    assert repr(node) == text
    assert sira.parse(repr(node), {"s": S}) == node


def test_explain_names_the_operator():
    node = sira.parse("splwindow(s, ts, sliding, count(5), trigger(count(2)))", {"s": S})
    assert explain(node).startswith("SPLWINDOW ts,sliding,count(5) trigger(count(2)) -> ")


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("text, error, fields", [
    ("splwindow(s, ts, tumbling, delta(nosuch, 1))", UnknownAttribute, {"attribute": "nosuch"}),
    ("splwindow(s, nosuch, tumbling, count(1))", UnknownAttribute, {"attribute": "nosuch"}),
    ("splwindow(s, ts, sliding, count(2) partitioned(z))", UnknownAttribute, {"attribute": "z"}),
    ("splwindow(s, ts, tumbling, count(0))", SiraValueError, {"value": "0"}),
    ("splwindow(s, ts, sliding, time(-1))", SiraValueError, {"value": "-1"}),
    ("splwindow(s, ts, sliding, count(2) trigger(count(0)))", SiraValueError, {"value": "0"}),
    ("splwindow(s, ts, timeinterval, intervalduration(0))", SiraValueError, {"value": "0"}),
    ("splwindow(s, ts, tumbling, count(2) trigger(count(1)))", SiraValueError, {}),
    ("splwindow(s, ts, sliding, punct(p))", SiraValueError, {}),
    ("splwindow(s, ts, tumbling, punct(i))", SiraTypeError, {"expected": "BOOLEAN"}),
    ("splwindow(s, ts, tumbling, delta(k, 1))", SiraTypeError, {}),
    ("splwindow(s, k, tumbling, count(1))", SiraTypeError, {}),
    ("splwindow(s, ts, tumbling, count(2) partitioned(k, partitioncount(0)))", SiraValueError,
     {}),
    ("splwindow(s, ts, timeinterval, intervalduration(5) partitioned(k, tuplecount(3)))",
     SiraValueError, {}),
    ("splwindow(s, ts, timeinterval, count(5))", SiraValueError, {}),
    ("splwindow(s, ts, tumbling, time(5 second))", SiraValueError, {}),
    ("splwindow(rename(s, (k, at)), ts, tumbling, count(2) partitioned(at))", DuplicateAttribute,
     {"attribute": "at"}),
])
def test_errors_are_raised_when_the_tree_is_built(text, error, fields):
    with pytest.raises(error) as info:
        sira.parse(text, {"s": S})
    for name, value in fields.items():
        assert str(getattr(info.value, name)) == value
    if error is not UnknownAttribute:
        assert info.value.operator == "SPLWINDOW"


def test_a_kind_that_is_not_a_window_kind_is_a_parse_error():
    with pytest.raises(sira.ParseError):
        sira.parse("splwindow(s, ts, hopping, count(5))", {"s": S})


# --------------------------------------------------------------------------- Python vs Spark

def _stream_rows():
    row = st.tuples(st.integers(0, 30), st.integers(-20, 20), st.sampled_from("abc"),
                    st.booleans())
    return st.lists(row, min_size=0, max_size=12)


@st.composite
def window_texts(draw):
    kind = draw(st.sampled_from(["tumbling", "sliding", "timeinterval"]))
    parts = []
    if kind == "timeinterval":
        parts.append(f"intervalduration({draw(st.integers(1, 10))})")
        for name, lo in (("creationperiod", 1), ("discardage", 0), ("intervaloffset", 0)):
            if draw(st.booleans()):
                parts.append(f"{name}({draw(st.integers(lo, 10))})")
    else:
        evictions = ["count", "time", "delta"] + (["punct"] if kind == "tumbling" else [])
        ev = draw(st.sampled_from(evictions))
        parts.append({"count": f"count({draw(st.integers(1, 4))})",
                      "time": f"time({draw(st.integers(1, 10))})",
                      "delta": f"delta(i,{draw(st.integers(0, 10))})",
                      "punct": "punct(p)"}[ev])
        if kind == "sliding":
            tr = draw(st.sampled_from([None, "count", "time", "delta"]))
            if tr is not None:
                parts.append({"count": f"trigger(count({draw(st.integers(1, 3))}))",
                              "time": f"trigger(time({draw(st.integers(1, 10))}))",
                              "delta": f"trigger(delta(i,{draw(st.integers(0, 10))}))"}[tr])
    part = draw(st.sampled_from([None, "", "partitionage", "partitioncount", "tuplecount"]
                                if kind != "timeinterval" else [None, ""]))
    if part == "":
        parts.append("partitioned(k)")
    elif part is not None:
        n = draw(st.integers(1, 6 if part != "partitioncount" else 2))
        parts.append(f"partitioned(k,{part}({n}))")
    if draw(st.booleans()):
        parts.append("arrival(seq)")
    return f"splwindow(s,ts,{kind},{' '.join(parts)})"


@pytest.mark.skipif(not duckdb_available(), reason="DuckDB is not available here")
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_stream_rows(), window_texts())
def test_python_and_duckdb_compute_the_same_windows(rows, text):
    s = stream(*rows)
    node = sira.parse(text, {"s": s})
    expected = sira.evaluate(node, {"s": s})
    got = sira.evaluate(node, {"s": s}, engine="duckdb")
    assert got == expected, f"{text}\n{s}\npython:\n{expected}\nduckdb:\n{got}"


@pytest.mark.skipif(not spark_available(), reason="Spark is not available here")
@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_stream_rows(), window_texts())
def test_python_and_spark_compute_the_same_windows(rows, text):
    s = stream(*rows)
    node = sira.parse(text, {"s": s})
    assert sira.parse(repr(node), {"s": s}) == node
    expected = sira.evaluate(node, {"s": s})
    got = sira.evaluate(node, {"s": s}, engine="spark")
    assert got == expected, f"{text}\n{s}\npython:\n{expected}\nspark:\n{got}"


@settings(max_examples=2000, deadline=None)
@given(a=st.floats(allow_nan=False),
       delta=st.one_of(st.floats(min_value=0, max_value=2.0 ** 63 - 1024),
                       st.integers(min_value=0, max_value=2 ** 63 - 1)),
       near=st.floats(allow_nan=False, allow_infinity=False, min_value=-1e3, max_value=1e3))
def test_float_reach_is_the_last_value_a_sliding_delta_keeps(a, delta, near):
    # a later b evicts a exactly when b - a > delta, rounded as the reference rounds it;
    # float_reach is the largest b that does not (values near -delta cancel a + delta to ~0)
    import math
    from sira.engine.spl import float_reach
    for value in (a, near - delta):
        reach = float_reach(value, delta)
        if math.isinf(value):
            assert reach == value
            continue
        assert reach - value <= delta
        assert math.nextafter(reach, math.inf) - value > delta
