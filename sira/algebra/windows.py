"""Stream windows as relational algebra (seed 000, Oracle CQL "Stream-to-Relation" and
"Relation-to-Stream" operators).

A stream is a relation with a timestamp attribute (an integer time in a declared unit, or a
TIMESTAMP) and, where equal elements may arrive at the same time, an arrival attribute. A CQL
window maps it to a *temporal relation*: every element with the interval ``during`` in which it
belongs to the window relation::

    window(S, ts, now)                       [t, t+1)
    window(S, ts, range(T))                  [t, t+T)
    window(S, ts, range(unbounded))          [t, infinity)
    window(S, ts, range(T) slide(L))         [ceil(t/L)*L, ceil((t+T)/L)*L)
    window(S, ts, range(C) on(E))            until a later element's E reaches E+C
    window(S, ts, rows(N))                   until the N-th later element arrives
    window(S, ts, rows(N) slide(M))          batches of M positions (any N and M: with
                                             N < M only each batch's last N show)
    window(S, ts, partition(A, B) rows(N) [range(T) [slide(L)]])

Durations are integers in the stream's unit, or carry a unit (``range(10 second)``) when the
spec declares the stream's unit (``unit(millisecond)``) or ts is a TIMESTAMP. Ties in rows
windows are broken by ``arrival(attr)`` when given, else by the tuples' canonical order.

``istream(W, at)``, ``dstream(W, at)`` and ``rstream(W, at, TICKS)`` turn a temporal relation
back into a stream (a relation with the instant ``at``).

    >>> from sira import parse
    >>> parse("window(relation(heading(ts(long) v(int)) body()), ts, range(10))").heading
    Heading({during: LONGINTERVAL, ts: LONG, v: INT})
"""

from __future__ import annotations

import attrs

from ..errors import DuplicateAttribute, SiraTypeError, SiraValueError
from ..intervals import INTERVAL_TYPES, IntervalType
from ..types import TIMESTAMP, IntegerType
from ..values import normalize_name
from .basic import _lower_names
from .node import Node, node_class

#: time units in microseconds (TIMESTAMP's granularity) and their names
UNITS = {"nanosecond": None, "microsecond": 1, "millisecond": 1000, "second": 1_000_000,
         "minute": 60_000_000, "hour": 3_600_000_000, "day": 86_400_000_000}
_PLURALS = {u + "s": u for u in UNITS}
_NANOS = {"nanosecond": 1, "microsecond": 1000, "millisecond": 1_000_000,
          "second": 1_000_000_000, "minute": 60_000_000_000, "hour": 3_600_000_000_000,
          "day": 86_400_000_000_000}


def unit_name(text: str) -> str:
    """The canonical unit name (``seconds`` -> ``second``); SiraValueError for an unknown one."""
    key = text.lower()
    key = _PLURALS.get(key, key)
    if key not in UNITS:
        raise SiraValueError(f"unknown time unit '{text}' (known: {', '.join(UNITS)})",
                             operator="WINDOW", value=text)
    return key


@attrs.frozen
class Duration:
    """An amount of time: ``amount`` of ``unit`` (None: the stream's own unit)."""

    amount: int
    unit: str | None = None

    def __str__(self):
        return f"{self.amount}" if self.unit is None else f"{self.amount} {self.unit}"

    def in_units(self, stream_unit: str | None, ts_type) -> int:
        """The duration in the units of the stream's timestamp attribute."""
        if self.unit is None:
            return self.amount
        if ts_type == TIMESTAMP:
            target = "microsecond"
        elif stream_unit is None:
            raise SiraValueError(f"WINDOW: the duration '{self}' has a unit, so the stream's time "
                                 f"unit must be declared with unit(...)", operator="WINDOW",
                                 value=str(self))
        else:
            target = stream_unit
        nanos = self.amount * _NANOS[self.unit]
        if nanos % _NANOS[target]:
            raise SiraValueError(f"WINDOW: {self} is not a whole number of {target}s",
                                 operator="WINDOW", value=str(self))
        return nanos // _NANOS[target]


@attrs.frozen
class WindowSpec:
    """The parameters of a CQL window (see the module docstring for the combinations)."""

    kind: str  # now | range | rows | range_on
    range: Duration | None = None  # None with kind 'range': unbounded
    slide: Duration | None = None  # time slide (range windows, partitioned rows windows)
    rows: int | None = None
    slide_rows: int | None = None
    on: str | None = attrs.field(default=None, converter=lambda v: v and normalize_name(v))
    on_amount: object = None  # C of range C on E: a number, or a Duration for TIMESTAMP E
    partition: tuple = attrs.field(default=(), converter=_lower_names)
    arrival: str | None = attrs.field(default=None, converter=lambda v: v and normalize_name(v))
    unit: str | None = None

    def text(self) -> str:
        parts = []
        if self.unit:
            parts.append(f"unit({self.unit})")
        if self.partition:
            parts.append(f"partition({','.join(self.partition)})")
        if self.kind == "now":
            parts.append("now")
        if self.rows is not None:
            parts.append(f"rows({self.rows})")
            if self.slide_rows is not None:
                parts.append(f"slide({self.slide_rows})")
        if self.kind == "range_on":
            parts.append(f"range({self.on_amount}) on({self.on})")
        elif self.kind in ("range", "rows") and (self.range is not None or self.kind == "range"):
            parts.append(f"range({'unbounded' if self.range is None else self.range})")
            if self.slide is not None:
                parts.append(f"slide({self.slide})")
        if self.arrival:
            parts.append(f"arrival({self.arrival})")
        return " ".join(parts)


def _positive(value, what):
    amount = value.amount if isinstance(value, Duration) else value
    if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
        raise SiraValueError(f"WINDOW: {what} must be a positive integer (got {value})",
                             operator="WINDOW", value=str(value))


def interval_type_for(t) -> IntervalType:
    """The interval type over a timestamp attribute's type."""
    for it in INTERVAL_TYPES.values():
        if it.point == t:
            return it
    raise SiraTypeError(f"no interval type over {t}", expected="INT, LONG or TIMESTAMP",
                        got=str(t))


def check_ts(heading, ts, operator):
    t = heading.type_of(ts, operator)
    if not (isinstance(t, IntegerType) and t.bits is not None) and t != TIMESTAMP:
        raise SiraTypeError(f"{operator}: the timestamp attribute '{ts}' must be INT, LONG or "
                            f"TIMESTAMP (it is {t})", operator=operator,
                            expected="INT, LONG or TIMESTAMP", got=str(t))
    return t


@node_class
class Window(Node):
    """A CQL stream-to-relation window (seed 000): ``window(S, ts, range(10) slide(5))``."""

    source: Node
    ts: str = attrs.field(converter=normalize_name)
    spec: WindowSpec
    during: str = attrs.field(default="during", converter=normalize_name)
    operator_name = "WINDOW"
    packs = False  # every element keeps its own interval

    def compute_heading(self):
        h = self.source.heading
        t = check_ts(h, self.ts, "WINDOW")
        s = self.spec
        if s.unit is not None:
            unit_name(s.unit)
        h.require(s.partition, "WINDOW")
        if s.arrival is not None:
            h.require([s.arrival], "WINDOW")
        if s.kind not in ("now", "range", "rows", "range_on"):
            raise SiraValueError(f"WINDOW: unknown window kind {s.kind}", operator="WINDOW",
                                 value=s.kind)
        if s.partition and s.rows is None:
            raise SiraValueError("WINDOW: a partitioned window needs rows(N)", operator="WINDOW",
                                 value=s.text())
        for value, what in ((s.range, "the range"), (s.slide, "the slide"),
                            (s.rows, "rows"), (s.slide_rows, "the slide")):
            if value is not None:
                _positive(value, what)
        if s.kind == "range_on":
            e = h.type_of(s.on, "WINDOW")
            if not (isinstance(e, IntegerType) or e == TIMESTAMP or e.name == "FLOAT"):
                raise SiraTypeError(f"WINDOW: range ... on({s.on}) needs a numeric or TIMESTAMP "
                                    f"attribute (it is {e})", operator="WINDOW",
                                    expected="a number or TIMESTAMP", got=str(e))
            if e == TIMESTAMP and not isinstance(s.on_amount, Duration):
                raise SiraTypeError(f"WINDOW: range(C) on({s.on}) over a TIMESTAMP needs a duration "
                                    f"with a unit, e.g. range(5 second)", operator="WINDOW",
                                    expected="a duration with a unit", got=str(s.on_amount))
            if isinstance(s.on_amount, Duration) and e != TIMESTAMP:
                raise SiraTypeError(f"WINDOW: a duration with a unit needs a TIMESTAMP attribute "
                                    f"for on({s.on})", operator="WINDOW",
                                    expected="TIMESTAMP", got=str(e))
            amount = s.on_amount.amount if isinstance(s.on_amount, Duration) else s.on_amount
            if isinstance(amount, bool) or not isinstance(amount, (int, float)) or amount <= 0:
                raise SiraValueError(f"WINDOW: the constant C of range(C) on({s.on}) must be "
                                     f"positive (got {s.on_amount})", operator="WINDOW",
                                     value=str(s.on_amount))
        for duration in (s.range, s.slide):  # a unit without the stream's unit: an error now
            if duration is not None:
                duration.in_units(s.unit, t)
        if s.range is not None and s.slide is not None:
            if self.range_units < self.slide_units:
                raise SiraValueError(f"WINDOW: the range ({s.range}) is shorter than the slide "
                                     f"({s.slide})", operator="WINDOW", value=s.text())
        if self.during in h:
            raise DuplicateAttribute(attribute=self.during, operator="WINDOW")
        return h.extend([(self.during, interval_type_for(t))], "WINDOW")

    @property
    def ts_type(self):
        return self.source.heading.type_of(self.ts)

    @property
    def range_units(self):
        r = self.spec.range
        return None if r is None else r.in_units(self.spec.unit, self.ts_type)

    @property
    def slide_units(self):
        s = self.spec.slide
        return None if s is None else s.in_units(self.spec.unit, self.ts_type)

    @property
    def children(self):
        return (self.source,)


class _ToStream(Node):
    """IStream/DStream: a temporal relation back to a stream of instants."""

    def compute_heading(self):
        h = self.source.heading
        if self.during not in h or not isinstance(h.type_of(self.during), IntervalType):
            raise SiraTypeError(f"{self.operator_name}: the relation needs an interval attribute "
                                f"'{self.during}'", operator=self.operator_name,
                                expected=f"an interval attribute {self.during}", got=str(h))
        point = h.type_of(self.during).point
        return h.without([self.during]).extend([(self.at, point)], self.operator_name)

    @property
    def children(self):
        return (self.source,)


@node_class
class IStream(_ToStream):
    """ISTREAM (seed 000): each tuple at the instants it enters the relation: ``istream(W, at)``.

    Computed on the packed relation, so a tuple leaving and an equal tuple entering at the same
    instant produce nothing, as CQL prescribes.
    """

    source: Node
    at: str = attrs.field(converter=normalize_name)
    during: str = attrs.field(default="during", converter=normalize_name)
    operator_name = "ISTREAM"


@node_class
class DStream(_ToStream):
    """DSTREAM (seed 000): each tuple at the instants it leaves the relation: ``dstream(W, at)``."""

    source: Node
    at: str = attrs.field(converter=normalize_name)
    during: str = attrs.field(default="during", converter=normalize_name)
    operator_name = "DSTREAM"


@node_class
class RStream(Node):
    """RSTREAM (seed 000): the whole relation at each instant of TICKS: ``rstream(W, at, TICKS)``.

    TICKS is a relation with the one attribute ``at``; RStream needs an explicit set of instants.
    """

    source: Node
    at: str = attrs.field(converter=normalize_name)
    ticks: Node
    during: str = attrs.field(default="during", converter=normalize_name)
    operator_name = "RSTREAM"

    def compute_heading(self):
        h = self.source.heading
        if self.during not in h or not isinstance(h.type_of(self.during), IntervalType):
            raise SiraTypeError(f"RSTREAM: the relation needs an interval attribute "
                                f"'{self.during}'", operator="RSTREAM",
                                expected=f"an interval attribute {self.during}", got=str(h))
        point = h.type_of(self.during).point
        th = self.ticks.heading
        if th.names != (self.at,) or not (th.type_of(self.at) == point or (
                isinstance(point, IntegerType) and isinstance(th.type_of(self.at), IntegerType))):
            raise SiraTypeError(f"RSTREAM: the ticks must be a relation with one attribute "
                                f"'{self.at}' of type {point} (got {th})", operator="RSTREAM",
                                expected=f"{{{self.at}: {point}}}", got=str(th))
        return h.without([self.during]).extend([(self.at, point)], "RSTREAM")

    @property
    def children(self):
        return (self.source, self.ticks)


#: the attributes a window table function adds, in Flink's names
WINDOW_ATTRIBUTES = ("window_start", "window_end", "window_time")


@node_class
class WindowTable(Node):
    """Window table functions as Flink and Spark users know them (design.md, "Streams and
    windows"), each tagging every element with its window as three plain attributes of the
    timestamp's type: ``window_start`` and ``window_end`` (the window is ``[start, end)``) and
    ``window_time``, one unit before the end (1 for INT or LONG times, one microsecond for a
    TIMESTAMP, sira's TIMESTAMP granularity; Flink's is ``window_end - 1 ms`` because its
    timestamps are milliseconds):

    * ``tumble(S, ts, size(T) [offset(O)])``: the one window ``[k*T+O, (k+1)*T+O)`` holding t;
    * ``hop(S, ts, size(T) slide(L) [offset(O)])``: one tuple per window ``[k*L+O, k*L+O+T)``
      holding t;
    * ``cumulate(S, ts, step(L) size(T) [offset(O)])``: the growing windows
      ``[s, s+j*L)`` (j = 1..T/L) of the period ``[s, s+T)`` holding t, one tuple each;
    * ``session(S, ts, gap(G) [partition(A, ...)])``: the session holding t: PACK of
      ``[t, t+G)`` per partition.

    A window is an identity, not a period of validity, so it is never an interval attribute
    and nothing packs it: "count per tumbling window" is an ordinary SUMMARIZEBY.

        >>> from sira import parse
        >>> parse("tumble(relation(heading(ts(long) v(int)) body()), ts, size(10))").heading
        Heading({ts: LONG, v: INT, window_end: LONG, window_start: LONG, window_time: LONG})
    """

    source: Node
    ts: str = attrs.field(converter=normalize_name)
    kind: str
    size: Duration | None = None
    slide: Duration | None = None
    offset: Duration | None = None
    partition: tuple = attrs.field(default=(), converter=_lower_names)
    unit: str | None = None
    packs = False

    @property
    def operator_name(self) -> str:
        """TUMBLE, HOP, CUMULATE or SESSION (explain and errors name the function)."""
        return self.kind.upper()

    def compute_heading(self):
        h = self.source.heading
        t = check_ts(h, self.ts, self.kind.upper())
        op = self.kind.upper()
        if self.kind not in ("tumble", "hop", "cumulate", "session"):
            raise SiraValueError(f"unknown window table function {self.kind}", operator=op,
                                 value=self.kind)
        if self.unit is not None:
            unit_name(self.unit)
        h.require(self.partition, op)
        if self.partition and self.kind != "session":
            raise SiraValueError(f"{op}: partition(...) is for session windows", operator=op,
                                 value=self.kind)
        need = {"tumble": ("size",), "hop": ("size", "slide"), "cumulate": ("size", "slide"),
                "session": ("size",)}[self.kind]
        for field in ("size", "slide"):
            value = getattr(self, field)
            if field in need and value is None:
                raise SiraValueError(f"{op} needs {field}(...)", operator=op, value=field)
            if field not in need and value is not None:
                raise SiraValueError(f"{op} takes no {field}(...)", operator=op, value=field)
            if value is not None:
                _positive(value, field)
        for field in ("size", "slide", "offset"):
            self.units(field)  # a unit without the stream's unit is an error when built
        if self.offset is not None and self.kind == "session":
            raise SiraValueError("SESSION takes no offset(...)", operator=op, value="offset")
        if self.kind == "hop" and self.units("size") < self.units("slide"):
            raise SiraValueError(f"HOP: the size ({self.size}) is shorter than the slide "
                                 f"({self.slide})", operator=op, value=str(self.size))
        if self.kind == "cumulate" and self.units("size") % self.units("slide"):
            raise SiraValueError(f"CUMULATE: the size ({self.size}) must be a multiple of the "
                                 f"step ({self.slide})", operator=op, value=str(self.size))
        for name in WINDOW_ATTRIBUTES:
            if name in h:
                raise DuplicateAttribute(attribute=name, operator=op)
        return h.extend([(name, t) for name in WINDOW_ATTRIBUTES], op)

    def units(self, field) -> int:
        value = getattr(self, field)
        if value is None:
            return 0
        return value.in_units(self.unit, self.source.heading.type_of(self.ts))

    @property
    def ts_type(self):
        return self.source.heading.type_of(self.ts)

    @property
    def operator_text(self) -> str:
        return self.kind

    @property
    def children(self):
        return (self.source,)


@node_class
class Changes(_ToStream):
    """The insertions and deletions of a temporal relation, as CQL prints a relation's output:
    ``changes(W, at)`` has W's attributes (without ``during``), the instant ``at`` and ``kind``
    ('+' or '-'). Defined as the union of ISTREAM and DSTREAM tagged with their kind."""

    source: Node
    at: str = attrs.field(converter=normalize_name)
    during: str = attrs.field(default="during", converter=normalize_name)
    operator_name = "CHANGES"

    def compute_heading(self):
        from ..types import STRING
        return super().compute_heading().extend([("kind", STRING)], "CHANGES")


__all__ = ["Changes", "WindowTable", "WINDOW_ATTRIBUTES", "Duration", "WindowSpec", "Window",
           "IStream", "DStream", "RStream", "UNITS", "unit_name"]
