"""Python evaluation of the CQL windows and IStream/DStream/RStream.

Each partition is sorted once by (timestamp, arrival); every element's interval is then a
function of its position: O(n log n) per window, whatever the range or row counts.
``range(C) on(E)`` keeps the elements still waiting for a large enough E in a sorted list.
"""

from __future__ import annotations

import datetime

from sortedcontainers import SortedList

from ..algebra.derived import lower_changes
from ..algebra.windows import Changes, DStream, IStream, RStream, Window, WindowTable
from ..errors import SiraValueError
from ..intervals import Interval
from ..types import TIMESTAMP
from ..values import Relation
from . import evaluates
from .basic import row_getter
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
        return t + units * _MICRO if self.timestamp else t + units

    def floor(self, t, step: int):
        if self.timestamp:
            micros = (t - self.epoch) // _MICRO
            return self.epoch + (micros // step) * step * _MICRO
        return (t // step) * step

    def ceil(self, t, step: int):
        if self.timestamp:
            micros = (t - self.epoch) // _MICRO
            return self.epoch + _ceil_to(micros, step) * _MICRO
        return _ceil_to(t, step)


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
    out = []
    for rows in groups.values():
        rows.sort(key=order)
        if spec.arrival is not None:
            arr = h.index(spec.arrival)
            by_arrival = sorted(rows, key=lambda r: r[arr])
            if [r[ts] for r in by_arrival] != [r[ts] for r in rows]:
                # the first arrival whose element is not the next in time order: it has a
                # later timestamp than some element arriving after it
                i = next(i for i, (a, b) in enumerate(zip(by_arrival, rows)) if a[ts] != b[ts])
                bad = by_arrival[i]
                after = next(r for r in by_arrival[i + 1:] if r[ts] < bad[ts])
                raise SiraValueError(
                    f"WINDOW: the stream is out of order on '{node.ts}': the element with "
                    f"{spec.arrival} {bad[arr]} ({node.ts} {bad[ts]}) arrived before the element "
                    f"with {spec.arrival} {after[arr]} ({node.ts} {after[ts]}), whose "
                    f"{node.ts} is earlier", operator="WINDOW", value=bad[arr])
        out.append(rows)
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
            if rng is None:
                begin, end = t, None
            elif slide is None:
                begin, end = t, time.plus(t, rng)
            else:
                begin, end = time.ceil(t, slide), time.ceil(time.plus(t, rng), slide)
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
        pending.add((value + amount, i))
    return [(row, None if exits[i] is not None and not times[i] < exits[i]
             else Interval(times[i], exits[i])) for i, row in enumerate(rows)]


@evaluates(Window)
def _window(node, ctx):
    src = ctx.eval(node.source)
    time = _Time(node.ts_type)
    where = {n: i for i, n in enumerate(src.heading.names + (node.during,))}
    assemble = row_getter([where[n] for n in node.heading.names])
    out = set()
    for rows in ordered_partitions(src, node):
        for row, iv in element_intervals(rows, node, time):
            if iv is not None:
                out.add(assemble(row + (iv,)))
    return Relation(node.heading, frozenset(out))


def _to_stream(node, ctx, pick):
    src = pack_relation(ctx.eval(node.source), [node.during])
    h = src.heading
    d = h.index(node.during)
    keep = [i for i in range(h.degree) if i != d]
    where = {n: i for i, n in enumerate([h.names[i] for i in keep] + [node.at])}
    assemble = row_getter([where[n] for n in node.heading.names])
    out = set()
    for row in src.body:
        instant = pick(row[d])
        if instant is not None:
            out.add(assemble(tuple(row[i] for i in keep) + (instant,)))
    return Relation(node.heading, frozenset(out))


@evaluates(IStream)
def _istream(node, ctx):
    return _to_stream(node, ctx, lambda iv: None if iv.empty else iv.begin)


@evaluates(DStream)
def _dstream(node, ctx):
    return _to_stream(node, ctx, lambda iv: None if iv.empty else iv.end)


def _windows_of(node, time: _Time, t):
    """The window intervals holding instant t (tumble, hop, cumulate)."""
    size, slide, offset = node.units("size"), node.units("slide"), node.units("offset")
    base = time.plus(t, -offset)
    if node.kind == "tumble":
        start = time.plus(time.floor(base, size), offset)
        return [Interval(start, time.plus(start, size))]
    if node.kind == "hop":
        last = time.floor(base, slide)
        out = []
        start = last
        while time.plus(start, size) > base:
            out.append(Interval(time.plus(start, offset), time.plus(start, offset + size)))
            start = time.plus(start, -slide)
        return out
    period = time.plus(time.floor(base, size), offset)
    out = []
    for j in range(1, size // slide + 1):
        end = time.plus(period, j * slide)
        if end > t:
            out.append(Interval(period, end))
    return out


@evaluates(WindowTable)
def _window_table(node, ctx):
    src = ctx.eval(node.source)
    h = src.heading
    ts = h.index(node.ts)
    time = _Time(node.source.heading.type_of(node.ts))
    where = {n: i for i, n in enumerate(h.names + (node.name,))}
    assemble = row_getter([where[n] for n in node.heading.names])
    out = set()
    if node.kind != "session":
        for row in src.body:
            for iv in _windows_of(node, time, row[ts]):
                out.add(assemble(row + (iv,)))
        return Relation(node.heading, frozenset(out))
    gap = node.units("size")
    part = row_getter([h.index(n) for n in node.partition])
    groups: dict = {}
    for row in src.body:
        groups.setdefault(part(row), []).append(row)
    for rows in groups.values():
        rows.sort(key=lambda r: r[ts])
        session: list = []
        for row in rows + [None]:
            if row is None or (session and row[ts] > time.plus(session[-1][ts], gap)):
                iv = Interval(session[0][ts], time.plus(session[-1][ts], gap))
                out.update(assemble(r + (iv,)) for r in session)
                session = []
            if row is not None:
                session.append(row)
    return Relation(node.heading, frozenset(out))


@evaluates(Changes)
def _changes(node, ctx):
    return ctx.eval(lower_changes(node))


@evaluates(RStream)
def _rstream(node, ctx):
    src = ctx.eval(node.source)
    ticks = sorted(v for (v,) in ctx.eval(node.ticks).body)
    h = src.heading
    d = h.index(node.during)
    keep = [i for i in range(h.degree) if i != d]
    where = {n: i for i, n in enumerate([h.names[i] for i in keep] + [node.at])}
    assemble = row_getter([where[n] for n in node.heading.names])
    from bisect import bisect_left
    out = set()
    for row in src.body:
        iv = row[d]
        lo = bisect_left(ticks, iv.begin)
        hi = len(ticks) if iv.end is None else bisect_left(ticks, iv.end)
        base = tuple(row[i] for i in keep)
        for t in ticks[lo:hi]:
            out.add(assemble(base + (t,)))
    return Relation(node.heading, frozenset(out))
