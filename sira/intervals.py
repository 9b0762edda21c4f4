"""Interval types and the interval value.

Every interval is closed-open ``[begin, end)`` inside; ``end`` is None for an interval unbounded
above ("until further notice"). The text syntax accepts ``from(a)to(b)`` (both ends included) and
``begin(a)end(b)``, and prints ``BEGIN(a)END(b)`` as the seed does::

    >>> INTINTERVAL.select_closed(4, 7)
    Interval(begin=4, end=8)
    >>> INTINTERVAL.format(INTINTERVAL.select_closed(4, 7))
    'BEGIN(4)END(8)'
    >>> INTINTERVAL.select(5, 5)
    Traceback (most recent call last):
    ...
    sira.errors.IntervalError: INTINTERVAL: begin 5 is not before end 5
"""

from __future__ import annotations

import datetime
from functools import partial
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import attrs

from .errors import IntervalError, IntOverflow, SiraTypeError
from .types import DATE, FLOAT, INT, LONG, TIMESTAMP, IntegerType, Type

if TYPE_CHECKING:
    import portion

_ONE_DAY = datetime.timedelta(days=1)
_ONE_MICROSECOND = datetime.timedelta(microseconds=1)


class Interval(tuple):
    """An interval value ``[begin, end)``; ``end`` None means unbounded above.

    Underneath it is the tuple ``(begin, end)``, so hashing and equality run at C speed (bodies
    of millions of tuples hash and compare their intervals); ``begin`` and ``end`` name its two
    items. Two intervals are equal when their ends are; all empty intervals (``begin == end``,
    which only IINTERSECT produces) are one value::

        >>> Interval(4, 8) == Interval(4, 8), Interval(3, 3) == Interval(5, 5)
        (True, True)
        >>> Interval(4, 8).begin, Interval(4).end, Interval(3, 3).empty
        (4, None, True)

    Like the tuple it is, an interval equals the plain tuple ``(begin, end)`` and orders as one
    in Python; sira never mixes the two in a relation (a value of an interval attribute must be
    an :class:`Interval`, and relations and tuples compare their headings first) and orders
    intervals by their type's ``sort_key`` (an unbounded end last).
    """

    __slots__ = ()
    __match_args__ = ("begin", "end")

    def __new__(cls, begin: Any, end: Any = None) -> "Interval":
        if end is not None and _not_before(begin, end):
            return tuple.__new__(_EmptyInterval, (begin, end))
        return tuple.__new__(cls, (begin, end))

    begin = property(itemgetter(0), doc="The first point of the interval.")
    end = property(itemgetter(1), doc="The first point after the interval (None: unbounded).")

    def __getnewargs__(self):
        return tuple(self)

    def __repr__(self) -> str:
        return f"Interval(begin={self[0]!r}, end={self[1]!r})"

    def __contains__(self, point) -> bool:
        """Whether ``point`` is one of the interval's points (``begin <= point < end``); a
        plain tuple would say whether it is one of the two ends::

            >>> 4 in Interval(1, 5), 5 in Interval(1, 5), 10**9 in Interval(3)
            (True, False, True)
        """
        return self[0] <= point and (self[1] is None or point < self[1])

    @property
    def unbounded(self) -> bool:
        return self[1] is None

    @property
    def empty(self) -> bool:
        return False

    def overlaps(self, other: "Interval") -> bool:
        return ((other.end is None or self.begin < other.end)
                and (self.end is None or other.begin < self.end))

    def intersect(self, other: "Interval") -> "Interval":
        """The common points; the empty interval (shown at the lower begin) when there are none."""
        if self.empty:
            return self
        if other.empty:
            return other
        begin = max(self.begin, other.begin)
        ends = [e for e in (self.end, other.end) if e is not None]
        end = min(ends) if ends else None
        if end is not None and end <= begin:
            low = min(self.begin, other.begin)
            return Interval(low, low)
        return Interval(begin, end)

    def to_portion(self) -> portion.Interval:
        """This interval as a ``portion`` interval (closed-open; unbounded: up to ``P.inf``).

            >>> Interval(4, 8).to_portion()
            [4,8)
            >>> Interval(4).to_portion()
            [4,+inf)
        """
        import portion
        if self.empty:
            return portion.empty()
        return portion.closedopen(self.begin, portion.inf if self.end is None else self.end)

    @classmethod
    def from_portion(cls, interval: portion.Interval,
                     interval_type: IntervalType | None = None) -> Interval:
        """The sira interval of an atomic ``portion`` interval.

        Without ``interval_type`` the interval must be closed-open, or closed below and
        unbounded above, as sira's are. With an interval type of ordinal points, an open lower
        bound or a closed upper one is moved to the next point, and the points are checked
        against the type::

            >>> import portion as P
            >>> Interval.from_portion(P.closedopen(4, 8))
            Interval(begin=4, end=8)
            >>> Interval.from_portion(P.closed(4, 7), INTINTERVAL)
            Interval(begin=4, end=8)
            >>> [Interval.from_portion(i) for i in P.closedopen(1, 3) | P.closedopen(5, P.inf)]
            [Interval(begin=1, end=3), Interval(begin=5, end=None)]

        Raises:
            IntervalError: the interval is empty, not atomic (iterate over a union for its
                atomic parts), unbounded below, or bounded in a way sira cannot hold without
                an ordinal ``interval_type``.
            SiraTypeError: a point does not fit ``interval_type``.
        """
        import portion
        if not isinstance(interval, portion.Interval):
            raise SiraTypeError(f"from_portion: expected a portion interval (got {interval!r})",
                                operator="from_portion", expected="a portion interval",
                                got=repr(interval))
        if interval.empty or not interval.atomic:
            what = "empty" if interval.empty else "a union of several intervals"
            raise IntervalError(f"from_portion: {interval} is {what}; sira selects one "
                                f"non-empty interval", operator="from_portion", value=interval)
        if interval.lower == -portion.inf:
            raise IntervalError(f"from_portion: {interval} is unbounded below; sira's intervals "
                                f"have a first point", operator="from_portion", value=interval)
        begin, end = interval.lower, interval.upper
        end = None if end == portion.inf else end
        if interval.left == portion.OPEN:
            begin = _next_point(interval_type, begin, interval)
        if end is not None and interval.right == portion.CLOSED:
            end = _next_point(interval_type, end, interval)
        if interval_type is None:
            return cls(begin, end)
        return interval_type.select(begin, end, operator="from_portion")


def _not_before(begin, end) -> bool:
    """``not begin < end``; points that do not compare (refused later, by the interval type's
    check) count as before."""
    try:
        return not begin < end
    except TypeError:
        return False


class _EmptyInterval(Interval):
    """An empty interval ``[b, b)``: equal to every empty interval, whatever its ``b``.

    ``b`` is only shown (the seed prints IINTERSECT's empty result at the lower begin,
    ``BEGIN(16384)END(16384)``); nothing sira computes depends on it. The DuckDB and Spark
    engines hold every empty interval as one canonical struct (begin = end = the point type's
    zero) so that grouping and joins see one value there too."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Interval) and other.empty

    def __ne__(self, other: object) -> bool:
        return not (isinstance(other, Interval) and other.empty)

    def __hash__(self) -> int:
        return _EMPTY_HASH

    @property
    def empty(self) -> bool:
        return True

    def overlaps(self, other: "Interval") -> bool:
        return False  # no point to share, whatever begin it shows

    def __contains__(self, point) -> bool:
        return False


_EMPTY_HASH = hash(("empty interval",))


#: ``make_interval((begin, end))``: the interval, without the emptiness test of ``Interval()``,
#: for code that makes by the million intervals it knows are not empty (PACK, splits).
make_interval = partial(tuple.__new__, Interval)

#: The classes of sira's interval values (a user's subclass of Interval is copied on check).
_INTERVAL_CLASSES = (Interval, _EmptyInterval)


def _next_point(interval_type, value, interval):
    """The point after ``value``, turning an open lower or closed upper bound closed-open."""
    if interval_type is None or not interval_type.point.ordinal:
        raise IntervalError(f"from_portion: {interval} is not closed-open; give an interval "
                            f"type of ordinal points (INTINTERVAL, DATEINTERVAL...) to convert "
                            f"it", operator="from_portion", value=interval)
    return successor(interval_type.point, interval_type.point.check(value,
                                                                     operator="from_portion"))


def successor(point_type: Type, value):
    """The next point of an ordinal type; IntOverflow past the type's last point (INT's
    2147483647, DATE's 9999-12-31, as DuckDB and Spark say it).

        >>> import datetime
        >>> successor(DATE, datetime.date(9999, 12, 31))
        Traceback (most recent call last):
        ...
        sira.errors.IntOverflow: successor: the point after 9999-12-31 does not fit DATE
    """
    if isinstance(point_type, IntegerType):  # INT, LONG (overflow checked), BIGINT
        return point_type.fit(value + 1, operator="successor")
    if point_type in (DATE, TIMESTAMP):
        return _stepped(point_type, value, 1, "successor")
    raise SiraTypeError(f"{point_type.name} is not an ordinal type", operator="successor",
                        expected="an ordinal type", got=point_type.name)


def predecessor(point_type: Type, value):
    """The previous point of an ordinal type; IntOverflow before the type's first point."""
    if isinstance(point_type, IntegerType):
        return point_type.fit(value - 1, operator="predecessor")
    if point_type in (DATE, TIMESTAMP):
        return _stepped(point_type, value, -1, "predecessor")
    raise SiraTypeError(f"{point_type.name} is not an ordinal type", operator="predecessor",
                        expected="an ordinal type", got=point_type.name)


def _stepped(point_type: Type, value, step: int, operator: str):
    """A DATE or TIMESTAMP one point later (step 1) or earlier (-1), within Python's range."""
    try:
        return value + step * (_ONE_DAY if point_type == DATE else _ONE_MICROSECOND)
    except OverflowError:
        where = "after" if step > 0 else "before"
        raise IntOverflow(operator=operator, type=point_type.name,
                          value=f"the point {where} {point_type.format(value)}") from None


@attrs.frozen(repr=False)
class IntervalType(Type):
    """INTERVAL over an ordered point type (INT, LONG, DATE, TIMESTAMP ordinal; FLOAT not)."""

    point: Type
    name: str

    @property
    def ordinal(self):  # noqa: D401 - property overriding a class attribute
        return self.point.ordinal

    def select(self, begin: Any, end: Any = None, *, operator: str | None = None) -> Interval:
        """The interval ``[begin, end)``; raises IntervalError unless begin < end."""
        begin = self.point.check(begin, operator=operator or self.name)
        if end is not None:
            end = self.point.check(end, operator=operator or self.name)
            if not begin < end:
                raise IntervalError(
                    f"{operator or self.name}: begin {self.point.format(begin)} is not before"
                    f" end {self.point.format(end)}", operator=operator or self.name,
                    value=(begin, end))
        return Interval(begin, end)

    def select_closed(self, first: Any, last: Any = None, *,
                      operator: str | None = None) -> Interval:
        """The interval from ``first`` to ``last``, both included (ordinal point types only)."""
        if last is None:
            return self.select(first, None, operator=operator)
        if not self.point.ordinal:
            raise SiraTypeError(f"{self.name}: from/to needs an ordinal point type; use "
                                f"begin/end", operator=operator or self.name,
                                expected="an ordinal point type", got=self.point.name)
        first = self.point.check(first, operator=operator or self.name)
        last = self.point.check(last, operator=operator or self.name)
        if last < first:
            raise IntervalError(
                f"{operator or self.name}: from {self.point.format(first)} is after"
                f" to {self.point.format(last)}", operator=operator or self.name,
                value=(first, last))
        return Interval(first, successor(self.point, last))

    def check(self, value: Any, *, operator: str | None = None) -> Interval:
        if not isinstance(value, Interval):
            raise self._wrong(value, operator)
        begin = self.point.check(value.begin, operator=operator)
        end = None if value.end is None else self.point.check(value.end, operator=operator)
        if end is not None and end < begin:
            raise IntervalError(f"{operator or self.name}: begin {value.begin} is after end "
                                f"{value.end}", operator=operator or self.name, value=value)
        if begin is value[0] and end is value[1] and type(value) in _INTERVAL_CLASSES:
            return value  # already a value of this type: no copy
        return Interval(begin, end)

    def sort_key(self, value):
        return (value.begin, value.end is None, value.end if value.end is not None else value.begin)

    def format(self, value: Interval) -> str:
        end = "" if value.end is None else self.point.format(value.end)
        return f"BEGIN({self.point.format(value.begin)})END({end})"

    def literal(self, value: Interval) -> str:
        """The interval in the text syntax. The empty interval has no selector of its own (the
        seed: only IINTERSECT makes one), so it is written as an IINTERSECT of two intervals
        that meet, which ``parse`` reads back as the one empty interval::

            >>> INTINTERVAL.literal(Interval(4, 8))
            'intinterval(begin(4)end(8))'
            >>> INTINTERVAL.literal(Interval(16384, 16384))
            'iintersect(intinterval(begin(0)end(1)), intinterval(begin(1)))'
        """
        if value.empty:
            zero = empty_interval(self).begin
            one = zero + 1.0 if self.point == FLOAT else successor(self.point, zero)
            return f"iintersect({self.literal(Interval(zero, one))}, {self.literal(Interval(one))})"
        begin = f"begin({self.point.literal(value.begin)})"
        end = "" if value.end is None else f"end({self.point.literal(value.end)})"
        return f"{self.name.lower()}({begin}{end})"


INTINTERVAL = IntervalType(INT, "INTINTERVAL")
LONGINTERVAL = IntervalType(LONG, "LONGINTERVAL")
DATEINTERVAL = IntervalType(DATE, "DATEINTERVAL")
TIMESTAMPINTERVAL = IntervalType(TIMESTAMP, "TIMESTAMPINTERVAL")
FLOATINTERVAL = IntervalType(FLOAT, "FLOATINTERVAL")

def empty_interval(interval_type: IntervalType) -> Interval:
    """The empty interval as the DuckDB and Spark engines hold it: one struct for every empty
    interval, its begin and end the point type's zero, so that GROUP BY, DISTINCT and joins
    there see the one value the Python engine sees (``_EmptyInterval``)::

        >>> empty_interval(INTINTERVAL), empty_interval(INTINTERVAL) == Interval(5, 5)
        (Interval(begin=0, end=0), True)
        >>> empty_interval(DATEINTERVAL).begin
        datetime.date(1970, 1, 1)
    """
    point = interval_type.point
    if isinstance(point, IntegerType):
        zero = 0
    elif point == FLOAT:
        zero = 0.0
    elif point == DATE:
        zero = datetime.date(1970, 1, 1)
    else:
        zero = datetime.datetime(1970, 1, 1)
    return Interval(zero, zero)


def as_held(interval_type: IntervalType, value: Interval) -> Interval:
    """``value`` as every engine hands it out (THE_STRING, Arrow, JSON): an empty interval as
    the one ``empty_interval`` struct, any other interval as it is. All empty intervals are one
    value, so nothing sira writes may depend on the begin one is shown at::

        >>> as_held(INTINTERVAL, Interval(16384, 16384)), as_held(INTINTERVAL, Interval(4, 8))
        (Interval(begin=0, end=0), Interval(begin=4, end=8))
    """
    return empty_interval(interval_type) if value.empty else value


INTERVAL_TYPES = {t.name.lower(): t for t in (INTINTERVAL, LONGINTERVAL, DATEINTERVAL,
                                             TIMESTAMPINTERVAL, FLOATINTERVAL)}
