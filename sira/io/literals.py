"""Cells read as literals of their declared type, never as expressions.

Every reader of sira turns text into values here: a CSV cell, a JSON string in a DATE or
interval attribute, a ``name:type`` header. Scalars are matched by strict patterns (no
underscores in numbers, no ISO week dates); values of the other types (intervals, AVERAGE,
tuples, relations) are read by walking the parse tree of the text syntax and accepting only
literals and selectors of literals: ``intinterval(from(4)to(7))`` reads, ``plus(2,3)`` and
``cardinality(unpack(...))`` are refused without anything being evaluated.

    >>> from sira.intervals import INTINTERVAL
    >>> read_literal(INTINTERVAL, "intinterval(from(4)to(7))")
    Interval(begin=4, end=8)
    >>> read_literal(INTINTERVAL, "plus(2,3)")
    Traceback (most recent call last):
    ...
    sira.errors.DataFormatError: 'plus(2,3)' is not an INTINTERVAL literal (expected intinterval(...); plus(...) is not a literal)
"""

from __future__ import annotations

import datetime
import re

from ..errors import DataFormatError, IntervalError, ParseError, SiraError
from ..intervals import Interval, IntervalType, successor
from ..types import (AVERAGE, BOOLEAN, DATE, FLOAT, STRING, TIMESTAMP, Average, IntegerType,
                     RelationType, TupleType, Type, date_from_text, timestamp_from_text)
from ..values import Relation, Tuple

MAX_INTEGER_DIGITS = 100_000
"""The longest integer a reader accepts (reading is quadratic in the number of digits)."""

_CHUNK = 4000  # digits per step, below Python's int/str conversion limit

_INTEGER = re.compile(r"[+-]?[0-9]+")
FLOAT_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
INFINITY_TEXT = re.compile(r"[+-]?(?:inf|infinity)", re.I)
NAN_TEXT = re.compile(r"[+-]?nan", re.I)

NAN = object()
"""Returned by :func:`read_scalar` for a FLOAT cell holding NaN (sira has no NaN)."""


# --------------------------------------------------------------------------- integers
def text_to_int(text: str) -> int:
    """An integer from its decimal digits, any length up to :data:`MAX_INTEGER_DIGITS`,
    without touching Python's global int/str conversion limit.

    >>> text_to_int("-" + "9" * 5000) == -(10 ** 5000 - 1)
    True
    """
    text = text.strip()
    if not _INTEGER.fullmatch(text):
        raise ValueError(f"{text!r} is not an integer")
    sign = -1 if text[0] == "-" else 1
    digits = text.lstrip("+-").lstrip("0") or "0"
    if len(digits) > MAX_INTEGER_DIGITS:
        raise ValueError(f"an integer of {len(digits)} digits (at most {MAX_INTEGER_DIGITS} "
                         f"are read)")
    value = 0
    for start in range(0, len(digits), _CHUNK):
        chunk = digits[start:start + _CHUNK]
        value = value * 10 ** len(chunk) + int(chunk)
    return sign * value


def int_to_text(value: int) -> str:
    """The decimal digits of an integer of any size (Python's ``str`` refuses more than 4,300).

    >>> len(int_to_text(10 ** 5000))
    5001
    """
    if -10 ** _CHUNK < value < 10 ** _CHUNK:
        return str(value)
    sign, value = ("-", -value) if value < 0 else ("", value)
    chunks = []
    base = 10 ** _CHUNK
    while value:
        value, low = divmod(value, base)
        chunks.append(low)
    parts = [str(chunks[-1])] + [str(c).zfill(_CHUNK) for c in reversed(chunks[:-1])]
    return sign + "".join(parts)


# --------------------------------------------------------------------------- scalars
def read_float(text: str):
    """A FLOAT from ``1.5``, ``-2e10``, ``inf``; :data:`NAN` for ``nan``."""
    text = text.strip()
    if FLOAT_TEXT.fullmatch(text) or INFINITY_TEXT.fullmatch(text):
        return float(text) + 0.0  # -0.0 and 0.0 are one value
    if NAN_TEXT.fullmatch(text):
        return NAN
    raise ValueError(f"{text!r} is not a number")


def read_boolean(text: str) -> bool:
    low = text.strip().lower()
    if low in ("true", "1"):
        return True
    if low in ("false", "0"):
        return False
    raise ValueError(f"{text!r} is not true or false")


def read_date(text: str) -> datetime.date:
    """A DATE from ``YYYY-MM-DD`` (:func:`sira.types.date_from_text`, as the text syntax)."""
    return date_from_text(text)


def read_timestamp(text: str, report=None) -> datetime.datetime:
    """A TIMESTAMP from ``YYYY-MM-DD[Thh:mm[:ss[.ffffff]]][Z|+hh:mm]``
    (:func:`sira.types.timestamp_from_text`, as the text syntax).

    A timestamp with a UTC offset (or ``Z``) is converted to UTC, the instant it names
    (``report.converted_to_utc`` counts them); a date alone is midnight.

        >>> read_timestamp("2015-07-30T12:00:00+02:00")
        datetime.datetime(2015, 7, 30, 10, 0)
    """
    value, converted = timestamp_from_text(text)
    if converted and report is not None:
        report.converted_to_utc += 1
    return value


def read_integer(t: IntegerType, text: str) -> int:
    return t.fit(text_to_int(text))


_SELECTOR = re.compile(r"\s*[A-Za-z_]+\s*\(")


def read_scalar(t: Type, text: str, report=None):
    """One cell of a scalar type (INT LONG BIGINT FLOAT STRING BOOLEAN DATE TIMESTAMP) or,
    for any other type, a literal in the text syntax (:func:`read_literal`).

    Raises:
        ValueError or SiraError: the text is not a value of ``t``.
    """
    if t == STRING:
        return text
    if _SELECTOR.match(text):  # a literal as sira prints it: long(5), float(1e999), date(...)
        return read_literal(t, text)
    if isinstance(t, IntegerType):
        return read_integer(t, text)
    if t == FLOAT:
        return read_float(text)
    if t == BOOLEAN:
        return read_boolean(text)
    if t == DATE:
        return read_date(text)
    if t == TIMESTAMP:
        return read_timestamp(text, report)
    return read_literal(t, text)


# --------------------------------------------------------------------------- types
def parse_type(text: str) -> Type:
    """A type written in the text syntax: ``int``, ``dateinterval``, ``relation(heading(a(int)))``.

    >>> parse_type("relation(heading(a(int)))")
    RELATION{a: INT}

    Raises:
        SiraTypeError or ParseError: not a type.
    """
    from ..syntax.builder import Builder
    from ..syntax.parser import parse_expression
    return Builder().type_literal(parse_expression(text))


# --------------------------------------------------------------------------- literals
class _NotALiteral(Exception):
    """The node is not a literal of the expected type (the message says what it is)."""


def read_literal(t: Type, text: str):
    """A value of type ``t`` written as a literal in the text syntax; nothing is evaluated.

    Accepted: numbers (with a sign), ``string(...)`` and ``'...'``, ``true``/``false``, date and
    timestamp literals, the selectors ``int(…) long(…) bigint(…) float(…) boolean(…)`` of a
    literal, interval selectors (``from/to`` or ``begin/end``, the end may be left out) and the
    IINTERSECT of two of them (how an empty interval is written),
    ``average(count(…)value(…))``, ``tuple(…)`` and ``relation([heading(…)] body(…))``.

    Raises:
        DataFormatError: the text is not such a literal, or not one of type ``t``.
    """
    from ..syntax.parser import parse_expression
    try:
        node = parse_expression(_named(t, text))
        return _literal(t, node)
    except ParseError as err:
        reason = err.message.splitlines()[0]
    except _NotALiteral as err:
        reason = str(err)
    except SiraError as err:
        reason = err.message.splitlines()[0]
    except (ValueError, OverflowError) as err:
        reason = str(err)
    raise DataFormatError(f"{_clip(text)!r} is not {_article(t)} literal ({reason})",
                          value=_clip(text))


_BARE = {"interval": ("from(", "begin("), "average": ("count(",)}


def _named(t: Type, text: str) -> str:
    """``text`` with its type's selector around it when a cell of an interval or AVERAGE
    column leaves it out, as tables print them: ``BEGIN(4)END(8)``, ``from(4)to(7)``,
    ``COUNT(5)VALUE(2.5)``."""
    kind = "interval" if isinstance(t, IntervalType) else "average" if t == AVERAGE else None
    if kind and text.strip().lower().startswith(_BARE[kind]):
        return f"{t.name.lower()}({text})"
    return text


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _article(t: Type) -> str:
    from ..types import article
    return article(t.name)


def _unwrap(node):
    from ..syntax import cst
    while isinstance(node, cst.Group) and len(node.items) == 1:
        node = node.items[0]
    return node


def _describe(node) -> str:
    from ..syntax import cst
    if isinstance(node, cst.Call):
        return f"{node.name}(...) is not a literal"
    if isinstance(node, cst.Name):
        return f"'{node.text}' is a name, not a literal"
    if isinstance(node, cst.BinOp):
        return f"an expression with {node.op} is not a literal"
    return f"found {type(node).__name__.lower()}"


def _literal(t: Type, node):
    """The value of type ``t`` that CST ``node`` writes literally."""
    node = _unwrap(node)
    if isinstance(t, IntegerType):
        return t.fit(_integer(node))
    if t == FLOAT:
        return FLOAT.check(_float(node))
    if t == STRING:
        return _raw(node, "string")
    if t == BOOLEAN:
        return _boolean(node)
    if t == DATE:
        return read_date(_dated(node, "date"))
    if t == TIMESTAMP:
        return read_timestamp(_dated(node, "timestamp"))
    if isinstance(t, IntervalType):
        return _interval(t, node)
    if t == AVERAGE:
        kw = _keywords(node, "average", ("count", "value"), ("count", "value"))
        return Average(_integer(kw["count"]), FLOAT.check(_float(kw["value"])))
    if isinstance(t, TupleType):
        return Tuple(t.heading, _tuple_values(t.heading, node))
    if isinstance(t, RelationType):
        return _relation(t, node)
    raise _NotALiteral(f"no literal form for {t.name}")


def _call(node, name: str):
    from ..syntax import cst
    if isinstance(node, cst.Call) and node.name.lower() == name:
        return node
    return None


def _single_arg(node, names) -> object | None:
    from ..syntax import cst
    if isinstance(node, cst.Call) and node.name.lower() in names and len(node.args) == 1:
        return _unwrap(node.args[0])
    return None


def _integer(node) -> int:
    from ..syntax import cst
    inner = _single_arg(node, ("int", "long", "bigint"))
    if inner is not None:
        return _integer(inner)
    if isinstance(node, cst.UnaryOp) and node.op in "+-":
        value = _integer(_unwrap(node.operand))
        return -value if node.op == "-" else value
    if isinstance(node, cst.Number) and _INTEGER.fullmatch(node.text):
        return text_to_int(node.text)
    raise _NotALiteral(f"expected an integer; {_describe(node)}")


def _float(node) -> float:
    from ..syntax import cst
    inner = _single_arg(node, ("float",))
    if inner is not None:
        return _float(inner)
    if isinstance(node, cst.UnaryOp) and node.op in "+-":
        value = _float(_unwrap(node.operand))
        return -value if node.op == "-" else value
    if isinstance(node, cst.Number):
        return float(node.text)  # 1e999 is infinity, as in the text syntax
    if isinstance(node, cst.Name) and INFINITY_TEXT.fullmatch(node.text):
        return float(node.text)  # repr(Average) may print inf
    raise _NotALiteral(f"expected a number; {_describe(node)}")


def _raw(node, func: str) -> str:
    from ..syntax import cst
    if isinstance(node, cst.Raw) and node.func == func:
        return node.text
    raise _NotALiteral(f"expected {func}(...); {_describe(node)}")


def _boolean(node) -> bool:
    from ..syntax import cst
    inner = _single_arg(node, ("boolean",))
    if inner is not None:
        return _boolean(inner)
    if isinstance(node, cst.Name) and node.text.lower() in ("true", "false"):
        return node.text.lower() == "true"
    raise _NotALiteral(f"expected true or false; {_describe(node)}")


def _dated(node, func: str) -> str:
    from ..syntax import cst
    if isinstance(node, (cst.DateLit, cst.TimestampLit)):
        return node.text
    return _raw(node, func).strip()


def _keywords(node, name: str, allowed: tuple, required: tuple) -> dict:
    """``name(k1(v1) k2(v2))`` -> {k1: v1, k2: v2}, each keyword once and from ``allowed``."""
    from ..syntax import cst
    call = _call(node, name)
    if call is None:
        raise _NotALiteral(f"expected {name}(...); {_describe(node)}")
    out = {}
    for arg in call.args:
        key = arg.name.lower() if isinstance(arg, cst.Call) else None
        if key in ("to", "end") and not arg.args and key not in out:  # end(): no end
            out[key] = None
            continue
        if key not in allowed or key in out or len(arg.args) != 1:
            raise _NotALiteral(f"{name} takes {' '.join(k + '(...)' for k in allowed)}")
        out[key] = _unwrap(arg.args[0])
    missing = [k for k in required if k not in out]
    if missing:
        raise _NotALiteral(f"{name} needs {missing[0]}(...)")
    return out


def _interval(t: IntervalType, node) -> Interval:
    meet = _call(node, "iintersect")
    if meet is not None and len(meet.args) == 2:
        # the empty interval's literal (``IntervalType.literal``): no selector makes one
        return _interval(t, _unwrap(meet.args[0])).intersect(_interval(t, _unwrap(meet.args[1])))
    kw = _keywords(node, t.name.lower(), ("from", "to", "begin", "end"), ())
    closed = "from" in kw or "to" in kw
    if closed and ("begin" in kw or "end" in kw) or ("from" not in kw and "begin" not in kw):
        raise _NotALiteral(f"{t.name.lower()} takes from(a)to(b) or begin(a)end(b)")
    first = _literal(t.point, kw["from" if closed else "begin"])
    last_node = kw.get("to" if closed else "end")
    if last_node is None:
        return Interval(first, None)
    last = _literal(t.point, last_node)
    if closed:
        if not t.point.ordinal:
            raise _NotALiteral("from/to needs an ordinal point type; use begin/end")
        if last < first:
            raise _NotALiteral(f"from {t.point.format(first)} is after to {t.point.format(last)}")
        return Interval(first, successor(t.point, last))
    return interval_value(t, first, last)


def interval_value(t: IntervalType, begin, end) -> Interval:
    """``[begin, end)`` read from data: ``end`` None is unbounded; ``begin == end`` is the
    empty interval (which IINTERSECT can produce and a file may hold); begin after end is an
    error."""
    if end is not None and end < begin:
        raise IntervalError(f"{t.name}: begin {t.point.format(begin)} is after end "
                        f"{t.point.format(end)}")
    return Interval(begin, end)


def _tuple_values(heading, node) -> tuple:
    from ..syntax import cst
    call = _call(node, "tuple")
    if call is None:
        raise _NotALiteral(f"expected tuple(...); {_describe(node)}")
    given = {}
    for item in call.args:
        if not isinstance(item, cst.Call) or len(item.args) != 1:
            raise _NotALiteral("expected name(value) in a tuple")
        key = item.name.lower()
        if key in given:
            raise _NotALiteral(f"attribute '{key}' appears twice in a tuple")
        if key not in heading:
            raise _NotALiteral(f"unknown attribute '{key}' (the heading has "
                               f"{', '.join(heading.names) or 'no attributes'})")
        given[key] = item.args[0]
    missing = [n for n in heading.names if n not in given]
    if missing:
        raise _NotALiteral(f"no value for '{missing[0]}' (sira has no nulls)")
    return tuple(_literal(ty, given[n]) for n, ty in heading.attributes)


def _relation(t: RelationType, node) -> Relation:
    from ..syntax.builder import Builder
    call = _call(node, "relation")
    if call is None:
        raise _NotALiteral(f"expected relation(...); {_describe(node)}")
    body = []
    for part in call.args:
        if _call(part, "heading") is not None:
            declared = Builder().heading_literal(part)
            if declared != t.heading:
                raise _NotALiteral(f"heading {declared} instead of {t.heading}")
        elif _call(part, "body") is not None:
            body.extend(part.args)
        else:
            raise _NotALiteral(f"expected heading(...) or body(...) in a relation; "
                               f"{_describe(part)}")
    rows = frozenset(_tuple_values(t.heading, row) for row in body)
    return Relation(t.heading, rows)


__all__ = ["FLOAT_TEXT", "INFINITY_TEXT", "MAX_INTEGER_DIGITS", "NAN", "NAN_TEXT", "int_to_text",
           "interval_value", "parse_type", "read_boolean", "read_date", "read_float",
           "read_integer", "read_literal", "read_scalar", "read_timestamp", "text_to_int"]
