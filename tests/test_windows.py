"""Window tables (tumble, hop, cumulate, session) and CQL rows windows on the Python engine:
the window as plain attributes, checked against a direct reading of each window's definition.
Both engines run the cases of specs/windows/ (tests/test_specs.py); Spark against Python is
tests/test_spark_windows.py."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sira
from sira import INT, LONG, TIMESTAMP, Heading, Relation
from sira.errors import DuplicateAttribute, IntOverflow, ParseError, SiraValueError

STREAM = Heading.of({"ts": LONG, "k": INT})

WINDOW_TABLES = [
    "tumble(S,ts,size(5))",
    "tumble(S,ts,size(5) offset(2))",
    "hop(S,ts,size(10) slide(4) offset(-3))",
    "cumulate(S,ts,size(9) step(3))",
    "session(S,ts,gap(4) partition(k))",
    "tumble(S,ts,unit(millisecond) size(2 second))",
]


@pytest.mark.parametrize("text", WINDOW_TABLES)
def test_window_tables_print_as_they_parse(text):
    node = sira.parse(text, {"S": STREAM})
    assert sira.parse(repr(node), {"S": STREAM}) == node


def test_window_tables_add_three_plain_attributes_of_the_timestamp_type():
    for t in (INT, LONG, TIMESTAMP):
        heading = sira.parse("hop(S, ts, size(10) slide(5))", {"S": Heading.of({"ts": t})}).heading
        assert heading == Heading.of({"ts": t, "window_start": t, "window_end": t,
                                      "window_time": t})


def test_a_window_table_takes_no_interval_name_any_more():
    with pytest.raises(ParseError):
        sira.parse("tumble(S, ts, size(5) as(w))", {"S": STREAM})


@pytest.mark.parametrize("name", ["window_start", "window_end", "window_time"])
def test_a_source_holding_a_window_attribute_is_refused(name):
    with pytest.raises(DuplicateAttribute) as info:
        sira.parse("session(S, ts, gap(3))", {"S": Heading.of({"ts": LONG, name: INT})})
    assert info.value.attribute == name


def test_window_time_of_a_timestamp_is_one_microsecond_before_the_end():
    at = datetime.datetime(2020, 4, 15, 8, 5)
    stream = Relation.from_rows({"ts": TIMESTAMP}, [{"ts": at}])
    (row,) = sira.evaluate("tumble(S, ts, size(10 minute))", {"S": stream}).to_rows()
    assert row["window_start"] == datetime.datetime(2020, 4, 15, 8, 0)
    assert row["window_end"] == datetime.datetime(2020, 4, 15, 8, 10)
    assert row["window_time"] == datetime.datetime(2020, 4, 15, 8, 9, 59, 999999)


def test_an_int_window_ending_beyond_int_is_an_overflow():
    stream = Relation.from_rows({"ts": INT}, [{"ts": 2_147_483_000}])
    with pytest.raises(IntOverflow):
        sira.evaluate("tumble(S, ts, size(1000))", {"S": stream})


def test_count_per_cumulating_window_keeps_equal_counts_apart():
    # [0,4) holds ts 1; [0,8) holds ts 1 and 6; [0,12) and [0,16) hold the same two: four windows
    stream = Relation.from_rows({"ts": LONG}, [{"ts": 1}, {"ts": 6}])
    got = sira.evaluate("summarizeby(cumulate(S, ts, step(4) size(16)), (window_end), "
                        "(n(plus(1))))", {"S": stream})
    assert sorted((r["window_end"], r["n"]) for r in got.to_rows()) == \
        [(4, 1), (8, 2), (12, 2), (16, 2)]


# --------------------------------------------------------------- against the definitions

def _windows_by_definition(kind, t, size, slide):
    """The windows [start, end) holding t, read off the definitions in the docstring of
    sira.algebra.windows.WindowTable (every window start near t is tried)."""
    starts = range(t - size, t + 1)
    if kind == "tumble":
        return {(s, s + size) for s in starts if s % size == 0 and s <= t < s + size}
    if kind == "hop":
        return {(s, s + size) for s in starts if s % slide == 0 and s <= t < s + size}
    period = t - t % size
    return {(period, period + j * slide) for j in range(1, size // slide + 1)
            if t < period + j * slide}


times = st.lists(st.integers(-30, 60), max_size=15, unique=True)


@settings(max_examples=40, deadline=None)
@given(times, st.sampled_from([("tumble", 5, None), ("hop", 10, 4), ("hop", 6, 6),
                               ("cumulate", 12, 4)]))
def test_every_element_is_in_exactly_the_windows_its_definition_gives(ts, window):
    kind, size, slide = window
    spec = {"tumble": f"size({size})", "hop": f"size({size}) slide({slide})",
            "cumulate": f"step({slide}) size({size})"}[kind]
    stream = Relation.from_rows({"ts": LONG}, [{"ts": t} for t in ts])
    got = sira.evaluate(f"{kind}(S, ts, {spec})", {"S": stream}).to_rows()
    expected = {(t, s, e) for t in ts for s, e in _windows_by_definition(kind, t, size, slide)}
    assert {(r["ts"], r["window_start"], r["window_end"]) for r in got} == expected
    assert all(r["window_time"] == r["window_end"] - 1 for r in got)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 1)), max_size=15, unique=True),
       st.integers(1, 6))
def test_sessions_are_the_packed_gaps_of_each_partition(rows, gap):
    stream = Relation.from_rows({"ts": LONG, "k": INT}, [{"ts": t, "k": k} for t, k in rows])
    got = sira.evaluate(f"session(S, ts, gap({gap}) partition(k))", {"S": stream}).to_rows()
    for r in got:
        mine = sorted(t for t, k in rows
                      if k == r["k"] and r["window_start"] <= t < r["window_end"])
        assert mine[0] == r["window_start"] and mine[-1] + gap == r["window_end"]
        assert all(b - a <= gap for a, b in zip(mine, mine[1:]))  # no gap inside a session
        others = [t for t, k in rows if k == r["k"] and t not in mine]
        assert all(t > mine[-1] + gap or t + gap < mine[0] for t in others)  # nothing touches it


# --------------------------------------------------------------- rows N slide M, any N and M

def _rows_slide_by_positions(n, m, times):
    """{position: (begin, end)} by design.md's formula (end None: never leaves)."""
    out = {}
    for p in range(1, len(times) + 1):
        enter, leave = -(-p // m) * m, -(-(p + n) // m) * m
        if enter > len(times) or enter == leave:
            continue
        begin = times[enter - 1]
        end = times[leave - 1] if leave <= len(times) else None
        if end is None or begin < end:
            out[p] = (begin, end)
    return out


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=14), st.integers(1, 4), st.integers(1, 5))
def test_rows_n_slide_m_follows_the_positions_formula_for_any_n_and_m(gaps, n, m):
    times = [sum(gaps[:i + 1]) for i in range(len(gaps))]
    stream = Relation.from_rows({"ts": LONG, "p": INT},
                                [{"ts": t, "p": i + 1} for i, t in enumerate(times)])
    got = sira.evaluate(f"window(S, ts, rows({n}) slide({m}) arrival(p))", {"S": stream})
    assert {r["p"]: (r["during"].begin, r["during"].end) for r in got.to_rows()} == \
        _rows_slide_by_positions(n, m, times)


def test_rows_fewer_than_the_slide_is_a_window_but_a_range_shorter_than_its_slide_is_not():
    heading = {"S": Heading.of({"ts": LONG})}
    assert "during" in sira.parse("window(S, ts, rows(2) slide(3))", heading).heading
    with pytest.raises(SiraValueError):
        sira.parse("window(S, ts, range(2) slide(3))", heading)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(["hop", "cumulate", "tumble"]), st.integers(1, 40), st.integers(1, 12),
       st.integers(-30, 30), st.integers(-10 ** 6, 10 ** 6), st.booleans())
def test_the_windows_holding_an_instant_are_counted_without_making_them(
        kind, size, slide, offset, t, timestamp):
    # sira.engine.windows.windows_holding: what max_tuples counts before HOP and CUMULATE make
    # their windows (a slide far shorter than the size puts one element in billions of them)
    from sira.engine.windows import _Time, _windows_of, windows_holding
    slide = min(slide, size)  # a slide or step longer than the size is refused
    if kind == "cumulate":
        size = slide * (size // slide)  # a step divides the size
    spec = {"hop": f"size({size}) slide({slide}) offset({offset})",
            "cumulate": f"size({size}) step({slide}) offset({offset})",
            "tumble": f"size({size}) offset({offset})"}[kind]
    ts_type = "timestamp" if timestamp else "long"
    unit = " unit(second)" if timestamp else ""
    node = sira.parse(f"{kind}(relation(heading(ts({ts_type})) body()), ts,{unit} {spec})")
    time = _Time(node.ts_type)
    value = datetime.datetime(2000, 1, 1) + datetime.timedelta(seconds=t) if timestamp else t
    made = list(_windows_of(node, time, value))
    assert windows_holding(node, time, value) == len(made)
    assert all(start <= value < end for start, end in made)


def test_a_stream_listing_keeps_its_schema_without_elements_and_has_one_schema_line():
    # a listing of no elements lost its schema's attributes (a heading of ts and seq alone);
    # a second "schema:" line changed the attributes of the rows after it
    from sira.streams.notation import parse_stream
    empty = parse_stream("schema: c1 int, c2 float\n")
    assert set(empty.heading.names) == {"ts", "seq", "c1", "c2"} and not empty
    with pytest.raises(ParseError, match="one 'schema:' line"):
        parse_stream("schema: c1 int\n 1 2\nschema: c2 int\n 3 4\n")
    with pytest.raises(ParseError, match="starts with 'schema:"):
        parse_stream("")
