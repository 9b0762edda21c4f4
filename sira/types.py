"""Scalar types: INT LONG BIGINT FLOAT STRING BOOLEAN DATE TIMESTAMP AVERAGE.

A type validates Python values (``check``), orders them (``sort_key``) and prints them as the seed
does (``format``). Python values: int for the integer types, float, str, bool, ``datetime.date``,
``datetime.datetime`` (TIMESTAMP, microsecond granularity) and :class:`Average`.

    >>> INT.check(124)
    124
    >>> INT.check(2**31)
    Traceback (most recent call last):
    ...
    sira.errors.IntOverflow: 2147483648 does not fit INT
    >>> type_named("long") is LONG
    True
"""

from __future__ import annotations

import abc
import datetime
import math
import numbers
import re
from collections.abc import Iterable, Mapping

import attrs

from .errors import FloatOverflow, IntOverflow, SiraTypeError, SiraValueError, int_text


class Type(abc.ABC):
    """Base of every attribute type. Subclasses are frozen attrs classes, equal by value."""

    name: str = "?"
    ordinal = False  # has successor/predecessor (interval points may be unpacked)
    ordered = True  # supports lt/gt

    @abc.abstractmethod
    def check(self, value, *, operator=None):
        """Return ``value`` if it is a value of this type (normalised), else raise SiraTypeError."""

    def sort_key(self, value):
        return value

    def format(self, value) -> str:
        """The value as the seed prints it in tables."""
        return str(value)

    def literal(self, value) -> str:
        """The value in sira's text syntax (``parse`` gives it back)."""
        return self.format(value)

    def _wrong(self, value, operator):
        return SiraTypeError(
            f"{operator + ': ' if operator else ''}expected {article(self.name)} "
            f"(got {value!r}, {article(python_type_name(value))})",
            operator=operator, expected=self.name, got=python_type_name(value))

    def __str__(self):
        return self.name

    def __repr__(self):
        return self.name


def article(name: str) -> str:
    """'an INT', 'a STRING'."""
    return ("an " if name[:1].upper() in "AEIOU" else "a ") + name


def python_type_name(value) -> str:
    """The sira type name of a Python value, for messages."""
    from .values import Relation, Tuple
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "INT" if INT.min <= value <= INT.max else "LONG" if LONG.min <= value <= LONG.max else "BIGINT"
    for cls, name in ((float, "FLOAT"), (str, "STRING"), (datetime.datetime, "TIMESTAMP"),
                      (datetime.date, "DATE"), (Average, "AVERAGE"), (Relation, "RELATION"),
                      (Tuple, "TUPLE")):
        if isinstance(value, cls):
            return name
    from .intervals import Interval
    if isinstance(value, Interval):
        return "INTERVAL"
    return type(value).__name__


_INT_RANGES = {bits: (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) for bits in (32, 64)}


@attrs.frozen(repr=False)
class IntegerType(Type):
    """INT (32-bit), LONG (64-bit) or BIGINT (unbounded). Overflow is an error, never a wrap."""

    name: str
    bits: int | None  # None: unbounded
    ordinal = True

    @property
    def min(self):
        return None if self.bits is None else _INT_RANGES[self.bits][0]

    @property
    def max(self):
        return None if self.bits is None else _INT_RANGES[self.bits][1]

    def check(self, value, *, operator=None):
        if type(value) is not int:
            # any integral number but a boolean: an int subclass, numpy's and pandas' integers
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise self._wrong(value, operator)
            value = int(value)
        return self.fit(value, operator=operator)

    def format(self, value) -> str:
        return int_text(value)

    def literal(self, value):
        """INT as a bare number; LONG and BIGINT through their selectors so the type survives."""
        return str(value) if self.name == "INT" else f"{self.name.lower()}({int_text(value)})"

    def fit(self, value: int, *, operator=None, tuple=None):
        if self.bits is not None:
            low, high = _INT_RANGES[self.bits]
            if not low <= value <= high:
                raise IntOverflow(operator=operator, type=self.name, value=value, tuple=tuple)
        return value


@attrs.frozen(repr=False)
class FloatType(Type):
    name: str = "FLOAT"

    def check(self, value, *, operator=None):
        # any real number but a boolean (numpy's float32 and integers too), as a double
        if type(value) is not float and (isinstance(value, bool)
                                         or not isinstance(value, numbers.Real)):
            raise self._wrong(value, operator)
        try:
            value = float(value) + 0.0  # -0.0 and 0.0 are one value
        except OverflowError:  # an integer beyond the largest FLOAT
            digits = int(int(value).bit_length() * math.log10(2)) + 1  # (str() may refuse)
            raise FloatOverflow(f"{operator + ': ' if operator else ''}an integer of about "
                                f"{digits} digits is too large for a FLOAT",
                                operator=operator, operands=(value,)) from None
        if math.isnan(value):
            raise SiraValueError(f"{operator + ': ' if operator else ''}NaN is not a FLOAT value",
                                 operator=operator, value=value)
        return value

    def format(self, value):
        return repr(value)

    def literal(self, value):
        if math.isinf(value):  # 1e999 reads back as infinity
            return "1e999" if value > 0 else "-1e999"
        return repr(value)


@attrs.frozen(repr=False)
class StringType(Type):
    name: str = "STRING"

    def check(self, value, *, operator=None):
        if not isinstance(value, str):
            raise self._wrong(value, operator)
        return value

    def literal(self, value):
        """``string(raw)`` when the parentheses balance, else a quoted ``'...'`` literal."""
        depth = 0
        for ch in value:
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth < 0:
                break
        if depth == 0:
            return f"string({value})"
        return "'" + value.replace("'", "''") + "'"


@attrs.frozen(repr=False)
class BooleanType(Type):
    name: str = "BOOLEAN"

    def check(self, value, *, operator=None):
        if not isinstance(value, bool):
            raise self._wrong(value, operator)
        return value

    def format(self, value):
        return "True" if value else "False"

    def literal(self, value):
        return "true" if value else "false"


@attrs.frozen(repr=False)
class DateType(Type):
    name: str = "DATE"
    ordinal = True

    def check(self, value, *, operator=None):
        if isinstance(value, datetime.datetime) or not isinstance(value, datetime.date):
            raise self._wrong(value, operator)
        return value

    def format(self, value):
        return value.isoformat()


@attrs.frozen(repr=False)
class TimestampType(Type):
    """TIMESTAMP at microsecond granularity (naive, read as UTC)."""

    name: str = "TIMESTAMP"
    ordinal = True

    def check(self, value, *, operator=None):
        if not isinstance(value, datetime.datetime):
            raise self._wrong(value, operator)
        return value.replace(tzinfo=None) if value.tzinfo is None else \
            value.astimezone(datetime.timezone.utc).replace(tzinfo=None)

    def format(self, value):
        return value.isoformat()


@attrs.frozen(order=True)
class Average:
    """A value of type AVERAGE: an observation count and the mean of the observations.

    >>> Average(count=5, value=29491.199999999997)
    average(count(5)value(29491.199999999997))
    """

    count: int
    value: float

    def __repr__(self):
        return f"average(count({self.count})value({FLOAT.literal(self.value)}))"

    def plus(self, other: "Average") -> "Average":
        """Combine two averages; the formula reproduces the seed's figures to the last bit."""
        total = self.count + other.count
        if total == 0:
            return Average(0, 0.0)
        return Average(total, self.value * self.count / total + other.value * other.count / total)


@attrs.frozen(repr=False)
class AverageType(Type):
    name: str = "AVERAGE"

    def check(self, value, *, operator=None):
        if not isinstance(value, Average):
            raise self._wrong(value, operator)
        return value

    def format(self, value):
        return f"COUNT({value.count})VALUE({FLOAT.literal(value.value)})"

    def literal(self, value):
        return repr(value)


INT = IntegerType("INT", 32)
LONG = IntegerType("LONG", 64)
BIGINT = IntegerType("BIGINT", None)
FLOAT = FloatType()
STRING = StringType()
BOOLEAN = BooleanType()
DATE = DateType()
TIMESTAMP = TimestampType()
AVERAGE = AverageType()

SCALAR_TYPES = {t.name.lower(): t for t in (INT, LONG, BIGINT, FLOAT, STRING, BOOLEAN, DATE,
                                           TIMESTAMP, AVERAGE)}
INTEGER_TYPES = (INT, LONG, BIGINT)
NUMERIC_TYPES = (INT, LONG, BIGINT, FLOAT)


def type_named(name: str) -> Type:
    """The scalar or interval type with that (case-insensitive) name.

    Raises:
        SiraTypeError: no such type.
    """
    key = name.lower()
    if key in SCALAR_TYPES:
        return SCALAR_TYPES[key]
    from .intervals import INTERVAL_TYPES
    if key in INTERVAL_TYPES:
        return INTERVAL_TYPES[key]
    raise SiraTypeError(f"unknown type '{name}'", expected="a type name", got=name)


def int_from_text(text: str) -> int:
    """The integer a string of decimal digits (with an optional sign) denotes, however long.

        >>> int_from_text("1" * 5000) % 10
        1
    """
    if len(text) <= 4000:
        return int(text)
    import decimal
    return int(decimal.Decimal(text))


_DATE_TEXT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TIMESTAMP_TEXT = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})(?:[T ]([0-9]{2}:[0-9]{2}"
                             r"(?::[0-9]{2}(?:\.[0-9]{1,6})?)?)(Z|[+-][0-9]{2}:?[0-9]{2})?)?")


def date_from_text(text: str) -> datetime.date:
    """A DATE from ``YYYY-MM-DD``, the one reading of a date in text and files alike.

        >>> date_from_text("2015-07-30")
        datetime.date(2015, 7, 30)

    Raises:
        ValueError: anything else (a week date, ``20150730``...).
    """
    text = text.strip()
    if not _DATE_TEXT.fullmatch(text):
        raise ValueError(f"{text!r} is not a date (YYYY-MM-DD)")
    return datetime.date.fromisoformat(text)


def timestamp_from_text(text: str) -> tuple:
    """``(TIMESTAMP, whether an offset was converted)`` from
    ``YYYY-MM-DD[Thh:mm[:ss[.ffffff]]][Z|+hh:mm]``: a timestamp with a UTC offset (or ``Z``)
    is converted to UTC, the instant it names; a date alone is midnight.

        >>> timestamp_from_text("2015-07-30T12:00:00+02:00")
        (datetime.datetime(2015, 7, 30, 10, 0), True)

    Raises:
        ValueError: anything else (seven digits of a second, a compact form...).
    """
    text = text.strip()
    match = _TIMESTAMP_TEXT.fullmatch(text)
    if not match:
        raise ValueError(f"{text!r} is not a timestamp (YYYY-MM-DDThh:mm:ss[.ffffff])")
    date, time, offset = match.groups()
    value = datetime.datetime.fromisoformat(f"{date}T{time or '00:00'}{offset or ''}")
    if value.tzinfo is None:
        return value, False
    return value.astimezone(datetime.timezone.utc).replace(tzinfo=None), True


def wider_integer(a: IntegerType, b: IntegerType) -> IntegerType:
    """The integer type both INT/LONG/BIGINT operands widen to."""
    order = {"INT": 0, "LONG": 1, "BIGINT": 2}
    return a if order[a.name] >= order[b.name] else b


def type_of_python(value) -> Type:
    """The type a literal Python value is taken to have (ints: the narrowest that fits)."""
    if type(value) is int:  # the common case first, without imports
        if -2147483648 <= value <= 2147483647:
            return INT
        return LONG if -9223372036854775808 <= value <= 9223372036854775807 else BIGINT
    from .intervals import Interval
    from .values import Relation, Tuple
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, numbers.Integral):  # an int subclass, numpy's integers
        value = int(value)
        for t in INTEGER_TYPES:
            if t.bits is None or t.min <= value <= t.max:
                return t
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Rational):
        return FLOAT  # a float, numpy's float32 (not a Fraction: no type holds it exactly)
    if isinstance(value, str):
        return STRING
    if isinstance(value, datetime.datetime):
        return TIMESTAMP
    if isinstance(value, datetime.date):
        return DATE
    if isinstance(value, Average):
        return AVERAGE
    if isinstance(value, Relation):
        return RelationType(value.heading)
    if isinstance(value, Tuple):
        return TupleType(value.heading)
    if isinstance(value, Interval):
        raise SiraTypeError("an interval value alone does not tell its type; use an interval "
                            "selector", expected="a typed value", got="INTERVAL")
    raise SiraTypeError(f"{value!r} is not a value of any sira type", expected="a sira value",
                        got=type(value).__name__)


@attrs.frozen(repr=False)
class RelationType(Type):
    """The type of a relation-valued attribute: RELATION{heading}."""

    heading: "object"
    ordinal = False

    @property
    def name(self):
        return f"RELATION{self.heading}"

    def check(self, value, *, operator=None):
        from .values import Relation
        if not isinstance(value, Relation):
            # the rows of a relation written out (a list of mappings or of sequences in the
            # heading's order), checked as Relation.from_rows checks them
            if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
                raise self._wrong(value, operator)
            return Relation.from_rows(self.heading, value)
        if value.heading != self.heading:
            raise SiraTypeError(
                f"{operator + ': ' if operator else ''}expected a relation with heading "
                f"{self.heading} (got one with {value.heading})",
                operator=operator, expected=self.name, got=f"RELATION{value.heading}")
        return value

    def sort_key(self, value):
        return value.sort_key()

    def format(self, value):
        return value.literal()  # the whole relation: repr cuts large ones


@attrs.frozen(repr=False)
class TupleType(Type):
    """The type of a tuple-valued attribute: TUPLE{heading}."""

    heading: "object"
    ordinal = False

    @property
    def name(self):
        return f"TUPLE{self.heading}"

    def check(self, value, *, operator=None):
        from .values import Tuple
        if not isinstance(value, Tuple):
            if not isinstance(value, Mapping):  # a tuple written out by attribute name
                raise self._wrong(value, operator)
            return Tuple.from_dict(self.heading, value)
        if value.heading != self.heading:
            raise SiraTypeError(
                f"{operator + ': ' if operator else ''}expected a tuple with heading "
                f"{self.heading} (got one with {value.heading})",
                operator=operator, expected=self.name, got=f"TUPLE{value.heading}")
        return value

    def sort_key(self, value):
        return value.sort_key()

    def format(self, value):
        return repr(value)


def holds_float(t) -> bool:
    """Whether a value of type ``t`` holds a FLOAT anywhere inside: a FLOAT, an AVERAGE's mean,
    a FLOATINTERVAL's bounds, or one of these in a tuple's or relation's attribute (the values
    whose -0.0 an engine reads as 0.0).

        >>> from sira.intervals import FLOATINTERVAL
        >>> from sira.values import Heading
        >>> holds_float(RelationType(Heading.of({"x": FLOATINTERVAL}))), holds_float(INT)
        (True, False)
    """
    if t in (FLOAT, AVERAGE):
        return True
    if isinstance(t, (TupleType, RelationType)):
        return any(holds_float(x) for x in t.heading.types)
    return getattr(t, "point", None) == FLOAT  # an interval type
