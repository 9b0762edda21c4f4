"""Named streams with producers and rowtime bounds (seed 002, SQLstream "Semantics of Rowtime
Bounds", "Named Streams and Rowtime Bounds").

Producers attach to a stream, insert rows with a rowtime, assert bounds (non-strict; a strict
bound at t is a non-strict one at t + 1) and detach. Rows leave the stream in rowtime order: a
row leaves only when every attached producer has a row or a bound at least that late, so the
stream runs at the speed of its slowest producer, and a newcomer may barge in ahead. A row
earlier than the stream's clock (the rowtime of the latest row out) or than its producer's own
bound is late: it raises :class:`LateRowError` and changes nothing. The stream remembers its
clock after every producer has left.

    >>> from sira import STRING
    >>> orders = NamedStream("orders", {"ticker": STRING})
    >>> out = []
    >>> orders.subscribe(lambda row, bound: out.append((row, bound)))
    >>> p1 = orders.attach("P1")
    >>> p1.insert({"ticker": "ORCL"}, 600)
    >>> out
    [({'seq': 1, 'ticker': 'ORCL', 'ts': 600}, None), (None, 600)]
"""

from __future__ import annotations

import logging
from collections import deque

import attrs

from ..errors import SiraError
from ..types import BOOLEAN, INT, LONG, STRING
from ..values import Heading, check_row, normalize_name

LOG = logging.getLogger("sira.streams")  # failing subscribers and queries


class LateRowError(SiraError):
    """A row (or bound) earlier than the stream already promised; nothing was changed."""

    fields = ("stream", "row", "bound")

    def default_message(self):
        return (f"stream '{self.stream}': row {self.row} is late: its rowtime is before the "
                f"bound {self.bound}")


class StreamError(SiraError):
    """Misuse of a stream or producer (a detached producer, a bound going backwards...)."""

    fields = ("stream", "producer")


@attrs.define
class _ProducerState:
    name: str
    queue: deque = attrs.field(factory=deque)  # (rowtime, body tuple) not yet out
    bound: int | None = None  # rows from this producer will have rowtime >= bound
    attached: bool = True


class Producer:
    """A handle for one data source inserting into a named stream."""

    def __init__(self, stream: "NamedStream", state: _ProducerState):
        self._stream = stream
        self._state = state

    @property
    def name(self) -> str:
        return self._state.name

    def insert(self, row, rowtime: int) -> None:
        """Insert a row (a mapping by attribute name) with its rowtime.

        Raises:
            LateRowError: the rowtime is before the stream's clock or this producer's bound.
            StreamError: the producer has detached.
            SiraTypeError / UnknownAttribute: the row does not match the stream's heading.
        """
        self._stream._insert(self._state, [(row, rowtime)])

    def insert_many(self, items) -> None:
        """Insert a train of ``(row, rowtime)`` pairs, in rowtime order, all or nothing.

        A train costs one pass through the queries instead of one per row. Every row is checked
        before any is inserted: if one is late, out of order or does not match the heading, the
        error names it and the stream is unchanged.

            >>> from sira import INT
            >>> s = NamedStream("s", {"v": INT})
            >>> got = []
            >>> s.subscribe(lambda row, bound: got.append(row["v"] if row else bound))
            >>> s.attach().insert_many([({"v": 1}, 5), ({"v": 2}, 7)])
            >>> got
            [1, 2, 7]
        """
        self._stream._insert(self._state, items)

    def bound(self, rowtime: int, strict: bool = False) -> None:
        """Promise that this producer's future rows have rowtime >= ``rowtime`` (> when strict)."""
        self._stream._bound(self._state, rowtime + 1 if strict else rowtime)

    def detach(self) -> None:
        self._stream._detach(self._state)


class NamedStream:
    """A stream with a payload heading; its rows get ``ts`` (rowtime) and ``seq`` (arrival).

    Subscribers are called with ``(row_dict, None)`` for each row that leaves the stream and
    ``(None, bound)`` when the stream's bound advances.
    """

    def __init__(self, name: str, payload, rowtime: str = "ts", arrival: str = "seq"):
        self.name = normalize_name(name)
        self.payload = Heading.of(payload)
        self.rowtime = normalize_name(rowtime)
        self.arrival = normalize_name(arrival)
        self.heading = self.payload.extend([(self.rowtime, LONG), (self.arrival, LONG)],
                                           "STREAM")
        self._producers: list = []
        self.clock: int | None = None  # rowtime of the latest row out
        self.seq = 0
        self._subscribers: list = []  # public: (row dict, bound) per row and per bound
        self._listeners: list = []  # internal: (list of body tuples, bound) per pump
        self._last_bound = None
        self._fast = _FastRows(self.heading, self.payload, self.rowtime)

    # ------------------------------------------------------------------ producers
    def attach(self, name: str | None = None) -> Producer:
        state = _ProducerState(name or f"producer{len(self._producers) + 1}")
        self._producers.append(state)
        return Producer(self, state)

    def subscribe(self, callback) -> None:
        self._subscribers.append(callback)

    def listen(self, callback) -> None:
        """``callback(bodies, bound)`` once per batch of rows leaving the stream (body tuples in
        heading order, possibly none) with the stream's bound after them (None if unchanged)."""
        self._listeners.append(callback)

    def _insert(self, state, items):
        if not state.attached:
            raise StreamError(f"stream '{self.name}': producer {state.name} has detached",
                              stream=self.name, producer=state.name)
        floor = self._floor(state)
        bodies = []
        for row, rowtime in items:  # check everything before changing anything
            body = self._fast.body(row, rowtime)
            if body is None:
                values = dict(row)
                values[self.rowtime] = rowtime
                values[self.arrival] = 0
                body = check_row(self.heading, values, operator="STREAM")
            if floor is not None and rowtime < floor:
                raise LateRowError(stream=self.name, row=dict(row), bound=floor)
            floor = rowtime
            bodies.append((rowtime, body))
        if not bodies:
            return
        state.queue.extend(bodies)
        if state.bound is None or floor > state.bound:
            state.bound = floor
        self._pump()

    def _floor(self, state):
        """The earliest rowtime ``state`` may still insert."""
        clock, own = self.clock, state.bound
        if clock is None or (own is not None and own > clock):
            return own
        return clock

    def _bound(self, state, rowtime):
        if not state.attached:
            raise StreamError(f"stream '{self.name}': producer {state.name} has detached",
                              stream=self.name, producer=state.name)
        if state.bound is not None and rowtime < state.bound:
            raise StreamError(f"stream '{self.name}': producer {state.name} cannot move its "
                              f"bound back from {state.bound} to {rowtime}", stream=self.name,
                              producer=state.name)
        if self.clock is not None and rowtime < self.clock:
            raise LateRowError(f"stream '{self.name}': bound {rowtime} is before the stream's "
                               f"clock {self.clock}", stream=self.name, row=None,
                               bound=self.clock)
        state.bound = rowtime
        self._pump()

    def _detach(self, state):
        if not state.attached:
            raise StreamError(f"stream '{self.name}': producer {state.name} has already "
                              f"detached", stream=self.name, producer=state.name)
        state.attached = False
        self._pump()

    # ------------------------------------------------------------------ merging
    def _effective_bound(self, state):
        """The earliest rowtime this attached producer can still deliver."""
        if state.queue:
            return state.queue[0][0]
        b = self._floor(state)
        return b

    def _pump(self):
        out = []
        if len(self._producers) == 1:  # one producer: its rows never wait for another's
            queue = self._producers[0].queue
            out.extend(queue)
            queue.clear()
        else:
            self._merge_producers(out)
        if not all(s.attached or s.queue for s in self._producers):
            self._producers = [s for s in self._producers if s.attached or s.queue]
        bodies = []
        if out:
            i = self._fast.arrival_index
            seq = self.seq
            for _, body in out:
                seq += 1
                bodies.append(body[:i] + (seq,) + body[i + 1:])
            self.seq = seq
            self.clock = out[-1][0]
        bound = self.bound
        if bound is not None and (self._last_bound is None or bound > self._last_bound):
            self._last_bound = bound
        else:
            bound = None
        if bodies or bound is not None:
            self._emit(bodies, bound)

    def _merge_producers(self, out):
        """Move rows that may leave (every other producer is as late) to ``out``, in order."""
        while True:
            live = [s for s in self._producers if s.attached or s.queue]
            ready = [s for s in live if s.queue]
            if not ready:
                return
            first = min(ready, key=lambda s: s.queue[0][0])
            t = first.queue[0][0]
            for other in live:
                if other is first or not other.attached or other.queue:
                    continue
                b = self._effective_bound(other)
                if b is None or b < t:
                    return
            out.append(first.queue.popleft())
            self.clock = t

    @property
    def bound(self):
        """The stream's output bound: no later row will have an earlier rowtime."""
        attached = [s for s in self._producers if s.attached or s.queue]
        if not attached:
            return self.clock
        bounds = [self._effective_bound(s) for s in attached]
        if any(b is None for b in bounds):
            return self.clock
        return min(bounds)

    def _emit(self, bodies, bound):
        for callback in list(self._listeners):
            callback(bodies, bound)
        if not self._subscribers:
            return
        names = self.heading.names
        items = [(dict(zip(names, body)), None) for body in bodies]
        if bound is not None:
            items.append((None, bound))
        for callback in list(self._subscribers):
            for row, b in items:
                try:
                    callback(row, b)
                except Exception:  # a subscriber that raises must not corrupt the stream
                    LOG.exception(
                        "subscriber of stream %s raised", self.name)


class _FastRows:
    """The common case of a row check, cheaply: a dict with exactly the payload's (lowercase)
    names and values of plain types (INT, LONG, STRING, BOOLEAN). Anything else returns
    None and goes through :func:`check_row`, which also words the errors."""

    def __init__(self, heading, payload, rowtime):
        self.arrival_index = None
        self.degree = payload.degree
        self.plan = []  # per heading position: (payload name or None for rowtime/arrival, test)
        for i, (name, t) in enumerate(heading.attributes):
            if name == rowtime:
                self.plan.append((None, _TESTS[LONG]))
            elif name in payload:
                self.plan.append((name, _TESTS.get(t)))
            else:
                self.arrival_index = i
                self.plan.append((None, None))
        self.simple = all(test is not None for name, test in self.plan if name is not None)

    def body(self, row, rowtime):
        if not self.simple or type(row) is not dict or len(row) != self.degree:
            return None
        out = []
        for name, test in self.plan:
            if name is None:
                v = rowtime if test is not None else 0
            else:
                v = row.get(name, _MISSING)
            if test is not None and not test(v):
                return None
            out.append(v)
        return tuple(out)


_MISSING = object()


def _int_test(bits):
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return lambda v: type(v) is int and lo <= v <= hi


_TESTS = {INT: _int_test(32), LONG: _int_test(64), STRING: lambda v: type(v) is str,
          BOOLEAN: lambda v: type(v) is bool}
