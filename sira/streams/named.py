"""Named streams with producers and rowtime bounds (seed 002, SQLstream "Semantics of Rowtime
Bounds", "Named Streams and Rowtime Bounds").

Producers attach to a stream, insert rows with a rowtime, assert bounds (non-strict; a strict
bound at t is a non-strict one at t + 1) and detach. Rows leave the stream in rowtime order: a
row leaves only when every attached producer has a row or a bound at least that late, so the
stream runs at the speed of its slowest producer, and a newcomer may barge in ahead.

The stream's rowtime bound is the later of its latest row and any bound it has already passed
on to its consumers; it never goes back, and the stream remembers it after every producer has
left. A row earlier than that bound, or than its own producer's bound, is late: it raises
:class:`LateRowError` and changes nothing (the stream, its producers and every query stay
exactly as they were). Rowtimes and bounds are LONG values, checked before anything changes.

    >>> from sira import STRING
    >>> orders = NamedStream("orders", {"ticker": STRING})
    >>> out = []
    >>> orders.subscribe(lambda row, bound: out.append((row, bound)))
    >>> p1 = orders.attach("P1")
    >>> p1.insert({"ticker": "ORCL"}, 600)
    >>> out
    [({'seq': 1, 'ticker': 'ORCL', 'ts': 600}, None), (None, 600)]
    >>> p1.bound(700)
    >>> p2 = orders.attach("P2")
    >>> try:
    ...     p2.insert({"ticker": "IBM"}, 650)  # a newcomer, before the bound passed on
    ... except LateRowError as err:
    ...     print(err.bound, orders.seq)
    700 1

**Positions and replays (exactly-once).** A producer numbers the rows it accepts 1, 2, 3...;
its :attr:`Producer.position` says how many it has accepted, the last rowtime, its bound and
whether it is attached, and checkpoints carry it. A source that replays its input after a
restore passes each row's sequence number (``insert(row, t, seq=n)``, or ``seq`` of a train's
first row to ``insert_many``): **a row whose number is at or below the producer's position is
recognised as already accepted and skipped** (the position does not move); the next number is
accepted; a number beyond the next is refused with :class:`StreamError` (rows would be lost).
Rows inserted without a number simply take the next one. A producer is known by its name:
attaching again under a name that has detached continues its numbering.

**Threads.** Every method of a stream and of its producers takes the stream's lock (streams of
one :class:`~sira.streams.StreamEngine` share the engine's), so producers may insert, bound and
detach from several threads at once; the queries and subscribers they drive run on one thread
at a time.

**Subscribers.** A subscriber that raises is detached: it is called no more, its exception is
kept in :attr:`NamedStream.subscriber_errors` (with the callback) and logged; the stream, the
other subscribers and the queries go on.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Mapping
from operator import itemgetter

import attrs

from ..collector import collector_paused
from ..errors import SiraError, SiraTypeError
from ..types import BOOLEAN, INT, LONG, STRING
from ..values import (Heading, check_row, normalize_name, positional_reorder, reorder_row,
                      written_order)

LOG = logging.getLogger("sira.streams")  # failing subscribers and queries


class LateRowError(SiraError):
    """A row (or bound) earlier than the stream already promised; nothing was changed."""

    fields = ("stream", "row", "bound")

    def default_message(self):
        return (f"stream '{self.stream}': row {self.row} is late: its rowtime is before the "
                f"bound {self.bound}")


class StreamError(SiraError):
    """Misuse of a stream or producer (a detached producer, a bound going backwards, a gap in
    replayed sequence numbers...)."""

    fields = ("stream", "producer")


@attrs.frozen
class ProducerPosition:
    """Where a producer stands: ``seq`` rows accepted (the number of the last one; 0 before the
    first), the ``rowtime`` of the last one, its ``bound`` (no later row may be earlier), and
    whether it is still ``attached``.

        >>> from sira import INT
        >>> s = NamedStream("s", {"v": INT})
        >>> p = s.attach("P")
        >>> p.insert_many([({"v": 1}, 5), ({"v": 2}, 7)])
        >>> p.position
        ProducerPosition(seq=2, rowtime=7, bound=7, attached=True)
    """

    seq: int
    rowtime: int | None
    bound: int | None
    attached: bool


@attrs.define(eq=False)
class _ProducerState:
    name: str
    queue: deque = attrs.field(factory=deque)  # (rowtime, body tuple) not yet out
    bound: int | None = None  # rows from this producer will have rowtime >= bound
    attached: bool = True
    seq: int = 0  # rows accepted so far (the number of the last one)
    last: int | None = None  # rowtime of the last row accepted

    def position(self) -> ProducerPosition:
        return ProducerPosition(self.seq, self.last, self.bound, self.attached)


class Producer:
    """A handle for one data source inserting into a named stream (see the module docstring for
    positions, replays and threads)."""

    def __init__(self, stream: "NamedStream", state: _ProducerState):
        self._stream = stream
        self._state = state

    @property
    def name(self) -> str:
        return self._state.name

    @property
    def position(self) -> ProducerPosition:
        """How far this producer has got (:class:`ProducerPosition`)."""
        with self._stream.lock:
            return self._state.position()

    def insert(self, row, rowtime: int, seq: int | None = None) -> None:
        """Insert a row (a mapping by attribute name, or the payload's values in the order the
        heading was written) with its rowtime.

        Args:
            seq: the row's sequence number, when replaying: at or below this producer's
                position the row is skipped (it was accepted before).
        Raises:
            LateRowError: the rowtime is before the stream's bound or this producer's bound.
            StreamError: the producer has detached, the stream has ended
                (:meth:`StreamEngine.finish`), or ``seq`` is beyond the next number.
            SiraTypeError / UnknownAttribute: the row or the rowtime does not match the
                stream's heading (the rowtime must be a LONG).
        """
        if seq is not None:
            self._stream._insert(self._state, [(row, rowtime)], seq)
            return
        # NamedStream._insert of one row, inline (the most frequent call of all): the same
        # checks in the same order, and for a lone producer NamedStream._accept inline
        stream, state = self._stream, self._state
        lock = stream.lock
        lock.acquire()
        try:
            if stream.ended:
                stream._require_open()
            if not state.attached:
                stream._require_attached(state)
            producers = stream._producers
            direct = len(producers) == 1 and producers[0] is state and not state.queue
            seq = stream.seq + 1 if direct else 0
            fast = stream._fast_body
            body = None if fast is None else fast(row, rowtime, seq)
            if body is None:
                body = stream._checked_body(row, rowtime, seq)
                rowtime = body[stream.rowtime_index]
            passed, own = stream._passed, state.bound
            if (passed is not None and rowtime < passed) or (own is not None and rowtime < own):
                raise LateRowError(stream=stream.name, row=stream._payload_dict(row),
                                   bound=stream._floor(state))
            if not direct:
                stream._accept(state, [body], False)
                return
            state.seq += 1
            state.last = rowtime
            if own is None or rowtime > own:
                state.bound = own = rowtime
            stream.seq = seq
            stream.clock = rowtime
            if passed is None or own > passed:
                stream._passed = own
            else:
                own = None
            bodies = [body]
            for callback in stream._listeners:
                callback(bodies, own)
            if stream._subscribers:
                stream._notify(bodies, own)
        finally:
            lock.release()

    def insert_many(self, items, seq: int | None = None) -> None:
        """Insert a train of ``(row, rowtime)`` pairs, in rowtime order, all or nothing.

        A train costs one pass through the queries instead of one per row. Every row is checked
        before any is inserted: if one is late, out of order or does not match the heading, the
        error names it and the stream is unchanged. With ``seq`` (the first row's sequence
        number; the others follow), rows already accepted are skipped.

            >>> from sira import INT
            >>> s = NamedStream("s", {"v": INT})
            >>> got = []
            >>> s.subscribe(lambda row, bound: got.append(row["v"] if row else bound))
            >>> p = s.attach()
            >>> p.insert_many([({"v": 1}, 5), ({"v": 2}, 7)])
            >>> got
            [1, 2, 7]
            >>> p.insert_many([({"v": 2}, 7), ({"v": 3}, 8)], seq=2)  # a replay from row 2
            >>> got
            [1, 2, 7, 3, 8]
        """
        self._stream._insert(self._state, items, seq)

    def bound(self, rowtime: int, strict: bool = False) -> None:
        """Promise that this producer's future rows have rowtime >= ``rowtime`` (> when strict).

        Raises:
            SiraTypeError: ``rowtime`` is not a LONG (NaN, a string...); nothing changes.
            StreamError: the producer has detached, or the bound goes back.
            LateRowError: the bound is before the stream's bound.
        """
        self._stream._bound(self._state, rowtime, strict)

    def detach(self) -> None:
        """Leave the stream; rows already inserted still leave it in order."""
        self._stream._detach(self._state)

    def __repr__(self):
        return f"<Producer {self.name!r} of stream {self._stream.name!r}>"


class NamedStream:
    """A stream with a payload heading; its rows get ``ts`` (rowtime) and ``seq`` (arrival).

    Subscribers are called with ``(row_dict, None)`` for each row that leaves the stream and
    ``(None, bound)`` when the stream's bound advances.

    Args:
        lock: the lock serialising this stream's producers and consumers (a StreamEngine
            passes its own, shared by all its streams); a new one by default.
    """

    def __init__(self, name: str, payload, rowtime: str = "ts", arrival: str = "seq",
                 lock=None):
        self.name = normalize_name(name)
        self.payload = Heading.of(payload)
        self.payload_order = written_order(payload) or self.payload.names  # positional rows
        self._order = positional_reorder(self.payload, self.payload_order)
        self.rowtime = normalize_name(rowtime)
        self.arrival = normalize_name(arrival)
        self.heading = self.payload.extend([(self.rowtime, LONG), (self.arrival, LONG)],
                                           "STREAM")
        self.lock = lock if lock is not None else threading.RLock()
        self._producers: list = []  # producers still attached or with rows waiting
        self._states: dict = {}  # name -> _ProducerState, every producer ever attached
        self.clock: int | None = None  # rowtime of the latest row out
        self.seq = 0
        self._subscribers: list = []  # public: (row dict, bound) per row and per bound
        self.subscriber_errors: list = []  # (callback, exception) of subscribers that raised
        self._listeners: tuple = ()  # internal: (list of body tuples, bound) per pump
        self._passed = None  # the latest bound passed on to consumers
        self.ended = False  # StreamEngine.finish() declared the input complete
        self.rowtime_index = self.heading.index(self.rowtime)  # positions in body tuples
        self.arrival_index = self.heading.index(self.arrival)
        self._fast_body = fast_body_function(self.heading, self.payload, self.rowtime,
                                             self.arrival)

    # ------------------------------------------------------------------ producers
    def attach(self, name: str | None = None) -> Producer:
        """A producer for this stream; a name that has detached before continues its
        numbering (see positions in the module docstring).

        Raises:
            StreamError: a producer of that name is attached.
        """
        with self.lock:
            self._require_open()
            if name is None:
                name = self._fresh_name()
            elif not isinstance(name, str) or not name:
                raise SiraTypeError(f"stream '{self.name}': a producer name must be a "
                                    f"non-empty string (got {name!r})", expected="a name",
                                    got=repr(name))
            state = self._states.get(name)
            if state is None:
                state = self._states[name] = _ProducerState(name)
            elif state.attached:
                raise StreamError(f"stream '{self.name}': producer {name} is already attached "
                                  f"(stream.producer({name!r}) gives its handle)",
                                  stream=self.name, producer=name)
            else:
                state.attached, state.bound = True, None
            if state not in self._producers:
                self._producers.append(state)
            return Producer(self, state)

    def _fresh_name(self) -> str:
        n = len(self._states) + 1
        while f"producer{n}" in self._states:
            n += 1
        return f"producer{n}"

    def producer(self, name: str) -> Producer:
        """The handle of the attached producer ``name`` (after a restore, for instance).

        Raises:
            StreamError: no producer of that name is attached.
        """
        with self.lock:
            state = self._states.get(name)
            if state is None or not state.attached:
                attached = ", ".join(s.name for s in self._states.values() if s.attached)
                why = "has detached" if state is not None else "is not known"
                raise StreamError(f"stream '{self.name}': producer {name} {why} (attached: "
                                  f"{attached or 'none'})", stream=self.name, producer=name)
            return Producer(self, state)

    def position(self) -> dict:
        """Each producer's :class:`ProducerPosition` (attached or not), by name."""
        with self.lock:
            return {name: state.position() for name, state in self._states.items()}

    def subscribe(self, callback) -> None:
        """``callback(row_dict, None)`` per row out and ``callback(None, bound)`` per bound; one
        that raises is detached and its error kept in ``subscriber_errors``."""
        with self.lock:
            self._subscribers.append(callback)

    def listen(self, callback) -> None:
        """``callback(bodies, bound)`` once per batch of rows leaving the stream (body tuples in
        heading order, possibly none) with the stream's bound after them (None if unchanged)."""
        with self.lock:
            self._listeners = self._listeners + (callback,)

    @property
    def passed_bound(self):
        """The latest bound passed on to consumers: no row earlier than it may come any more."""
        return self._passed

    def _insert(self, state, items, seq):
        with self.lock, collector_paused():
            self._require_open()
            if not state.attached:
                self._require_attached(state)
            if seq is not None:
                items = list(items)
                items = items[self._replayed(state, len(items), seq):]
            direct = self._alone(state)
            bodies = self._checked_train(state, items, self.seq if direct else None)
            if bodies:
                self._accept(state, bodies, direct)
            return len(bodies)

    def _alone(self, state) -> bool:
        """Whether rows ``state`` accepts leave the stream at once: it is the only producer
        left and has no row waiting (so they may be numbered as they are checked)."""
        producers = self._producers
        return len(producers) == 1 and producers[0] is state and not state.queue

    def _accept(self, state, bodies, direct):
        """Record checked rows as accepted by ``state`` and let out whatever may leave.

        ``direct`` (see :meth:`_alone`): the rows are numbered already and leave now, the
        stream's bound becoming the later of the bound it passed on and the producer's (what
        :meth:`_pump` computes for a lone producer); otherwise they queue and wait for the
        other producers.
        """
        at = self.rowtime_index
        last = bodies[-1][at]
        state.seq += len(bodies)
        state.last = last
        if state.bound is None or last > state.bound:
            state.bound = last
        if not direct:
            state.queue.extend([(body[at], body) for body in bodies])
            self._pump()
            return
        self.seq += len(bodies)
        self.clock = last
        bound = state.bound
        if self._passed is None or bound > self._passed:
            self._passed = bound
        else:
            bound = None
        self._emit(bodies, bound)

    def end(self) -> None:
        """Declare the input complete (:meth:`StreamEngine.finish`): from now on a row, a bound
        or a new producer is refused, never passed on to queries whose results are final."""
        with self.lock:
            self.ended = True

    def _require_open(self):
        if self.ended:
            raise StreamError(f"stream '{self.name}' has ended (StreamEngine.finish() declared "
                              f"its input complete): no row, bound or producer may come any "
                              f"more", stream=self.name)

    def _require_attached(self, state):
        if not state.attached:
            raise StreamError(f"stream '{self.name}': producer {state.name} has detached",
                              stream=self.name, producer=state.name)

    def _replayed(self, state, n, seq) -> int:
        """How many of ``n`` rows numbered from ``seq`` were accepted before (the replay rule)."""
        if seq is None:
            return 0
        if type(seq) is not int or seq < 1:
            raise SiraTypeError(f"stream '{self.name}': a sequence number is an integer from 1 "
                                f"(got {seq!r})", expected="a positive integer", got=repr(seq))
        if seq > state.seq + 1:
            raise StreamError(f"stream '{self.name}': producer {state.name} has accepted "
                              f"{state.seq} rows; row {seq} would leave rows {state.seq + 1} to "
                              f"{seq - 1} out", stream=self.name, producer=state.name)
        return min(n, state.seq + 1 - seq)

    def _checked_train(self, state, items, seq) -> list:
        """The body tuples of a train, every row checked (heading, types, lateness, order)
        before anything changes. ``seq``: the arrival number before the first row's (the rows
        are numbered on), or None to number them 0 (:meth:`_pump` numbers them as they
        leave)."""
        floor = self._floor(state)
        fast = self._fast_body
        at = self.rowtime_index
        bodies = []
        n = 0 if seq is None else seq
        step = 0 if seq is None else 1
        for row, rowtime in items:
            n += step
            body = None if fast is None else fast(row, rowtime, n)
            if body is None:
                body = self._checked_body(row, rowtime, n)
                rowtime = body[at]
            if floor is not None and rowtime < floor:
                raise LateRowError(stream=self.name, row=self._payload_dict(row), bound=floor)
            floor = rowtime
            bodies.append(body)
        return bodies

    def _checked_body(self, row, rowtime, seq=0) -> tuple:
        values = self._payload_dict(row)
        values[self.rowtime] = rowtime
        values[self.arrival] = seq
        return check_row(self.heading, values, operator=f"STREAM {self.name}")

    def _payload_dict(self, row) -> dict:
        """A row given by name or by position (in the order the payload was written) as a dict
        by name."""
        if isinstance(row, Mapping):
            return dict(row)
        if self._order is not None:
            row = reorder_row(row, self._order, self.payload)
        values = check_row(self.payload, row, operator=f"STREAM {self.name}")
        return dict(zip(self.payload.names, values))

    def _floor(self, state):
        """The earliest rowtime ``state`` may still insert: the later of the bound the stream
        has passed on (which is at least its latest row) and the producer's own bound."""
        passed, own = self._passed, state.bound
        if passed is None or (own is not None and own > passed):
            return own
        return passed

    def _bound(self, state, rowtime, strict):
        with self.lock:
            self._require_open()
            rowtime = self._checked_time(rowtime, "a bound")
            if strict:
                rowtime = LONG.check(rowtime + 1, operator=f"STREAM {self.name}")
            self._require_attached(state)
            if state.bound is not None and rowtime < state.bound:
                raise StreamError(f"stream '{self.name}': producer {state.name} cannot move "
                                  f"its bound back from {state.bound} to {rowtime}",
                                  stream=self.name, producer=state.name)
            if self._passed is not None and rowtime < self._passed:
                raise LateRowError(f"stream '{self.name}': bound {rowtime} is before the "
                                   f"stream's bound {self._passed}", stream=self.name, row=None,
                                   bound=self._passed)
            state.bound = rowtime
            self._pump()

    def _checked_time(self, value, what):
        if type(value) is not int:
            got = repr(value)
            raise SiraTypeError(f"stream '{self.name}': {what} must be a LONG rowtime (got "
                                f"{got}, a {type(value).__name__})", operator=f"STREAM "
                                f"{self.name}", expected="LONG", got=got)
        return LONG.check(value, operator=f"STREAM {self.name}")

    def _detach(self, state):
        with self.lock:
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
        return self._floor(state)

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
            i = self.arrival_index
            seq = self.seq
            for _, body in out:
                seq += 1
                bodies.append(body[:i] + (seq,) + body[i + 1:])
            self.seq = seq
            self.clock = out[-1][0]
        bound = self.bound
        if bound is not None and (self._passed is None or bound > self._passed):
            self._passed = bound
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
        """The stream's output bound: no later row will have an earlier rowtime. It is never
        before the latest row out, even when that row's producer has left since."""
        passed, clock = self._passed, self.clock
        floor = clock if passed is None or (clock is not None and clock > passed) else passed
        attached = [s for s in self._producers if s.attached or s.queue]
        if not attached:
            return floor
        bounds = [self._effective_bound(s) for s in attached]
        if any(b is None for b in bounds):
            return floor
        least = min(bounds)
        return least if floor is None or least > floor else floor

    def _emit(self, bodies, bound):
        for callback in self._listeners:
            callback(bodies, bound)
        if self._subscribers:
            self._notify(bodies, bound)

    def _notify(self, bodies, bound):
        """Call the subscribers with each row as a dict, then the bound."""
        names = self.heading.names
        items = [(dict(zip(names, body)), None) for body in bodies]
        if bound is not None:
            items.append((None, bound))
        for callback in list(self._subscribers):
            try:
                for row, b in items:
                    callback(row, b)
            except Exception as err:  # a subscriber that raises must not corrupt the stream
                detach_failed_subscriber(self._subscribers, self.subscriber_errors, callback,
                                         err, f"stream {self.name}")


def detach_failed_subscriber(subscribers: list, errors: list, callback, err, where) -> None:
    """The subscriber policy: one that raised is called no more; its error is kept and logged."""
    if callback in subscribers:
        subscribers.remove(callback)
    errors.append((callback, err))
    LOG.error("subscriber of %s raised and was detached: %r", where, err)


def fast_body_function(heading, payload, rowtime, arrival):
    """The common case of a row check, cheaply: ``body(row, rowtime, seq)`` gives the body
    tuple (in ``heading`` order, with the rowtime and arrival number) of a dict with exactly
    the payload's lowercase names whose values are plain INT, LONG, STRING or BOOLEAN values,
    and a LONG rowtime; None for anything else, which then goes through :func:`check_row`
    (that also words the errors). None when the payload has another type.

        >>> from sira import INT, STRING
        >>> h = Heading.of({"k": INT, "name": STRING, "seq": LONG, "ts": LONG})
        >>> body = fast_body_function(h, Heading.of({"k": INT, "name": STRING}), "ts", "seq")
        >>> body({"k": 1, "name": "x"}, 5, 7), body({"k": 2 ** 31, "name": "x"}, 5, 7)
        ((1, 'x', 7, 5), None)
    """
    names = [n for n in heading.names if n in payload]
    types = [payload.type_of(n) for n in names]
    if any(t not in _PYTHON_TYPES for t in types):
        return None
    classes = tuple(_PYTHON_TYPES[t] for t in types)
    degree = len(names)
    if degree == 0:
        def get(row):
            return ()
    elif degree == 1:
        name = names[0]

        def get(row):
            return (row[name],)
    else:
        get = itemgetter(*names)
    in_range = _ranges_test([i for i, t in enumerate(types) if t == INT], _INT_RANGES[32],
                            [i for i, t in enumerate(types) if t == LONG], degree)
    where = {n: i for i, n in enumerate(names + [arrival, rowtime])}
    pick = itemgetter(*[where[n] for n in heading.names])
    low, high = _INT_RANGES[64]
    if 1 <= degree <= 2 and all(t in (INT, LONG) for t in types):
        return _integer_body(names, [_INT_RANGES[t.bits] for t in types], pick)

    def body(row, rowtime, seq):
        if type(row) is not dict or len(row) != degree:
            return None
        try:
            values = get(row)
        except KeyError:
            return None
        if tuple(map(type, values)) != classes or type(rowtime) is not int or \
                not low <= rowtime <= high or (in_range is not None and not in_range(values)):
            return None
        return pick(values + (seq, rowtime))
    return body


def _integer_body(names, ranges, pick):
    """:func:`fast_body_function` for a payload of one or two INT/LONG attributes (the common
    case, tested value by value without a loop)."""
    low, high = _INT_RANGES[64]
    if len(names) == 1:
        (name,), ((lo, hi),) = names, ranges

        def body1(row, rowtime, seq):
            if type(row) is not dict or len(row) != 1:
                return None
            a = row.get(name, _MISSING)
            if type(a) is int and lo <= a <= hi and type(rowtime) is int and \
                    low <= rowtime <= high:
                return pick((a, seq, rowtime))
            return None
        return body1
    (name_a, name_b), ((lo_a, hi_a), (lo_b, hi_b)) = names, ranges

    def body2(row, rowtime, seq):
        if type(row) is not dict or len(row) != 2:
            return None
        a = row.get(name_a, _MISSING)
        b = row.get(name_b, _MISSING)
        if type(a) is int and type(b) is int and lo_a <= a <= hi_a and lo_b <= b <= hi_b and \
                type(rowtime) is int and low <= rowtime <= high:
            return pick((a, b, seq, rowtime))
        return None
    return body2


_MISSING = object()


def _ranges_test(ints, int_range, longs, degree):
    """A test that the values at positions ``ints`` are INTs and at ``longs`` LONGs (their
    Python type is checked already), or None when there are none."""
    tests = [_range_test(ints, *int_range, degree), _range_test(longs, *_INT_RANGES[64], degree)]
    tests = [t for t in tests if t is not None]
    if not tests:
        return None
    if len(tests) == 1:
        return tests[0]
    first, second = tests
    return lambda values: first(values) and second(values)


def _range_test(positions, low, high, degree):
    if not positions:
        return None
    if len(positions) == degree:
        return lambda values: low <= min(values) and max(values) <= high
    if len(positions) == 1:
        (i,) = positions
        return lambda values: low <= values[i] <= high
    pick = itemgetter(*positions)

    def test(values):
        picked = pick(values)
        return low <= min(picked) and max(picked) <= high
    return test


_INT_RANGES = {bits: (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) for bits in (32, 64)}
_PYTHON_TYPES = {INT: int, LONG: int, STRING: str, BOOLEAN: bool}
