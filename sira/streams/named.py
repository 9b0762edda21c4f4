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

from collections import deque

import attrs

from ..errors import SiraError
from ..types import LONG
from ..values import Heading, check_row, normalize_name


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
        self._stream._insert(self._state, row, rowtime)

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
        self._subscribers: list = []
        self._last_bound = None

    # ------------------------------------------------------------------ producers
    def attach(self, name: str | None = None) -> Producer:
        state = _ProducerState(name or f"producer{len(self._producers) + 1}")
        self._producers.append(state)
        return Producer(self, state)

    def subscribe(self, callback) -> None:
        self._subscribers.append(callback)

    def _insert(self, state, row, rowtime):
        if not state.attached:
            raise StreamError(f"stream '{self.name}': producer {state.name} has detached",
                              stream=self.name, producer=state.name)
        values = dict(row)
        values[self.rowtime] = rowtime
        values[self.arrival] = 0
        body = check_row(self.heading, values, operator="STREAM")
        floor = self._floor(state)
        if floor is not None and rowtime < floor:
            raise LateRowError(stream=self.name, row=dict(row), bound=floor)
        state.queue.append((rowtime, body))
        state.bound = rowtime if state.bound is None or rowtime > state.bound else state.bound
        self._pump()

    def _floor(self, state):
        """The earliest rowtime ``state`` may still insert."""
        candidates = [b for b in (self.clock, state.bound) if b is not None]
        return max(candidates) if candidates else None

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
        while True:
            live = [s for s in self._producers if s.attached or s.queue]
            ready = [s for s in live if s.queue]
            if not ready:
                break
            first = min(ready, key=lambda s: s.queue[0][0])
            t = first.queue[0][0]
            blocked = False
            for other in live:
                if other is first or not other.attached or other.queue:
                    continue
                b = self._effective_bound(other)
                if b is None or b < t:
                    blocked = True
                    break
            if blocked:
                break
            _, body = first.queue.popleft()
            self.seq += 1
            values = dict(zip(self.heading.names, body))
            values[self.arrival] = self.seq
            self.clock = t
            self._emit(values, None)
        self._producers = [s for s in self._producers if s.attached or s.queue]
        bound = self.bound
        if bound is not None and (self._last_bound is None or bound > self._last_bound):
            self._last_bound = bound
            self._emit(None, bound)

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

    def _emit(self, row, bound):
        for callback in list(self._subscribers):
            try:
                callback(row, bound)
            except Exception:  # a subscriber that raises must not corrupt the stream
                import logging
                logging.getLogger("sira.streams").exception(
                    "subscriber of stream %s raised", self.name)
