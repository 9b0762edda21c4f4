"""IBM Streams SPL windows as relational algebra (seed 001, "Window clause").

An SPL window clause turns a stream (a relation with a timestamp attribute, see
``sira.algebra.windows``) into a *relation of windows*: one tuple per window instance the
operator behind the port would see, with the partition attributes, ``instance`` (LONG, 1-based
per partition, in order of emission), ``at`` (the emission time), for timeInterval windows the
``pane`` ([start, end) over the timestamp's type), and ``tuples``, a relation-valued attribute
holding the window's content (S's heading)::

    splwindow(S, ts, tumbling, count(5))
    splwindow(S, ts, tumbling, time(10))
    splwindow(S, ts, tumbling, delta(i, 10))
    splwindow(S, ts, tumbling, punct(p))                p BOOLEAN: a punctuation follows p's tuples
    splwindow(S, ts, sliding, count(5) trigger(count(2)))      trigger: count(M) time(T) delta(a, D)
    splwindow(S, ts, sliding, time(10) trigger(count(5)))
    splwindow(S, ts, sliding, delta(i, 10))
    splwindow(S, et, timeinterval, intervalduration(60) creationperiod(10) discardage(3600)
              intervaloffset(5))
    ... partitioned(k [, partitionage(T) | partitioncount(N) | tuplecount(N)])
    ... unit(second) arrival(seq)

Tumbling and sliding windows read the stream in (ts, arrival) order, per partition; timeInterval
windows read it in arrival order (ts is the event time, the watermark the largest ts seen so far
across the whole stream). ``sira/engine/spl.py`` states every rule; it is the reference.

    >>> from sira import parse
    >>> s = "relation(heading(ts(long) v(int)) body())"
    >>> parse(f"splwindow({s}, ts, tumbling, count(5))").heading
    Heading({at: LONG, instance: LONG, tuples: RELATION{ts: LONG, v: INT}})
"""

from __future__ import annotations

import attrs

from ..errors import DuplicateAttribute, SiraTypeError, SiraValueError
from ..types import BOOLEAN, FLOAT, LONG, TIMESTAMP, IntegerType, RelationType
from ..values import normalize_name
from .basic import _lower_names
from .node import Node, node_class
from .windows import Duration, check_ts, interval_type_for, unit_name

OP = "SPLWINDOW"

#: the window kinds, and the policies each takes as its eviction
KINDS = {"tumbling": ("count", "time", "delta", "punct"), "sliding": ("count", "time", "delta"),
         "timeinterval": ()}
TRIGGERS = ("count", "time", "delta")
PARTITION_EVICTIONS = ("partitionage", "partitioncount", "tuplecount")


def _name_or_none(value):
    return None if value is None else normalize_name(value)


@attrs.frozen
class SplPolicy:
    """An eviction, trigger or partition eviction policy: ``count(5)``, ``time(10 second)``,
    ``delta(i, 10)``, ``punct(p)``, ``partitionage(60)``, ``partitioncount(3)``,
    ``tuplecount(100)``. ``amount`` is an int (counts), a Duration (times) or a number or
    Duration (delta thresholds); ``attr`` names the delta or punctuation attribute."""

    kind: str
    amount: object = None
    attr: str | None = attrs.field(default=None, converter=_name_or_none)

    def text(self) -> str:
        if self.kind == "delta":
            return f"delta({self.attr},{self.amount})"
        if self.kind == "punct":
            return f"punct({self.attr})"
        return f"{self.kind}({self.amount})"


_LONG_MAX = 2 ** 63 - 1


def _positive(value, what, allow_zero=False):
    amount = value.amount if isinstance(value, Duration) else value
    ok = isinstance(amount, (int, float)) and not isinstance(amount, bool) and (
        amount >= 0 if allow_zero else amount > 0)
    if not ok:
        need = "a non-negative number" if allow_zero else "a positive integer"
        raise SiraValueError(f"{OP}: {what} must be {need} (got {value})", operator=OP,
                             value=str(value))
    if amount > _LONG_MAX:  # no stream spans more; DuckDB and Spark compute in LONG
        raise SiraValueError(f"{OP}: {what} must be at most {_LONG_MAX} (got {value})",
                             operator=OP, value=str(value))


@node_class
class SplWindow(Node):
    """An SPL window clause (seed 001, "Window clause"): ``splwindow(S, ts, sliding, time(10)
    trigger(count(5)))`` is one tuple per window instance, its content in ``tuples``."""

    source: Node
    ts: str = attrs.field(converter=normalize_name)
    kind: str = attrs.field(converter=str.lower)
    eviction: SplPolicy | None = None
    trigger: SplPolicy | None = None
    duration: Duration | None = None  # timeInterval: intervalDuration
    creation: Duration | None = None  # creationPeriod (default: the duration)
    discard: Duration | None = None  # discardAge (default 0: every late tuple is dropped)
    offset: Duration | None = None  # intervalOffset (default 0)
    partition: tuple = attrs.field(default=(), converter=_lower_names)
    partition_eviction: SplPolicy | None = None
    arrival: str | None = attrs.field(default=None, converter=_name_or_none)
    unit: str | None = None
    operator_name = OP
    packs = False  # every window instance is its own tuple

    # ------------------------------------------------------------------ checking
    def compute_heading(self):
        h = self.source.heading
        t = check_ts(h, self.ts, OP)
        if self.kind not in KINDS:
            raise SiraValueError(f"{OP}: the window kind must be tumbling, sliding or "
                                 f"timeinterval (got {self.kind})", operator=OP, value=self.kind)
        if self.unit is not None:
            unit_name(self.unit)
        h.require(self.partition, OP)
        if self.arrival is not None:
            h.require([self.arrival], OP)
        if self.kind == "timeinterval":
            self._check_time_interval()
        else:
            self._check_policies()
        if self.partition_eviction is not None:
            pe = self.partition_eviction
            if not self.partition:
                raise SiraValueError(f"{OP}: {pe.kind}(...) needs a partitioned window",
                                     operator=OP, value=pe.text())
            if pe.kind not in PARTITION_EVICTIONS:
                raise SiraValueError(f"{OP}: unknown partition eviction {pe.kind}", operator=OP,
                                     value=pe.kind)
            if self.kind == "timeinterval":
                raise SiraValueError(f"{OP}: partition eviction applies to tumbling and sliding "
                                     f"windows", operator=OP, value=pe.text())
            _positive(pe.amount, pe.kind)
            if pe.kind == "partitionage":
                self.units(pe.amount)
        names = [n for n in self.partition]
        out = [(n, h.type_of(n)) for n in names]
        out += [("instance", LONG), ("at", t), ("tuples", RelationType(h))]
        if self.kind == "timeinterval":
            out.append(("pane", interval_type_for(t)))
        for n in ("instance", "at", "tuples", "pane"):
            if n in self.partition:
                raise DuplicateAttribute(attribute=n, operator=OP)
        from ..values import Heading
        return Heading.of(out)

    def _check_policies(self):
        ev, tr = self.eviction, self.trigger
        if ev is None:
            raise SiraValueError(f"{OP}: a {self.kind} window needs an eviction policy",
                                 operator=OP, value=self.kind)
        if ev.kind not in KINDS[self.kind]:
            raise SiraValueError(f"{OP}: a {self.kind} window is evicted by "
                                 f"{', '.join(KINDS[self.kind])} (got {ev.kind})", operator=OP,
                                 value=ev.kind)
        if tr is not None and self.kind == "tumbling":
            raise SiraValueError(f"{OP}: a tumbling window takes no trigger (it flushes when "
                                 f"its eviction policy says so)", operator=OP, value=tr.text())
        if tr is not None and tr.kind not in TRIGGERS:
            raise SiraValueError(f"{OP}: unknown trigger {tr.kind}", operator=OP, value=tr.kind)
        for policy in (ev, tr):
            if policy is not None:
                self._check_policy(policy)
        for field in ("duration", "creation", "discard", "offset"):
            if getattr(self, field) is not None:
                raise SiraValueError(f"{OP}: {field} is for timeinterval windows", operator=OP,
                                     value=field)

    def _check_policy(self, p: SplPolicy):
        h = self.source.heading
        if p.kind == "count":
            _positive(p.amount, "a count")
        elif p.kind == "time":
            _positive(p.amount, "a time")
            self.units(p.amount)
        elif p.kind == "punct":
            at = h.type_of(p.attr, OP)
            if at != BOOLEAN:
                raise SiraTypeError(f"{OP}: punct({p.attr}) needs a BOOLEAN attribute (it is "
                                    f"{at})", operator=OP, expected="BOOLEAN", got=str(at))
        elif p.kind == "delta":
            at = h.type_of(p.attr, OP)
            if not ((isinstance(at, IntegerType) and at.bits is not None) or at == FLOAT
                    or at == TIMESTAMP):
                raise SiraTypeError(f"{OP}: delta({p.attr}, ...) needs an INT, LONG, FLOAT or "
                                    f"TIMESTAMP attribute (it is {at})", operator=OP,
                                    expected="INT, LONG, FLOAT or TIMESTAMP", got=str(at))
            _positive(p.amount, "a delta", allow_zero=True)
            if isinstance(p.amount, Duration) and at != TIMESTAMP:
                raise SiraTypeError(f"{OP}: a delta with a unit needs a TIMESTAMP attribute "
                                    f"(delta({p.attr}, {p.amount}))", operator=OP,
                                    expected="TIMESTAMP", got=str(at))
            if isinstance(p.amount, float) and at != FLOAT:
                raise SiraTypeError(f"{OP}: a fractional delta needs a FLOAT attribute",
                                    operator=OP, expected="FLOAT", got=str(at))
        else:
            raise SiraValueError(f"{OP}: unknown policy {p.kind}", operator=OP, value=p.kind)

    def _check_time_interval(self):
        if self.eviction is not None or self.trigger is not None:
            raise SiraValueError(f"{OP}: a timeinterval window takes intervalduration(...), "
                                 f"not an eviction or trigger policy", operator=OP,
                                 value=self.kind)
        if self.duration is None:
            raise SiraValueError(f"{OP}: a timeinterval window needs intervalduration(...)",
                                 operator=OP, value=self.kind)
        _positive(self.duration, "the interval duration")
        if self.creation is not None:
            _positive(self.creation, "the creation period")
        if self.discard is not None:
            _positive(self.discard, "the discard age", allow_zero=True)
        if self.offset is not None:
            _positive(self.offset, "the interval offset", allow_zero=True)
        for d in (self.duration, self.creation, self.discard, self.offset):
            if d is not None:
                self.units(d)

    # ------------------------------------------------------------------ derived values
    @property
    def ts_type(self):
        return self.source.heading.type_of(self.ts)

    def units(self, duration) -> int:
        """A Duration (or a plain int) in the units of the timestamp attribute."""
        if duration is None:
            return 0
        if isinstance(duration, Duration):
            try:
                return duration.in_units(self.unit, self.ts_type)
            except SiraValueError as err:
                message = err.message.replace("WINDOW:", f"{OP}:", 1)
                raise SiraValueError(message, operator=OP, value=str(duration)) from None
        return duration

    def delta_amount(self, policy: SplPolicy):
        """The delta threshold in the delta attribute's own numbers (microseconds for
        TIMESTAMP)."""
        if isinstance(policy.amount, Duration):
            return policy.amount.in_units(None, TIMESTAMP)
        return policy.amount

    @property
    def interval_units(self) -> tuple:
        """(duration, creation period, discard age, offset) of a timeInterval window."""
        d = self.units(self.duration)
        c = self.units(self.creation) if self.creation is not None else d
        return d, c, self.units(self.discard), self.units(self.offset)

    def options_text(self) -> str:
        """Everything after ``S, ts, kind`` in the text syntax."""
        parts = []
        if self.eviction is not None:
            parts.append(self.eviction.text())
        if self.trigger is not None:
            parts.append(f"trigger({self.trigger.text()})")
        for name, field in (("intervalduration", "duration"), ("creationperiod", "creation"),
                            ("discardage", "discard"), ("intervaloffset", "offset")):
            if getattr(self, field) is not None:
                parts.append(f"{name}({getattr(self, field)})")
        if self.partition:
            extra = "" if self.partition_eviction is None else \
                f",{self.partition_eviction.text()}"
            parts.append(f"partitioned({','.join(self.partition)}{extra})")
        if self.unit:
            parts.append(f"unit({self.unit})")
        if self.arrival:
            parts.append(f"arrival({self.arrival})")
        return " ".join(parts)

    @property
    def children(self):
        return (self.source,)


__all__ = ["SplPolicy", "SplWindow"]
