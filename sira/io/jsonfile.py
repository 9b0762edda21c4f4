"""JSON files: ``{"heading": {name: type}, "body": [{name: value}, ...]}``.

Values follow the Arrow mapping: numbers, strings and booleans as JSON values (integers of any
size), DATE and TIMESTAMP as ISO strings (a timestamp with a UTC offset, ``...T12:00+02:00``, is
converted to UTC; sira writes none), an interval as ``{"begin": b, "end": e}`` (``end``
null or absent: unbounded), an AVERAGE as ``{"count": n, "value": v}``, a tuple-valued
attribute as an object, a relation-valued attribute as a list of objects in canonical order.
Infinite FLOATs are the strings ``"Infinity"`` and ``"-Infinity"``: sira never writes the
``Infinity``/``NaN`` tokens, which are not JSON.

Reading also accepts, for the types above that are not JSON scalars, a string holding a
literal in the text syntax (``"intinterval(from(4)to(7))"``), and for a relation-valued
attribute a nested ``{"heading", "body"}`` object. Nothing is ever evaluated: ``"plus(2,3)"``
in an INT attribute is an error. An object that repeats a key, in any case (``{"a": 1,
"A": 2}``), is refused. ``null``, a missing attribute and NaN (the token or the string) are
NULLs, refused unless ``nulls="drop"``.

    >>> import io
    >>> text = '{"heading": {"a": "int", "during": "intinterval"},' \\
    ...        ' "body": [{"a": 1, "during": {"begin": 4, "end": 8}}]}'
    >>> read_json(io.StringIO(text)).to_rows()
    [{'a': 1, 'during': Interval(begin=4, end=8)}]
"""

from __future__ import annotations

import json
import math

from ..errors import DataFormatError, SiraError
from ..intervals import IntervalType, as_held
from ..types import (AVERAGE, BOOLEAN, DATE, FLOAT, LONG, STRING, TIMESTAMP, Average, IntegerType,
                     RelationType, TupleType, Type)
from ..values import Heading, Relation, Tuple, type_text
from ._support import attribute_names, open_text, source_name, to_type, unlimited_int_digits
from .literals import (NAN, interval_value, read_date, read_float, read_literal,
                       read_timestamp, text_to_int)
from .report import NullTally, ReadReport, check_policy


class _Object(dict):
    """A JSON object that remembers the first key it saw twice (in any case)."""

    duplicate: tuple | None = None


class _Null(Exception):
    """A value that is NULL or NaN (sira has no nulls)."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


def _object(pairs) -> _Object:
    obj = _Object()
    seen = {}
    for key, value in pairs:
        low = key.lower()
        if low in seen and obj.duplicate is None:
            obj.duplicate = (seen[low], key)
        seen.setdefault(low, key)
        obj[key] = value
    return obj


def _constant(token: str) -> float:
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[token]


# =========================================================================== reading
def read_json(source, *, nulls: str = "error", report: ReadReport | None = None,
              name: str | None = None) -> Relation:
    """A relation from a JSON file in the form above.

    Args:
        source: a path or a text file object.
        nulls: ``"error"`` (default) or ``"drop"`` (tuples holding a NULL or NaN left out).
        report: a :class:`ReadReport` to fill in.
        name: the relvar name, for messages (defaults to the file name).
    Raises:
        DataFormatError: not JSON, not of that shape, a repeated key, a value that is not of
            its attribute's type, nesting too deep (each names the tuple and the attribute).
        NullValue: a NULL or NaN under ``nulls="error"``.
        DataSourceError: the file cannot be read.
    """
    where = source_name(source)
    with open_text(source) as f:
        try:
            text = f.read()
        except UnicodeDecodeError as err:
            raise DataFormatError(f"{where}: not UTF-8 text ({err.reason} at byte {err.start})",
                                  source=where) from None
    data = parse_json(text, where)
    return relation_from_json(data, where, nulls=nulls, report=report, name=name)


def parse_json(text: str, where: str):
    """JSON text parsed with sira's rules: repeated keys remembered, integers of any size,
    NaN and Infinity tokens accepted (as NaN, a NULL, and infinities)."""
    try:
        return json.loads(text, object_pairs_hook=_object, parse_int=text_to_int,
                          parse_constant=_constant)
    except json.JSONDecodeError as err:
        raise DataFormatError(f"{where}: not JSON ({err.msg} at line {err.lineno}, column "
                              f"{err.colno})", source=where, line=err.lineno) from None
    except RecursionError:
        raise DataFormatError(f"{where}: JSON nested too deeply to read", source=where) from None
    except ValueError as err:  # an integer with too many digits
        raise DataFormatError(f"{where}: {err}", source=where) from None


def relation_from_json(data, source: str = "<json>", *, nulls: str = "error",
                       report: ReadReport | None = None, name: str | None = None) -> Relation:
    """A relation from already parsed JSON (``{"heading": ..., "body": [...]}``)."""
    check_policy(nulls)
    report = report if report is not None else ReadReport()
    report.source = report.source or source
    try:
        return _relation(data, source, nulls, report, name or source)
    except RecursionError:
        raise DataFormatError(f"{source}: nested too deeply to read", source=source) from None


def _check_keys(obj, where: str) -> None:
    if isinstance(obj, _Object) and obj.duplicate is not None:
        first, second = obj.duplicate
        same = "twice" if first == second else f"twice (as '{first}' and '{second}')"
        raise DataFormatError(f"{where}: key '{second}' appears {same}; names are "
                              f"case-insensitive and a key may appear once",
                              value=second, source=where)


def _relation(data, source, nulls, report, relvar) -> Relation:
    heading = _heading(data, source)
    body = data.get("body", [])
    if not isinstance(body, list):
        raise DataFormatError(f'{source}: "body" must be a list of objects', source=source)
    tally = NullTally()
    rows = []
    for number, row in enumerate(body, 1):
        where = f"{source}, tuple {number}"
        try:
            rows.append((number, _row(heading, row, where, report)))
        except _NullAt as null:
            tally.note(null.attribute, null.kind, number)
    drop = tally.apply(nulls, relvar, report)
    relation = Relation(heading, frozenset(values for number, values in rows))
    report.finish(len(body), len(relation), len(drop))
    return relation


def _heading(data, source) -> Heading:
    if not isinstance(data, dict) or not isinstance(data.get("heading"), dict):
        raise DataFormatError(f'{source}: expected {{"heading": {{name: type, ...}}, '
                              f'"body": [{{name: value, ...}}, ...]}}', source=source)
    _check_keys(data, source)
    extra = sorted(set(data) - {"heading", "body"})
    if extra:
        raise DataFormatError(f"{source}: unknown key '{extra[0]}' (expected heading and body)",
                              value=extra[0], source=source)
    declared = data["heading"]
    _check_keys(declared, f"{source}, heading")
    names = attribute_names(list(declared), f"{source}, heading")
    types = []
    for n, type_name in zip(names, declared.values()):
        if not isinstance(type_name, str):
            raise DataFormatError(f"{source}, heading: the type of '{n}' must be a string such "
                                  f"as \"int\" (got {type_name!r})", source=source, attribute=n)
        types.append(to_type(type_name, f"{source}, heading, attribute '{n}'"))
    return Heading.of(list(zip(names, types)))


class _NullAt(Exception):
    def __init__(self, attribute, kind):
        super().__init__(attribute, kind)
        self.attribute, self.kind = attribute, kind


def _row(heading: Heading, row, where: str, report) -> tuple:
    """One tuple (values in heading order); raises _NullAt for its first NULL or NaN."""
    given = _fields_of(heading, row, where)
    values = []
    for n, t in heading.attributes:
        if n not in given:
            raise _NullAt(n, "NULL")
        try:
            values.append(_value(t, given[n], f"{where}, attribute '{n}'", report))
        except _Null as null:
            raise _NullAt(n, null.kind) from None
    return tuple(values)


def _fields_of(heading: Heading, row, where: str) -> dict:
    if not isinstance(row, dict):
        raise DataFormatError(f"{where}: expected an object, got {_kind(row)}", source=where)
    _check_keys(row, where)
    given = {k.lower(): v for k, v in row.items()}
    extra = sorted(set(given) - set(heading.names))
    if extra:
        raise DataFormatError(f"{where}: unknown attribute '{extra[0]}' (the heading has "
                              f"{', '.join(heading.names) or 'no attributes'})",
                              value=extra[0], source=where, attribute=extra[0])
    return given


def _kind(value) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number", type(None): "null"}.get(type(value),
                                                                     type(value).__name__)


def _value(t: Type, value, where: str, report):
    """A JSON value as a value of type ``t``; raises _Null for a NULL or NaN inside."""
    if value is None:
        raise _Null("NULL")
    try:
        return _convert(t, value, where, report)
    except (_Null, _NullAt, DataFormatError):
        raise
    except (ValueError, OverflowError) as err:
        raise DataFormatError(f"{where}: {err}", source=where) from None
    except SiraError as err:
        raise DataFormatError(f"{where}: {err.message.splitlines()[0]}", source=where) from None


def _wrong(t: Type, value, where: str) -> DataFormatError:
    shown = repr(value) if not isinstance(value, (dict, list)) else _kind(value)
    return DataFormatError(f"{where}: expected {_expected(t)}, got {shown[:60]}",
                           value=shown[:60], source=where)


def _expected(t: Type) -> str:
    from ..types import article
    return article(t.name)


def _convert(t: Type, value, where: str, report):
    if isinstance(value, str) and t not in (STRING, DATE, TIMESTAMP, FLOAT) \
            and not isinstance(t, IntegerType):
        try:
            return read_literal(t, value)
        except DataFormatError as err:
            raise DataFormatError(f"{where}: {err.message}", value=err.value,
                                  source=where) from None
    if isinstance(t, IntegerType):
        if isinstance(value, str):
            return t.fit(text_to_int(value))
        if isinstance(value, bool) or not isinstance(value, int):
            raise _wrong(t, value, where)
        return t.fit(value)
    if t == FLOAT:
        return _float(value, where)
    if t == STRING:
        if not isinstance(value, str):
            raise _wrong(t, value, where)
        return value
    if t == BOOLEAN:
        if not isinstance(value, bool):
            raise _wrong(t, value, where)
        return value
    if t in (DATE, TIMESTAMP):
        if not isinstance(value, str):
            raise _wrong(t, value, where)
        return read_date(value) if t == DATE else read_timestamp(value, report)
    if isinstance(t, IntervalType):
        return _interval(t, value, where, report)
    if t == AVERAGE:
        parts = _parts(value, ("count", "value"), ("count", "value"), t, where)
        return Average(_value(LONG, parts["count"], f"{where}.count", report),
                       _value(FLOAT, parts["value"], f"{where}.value", report))
    if isinstance(t, TupleType):
        return Tuple(t.heading, _nested_row(t.heading, value, where, report))
    if isinstance(t, RelationType):
        return _nested_relation(t, value, where, report)
    raise _wrong(t, value, where)


def _float(value, where):
    if isinstance(value, str):
        number = read_float(value)
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _wrong(FLOAT, value, where)
    else:
        number = float(value) + 0.0
    if number is NAN or math.isnan(number):
        raise _Null("NaN")
    return number


def _parts(value, allowed, required, t, where) -> dict:
    if not isinstance(value, dict):
        raise _wrong(t, value, where)
    _check_keys(value, where)
    parts = {k.lower(): v for k, v in value.items()}
    extra = sorted(set(parts) - set(allowed))
    missing = [k for k in required if k not in parts]
    if extra or missing:
        problem = f"unknown key {extra[0]!r}" if extra else f"no {missing[0]}"
        raise DataFormatError(f"{where}: {t.name} is an object with "
                              f"{' and '.join(allowed)} ({problem})", source=where)
    return parts


def _interval(t: IntervalType, value, where, report):
    parts = _parts(value, ("begin", "end"), ("begin",), t, where)
    begin = _value(t.point, parts["begin"], f"{where}.begin", report)
    end = parts.get("end")
    if end is not None:
        end = _value(t.point, end, f"{where}.end", report)
    return interval_value(t, begin, end)


def _nested_row(heading, value, where, report) -> tuple:
    given = _fields_of(heading, value, where)
    missing = [n for n in heading.names if n not in given]
    if missing:
        raise _Null("NULL")
    return tuple(_value(t, given[n], f"{where}.{n}", report) for n, t in heading.attributes)


def _nested_relation(t: RelationType, value, where, report) -> Relation:
    if isinstance(value, dict):  # {"heading": ..., "body": [...]}
        heading = _heading(value, where)
        if heading != t.heading:
            raise DataFormatError(f"{where}: a relation with heading {heading} where "
                                  f"{t.heading} is expected", source=where)
        value = value.get("body", [])
    if not isinstance(value, list):
        raise _wrong(t, value, where)
    return Relation(t.heading, frozenset(_nested_row(t.heading, row, f"{where}[{i}]", report)
                                         for i, row in enumerate(value)))


# =========================================================================== writing
def value_to_json(t: Type, value):
    """One value as JSON data (the inverse of reading)."""
    if isinstance(t, IntegerType) or t in (STRING, BOOLEAN):
        return value
    if t == FLOAT:
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if t in (DATE, TIMESTAMP):
        return value.isoformat()
    if isinstance(t, IntervalType):
        value = as_held(t, value)  # every empty interval is one object
        return {"begin": value_to_json(t.point, value.begin),
                "end": None if value.end is None else value_to_json(t.point, value.end)}
    if t == AVERAGE:
        return {"count": value.count, "value": value_to_json(FLOAT, value.value)}
    if isinstance(t, TupleType):
        return _object_of(t.heading, value.values)
    if isinstance(t, RelationType):
        return [_object_of(t.heading, row) for row in value.sorted_body()]
    return t.literal(value)


def _object_of(heading: Heading, row) -> dict:
    return {n: value_to_json(t, v) for (n, t), v in zip(heading.attributes, row)}


def relation_to_json(relation: Relation) -> dict:
    """``{"heading": {name: type}, "body": [{name: value}, ...]}``, tuples in canonical order.

    >>> import sira
    >>> relation_to_json(sira.Relation.from_rows({"x": sira.FLOAT}, [(float("inf"),)]))
    {'heading': {'x': 'float'}, 'body': [{'x': 'Infinity'}]}
    """
    heading = relation.heading
    return {"heading": {n: type_text(t) for n, t in heading.attributes},
            "body": [_object_of(heading, row) for row in relation.sorted_body()]}


def dumps(data, indent: int | None = 2) -> str:
    """JSON text of data made by this module: never ``NaN``/``Infinity`` tokens, integers of
    any size."""
    with unlimited_int_digits():
        return json.dumps(data, indent=indent, allow_nan=False, ensure_ascii=False)


def write_json(relation: Relation, target, *, indent: int | None = 2) -> None:
    """Write the relation as JSON (:func:`read_json` reads it back as the same relation).

    Args:
        target: a path or a text file object.
        indent: spaces per level (None: one line).
    """
    text = dumps(relation_to_json(relation), indent)
    with open_text(target, "w") as f:
        f.write(text)
        f.write("\n")
