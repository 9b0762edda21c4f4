"""Times near the ends of LONG: every engine computes the windows the Python engine computes.

A window's bounds (t + T, a slide's ceiling, a pane's start, a timer's tick) are exact in the
Python engine; one that lands in the result must fit the timestamp's type (IntOverflow
otherwise), and one used only to compare times must not fail at all. DuckDB and Spark add
64-bit integers that fail on overflow, so they used to raise where the Python engine answers
(``p + T < t`` for a partition's age at a time near 2**63), and the Python engine gave LONG
values past 2**63 - 1 in CQL and SPL results without an error. On Spark a sentinel time of
2**62 ("no tuple after p + T2") compared below the stream's own times there, and a double
quotient rounded window numbers past 2**53: both gave other windows without an error.
"""

from __future__ import annotations

import datetime

import pytest

import sira
from sira import INT, LONG, TIMESTAMP, Relation
from sira.errors import IntOverflow
from sira.intervals import Interval
from sira.values import Heading

from conftest import ENGINES

MAX, MIN = 2 ** 63 - 1, -2 ** 63
HEADING = Heading.of({"ts": LONG, "k": INT, "v": INT})
#: both ends of LONG, the middle, and a run of tuples past 2**62 spaced 3 apart
TIMES = [MIN, MIN + 5, MIN + 9, -3, 0, 3, *(2 ** 62 + 3 * i for i in range(9)),
         MAX - 9, MAX - 5, MAX]
HUGE = 2 ** 62

#: (query, whether the Python engine answers it on the stream); the others raise IntOverflow
QUERIES = [
    ("window(s, ts, range(10))", False),  # ends at t + 10 past LONG
    ("window(s, ts, now)", False),  # MAX + 1
    ("window(s, ts, rows(2) range(10))", False),  # t + 10 of the last element
    ("window(s, ts, partition(k) rows(2) range(7))", False),
    ("window(s, ts, range(10) on(ts))", True),  # no element reaches MAX - 5 + 10
    ("window(s, ts, rows(2) slide(2))", True),
    ("session(s, ts, gap(4))", False),
    ("splwindow(s, ts, sliding, time(10), trigger(count(2)))", True),
    (f"splwindow(s, ts, sliding, time({HUGE}), trigger(count(2)))", True),
    ("splwindow(s, ts, tumbling, time(10))", True),  # ticks o + mT with t - o past LONG
    ("splwindow(s, ts, tumbling, delta(ts, 10))", True),
    (f"splwindow(s, ts, tumbling, delta(ts, {HUGE}))", True),
    ("splwindow(s, ts, sliding, count(3), trigger(delta(ts, 10)))", True),
    ("splwindow(s, ts, sliding, count(3), trigger(count(2)), "
     "partitioned(k, partitionage(4)))", True),
    (f"splwindow(s, ts, sliding, count(3), trigger(count(2)), "
     f"partitioned(k, partitionage({HUGE})))", True),
    ("splwindow(s, ts, sliding, time(8), trigger(count(2)), "
     "partitioned(k, partitionage(4)))", True),  # aged before expiry past 2**62
    ("splwindow(s, ts, tumbling, time(8), partitioned(k, partitionage(5)))", True),
    ("splwindow(s, ts, timeinterval, intervalduration(10) creationperiod(5))", False),
    ("windowby(s, order(ts) sliding, start(as(a) at(sp)), "
     "end(as(e) at(ep) when(ep - sp = 1)))", True),
]
#: on Spark (seconds a query), the queries whose translation does time arithmetic
SPARK = [0, 4, 7, 9, 15, 17]


def integers(value):
    """Every integer in a value: a relation's tuples, an interval's bounds, nested ones."""
    if isinstance(value, Relation):
        for row in value.to_rows():
            for v in row.values():
                yield from integers(v)
    elif isinstance(value, Interval):
        yield from integers(value.begin)
        yield from integers(value.end)
    elif isinstance(value, int) and not isinstance(value, bool):
        yield value


def stream() -> Relation:
    return Relation.from_rows(HEADING, [{"ts": t, "k": i % 2, "v": i % 5}
                                        for i, t in enumerate(TIMES)])


@pytest.mark.parametrize("query, answers", QUERIES, ids=[q for q, _ in QUERIES])
def test_the_python_engine_answers_or_names_the_bound_that_does_not_fit(query, answers):
    s = stream()
    if answers:
        assert all(MIN <= v <= MAX for v in integers(sira.evaluate(query, {"s": s}))), query
    else:
        with pytest.raises(IntOverflow, match="does not fit LONG"):
            sira.evaluate(query, {"s": s})


def test_a_result_bound_past_long_is_an_overflow_not_a_long_out_of_range():
    s = Relation.from_rows(HEADING, [{"ts": MAX - 2, "k": 0, "v": 0}])
    with pytest.raises(IntOverflow, match="WINDOW: 9223372036854775815 does not fit LONG"):
        sira.evaluate("window(s, ts, range(10))", {"s": s})
    with pytest.raises(IntOverflow, match="SPLWINDOW: .* does not fit LONG"):
        sira.evaluate("splwindow(s, ts, timeinterval, intervalduration(10))", {"s": s})


@pytest.mark.parametrize("engine", [e for e in ENGINES if e != "python"])
def test_every_engine_gives_the_python_windows_or_its_overflow(engine):
    s = stream()
    chosen = QUERIES if engine != "spark" else [QUERIES[i] for i in SPARK]
    for query, answers in chosen:
        if answers:
            assert sira.evaluate(query, {"s": s}, engine=engine) == \
                sira.evaluate(query, {"s": s}), query
        else:
            with pytest.raises(IntOverflow):
                sira.evaluate(query, {"s": s}, engine=engine)


TS_QUERIES = [("window(s, ts, range(10 day))", False), ("tumble(s, ts, size(10 day))", False),
              ("splwindow(s, ts, timeinterval, intervalduration(10 day))", False),
              ("splwindow(s, ts, sliding, time(10 day), trigger(count(1)))", True)]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_timestamp_past_year_9999_is_an_overflow_on_every_engine(engine):
    """Python's datetime ends with year 9999 (DuckDB's and Spark's go further): a window
    reaching past it is an IntOverflow naming TIMESTAMP, never Python's OverflowError."""
    s = Relation.from_rows({"ts": TIMESTAMP, "v": INT},
                           [(datetime.datetime(9999, 12, 30), 1), (datetime.datetime(2000, 1, 1), 2)])
    chosen = TS_QUERIES if engine != "spark" else TS_QUERIES[::3]
    for query, answers in chosen:
        if answers:
            assert sira.evaluate(query, {"s": s}, engine=engine) == \
                sira.evaluate(query, {"s": s}), query
        else:
            with pytest.raises(IntOverflow, match="TIMESTAMP"):
                sira.evaluate(query, {"s": s}, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_partition_aged_near_2_62_before_its_tuples_expire(engine):
    """Each key's tuples are 6 apart: the partition ages (4) before its tuple expires (8), so
    every tuple starts afresh and count(2) never triggers. Spark's "no later tuple" sentinel
    was 2**62, below these times: it kept the partitions and emitted a window."""
    s = Relation.from_rows(HEADING, [{"ts": HUGE - 20 + 3 * i, "k": i % 2, "v": i % 5}
                                     for i in range(12)])
    query = ("splwindow(s, ts, sliding, time(8), trigger(count(2)), "
             "partitioned(k, partitionage(4)))")
    assert len(sira.evaluate(query, {"s": s}, engine=engine)) == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_timer_windows_far_from_the_first_tuple_are_numbered_exactly(engine):
    """Ticks o + mT for t - o past 2**53: Spark numbered windows by a double quotient, which
    rounds there, and put tuples in other windows (and at other ticks). 2**60 ends in 6: the
    windows are [0, 10), [2**60 - 6, 2**60 + 4) and [2**60 + 4, 2**60 + 14) (the one at
    2**60 + 24 has no tick)."""
    s = Relation.from_rows(HEADING, [{"ts": t, "k": 0, "v": 0}
                                     for t in (0, 2 ** 60 + 1, 2 ** 60 + 9, 2 ** 60 + 13,
                                               2 ** 60 + 27, 2 ** 60 + 31)])
    out = sira.evaluate("splwindow(s, ts, tumbling, time(10))", {"s": s}, engine=engine)
    assert sorted((r["at"], len(r["tuples"])) for r in out.to_rows()) == \
        [(10, 1), (2 ** 60 + 4, 1), (2 ** 60 + 14, 2)]


#: partial sums leave LONG, every total fits: the Python engine answers whatever the order
SUMMED = [(0, MAX, 1), (0, MAX - 1, 2), (0, -MAX, 3), (0, -MAX + 5, 4), (1, MAX, 5),
          (1, -MAX, 6), (1, 9, 7)]
#: HOP(size 4, slide 2) panes [0, 2): -MAX, [2, 4): MAX + MAX - 2 (past LONG), [4, 6): -MAX + 1;
#: every window (one or two neighbouring panes) fits
HOPPED = [(0, -MAX, 0), (0, MAX, 2), (0, MAX - 2, 3), (0, -MAX + 1, 4)]
SUM_QUERIES = [("aggregate(R, (s(plus(l))))", SUMMED),
               ("summarizeby(R, (g), (s(plus(l))))", SUMMED),
               ("summarizeby(tumble(R, ts, size(8)), (window_start), (s(plus(l))))", SUMMED),
               ("summarizeby(hop(R, ts, size(4) slide(2)), (window_start), (s(plus(l))))",
                HOPPED)]


@pytest.mark.parametrize("engine", ENGINES)
def test_long_sums_whose_partial_sums_leave_long_are_exact(engine):
    """Spark summed LONGs as LONG with ANSI on, which fails when a partial sum (a task's, a
    pane's) leaves LONG even where the total fits: an IntOverflow where the Python engine
    answers. (DuckDB sums in INT128.)"""
    for query, rows in SUM_QUERIES:
        r = Relation.from_rows({"g": INT, "l": LONG, "ts": LONG}, rows)
        expected = sira.evaluate(query, {"R": r})
        assert sira.evaluate(query, {"R": r}, engine=engine) == expected, query


#: (query, times): window tables at LONG's least value whose windows all fit; the engines
#: computed t - offset, or the start of a HOP window not holding t (MIN - 1), and overflowed
ALIGNED = [("tumble(s, ts, size(1) offset(3))", [MIN, MIN + 1]),
           ("hop(s, ts, size(5) slide(2) offset(13))", [MIN + 4]),
           ("summarizeby(hop(s, ts, size(5) slide(2) offset(13)), (window_start), "
            "(n(plus(1))))", [MIN + 4])]


@pytest.mark.parametrize("engine", ENGINES)
def test_window_tables_at_the_least_long_compute_only_the_windows_they_give(engine):
    for query, times in ALIGNED:
        s = Relation.from_rows(HEADING, [{"ts": t, "k": 0, "v": 0} for t in times])
        expected = sira.evaluate(query, {"s": s})
        assert len(expected) >= 1
        assert sira.evaluate(query, {"s": s}, engine=engine) == expected, query


@pytest.mark.parametrize("policy", ["count(100000000000000000000)", "time(9223372036854775808)",
                                    "count(3), trigger(count(2)), "
                                    "partitioned(k, partitionage(9223372036854775808))"])
def test_an_spl_amount_past_long_is_refused_by_name(policy):
    """No stream spans more than LONG: such an amount is refused when the window is built (Spark
    failed with a Py4J error on it)."""
    from sira.errors import SiraValueError
    with pytest.raises(SiraValueError, match="must be at most 9223372036854775807"):
        sira.parse(f"splwindow(s, ts, sliding, {policy})", {"s": HEADING})
