"""Python evaluation of SPL windows (seed 001, "Window clause"): the reference semantics.

The rules are IBM Streams' own (its SPL window runtime, ``SPL/Runtime/Window/*Impl.h`` in
IBMStreams/OSStreams, and the ``DeltaWindowPolicy``/``StreamWindowEvent`` reference text), read
on the stream's own time: where IBM's runtime looks at the system clock, sira looks at the
timestamp attribute (``ts``), and "now" is the time of the tuple arriving or of a timer tick.

The stream is read once, tuple by tuple, as an SPL input port would see it:

* tumbling and sliding windows in (ts, arrival) order (ties without ``arrival(...)``: the
  tuples' canonical order), each tuple going to its partition's window;
* timeInterval windows in arrival order (``arrival(...)``; without it, ts order), the watermark
  being the largest ts seen so far on the whole stream.

Every window instance the port would hand to its operator, holding at least one tuple, becomes
one tuple: its partition attributes, ``instance`` (1-based per partition, in order of emission),
``at`` and ``tuples`` (and ``pane`` for timeInterval windows). (IBM's runtime also reports a
time-triggered window that holds nothing; a relation of windows leaves those out.)

**Timers.** ``time(T)`` as a tumbling eviction or a sliding trigger is a timer of the whole
window, as in IBM's runtime (one thread for every partition): it ticks at o + T, o + 2T, ...
where o is the ts of the stream's first tuple, whether or not tuples arrive. A tick at time t
happens before the tuples whose ts is t (so a tumbling time window is [o + kT, o + (k+1)T)), and
only ticks up to the last tuple's ts happen (no final punctuation ends the stream).

Tumbling windows:

* ``count(N)``: the tuple is inserted; the window flushes when it holds N tuples (``at``: that
  tuple's ts). A trailing partial window is never emitted.
* ``time(T)``: at each tick every partition holding tuples flushes (``at``: the tick's time).
  (Before issue 23 a window opened at its partition's first tuple and flushed when a tuple
  reached open + T, so its windows drifted after a quiet stretch.)
* ``delta(a, D)``: a tuple whose a exceeds the window's oldest a by more than D flushes the
  window (``at``: its ts) and is then inserted into the next; the final open window is never
  emitted.
* ``punct(p)``: a tuple with p true is followed by a punctuation: it is inserted and the window
  flushed; tuples after the last punctuation are never emitted.

A tumbling window's partition ends when it flushes (IBM removes it; ``partitioncount`` no
longer counts it) and starts again with its next tuple.

Sliding windows, on the arrival of a tuple, in IBM's order:

* a ``delta`` trigger first: IBM's reference "The TRIGGER event occurs before any EVICTION
  event when the window has a count or delta based eviction policy, and thus also precedes the
  INSERTION event" (and ``TimeDeltaSlidingWindowImpl`` does the same with a time eviction): the
  tuple triggers when its a exceeds the last triggering tuple's a by more than D, and the
  emission holds the window *before* the tuple is inserted. The partition's first tuple is the
  first reference and does not trigger.
* then the eviction: ``count(N)`` evicts the oldest tuple when the window holds N;
  ``delta(a, D)`` evicts *every* tuple of the window whose a is more than D below the new
  tuple's ("existing tuples in the window for which the delta between the eviction policy
  attribute value of the new tuple and that of the existing tuple is greater than the eviction
  policy size are evicted"), so when a goes down and up again a tuple in the middle may leave
  while older ones stay; ``time(T)`` evicts, at every moment, the tuples more than T old
  (now - ts > T: a tuple exactly T old stays);
* then the insertion, then a ``count(M)`` trigger (the default, ``count(1)``): every M-th tuple
  of the partition, the emission holding the window with the new tuple.
* a ``time(T)`` trigger is a timer: at each tick every partition holding tuples emits its
  window as it is then (``at``: the tick's time).

A sliding window's partition ends when time eviction empties it (IBM removes it); its trigger
counters and delta reference live on until the partition is evicted.

TimeInterval windows: panes ``[offset + k*period, offset + k*period + duration)``; a tuple goes
to every pane holding its ts, unless ts < watermark - discardAge (dropped; discardAge defaults
to 0). A pane is created by its first tuple and emitted when the watermark reaches its end
(``at`` = the pane's end); panes still open at the end of input are emitted then, also with
``at`` = the pane's end. A tuple arriving for a pane already emitted (a late tuple) makes the pane
emit again with everything it holds (SPL's late trigger), ``at`` being the watermark then.

Partition eviction (tumbling and sliding windows) drops a partition's whole state -- window
content, trigger counters -- without emitting it; ``instance`` keeps counting. As in IBM's
``WindowImpl``:

* ``partitionage(T)``: before each insertion and each tick, every partition whose last insertion
  is more than T ago (now - last > T) is evicted;
* ``partitioncount(N)``: after each insertion, while more than N partitions exist, the least
  recently updated one is evicted;
* ``tuplecount(N)``: after each insertion, while the partitions hold more than N tuples, the
  least recently updated partition is evicted (the current one last). An evicted partition emits
  nothing, not even the count trigger of the tuple just inserted.

:class:`SplScanner` is the whole of it for tumbling and sliding windows: an incremental state
machine fed one tuple at a time, used by the batch engines and by the live runtime.
"""

from __future__ import annotations

import datetime
import heapq
import math
import struct
import sys
from collections import OrderedDict, deque

from ..algebra.spl import SplWindow
from ..intervals import Interval
from ..types import TIMESTAMP
from ..values import Relation
from . import evaluates
from .basic import row_getter
from .guards import Guard, windows_error
from .windows import timestamp_plus

_EPOCH = datetime.datetime(1970, 1, 1)
_MICRO = datetime.timedelta(microseconds=1)


def _micros(value) -> int:
    return (value - _EPOCH) // _MICRO


def _from_micros(value: int):
    return timestamp_plus(_EPOCH, value, "SPLWINDOW")  # IntOverflow past year 9999


def order_key(heading, node):
    """The sort key of the stream order of ``node``'s input (see the module docstring): (ts,
    arrival, canonical) for tumbling and sliding windows, (arrival, ts, canonical) for
    timeInterval windows with ``arrival(...)``, (ts, canonical) without it."""
    ts = heading.index(node.ts)
    key_fn = heading.sort_key_function() or (lambda r: r)
    if node.arrival is None:
        return lambda r: (r[ts], key_fn(r))
    arr = heading.index(node.arrival)
    if node.kind == "timeinterval":
        return lambda r: (r[arr], r[ts], key_fn(r))
    return lambda r: (r[ts], r[arr], key_fn(r))


def stream_order(relation, node) -> list:
    """The stream's tuples in the order the port reads them (see the module docstring)."""
    return sorted(relation.body, key=order_key(relation.heading, node))


class _Partition:
    """One partition's window: the ids of its tuples in arrival order (``items``) and what its
    eviction policy needs."""

    __slots__ = ("items", "heap", "first_a", "last_t", "size")

    def __init__(self, delta_eviction: bool):
        # a delta-evicted window loses tuples from its middle: id -> None keeps arrival order
        self.items = {} if delta_eviction else deque()
        self.heap = [] if delta_eviction else None  # (a, id) of the tuples still in the window
        self.first_a = None  # tumbling delta: the oldest tuple's a
        self.last_t = None  # the last insertion's time (partitionage)
        self.size = 0

    def content(self) -> list:
        return list(self.items)


class SplScanner:
    """The tumbling and sliding windows of one SPLWINDOW node, tuple by tuple.

    ``push(key, t, id, a, p, ta)`` takes the next tuple in stream order -- its partition key,
    its time ``t`` (an int: the ts, or microseconds for a TIMESTAMP), an id the caller chooses
    (the emissions name tuples by it), the eviction delta value ``a``, the punctuation flag
    ``p`` and the trigger delta value ``ta`` (None when the policy does not use them) -- and
    returns the windows that became complete: ``[(key, at, [id, ...]), ...]`` in emission
    order, ``at`` an int time, the ids in arrival order. ``advance(t)`` fires the timer ticks up
    to t without a tuple (a live stream whose bound has passed t; ``push`` does it itself).
    ``finish()`` ends the input: tumbling and sliding windows emit nothing more. Each call
    costs O(log n) amortised plus the size of what it emits. With ``held`` (the batch engine's
    ``max_tuples``), what the emitted windows hold is counted after every tuple and every timer
    tick, and TooManyTuples ends the scan past the limit.

        >>> from sira import parse
        >>> node = parse("splwindow(relation(heading(ts(long) k(int)) body()), ts, sliding, "
        ...              "count(2) trigger(count(2)))")
        >>> scan = SplScanner(node)
        >>> [scan.push((), t, t, None, None, None) for t in (1, 2, 3, 4)]
        [[], [((), 2, [1, 2])], [], [((), 4, [3, 4])]]
    """

    @classmethod
    def guarded(cls, node: SplWindow, guard: Guard | None) -> "SplScanner":
        """A scanner counting what its windows hold against ``guard`` (``max_tuples``) after
        every tuple and every timer tick: TooManyTuples as soon as they pass its limit, before
        a quiet stretch under a time trigger has made all its windows. Every engine that scans
        builds its scanner so.

            >>> from sira import parse
            >>> node = parse("splwindow(relation(heading(ts(long)) body()), ts, sliding, "
            ...              "count(2) trigger(time(1)))")
            >>> scan = SplScanner.guarded(node, Guard("SPLWINDOW", 100))
            >>> scan.push((), 0, 0), scan.push((), 1, 1)
            ([], [((), 1, [0])])
            >>> from sira.errors import TooManyTuples
            >>> try:
            ...     scan.push((), 10 ** 12, 2)
            ... except TooManyTuples as err:
            ...     print(err.limit)
            100
        """
        return cls(node, None if guard is None else _Held(guard, 2))

    def __init__(self, node: SplWindow, held: "_Held | None" = None):
        ev, tr = node.eviction, node.trigger
        self.held = held  # max_tuples: what the emitted windows hold, counted as they come
        self.kind = node.kind
        self.ev = ev.kind
        self.ev_amount = (ev.amount if ev.kind == "count" else node.units(ev.amount)
                          if ev.kind == "time" else node.delta_amount(ev)
                          if ev.kind == "delta" else None)
        self.tr = None if self.kind == "tumbling" else (tr.kind if tr is not None else "count")
        self.tr_amount = (1 if tr is None else tr.amount if tr.kind == "count"
                          else node.units(tr.amount) if tr.kind == "time"
                          else node.delta_amount(tr))
        pe = node.partition_eviction
        self.pe = None if pe is None else pe.kind
        self.pe_amount = None if pe is None else (node.units(pe.amount)
                                                  if pe.kind == "partitionage" else pe.amount)
        if self.kind == "tumbling" and self.ev == "time":
            self.period = self.ev_amount
        elif self.tr == "time":
            self.period = self.tr_amount
        else:
            self.period = None
        self.parts: OrderedDict = OrderedDict()  # key -> _Partition, least recently updated first
        self.total = 0  # tuples held by every partition (tuplecount)
        self.counts: dict = {}  # key -> tuples since the last count trigger
        self.refs: dict = {}  # key -> the last triggering tuple's delta value
        # (t, key, partition) of each tuple (time eviction), oldest first
        self.expiry: deque = deque()
        self.origin = None
        self.next_tick = None

    # ------------------------------------------------------------------ the stream
    def push(self, key, t, ident, a=None, p=None, ta=None) -> list:
        out = self.advance(t) if self.period is not None and self.origin is not None else []
        if self.origin is None:
            self.origin = t
            if self.period is not None:
                self.next_tick = t + self.period
        if self.ev == "time" and self.kind == "sliding":
            self._expire(t)
        if self.pe == "partitionage":
            self._age(t)
        ticked = len(out)  # counted by advance
        if self.kind == "tumbling":
            self._tumbling(key, t, ident, a, p, out)
        else:
            self._sliding(key, t, ident, a, ta, out)
        if self.held is not None and len(out) > ticked:
            self.held.add(out, ticked)
        return out

    def advance(self, now) -> list:
        """Fire the timer ticks at or before ``now`` (each before the tuples of its time)."""
        out: list = []
        if self.period is None or self.next_tick is None:
            return out
        while self.next_tick <= now:
            if not self.parts:  # nothing to emit: skip to the first tick after now
                self.next_tick += ((now - self.next_tick) // self.period + 1) * self.period
                break
            if self.held is not None and self.kind == "sliding":
                self._refuse_a_stretch_past_the_limit(now)
            before = len(out)
            self._tick(self.next_tick, out)
            if self.held is not None:
                self.held.add(out, before)
            self.next_tick += self.period
        return out

    def _refuse_a_stretch_past_the_limit(self, now) -> None:
        """TooManyTuples at once when the ticks from the next one to ``now`` that cannot change
        the sliding windows would by themselves take the count past the limit: until the first
        tick at which a time eviction or a partition's age may remove a tuple, every tick emits
        every partition's window as it is, ``total`` tuples. Those ticks all happen (each tick
        up to ``now`` fires), so this refuses what counting tick by tick would refuse, without
        making billions of windows over a quiet stretch first."""
        last = now  # the last tick that surely changes nothing
        if self.ev == "time" and self.expiry:
            last = min(last, self.expiry[0][0] + self.ev_amount)
        if self.pe == "partitionage" and self.parts:
            last = min(last, self.parts[next(iter(self.parts))].last_t + self.pe_amount)
        if last < self.next_tick:
            return
        ticks = (last - self.next_tick) // self.period + 1
        if self.held.count + ticks * self.total > self.held.guard.limit:
            raise windows_error(self.held.guard)

    def finish(self) -> list:
        """The end of the input: a trailing partial window is never emitted."""
        return []

    def digest(self) -> bytes:
        """A digest of everything that decides what the scanner emits from now on: the timer's
        next tick, each partition's tuples (ids) in the order of their last update, the count
        triggers' counters and the delta triggers' references (not what ``held`` counted).
        Two scanners of one node fed the same tuples from equal digests emit the same windows,
        so a scan of a chunk of the stream from a guessed state can be checked against the
        scan from the true state (``sira_spark.spl_scan``). A counter at 0 and a missing one
        are the same state; the dictionaries are read in a canonical order.

            >>> from sira import parse
            >>> node = parse("splwindow(relation(heading(ts(long) k(int)) body()), ts, "
            ...              "tumbling, count(2) partitioned(k, partitioncount(1)))")
            >>> a, b = SplScanner(node), SplScanner(node)
            >>> _ = a.push("x", 1, 1), b.push("y", 1, 0)
            >>> a.digest() == b.digest()
            False
            >>> _ = a.push("z", 2, 2), b.push("z", 2, 2)  # x and y evicted: the same state
            >>> a.digest() == b.digest()
            True
        """
        import hashlib

        by_key = lambda item: repr(item[0])  # noqa: E731 - the canonical order of a dict
        state = (self.next_tick,
                 [(key, list(part.items), part.first_a, part.last_t)
                  for key, part in self.parts.items()],
                 sorted(((k, n) for k, n in self.counts.items() if n), key=by_key),
                 sorted(self.refs.items(), key=by_key))
        return hashlib.blake2b(repr(state).encode(), digest_size=16).digest()

    def to_data(self, key, ident, number) -> dict:
        """The scan's state as plain data (lists, ints, strings; never a pickle), each
        partition key, tuple id and delta value passed through the caller's encoders ``key``,
        ``ident`` and ``number``; :meth:`load_data` reads it back. What ``held`` counted is
        left out. The live checkpoints and Spark's split scan keep scanners so.

            >>> from sira import parse
            >>> node = parse("splwindow(relation(heading(ts(long) k(int)) body()), ts, "
            ...              "tumbling, count(2) partitioned(k))")
            >>> a, b = SplScanner(node), SplScanner(node)
            >>> _ = a.push("x", 1, 7)
            >>> same = lambda v: v
            >>> b.load_data(a.to_data(same, same, same), same, same, same)
            >>> b.digest() == a.digest(), b.push("x", 2, 8)
            (True, [('x', 2, [7, 8])])
        """
        return {
            "parts": [[key(k), [ident(i) for i in p.items],
                       None if p.heap is None else [[number(a), ident(i)] for a, i in p.heap],
                       number(p.first_a), p.last_t, p.size]
                      for k, p in self.parts.items()],
            "total": self.total,
            "counts": [[key(k), n] for k, n in self.counts.items()],
            "refs": [[key(k), number(a)] for k, a in self.refs.items()],
            "expiry": [[t, key(k), self.parts.get(k) is p] for t, k, p in self.expiry],
            "origin": self.origin, "next_tick": self.next_tick}

    def load_data(self, data: dict, key, ident, number, expect=None) -> None:
        """Set the state to :meth:`to_data`'s ``data``, read through the decoders ``key``,
        ``ident`` and ``number``. Malformed data is refused by ``expect(condition, what)``
        (by default a ValueError naming what is wrong). See :meth:`to_data` for an example."""
        def check(condition, what):
            if condition:
                return
            if expect is None:
                raise ValueError(f"not an SPL scan state: {what}")
            expect(condition, what)

        def fields(obj, n, what):
            check(isinstance(obj, (list, dict)) and (n is None or len(obj) == n),
                  f"{what} must be a list" + ("" if n is None else f" of {n}"))
            return obj

        def count(n, what):
            check(type(n) is int and n >= 0, f"{what} must be a non-negative integer")
            return n

        def time(v, what):
            check(v is None or type(v) in (int, float), f"{what} must be a number")
            return v

        fields(data, None, "the state")
        self.parts = OrderedDict()
        for entry in fields(data.get("parts"), None, "parts"):
            k, items, heap, first_a, last_t, size = fields(entry, 6, "a partition")
            part = _Partition(heap is not None)
            if heap is None:
                part.items = deque(ident(i) for i in fields(items, None, "a partition's items"))
            else:
                part.items = {ident(i): None for i in fields(items, None, "a partition's items")}
                part.heap = [(number(a), ident(i))
                             for a, i in fields(heap, None, "a partition's heap")]
                heapq.heapify(part.heap)
            part.first_a, part.last_t = number(first_a), time(last_t, "a partition's last time")
            part.size = count(size, "a partition's size")
            check(part.size == len(part.items), "a partition's size is its item count")
            self.parts[key(k)] = part
        self.total = count(data.get("total"), "the total")
        self.counts = {key(k): count(n, "a counter")
                       for k, n in fields(data.get("counts"), None, "counters")}
        self.refs = {key(k): number(a) for k, a in fields(data.get("refs"), None, "references")}
        gone = _Partition(False)
        self.expiry = deque()
        for t, k, alive in fields(data.get("expiry"), None, "expiry"):
            k = key(k)
            check(not alive or k in self.parts, "an expiring tuple's partition is held")
            self.expiry.append((time(t, "an expiry time"), k, self.parts[k] if alive else gone))
        self.origin = time(data.get("origin"), "the origin")
        self.next_tick = time(data.get("next_tick"), "the next tick")

    # ------------------------------------------------------------------ policies
    def _tumbling(self, key, t, ident, a, p, out):
        part = self.parts.get(key)
        if self.ev == "delta" and part is not None and a - part.first_a > self.ev_amount:
            out.append((key, t, part.content()))
            self._remove(key)
            part = None
        part = self._insert(key, part, t, ident, a)
        if part is None:
            return  # evicted by tuplecount
        if (self.ev == "count" and part.size == self.ev_amount) or (self.ev == "punct" and p):
            out.append((key, t, part.content()))
            self._remove(key)

    def _sliding(self, key, t, ident, a, ta, out):
        part = self.parts.get(key)
        if self.tr == "delta":
            ref = self.refs.get(key)
            if ref is None:
                self.refs[key] = ta
            elif ta - ref > self.tr_amount:
                if part is not None and part.size:
                    out.append((key, t, part.content()))
                self.refs[key] = ta
        if part is not None:
            if self.ev == "count" and part.size == self.ev_amount:
                part.items.popleft()
                part.size -= 1
                self.total -= 1
            elif self.ev == "delta":
                heap, items = part.heap, part.items
                while heap and a - heap[0][0] > self.ev_amount:
                    del items[heapq.heappop(heap)[1]]
                    part.size -= 1
                    self.total -= 1
        part = self._insert(key, part, t, ident, a)
        if part is None or self.tr != "count":
            return
        n = self.counts.get(key, 0) + 1
        if n == self.tr_amount:
            out.append((key, t, part.content()))
            n = 0
        self.counts[key] = n

    def _insert(self, key, part, t, ident, a):
        """Insert a tuple into its partition (made when missing), then evict partitions as the
        partition eviction policy says; the partition, or None when it was evicted."""
        if part is None:
            part = self.parts[key] = _Partition(self.ev == "delta" and self.kind == "sliding")
            part.first_a = a
        else:
            self.parts.move_to_end(key)
        if part.heap is not None:
            part.items[ident] = None
            heapq.heappush(part.heap, (a, ident))
        else:
            part.items.append(ident)
        part.size += 1
        part.last_t = t
        self.total += 1
        if self.ev == "time" and self.kind == "sliding":
            self.expiry.append((t, key, part))
        if self.pe == "partitioncount":
            while len(self.parts) > self.pe_amount:
                self._evict(next(iter(self.parts)))
        elif self.pe == "tuplecount":
            while self.total > self.pe_amount:
                self._evict(next(iter(self.parts)))
        return self.parts.get(key) if self.pe == "tuplecount" else part

    def _tick(self, t, out):
        if self.pe == "partitionage":
            self._age(t)
        if self.kind == "tumbling":
            for key in list(self.parts):
                out.append((key, t, self.parts[key].content()))
                self._remove(key)
            return
        if self.ev == "time":
            self._expire(t)
        for key, part in self.parts.items():
            out.append((key, t, part.content()))

    def _expire(self, now):
        """Time eviction at ``now``: every tuple more than T old leaves, every partition it
        empties ends."""
        limit = now - self.ev_amount
        expiry = self.expiry
        while expiry and expiry[0][0] < limit:
            _, key, part = expiry.popleft()
            if self.parts.get(key) is not part:
                continue  # its partition was evicted
            part.items.popleft()
            part.size -= 1
            self.total -= 1
            if not part.size:
                self._remove(key)

    def _age(self, now):
        parts = self.parts
        while parts:
            key = next(iter(parts))
            if parts[key].last_t + self.pe_amount >= now:
                break
            self._evict(key)

    def _remove(self, key):
        """The partition ends (flushed, or emptied by time): its trigger state lives on."""
        self.total -= self.parts.pop(key).size

    def _evict(self, key):
        """Partition eviction: the partition and its trigger state go."""
        self._remove(key)
        self.counts.pop(key, None)
        self.refs.pop(key, None)


def time_triggered(node: SplWindow) -> bool:
    """Whether ``node`` is a sliding window under a ``time`` trigger. Its windows emit at each
    tick, and each (tuple, tick) pair is one tuple a window holds, so the batch engines count
    the windows' tuples against ``max_tuples`` from each tuple's ticks before the windows are
    made (a quiet stretch may hold a tuple for more ticks than the limit), and that count is
    exact: they count nothing after.

        >>> from sira import parse
        >>> s = "relation(heading(ts(long)) body())"
        >>> time_triggered(parse(f"splwindow({s}, ts, sliding, count(3) trigger(time(5)))"))
        True
        >>> time_triggered(parse(f"splwindow({s}, ts, tumbling, time(5))"))
        False
    """
    trigger = node.trigger
    return node.kind == "sliding" and trigger is not None and trigger.kind == "time"


def by_recency(node: SplWindow) -> bool:
    """Whether ``partitioncount(N)`` evicts exactly the keys that are not among the N updated
    last: a sliding window with a ``count`` or ``delta`` eviction and no ``time`` trigger. Such
    a partition never ends on its own (each tuple is inserted as another may leave) and nothing
    reads the partitions between tuples, so after every insertion the partitions that exist are
    the N keys updated last (:class:`RecentKeys`), and a tuple starts a new epoch of its key
    exactly when its key is not among them. The batch engines then compute the windows per
    epoch instead of one scan of the whole stream.

        >>> from sira import parse
        >>> s = "relation(heading(ts(long) k(int)) body())"
        >>> by_recency(parse(f"splwindow({s}, ts, sliding, count(3) partitioned(k, "
        ...                  "partitioncount(2)))"))
        True
        >>> by_recency(parse(f"splwindow({s}, ts, tumbling, count(3) partitioned(k, "
        ...                  "partitioncount(2)))"))
        False
    """
    pe, ev, tr = node.partition_eviction, node.eviction, node.trigger
    return (pe is not None and pe.kind == "partitioncount" and node.kind == "sliding"
            and ev.kind in ("count", "delta") and (tr is None or tr.kind != "time"))


class RecentKeys:
    """The N keys updated last, oldest first, along a stream read in order (see
    :func:`by_recency`), starting from ``keys`` (the N keys updated last before).

        >>> recent = RecentKeys(2)
        >>> recent.starts([0, 1, 2, 3, 4], ["a", "b", "a", "c", "b"])
        [0, 1, 3, 4]
        >>> list(recent.keys)
        ['c', 'b']
    """

    def __init__(self, n_keep: int, keys=()):
        self.n_keep = n_keep
        self.keys = OrderedDict.fromkeys(keys)

    def starts(self, positions, keys) -> list:
        """Read tuples (their ``positions`` and ``keys``) in order; the positions of those
        whose key is not among the N updated last before them (a new partition starts)."""
        recent, started = self.keys, []
        for position, key in zip(positions, keys):
            if key in recent:
                recent.move_to_end(key)
            else:
                recent[key] = None
                if len(recent) > self.n_keep:
                    recent.popitem(last=False)
                started.append(position)
        return started


def never_evicted(node: SplWindow, tuples: int, keys: int) -> bool:
    """Whether ``partitioncount(N)`` or ``tuplecount(N)`` can never evict a partition of a
    stream of ``tuples`` tuples in ``keys`` partitions: at most ``keys`` partitions exist at
    once, holding at most ``tuples`` tuples, and at most ``keys * C`` under a ``count(C)``
    eviction (a tumbling window flushes when it holds C, a sliding one drops its oldest tuple
    before it takes a new one). A policy set as a cap that the data never reaches is common;
    the batch engines then compute the windows as without it, split across partitions,
    instead of one scan of the whole stream. (``partitionage`` is never decided here.)

        >>> from sira import parse
        >>> node = parse("splwindow(relation(heading(ts(long) k(int)) body()), ts, tumbling, "
        ...              "count(3) partitioned(k, tuplecount(30)))")
        >>> never_evicted(node, 1000, 10), never_evicted(node, 1000, 11)
        (True, False)
    """
    pe = node.partition_eviction
    if pe is None:
        return True
    if pe.kind == "partitioncount":
        return keys <= pe.amount
    if pe.kind == "tuplecount":
        held = tuples if node.eviction.kind != "count" else min(tuples,
                                                                keys * node.eviction.amount)
        return held <= pe.amount
    return False


def float_reach(a: float, delta: float) -> float:
    """The largest FLOAT x with ``x - a <= delta`` in floating point, the subtraction the
    reference makes: a later value b evicts a tuple whose value is a from its sliding
    ``delta(attr, delta)`` window exactly when ``b > float_reach(a, delta)``, as ``b - a`` never
    goes down as b grows (IEEE rounding is monotone). ``a + delta`` is not that bound: it is
    rounded once more, so a search on it would keep or evict a tuple the reference does not.
    An infinite a is its own bound (nothing minus infinity is above delta; everything but
    -infinity minus -infinity is). Found by a search over the FLOATs in order (their bits as
    ordered integers) from ``a + delta`` outwards, then halving: one or two subtractions
    usually, about 130 at most (where ``a + delta`` cancels to near 0, the FLOATs there are far
    denser than the differences).

        >>> 0.1 + 0.2, float_reach(0.1, 0.2)  # 0.30000000000000004 - 0.1 is 0.20000000000000004
        (0.30000000000000004, 0.3)
        >>> float_reach(1e20, 2.5)  # the next FLOAT after 1e20 is 16384 above it
        1e+20
    """
    if math.isinf(a):
        return a

    def beyond(k):
        return _float_at(k) - a > delta

    lo, hi = _float_rank(a), _float_rank(math.inf)  # a - a = 0 is not beyond; inf - a is
    x = _float_rank(min(a + delta, sys.float_info.max))
    step, up = 1, not beyond(x)
    if up:
        lo = x
    else:
        hi = x
    while hi - lo > 1:  # widen from x until the bound is bracketed, then halve
        probe = x + step if up else x - step
        if step and lo < probe < hi:
            out = beyond(probe)
            if out:
                hi = probe
            else:
                lo = probe
            step = 0 if out == up else step * 2  # bracketed: halve from here
            continue
        mid = (lo + hi) // 2
        if beyond(mid):
            hi = mid
        else:
            lo = mid
    return _float_at(lo)


def _float_rank(x: float) -> int:
    """An integer per FLOAT, in the FLOATs' order (-0.0 and 0.0 are both 0)."""
    bits = struct.unpack("<q", struct.pack("<d", x))[0]
    return bits if bits >= 0 else -(bits & 0x7FFF_FFFF_FFFF_FFFF)


def _float_at(rank: int) -> float:
    """The FLOAT of :func:`_float_rank`."""
    bits = rank if rank >= 0 else (-rank) | -0x8000_0000_0000_0000
    return struct.unpack("<d", struct.pack("<q", bits))[0]

def _value_getter(h, policy):
    if policy is None or policy.kind != "delta":
        return lambda row: None
    i = h.index(policy.attr)
    if h.type_of(policy.attr) == TIMESTAMP:
        return lambda row: _micros(row[i])
    return lambda row: row[i]


def sequential_windows(rows, node, guard: Guard | None = None) -> list:
    """[(partition key, at, [indexes into rows])] in emission order, for tumbling and sliding
    windows (``at`` in the timestamp's own type); ``rows`` in stream order. With a ``guard``,
    TooManyTuples as soon as the windows so far hold more than its limit (:class:`_Held`)."""
    h = node.source.heading
    ts = h.index(node.ts)
    timestamp = node.ts_type == TIMESTAMP
    part_of = row_getter([h.index(n) for n in node.partition])
    value = _value_getter(h, node.eviction)
    trigger_value = _value_getter(h, node.trigger)
    punct = h.index(node.eviction.attr) if node.eviction.kind == "punct" else None
    scan = SplScanner.guarded(node, guard)
    push = scan.push
    emissions: list = []
    for g, row in enumerate(rows):
        t = _micros(row[ts]) if timestamp else row[ts]
        emissions.extend(push(part_of(row), t, g, value(row),
                              None if punct is None else row[punct], trigger_value(row)))
    emissions.extend(scan.finish())
    back = _from_micros if timestamp else (lambda v: v)
    return [(key, back(at), ids) for key, at, ids in emissions]


#: the batch engines make the sliding count windows of a tuple in at most this many of them,
#: then count what the windows hold; past it they count first (and make no window past the
#: key's last tuple, which never fires)
FEW_WINDOWS = 64


class _Held:
    """The tuples the windows of one scan hold (the list at index ``content`` of each
    emission), counted against a guard: TooManyTuples as soon as they pass its limit, so
    memory stays near the limit. :class:`SplScanner` counts after every timer tick (a quiet
    stretch between two tuples may tick without end), the timeInterval scan after every tuple
    (a tuple emits at most its panes and the panes due), and before it makes a tuple's panes
    (``promise``: every pane a tuple enters is emitted at least once holding it, and a short
    creation period puts one tuple in billions of panes)."""

    __slots__ = ("guard", "content", "count", "promised")

    def __init__(self, guard: Guard, content: int):
        self.guard, self.content, self.count, self.promised = guard, content, 0, 0

    def reset(self) -> None:
        """Count from zero again (a live window counts what each train of input makes)."""
        self.count = self.promised = 0

    def promise(self, tuples: int) -> None:
        """Count ``tuples`` the windows will surely hold, before making them."""
        self.promised += tuples
        if self.promised > self.guard.limit:
            raise windows_error(self.guard)

    def add(self, made: list, start: int = 0) -> None:
        """Count ``made[start:]``."""
        for e in made[start:] if start else made:
            self.count += len(e[self.content])
        if self.count > self.guard.limit:
            raise windows_error(self.guard)


class IntervalScanner:
    """The timeInterval windows of one SPLWINDOW node, tuple by tuple (the module docstring
    gives the rules).

    ``push(key, t, row)`` takes the next tuple in stream order (``t`` an int: the ts, or
    microseconds for a TIMESTAMP) and returns the emissions it causes, ``[(key, at, start,
    [rows]), ...]`` (the pane is ``[start, start + duration)``); ``due(now)`` the on-time
    emissions of the panes ending at or before ``now`` when no tuple before ``now`` can still
    come (a live stream in ts order whose bound has reached ``now``); ``finish()`` the panes
    still open at the end of input. A pane no tuple can reach any more (it ends at or before
    watermark - discardAge) is forgotten, so memory holds the panes still reachable. Each call
    costs O(log n) plus the size of what it emits.

        >>> from sira import parse
        >>> node = parse("splwindow(relation(heading(ts(long) v(int)) body()), ts, "
        ...              "timeinterval, intervalduration(10))")
        >>> scan = IntervalScanner(node)
        >>> scan.push((), 1, "a"), scan.push((), 12, "b"), scan.finish()
        ([], [((), 10, 0, ['a'])], [((), 20, 10, ['b'])])
    """

    def __init__(self, node: SplWindow, held: "_Held | None" = None):
        self.held = held  # max_tuples: the panes' tuples promised and emitted
        self.duration, self.period, self.discard, self.offset = node.interval_units
        self.panes: dict = {}  # (key, start) -> [rows]
        self.pending: list = []  # heap of (end, start, key): panes not yet emitted on time
        self.reachable: list = []  # heap of (end, start, key): every pane still in ``panes``
        self.watermark = None

    def push(self, key, t, row) -> list:
        out: list = []
        duration, period, offset = self.duration, self.period, self.offset
        watermark = self.watermark
        if watermark is not None and t < watermark - self.discard:
            return out  # later than the discard age: ignored
        if watermark is None or t > watermark:
            self.watermark = watermark = t
            out.extend(self.due(watermark))
            self._forget(watermark - self.discard)
        panes = self.panes
        first = (t - offset - duration) // period + 1  # the panes with start <= t < end
        last = (t - offset) // period
        if self.held is not None and last >= first:
            self.held.promise(last - first + 1)
        for k in range(first, last + 1):
            start = offset + k * period
            pane = panes.get((key, start))
            if pane is None:
                pane = panes[(key, start)] = []
                heapq.heappush(self.reachable, (start + duration, start, key))
                if start + duration > watermark:
                    heapq.heappush(self.pending, (start + duration, start, key))
                    pane.append(row)
                    continue
            pane.append(row)
            if start + duration <= watermark:
                out.append((key, watermark, start, list(pane)))  # late: the pane again
        return out

    def due(self, now) -> list:
        """The on-time emissions of the panes ending at or before ``now``, in (start, key)
        order, ``at`` being the pane's end."""
        pending = self.pending
        fired = []
        while pending and pending[0][0] <= now:
            fired.append(heapq.heappop(pending))
        fired.sort(key=lambda f: (f[1], f[2]))
        return [(key, end, start, list(self.panes[(key, start)])) for end, start, key in fired]

    def finish(self) -> list:
        """The end of input: every pane not yet emitted, ``at`` being its end."""
        fired = sorted(self.pending, key=lambda f: (f[1], f[2]))
        self.pending = []
        return [(key, end, start, list(self.panes[(key, start)])) for end, start, key in fired]

    def _forget(self, limit) -> None:
        """Drop the panes ending at or before ``limit``: an accepted tuple is at or after it."""
        reachable, panes = self.reachable, self.panes
        while reachable and reachable[0][0] <= limit:
            _, start, key = heapq.heappop(reachable)
            del panes[(key, start)]


def pane_arithmetic(duration: int, period: int, offset: int) -> tuple:
    """``(r, q, c)`` for the panes ``[s, s + D)``, s = offset + kP, holding a time t, in integer
    steps that cannot overflow (DuckDB and Spark compute them per tuple near LONG's ends): with
    ``d = ((t mod P) - r) mod P`` (r = offset mod P), none when d >= D, else the starts
    ``t - d - jP`` for j = 0 .. q - (1 if d > c else 0), where q, c = divmod(D - 1, P).

        >>> r, q, c = pane_arithmetic(10, 5, 0)  # t = 12: panes [5, 15) and [10, 20)
        >>> d = ((12 % 5) - r) % 5
        >>> [12 - d - j * 5 for j in range(q - (d > c) + 1)]
        [10, 5]
    """
    q, c = divmod(duration - 1, period)
    return offset % period, q, c


def interval_windows(rows, node, guard: Guard | None = None) -> list:
    """[(partition key, at, pane, [rows])] in emission order, for timeInterval windows (with a
    ``guard``, refused as :func:`sequential_windows` says)."""
    h = node.source.heading
    ts = h.index(node.ts)
    timestamp = node.ts_type == TIMESTAMP
    part_of = row_getter([h.index(n) for n in node.partition])
    back = _from_micros if timestamp else (lambda v: v)
    duration = node.interval_units[0]
    held = None if guard is None else _Held(guard, 3)
    scan = IntervalScanner(node, held)
    push = scan.push
    emissions: list = []
    for row in rows:
        made = push(part_of(row), _micros(row[ts]) if timestamp else row[ts], row)
        if made and held is not None:
            held.add(made)
        emissions.extend(made)
    made = scan.finish()
    if held is not None:
        held.add(made)
    emissions.extend(made)
    return [(key, back(at), Interval(back(start), back(start + duration)), content)
            for key, at, start, content in emissions]


def _fit(ts_type):
    """``fit(value)``: IntOverflow when an ``at`` or a pane bound the windows computed (a pane
    end, a timer tick) lies outside the timestamp's integer type (None for TIMESTAMP)."""
    if ts_type == TIMESTAMP:
        return None
    return lambda value: ts_type.fit(value, operator="SPLWINDOW")


@evaluates(SplWindow)
def _splwindow(node, ctx):
    src = ctx.eval(node.source)
    rows = stream_order(src, node)
    guard = Guard.of(node, ctx.options)  # max_tuples: the tuples the windows hold
    if node.kind == "timeinterval":
        emissions = interval_windows(rows, node, guard)
    else:
        emissions = [(key, at, None, [rows[g] for g in ids])
                     for key, at, ids in sequential_windows(rows, node, guard)]
    h = node.heading
    names = list(node.partition) + ["instance", "at", "tuples"]
    if node.kind == "timeinterval":
        names.append("pane")
    where = {n: i for i, n in enumerate(names)}
    assemble = row_getter([where[n] for n in h.names])
    counters: dict = {}
    out = set()
    fit = _fit(node.ts_type)
    for key, at, pane, content in emissions:
        counters[key] = instance = counters.get(key, 0) + 1
        if fit is not None:
            fit(at)
            if pane is not None:
                fit(pane.begin), fit(pane.end)
        tuples = Relation(src.heading, frozenset(content))
        values = key + (instance, at, tuples) + ((pane,) if pane is not None else ())
        out.add(assemble(values))
    return Relation(h, frozenset(out))
