"""Python evaluation of SPL windows (seed 001, "Window clause"): the reference semantics.

The stream is read once, tuple by tuple, as an SPL input port would see it:

* tumbling and sliding windows in (ts, arrival) order (ties without ``arrival(...)``: the
  tuples' canonical order), each tuple going to its partition's window;
* timeInterval windows in arrival order (``arrival(...)``; without it, ts order), the watermark
  being the largest ts seen so far on the whole stream.

Every window instance the port would hand to its operator becomes one tuple: its partition
attributes, ``instance`` (1-based per partition, in order of emission), ``at`` and ``tuples``
(and ``pane`` for timeInterval windows).

Tumbling windows (the arriving tuple is added, except where said):

* ``count(N)``: flush when the window holds N tuples; ``at`` is the N-th tuple's ts. A trailing
  partial window is never emitted (no punctuation or final marker ends the stream).
* ``time(T)``: a window opens at its first tuple's ts o; a tuple arriving with ts >= o + T
  flushes it (``at`` = that tuple's ts) and starts the next window; the final open window is
  never emitted.
* ``delta(a, D)``: a tuple whose a exceeds the window's first a by more than D flushes the window
  and starts the next; the final open window is never emitted.
* ``punct(p)``: a tuple with p true is followed by a punctuation: it is added and the window
  flushed; tuples after the last punctuation are never emitted.

Sliding windows add the arriving tuple, evict, then ask the trigger:

* eviction ``count(N)`` keeps the last N tuples; ``time(T)`` the tuples with ts > now - T (now:
  the arriving tuple's ts); ``delta(a, D)`` evicts from the oldest while newest.a - oldest.a > D
  (for a non-decreasing a: the tuples with newest.a - a <= D).
* trigger (default: every tuple) ``count(M)``: every M-th tuple of the partition; ``time(T)``: at
  each multiple of T after the partition's first tuple, when a tuple arrives at or after it (one
  emission however many multiples it passes); ``delta(a, D)``: when a tuple's a exceeds the last
  triggering tuple's a by more than D (the first tuple is the first reference and does not
  trigger). The emission holds the window after the arriving tuple was added.

TimeInterval windows: panes ``[offset + k*period, offset + k*period + duration)``; a tuple goes
to every pane holding its ts, unless ts < watermark - discardAge (dropped; discardAge defaults
to 0). A pane is created by its first tuple and emitted when the watermark reaches its end
(``at`` = the pane's end); panes still open at the end of input are emitted then, also with
``at`` = the pane's end. A tuple arriving for a pane already emitted (a late tuple) makes the pane
emit again with everything it holds (SPL's late trigger), ``at`` being the watermark then.

Partition eviction (tumbling and sliding windows) drops a partition's whole state -- window
content, open time, trigger counters -- without emitting it; ``instance`` keeps counting.
``partitionage(T)``: when a tuple arrives T or more after the partition's previous tuple.
``partitioncount(N)``: a tuple for a new partition when N partitions exist evicts the least
recently updated one (a partition exists from its first tuple until evicted, even empty).
``tuplecount(N)``: after each tuple (and its emission), while the partitions hold more than N
tuples, the least recently updated partition is evicted (possibly the current one, last).
"""

from __future__ import annotations

import datetime
import heapq

from ..algebra.spl import SplWindow
from ..intervals import Interval
from ..types import TIMESTAMP
from ..values import Relation
from . import evaluates
from .basic import row_getter

_EPOCH = datetime.datetime(1970, 1, 1)
_MICRO = datetime.timedelta(microseconds=1)


def _micros(value) -> int:
    return (value - _EPOCH) // _MICRO


def _from_micros(value: int):
    return _EPOCH + value * _MICRO


def stream_order(relation, node) -> list:
    """The stream's tuples in the order the port reads them (see the module docstring)."""
    h = relation.heading
    ts = h.index(node.ts)
    key_fn = h.sort_key_function() or (lambda r: r)
    if node.arrival is None:
        return sorted(relation.body, key=lambda r: (r[ts], key_fn(r)))
    arr = h.index(node.arrival)
    if node.kind == "timeinterval":
        return sorted(relation.body, key=lambda r: (r[arr], r[ts], key_fn(r)))
    return sorted(relation.body, key=lambda r: (r[ts], r[arr], key_fn(r)))


class _Partition:
    """One partition's window state."""

    __slots__ = ("content", "opened", "count", "next_trigger", "last_a", "last_t", "updated")

    def __init__(self):
        self.content: list = []  # (row, t, a, p)
        self.opened = None
        self.count = 0
        self.next_trigger = None
        self.last_a = None
        self.last_t = None
        self.updated = -1


def _value_getter(h, policy):
    if policy is None or policy.kind != "delta":
        return lambda row: None
    i = h.index(policy.attr)
    if h.type_of(policy.attr) == TIMESTAMP:
        return lambda row: _micros(row[i])
    return lambda row: row[i]


def _step(node, part: _Partition, item, out: list):
    """One tuple into one partition's tumbling or sliding window; emissions go to ``out``."""
    row, t, a, p, _ = item
    ev = node.eviction
    c = part.content
    if node.kind == "tumbling":
        if ev.kind == "count":
            c.append(item)
            if len(c) == ev.amount:
                out.append(c)
                part.content = []
        elif ev.kind == "time":
            if c and t >= part.opened + node.units(ev.amount):
                out.append(c)
                part.content = c = []
            if not c:
                part.opened = t
            c.append(item)
        elif ev.kind == "delta":
            if c and a - c[0][2] > node.delta_amount(ev):
                out.append(c)
                part.content = c = []
            c.append(item)
        else:  # punct
            c.append(item)
            if p:
                out.append(c)
                part.content = []
        return
    c.append(item)
    if ev.kind == "count":
        del c[:-ev.amount]
    elif ev.kind == "time":
        limit = t - node.units(ev.amount)
        drop = 0
        while c[drop][1] <= limit:
            drop += 1
        del c[:drop]
    else:
        d = node.delta_amount(ev)
        drop = 0
        while a - c[drop][2] > d:
            drop += 1
        del c[:drop]
    tr = node.trigger
    if tr is None:
        out.append(list(c))
    elif tr.kind == "count":
        part.count += 1
        if part.count == tr.amount:
            part.count = 0
            out.append(list(c))
    elif tr.kind == "time":
        period = node.units(tr.amount)
        if part.next_trigger is None:
            part.next_trigger = t + period
        elif t >= part.next_trigger:
            out.append(list(c))
            part.next_trigger += ((t - part.next_trigger) // period + 1) * period
    else:
        ta = item[4]
        if part.last_a is None:
            part.last_a = ta
        elif ta - part.last_a > node.delta_amount(tr):
            out.append(list(c))
            part.last_a = ta


def sequential_windows(rows, node) -> list:
    """[(partition key, at, [rows])] in emission order, for tumbling and sliding windows.

    An item is (row, time, eviction delta value, punctuation flag, trigger delta value).
    """
    h = node.source.heading
    ts = h.index(node.ts)
    timestamp = node.ts_type == TIMESTAMP
    part_of = row_getter([h.index(n) for n in node.partition])
    value = _value_getter(h, node.eviction)
    trigger_value = _value_getter(h, node.trigger)
    punct = h.index(node.eviction.attr) if node.eviction.kind == "punct" else None
    pe = node.partition_eviction
    age = node.units(pe.amount) if pe is not None and pe.kind == "partitionage" else None
    parts: dict = {}
    emissions = []
    for g, row in enumerate(rows):
        t = _micros(row[ts]) if timestamp else row[ts]
        key = part_of(row)
        part = parts.get(key)
        if part is not None and age is not None and t - part.last_t >= age:
            part = None
        if part is None:
            if pe is not None and pe.kind == "partitioncount" and key not in parts \
                    and len(parts) >= pe.amount:
                del parts[min(parts, key=lambda k: parts[k].updated)]
            part = parts[key] = _Partition()
        item = (row, t, value(row), None if punct is None else row[punct], trigger_value(row))
        out: list = []
        _step(node, part, item, out)
        emissions.extend((key, row[ts], [i[0] for i in content]) for content in out)
        part.last_t, part.updated = t, g
        if pe is not None and pe.kind == "tuplecount":
            total = 0
            for k in sorted(parts, key=lambda k: -parts[k].updated):
                total += len(parts[k].content)
                if total > pe.amount:
                    del parts[k]
    return emissions


def interval_windows(rows, node) -> list:
    """[(partition key, at, pane, [rows])] in emission order, for timeInterval windows."""
    h = node.source.heading
    ts = h.index(node.ts)
    timestamp = node.ts_type == TIMESTAMP
    part_of = row_getter([h.index(n) for n in node.partition])
    duration, period, discard, offset = node.interval_units
    back = _from_micros if timestamp else (lambda v: v)
    panes: dict = {}  # (key, start) -> [rows]
    pending: list = []  # heap of (end, start, key): panes not yet complete
    emissions = []
    watermark = None

    def emit(key, start, at):
        pane = Interval(back(start), back(start + duration))
        emissions.append((key, back(at), pane, list(panes[(key, start)])))

    for row in rows:
        t = _micros(row[ts]) if timestamp else row[ts]
        if watermark is not None and t < watermark - discard:
            continue  # later than the discard age: ignored
        if watermark is None or t > watermark:
            watermark = t
            fired = []
            while pending and pending[0][0] <= watermark:
                fired.append(heapq.heappop(pending))
            for end, start, key in sorted(fired, key=lambda f: (f[1], f[2])):
                emit(key, start, end)
        key = part_of(row)
        first = (t - offset - duration) // period + 1  # the panes with start <= t < end
        last = (t - offset) // period
        for k in range(first, last + 1):
            start = offset + k * period
            new = (key, start) not in panes
            panes.setdefault((key, start), []).append(row)
            if start + duration <= watermark:
                emit(key, start, watermark)  # a late tuple: the pane triggers again
            elif new:
                heapq.heappush(pending, (start + duration, start, key))
    for end, start, key in sorted(pending, key=lambda f: (f[1], f[2])):
        emit(key, start, end)
    return emissions


@evaluates(SplWindow)
def _splwindow(node, ctx):
    src = ctx.eval(node.source)
    rows = stream_order(src, node)
    if node.kind == "timeinterval":
        emissions = interval_windows(rows, node)
    else:
        emissions = [(key, at, None, content)
                     for key, at, content in sequential_windows(rows, node)]
    h = node.heading
    names = list(node.partition) + ["instance", "at", "tuples"]
    if node.kind == "timeinterval":
        names.append("pane")
    where = {n: i for i, n in enumerate(names)}
    assemble = row_getter([where[n] for n in h.names])
    counters: dict = {}
    out = set()
    for key, at, pane, content in emissions:
        counters[key] = instance = counters.get(key, 0) + 1
        tuples = Relation(src.heading, frozenset(content))
        values = key + (instance, at, tuples) + ((pane,) if pane is not None else ())
        out.add(assemble(values))
    return Relation(h, frozenset(out))
