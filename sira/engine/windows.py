"""Python evaluation of the CQL windows and IStream/DStream/RStream.

Each partition is sorted once by (timestamp, arrival); every element's interval is then a
function of its position: O(n log n) per window, whatever the range or row counts.
``range(C) on(E)`` keeps the elements still waiting for a large enough E in a sorted list.

A pointwise sum over a ``range`` window (``summarizebyusing(window(S, ts, range(T)), (k, during),
(x(plus(v))), (during))``) is swept in one pass over the stream, without the window relation:
SUMMARIZEBY's evaluation (``aggregation.py``) asks :func:`summarize_window` first.
"""

from __future__ import annotations

import datetime

from sortedcontainers import SortedList

from ..algebra.derived import lower_changes
from ..algebra.windows import (WINDOW_ATTRIBUTES, Changes, DStream, IStream, RStream, Window,
                               WindowTable)
from ..errors import ArithmeticFault, IntOverflow, SiraValueError
from ..expressions.library import rounded_float, scaled_float
from ..intervals import Interval
from ..types import FLOAT, TIMESTAMP, IntegerType
from ..values import Relation
from . import Packed, evaluates
from .basic import row_getter
from .guards import Guard, max_tuples
from .packing import pack_relation

_MICRO = datetime.timedelta(microseconds=1)


def _ceil_to(t, step):
    return -((-t) // step) * step


class _Time:
    """Arithmetic on the timestamp attribute's values (integers, or datetimes in microseconds)."""

    def __init__(self, ts_type):
        self.timestamp = ts_type == TIMESTAMP
        self.epoch = datetime.datetime(1970, 1, 1)

    def plus(self, t, units: int):
        if not self.timestamp:
            return t + units
        return timestamp_plus(t, units)

    def floor(self, t, step: int):
        if self.timestamp:
            micros = (t - self.epoch) // _MICRO
            return timestamp_plus(self.epoch, (micros // step) * step)
        return (t // step) * step

    def between(self, a, b) -> int:
        """a - b in units (microseconds for a TIMESTAMP)."""
        return (a - b) // _MICRO if self.timestamp else a - b

    def ceil(self, t, step: int):
        if self.timestamp:
            micros = (t - self.epoch) // _MICRO
            return timestamp_plus(self.epoch, _ceil_to(micros, step))
        return _ceil_to(t, step)


def timestamp_plus(t: datetime.datetime, micros: int, operator=None) -> datetime.datetime:
    """``t`` plus ``micros`` microseconds; IntOverflow past TIMESTAMP's range (years 1 to 9999),
    never Python's OverflowError.

        >>> timestamp_plus(datetime.datetime(9999, 12, 31), 86_400_000_000)
        Traceback (most recent call last):
        sira.errors.IntOverflow: 9999-12-31 00:00:00 + 86400000000 microseconds does not fit TIMESTAMP
    """
    try:
        return t + micros * _MICRO
    except OverflowError:
        raise IntOverflow(operator=operator, type="TIMESTAMP",
                          value=f"{t} + {micros} microseconds") from None


def range_bounds(time: _Time, t, rng, slide):
    """``[begin, end)`` of an element at ``t`` in ``S[range rng slide slide]`` (design.md: slides
    aligned to the epoch); ``rng`` None is ``range unbounded`` (end None)."""
    if rng is None:
        return t, None
    if slide is None:
        return t, time.plus(t, rng)
    return time.ceil(t, slide), time.ceil(time.plus(t, rng), slide)


def ordered_partitions(relation, node):
    """Each partition's rows sorted by (timestamp, arrival or canonical order)."""
    h = relation.heading
    ts = h.index(node.ts)
    spec = node.spec
    part = row_getter([h.index(n) for n in spec.partition])
    key_fn = h.sort_key_function()
    if spec.arrival is not None:
        arr = h.index(spec.arrival)
        order = lambda r: (r[ts], r[arr])  # noqa: E731
    elif key_fn is None:
        order = lambda r: (r[ts], r)  # noqa: E731
    else:
        order = lambda r: (r[ts], key_fn(r))  # noqa: E731
    groups: dict = {}
    for row in relation.body:
        groups.setdefault(part(row), []).append(row)
    out, late = [], []
    for rows in groups.values():
        rows.sort(key=order)
        if spec.arrival is not None:
            arr = h.index(spec.arrival)
            by_arrival = sorted(rows, key=lambda r: (r[arr], r[ts]))
            if [r[ts] for r in by_arrival] != [r[ts] for r in rows]:
                # the partition's first arrival whose element is not the next in time order:
                # it has a later timestamp than some element arriving after it
                i = next(i for i, (a, b) in enumerate(zip(by_arrival, rows)) if a[ts] != b[ts])
                bad = by_arrival[i]
                late.append((bad, next(r for r in by_arrival[i + 1:] if r[ts] < bad[ts])))
        out.append(rows)
    if late:  # the first such arrival over every partition, as the other engines name it
        bad, after = min(late, key=lambda pair: pair[0][arr])
        raise SiraValueError(
            f"WINDOW: the stream is out of order on '{node.ts}': the element with "
            f"{spec.arrival} {bad[arr]} ({node.ts} {bad[ts]}) arrived before the element "
            f"with {spec.arrival} {after[arr]} ({node.ts} {after[ts]}), whose "
            f"{node.ts} is earlier", operator="WINDOW", value=bad[arr])
    return out


def element_intervals(rows, node, time: _Time) -> list:
    """(row, Interval or None) for one ordered partition; None: never in the window."""
    h = node.source.heading
    ts = h.index(node.ts)
    s = node.spec
    times = [r[ts] for r in rows]
    n = len(rows)
    out = []
    if s.kind == "range_on":
        return _range_on(rows, node, times)
    rng, slide = node.range_units, node.slide_units
    for i, t in enumerate(times):
        if s.kind == "now":
            begin, end = t, time.plus(t, 1)
        elif s.kind == "range" and s.rows is None:
            begin, end = range_bounds(time, t, rng, slide)
        elif s.slide_rows is not None:  # rows N slide M, by positions
            m, p = s.slide_rows, i + 1
            enter = -(-p // m) * m
            leave = -(-(p + s.rows) // m) * m
            if enter > n:
                out.append((rows[i], None))  # a trailing partial batch never enters
                continue
            begin = times[enter - 1]
            end = times[leave - 1] if leave <= n else None
        else:  # rows N, optionally with a range and a time slide
            end = times[i + s.rows] if i + s.rows < n else None
            begin = t
            if rng is not None:
                limit = time.plus(t, rng)
                end = limit if end is None or limit < end else end
            if slide is not None:
                begin = time.ceil(t, slide)
                end = None if end is None else time.ceil(end, slide)
        out.append((rows[i], None if end is not None and not begin < end
                    else Interval(begin, end)))
    return out


def _range_on(rows, node, times):
    h = node.source.heading
    s = node.spec
    e = h.index(s.on)
    amount = s.on_amount
    if hasattr(amount, "in_units"):
        amount = amount.in_units(None, TIMESTAMP) * _MICRO
    pending = SortedList(key=lambda item: item[0])  # (threshold, index)
    exits = [None] * len(rows)
    for i, row in enumerate(rows):
        value = row[e]
        while pending and pending[0][0] <= value:
            _, j = pending.pop(0)
            exits[j] = times[i]
        try:
            pending.add((value + amount, i))
        except OverflowError:  # past TIMESTAMP's last value: no element reaches it, never leaves
            pass
    return [(row, None if exits[i] is not None and not times[i] < exits[i]
             else Interval(times[i], exits[i])) for i, row in enumerate(rows)]


@evaluates(Window)
def _window(node, ctx):
    src = ctx.eval(node.source)
    time = _Time(node.ts_type)
    where = {n: i for i, n in enumerate(src.heading.names + (node.during,))}
    assemble = row_getter([where[n] for n in node.heading.names])
    fits = _bounds_check(node.ts_type, "WINDOW")
    out = set()
    for rows in ordered_partitions(src, node):
        for row, iv in element_intervals(rows, node, time):
            if iv is not None:
                out.add(assemble(row + (fits(iv, row),)))
    return Relation(node.heading, frozenset(out))


def _bounds_check(ts_type, operator: str):
    """``fits(interval, row)``: the interval, or IntOverflow when a bound the window computed
    (t + T, a slide's ceiling) lies outside the timestamp's type. Intermediate values never
    overflow (Python integers); only a bound in the result must fit, as on DuckDB and Spark.

        >>> from sira.types import INT
        >>> fits = _bounds_check(INT, "WINDOW")
        >>> fits(Interval(2147483640, 2147483647), ()).end
        2147483647
        >>> fits(Interval(2147483640, 2147483650), ())
        Traceback (most recent call last):
        sira.errors.IntOverflow: WINDOW: 2147483650 does not fit INT
    """
    if ts_type == TIMESTAMP:
        return lambda iv, row: iv
    high = ts_type.max

    def fits(iv, row):
        end = iv.end
        if end is not None and end > high:
            ts_type.fit(end, operator=operator, tuple=row)
        if iv.begin > high:  # a slide's ceiling of an element that never leaves
            ts_type.fit(iv.begin, operator=operator, tuple=row)
        return iv
    return fits


def _at_instant(node, h):
    """(position of ``during`` in ``h``, ``assemble(tuple, instant)``: the result tuple, the
    tuple without ``during`` and with the instant as ``at``) for relation-to-stream operators."""
    d = h.index(node.during)
    where = {n: i for i, n in enumerate(h.names + (node.at,))}
    pick = row_getter([where[n] for n in node.heading.names])
    return d, lambda row, instant: pick(row + (instant,))


def _to_stream(node, ctx, pick):
    src = pack_relation(ctx.eval(node.source), [node.during])
    d, assemble = _at_instant(node, src.heading)
    out = set()
    for row in src.body:
        instant = pick(row[d])
        if instant is not None:
            out.add(assemble(row, instant))
    return Relation(node.heading, frozenset(out))


@evaluates(IStream)
def _istream(node, ctx):
    return _to_stream(node, ctx, lambda iv: None if iv.empty else iv.begin)


@evaluates(DStream)
def _dstream(node, ctx):
    return _to_stream(node, ctx, lambda iv: None if iv.empty else iv.end)


def _windows_of(node, time: _Time, t):
    """The windows ``(start, end)`` holding instant t (tumble, hop, cumulate), one by one: a
    slide far shorter than the size puts t in billions of them, counted as they come."""
    size, slide, offset = node.units("size"), node.units("slide"), node.units("offset")
    base = time.plus(t, -offset)
    if node.kind == "tumble":
        start = time.plus(time.floor(base, size), offset)
        yield start, time.plus(start, size)
    elif node.kind == "hop":
        start = time.floor(base, slide)
        while time.plus(start, size) > base:
            yield time.plus(start, offset), time.plus(start, offset + size)
            start = time.plus(start, -slide)
    else:
        period = time.plus(time.floor(base, size), offset)
        gone = time.between(t, period)  # the steps ending at or before t: skipped, not tried
        for j in range(gone // slide + 1, size // slide + 1):
            end = time.plus(period, j * slide)
            if end > t:
                yield period, end


def windows_holding(node, time: _Time, t) -> int:
    """How many windows hold instant t (tumble, hop, cumulate): what :func:`_windows_of`
    yields, counted in O(1). The elements are distinct, so the window table holds their sum.

        >>> from sira import parse
        >>> node = parse("hop(relation(heading(ts(long)) body()), ts, size(10) slide(3))")
        >>> windows_holding(node, _Time(node.ts_type), 7), len(list(_windows_of(node, _Time(
        ...     node.ts_type), 7)))
        (3, 3)
    """
    size, slide, offset = node.units("size"), node.units("slide"), node.units("offset")
    if node.kind == "tumble":
        return 1
    base = time.plus(t, -offset)
    if node.kind == "hop":
        return max(0, -(-(size - time.between(base, time.floor(base, slide))) // slide))
    period = time.plus(time.floor(base, size), offset)
    return size // slide - time.between(t, period) // slide


def _sessions(rows, ts, time: _Time, gap):
    """``(session rows, start, end)`` for one partition: PACK of ``[t, t+gap)``."""
    rows = sorted(rows, key=lambda r: r[ts])
    session: list = []
    for row in rows:
        if session and row[ts] > time.plus(session[-1][ts], gap):
            yield session, session[0][ts], time.plus(session[-1][ts], gap)
            session = []
        session.append(row)
    if session:
        yield session, session[0][ts], time.plus(session[-1][ts], gap)


def _window_values(node, time: _Time):
    """``values(row, start, end)``: window_start, window_end, window_time, checked against the
    timestamp's type (an INT window ending past 2**31-1 is an IntOverflow, as on Spark)."""
    t = node.ts_type
    op = node.kind.upper()
    if time.timestamp:
        def checked(value, row):
            return value
    else:
        def checked(value, row):
            return t.fit(value, operator=op, tuple=row)

    def values(row, start, end):
        return checked(start, row), checked(end, row), time.plus(end, -1)
    return values


def _windows(node, src, time: _Time):
    """(row, start, end) for every element and window holding it."""
    h = src.heading
    ts = h.index(node.ts)
    if node.kind != "session":
        for row in src.body:
            for start, end in _windows_of(node, time, row[ts]):
                yield row, start, end
        return
    part = row_getter([h.index(n) for n in node.partition])
    groups: dict = {}
    for row in src.body:
        groups.setdefault(part(row), []).append(row)
    gap = node.units("size")
    for rows in groups.values():
        for session, start, end in _sessions(rows, ts, time, gap):
            for row in session:
                yield row, start, end


@evaluates(WindowTable)
def _window_table(node, ctx):
    src = ctx.eval(node.source)
    time = _Time(node.ts_type)
    where = {n: i for i, n in enumerate(src.heading.names + WINDOW_ATTRIBUTES)}
    assemble = row_getter([where[n] for n in node.heading.names])
    values = _window_values(node, time)
    windows = _windows(node, src, time)
    guard = Guard(node.kind.upper(), max_tuples(ctx.options))  # HOP, CUMULATE...
    if len(src) * _most_windows(node) > guard.limit:  # hop, cumulate: counted before made
        ts = src.heading.index(node.ts)
        guard.check(sum(windows_holding(node, time, row[ts]) for row in src.body))
    out = {assemble(row + values(row, start, end)) for row, start, end in windows}
    return Relation(node.heading, frozenset(out))


def _most_windows(node) -> int:
    """The most windows one element can be in."""
    if node.kind in ("hop", "cumulate"):
        return -(-node.units("size") // node.units("slide"))
    return 1


@evaluates(Changes)
def _changes(node, ctx):
    return ctx.eval(lower_changes(node))


@evaluates(RStream)
def _rstream(node, ctx):
    src = ctx.eval(node.source)
    ticks = sorted(v for (v,) in ctx.eval(node.ticks).body)
    d, assemble = _at_instant(node, src.heading)
    from bisect import bisect_left
    guard = Guard.of(node, ctx.options)
    out = set()
    for row in src.body:
        iv = row[d]
        lo = bisect_left(ticks, iv.begin)
        hi = len(ticks) if iv.end is None else bisect_left(ticks, iv.end)
        if hi - lo > 1:  # one tuple's instants are distinct: refused before they are made
            guard.check(hi - lo)
        for t in ticks[lo:hi]:
            out.add(assemble(row, t))
        if hi - lo > 1:  # equal tuples at an instant merge, so the result is counted
            guard.check(len(out))
    guard.check(len(out))
    return Relation(node.heading, frozenset(out))


# ------------------------------------------------------------------ windowed sums, fused
#
# ``summarizebyusing(window(S, ts, range(T) [slide(L)]), (k..., during), (x(plus(e)) ...),
# (during))`` -- CQL's ``select k, sum(e) from S[range T] group by k`` -- is evaluated here in
# one sweep instead of materialising the window relation and splitting it at every boundary of
# its group: per group, every element adds its values at the instant it enters the window and
# takes them back when it leaves; between consecutive instants the sums are constant, so each
# such segment where the group's window is not empty is one tuple, merged with the previous one
# when they meet and agree (the result is already packed, as SUMMARIZEBY's must be). Any other
# SUMMARIZEBY goes to the family's own evaluation (sira/engine/aggregation.py), which stays the
# reference meaning; a sum overflowing its type also goes there, so that it raises its error.

def _fused_window_sum(node):
    """The Window under a SUMMARIZEBY that :func:`_summarize_window` can sweep, else None."""
    from ..algebra.aggregation import aggregations
    from ..expressions.nodes import attributes_used
    win = node.source
    if not isinstance(win, Window) or node.using != (win.during,):
        return None
    s = win.spec
    if s.kind != "range" or s.rows is not None or s.arrival is not None or s.partition:
        return None
    stream = win.source.heading
    key = [n for n in node.by if n != win.during]
    if win.during not in node.by or any(n not in stream for n in key):
        return None
    for (_, op, expr), agg in zip(node.specs, aggregations(node.specs, win.heading,
                                                           node.operator_name)):
        if op != "plus" or not (isinstance(agg.result_type, IntegerType)
                                or agg.result_type == FLOAT) \
                or win.during in attributes_used(expr):
            return None
    return win


def _summarize_window(node, ctx, win):
    from .basic import compiler
    src = ctx.eval(win.source)
    h = src.heading
    ts = h.index(win.ts)
    fns = _exact_values(node, [compiler(ctx)(expr, h) for _, _, expr in node.specs])
    m = len(fns)
    key = row_getter([h.index(n) for n in node.by if n != win.during])
    time = _Time(win.ts_type)
    rng, slide = win.range_units, win.slide_units
    if m == 1 and rng is not None and slide is None and not time.timestamp:
        return _summarize_range_one(node, src, win, fns[0], key, ts, rng, _shown(
            [node.heading.type_of(n) for n, _, _ in node.specs]))
    groups: dict = {}
    for row in src.body:
        t = row[ts]
        begin, end = range_bounds(time, t, rng, slide)
        if end is not None and not begin < end:
            continue  # never in the window
        values = [f(row) for f in fns]
        deltas = groups.get(k := key(row))
        if deltas is None:
            deltas = groups[k] = {}
        d = deltas.get(begin)
        if d is None:
            deltas[begin] = [1] + values
        else:
            d[0] += 1
            for i in range(m):
                d[i + 1] += values[i]
        if end is not None:
            d = deltas.get(end)
            if d is None:
                deltas[end] = [-1] + [-v for v in values]
            else:
                d[0] -= 1
                for i in range(m):
                    d[i + 1] -= values[i]
    specs = [n for n, _, _ in node.specs]
    where = {n: i for i, n in enumerate([n for n in node.by if n != win.during] +
                                        [win.during] + specs)}
    assemble = row_getter([where[n] for n in node.heading.names])
    types = [node.heading.type_of(n) for n in specs]
    shown = _shown(types)
    out = []
    add = out.append
    high = None if time.timestamp else win.ts_type.max
    for k, deltas in groups.items():
        points = sorted(deltas)
        if high is not None and points[-1] > high:
            return None  # a window bound past the type: the reference evaluation raises it
        count = 0
        sums = [0] * m
        run = None  # [begin, end, sums] of the packed segment being built
        for i, p in enumerate(points):
            d = deltas[p]
            count += d[0]
            for j in range(m):
                sums[j] += d[j + 1]
            nxt = points[i + 1] if i + 1 < len(points) else None
            if count == 0:
                continue
            values = shown(sums)
            if run is not None and run[1] == p and run[2] == values:
                run[1] = nxt
                continue
            if run is not None:
                add(assemble(k + (Interval(run[0], run[1]),) + run[2]))
            run = [p, nxt, values]
        if run is not None:
            add(assemble(k + (Interval(run[0], run[1]),) + run[2]))
    for name, t in zip(specs, types):  # an overflowing sum: the reference evaluation raises it
        if isinstance(t, IntegerType) and t.min is not None:
            pos, low, high = node.heading.index(name), t.min, t.max
            if any(not low <= r[pos] <= high for r in out):
                return None
    return _to_be_packed(node, out)


def _summarize_range_one(node, src, win, f, key, ts, rng, shown):
    """:func:`_summarize_window` for one sum over ``range(T)`` on an integer time."""
    groups: dict = {}
    for row in src.body:
        t = row[ts]
        v = f(row)
        deltas = groups.get(k := key(row))
        if deltas is None:
            deltas = groups[k] = {}
        d = deltas.get(t)
        if d is None:
            deltas[t] = [1, v]
        else:
            d[0] += 1
            d[1] += v
        d = deltas.get(t + rng)
        if d is None:
            deltas[t + rng] = [-1, -v]
        else:
            d[0] -= 1
            d[1] -= v
    (name,) = [n for n, _, _ in node.specs]
    where = {n: i for i, n in enumerate([n for n in node.by if n != win.during] +
                                        [win.during, name])}
    assemble = row_getter([where[n] for n in node.heading.names])
    out = []
    add = out.append
    high = win.ts_type.max
    for k, deltas in groups.items():
        points = sorted(deltas)
        if points[-1] > high:
            return None  # a window bound past the type: the reference evaluation raises it
        count = total = 0
        run_b = run_e = run_total = None
        for p, nxt in zip(points, points[1:]):  # the last point always empties the window
            c, v = deltas[p]
            count += c
            total += v
            if count == 0:
                continue
            (value,) = shown((total,))
            if run_e == p and run_total == value:
                run_e = nxt
                continue
            if run_b is not None:
                add(assemble(k + (Interval(run_b, run_e), run_total)))
            run_b, run_e, run_total = p, nxt, value
        if run_b is not None:
            add(assemble(k + (Interval(run_b, run_e), run_total)))
    t = node.heading.type_of(name)
    if isinstance(t, IntegerType) and t.min is not None:  # an overflowing sum: the reference
        pos, low, high = node.heading.index(name), t.min, t.max
        if any(not low <= r[pos] <= high for r in out):
            return None
    return _to_be_packed(node, out)


class _Infinite(Exception):
    """An infinite FLOAT value: the fused sweep leaves it to the general one."""


def _exact_values(node, fns) -> list:
    """The spec functions, those of FLOAT sums giving their values exactly as integers
    (``scaled_float``: the sweep adds and takes them back exactly; :func:`_shown` rounds)."""
    def exact(f):
        def value(row):
            v = f(row)
            if v - v != 0.0:
                raise _Infinite
            return scaled_float(v)
        return value
    return [exact(f) if node.heading.type_of(n) == FLOAT else f
            for f, (n, _, _) in zip(fns, node.specs)]


def _shown(types):
    """The segment's values from its running sums: FLOAT ones rounded once (float_sum)."""
    floats = [i for i, t in enumerate(types) if t == FLOAT]
    if not floats:
        return tuple

    def shown(sums):
        values = list(sums)
        for i in floats:
            values[i] = rounded_float(values[i])
        return tuple(values)
    return shown


def _to_be_packed(node, rows: list):
    """The swept SUMMARIZEBY result: distinct rows, already packed on ``(during,)``."""
    return Packed(Relation(node.heading, frozenset(rows)))


def summarize_window(node, ctx):
    """The SUMMARIZEBY ``node`` swept over its window when it is a pointwise integer or FLOAT
    sum over a ``range`` window (CQL's ``select k, sum(e) from S[range T] group by k``), else
    None. FLOAT sums are kept exact and rounded once per segment; an infinite value leaves
    the sum to the general evaluation.

    A sum overflowing its type, or a window bound outside the timestamp's type, gives None
    too, so that the reference evaluation raises the error naming the failing tuple.
    """
    win = _fused_window_sum(node)
    if win is None:
        return None
    try:
        return _summarize_window(node, ctx, win)
    except (ArithmeticFault, _Infinite):
        return None
