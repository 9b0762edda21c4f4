"""CSV files: typed headers (``name:type``) or type inference, read cell by cell as literals.

    >>> import io
    >>> r = read_csv(io.StringIO("name,born\\nAnn,1990-05-01\\nBob,1985-11-30\\n"))
    >>> r.heading
    Heading({born: DATE, name: STRING})
"""

from __future__ import annotations

import contextlib
import csv
import re

from ..errors import DataFormatError, DataSourceError, SiraError
from ..types import (BIGINT, BOOLEAN, DATE, FLOAT, INT, LONG, STRING, TIMESTAMP, IntegerType,
                     Type)
from ..values import Heading, Relation, type_text
from ._support import (attribute_names, declared_types, open_text, source_name, to_type,
                       unlimited_int_digits)
from .literals import (FLOAT_TEXT, INFINITY_TEXT, NAN, NAN_TEXT, int_to_text, read_scalar,
                       read_timestamp, text_to_int)
from .report import NullTally, ReadReport, check_policy

NULL_TOKENS = frozenset({"", "null", "na", "n/a"})
"""Cells (stripped, any case) that are NULL in a column of any type but STRING."""

_PLAIN_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_LEADING_ZERO = re.compile(r"-?0[0-9]")  # 007, 00.5: codes, not numbers
_BOOLEAN_WORDS = frozenset({"true", "false"})
_FIELD_LIMIT = 1 << 30


class _Missing:
    """A cell that holds no value: NULL or NaN."""

    def __init__(self, kind):
        self.kind = kind


_NULL_CELL = _Missing("NULL")
_NAN_CELL = _Missing("NaN")


# =========================================================================== reading
def read_csv(source, *, types=None, header: bool = True, names=None, delimiter: str = ",",
             nulls: str = "error", report: ReadReport | None = None,
             name: str | None = None) -> Relation:
    """A relation from a CSV file.

    Header cells are ``name:type`` (``pagesize:int``; the types as in the text syntax:
    ``int long bigint float string boolean date timestamp``, ``average``, interval types,
    ``relation(heading(...))``, ``tuple(heading(...))``) or a bare ``name``, whose type is
    inferred from the column: INT, LONG or BIGINT when every cell is an integer (without
    leading zeros: ``007`` stays a STRING), FLOAT when every cell is a number, BOOLEAN for
    ``true``/``false``, DATE for ``YYYY-MM-DD``, TIMESTAMP for ISO timestamps (dates mixed in
    are midnight), else STRING. ``types=`` overrides both.

    Every cell is read as a literal of its attribute's type and nothing else: integers,
    decimal numbers (and ``inf``), ``true``/``false`` (or ``1``/``0``), ISO dates and
    timestamps (one with a UTC offset is converted to UTC), raw text for STRING, and for the
    other types a literal in the text syntax (``intinterval(from(4)to(7))``): an expression
    such as ``plus(2,3)`` is an error, never evaluated. In a column of any type but STRING an
    empty cell and ``NULL``, ``NA``, ``N/A`` (any case) are NULLs and ``NaN`` in a FLOAT column
    is NaN: refused with :class:`NullValue` unless ``nulls="drop"``. In a STRING column every
    cell is text (an empty cell is the empty string).

    Args:
        source: a path or a text file object.
        types: ``{name: type}`` (sira types or their text) overriding the header and inference.
        header: False when the file has no header line; the names then come from ``names``
            (or from ``types``, in its order).
        names: the attribute names in column order, for a file without a header.
        delimiter: one character (``","``; ``"\\t"`` for TSV).
        nulls: ``"error"`` (default) or ``"drop"`` (rows holding a NULL or NaN are left out).
        report: a :class:`ReadReport` to fill in (duplicates collapsed, rows dropped).
        name: the relvar name, for messages (defaults to the file name).
    Returns:
        the relation; duplicate rows collapse into one tuple.
    Raises:
        DataFormatError: a malformed header, a wrong number of cells, an unterminated quote, a
            cell that is not a literal of its type (each names the line and the attribute).
        NullValue: a NULL or NaN, under ``nulls="error"``.
        DataSourceError: the file cannot be read.
    """
    check_policy(nulls)
    report = report if report is not None else ReadReport()
    where = source_name(source)
    report.source = where
    _check_delimiter(delimiter)
    records = _records(source, delimiter, where)
    if header:
        if names is not None:
            raise DataFormatError(f"{where}: names= is for a file without a header line "
                                  f"(header=False); rename attributes with types= or RENAME",
                                  source=where)
        if not records:
            raise DataFormatError(f"{where}: empty CSV file (the first line is the header: "
                                  f"name or name:type cells, e.g. filename:string,pagesize:int)",
                                  source=where, line=1)
        column_names, header_types = _header(records[0][1], where)
        body = records[1:]
    else:
        column_names, header_types = _given_names(names, types, where), {}
        body = records
    lower = attribute_names(column_names, f"{where}, line 1" if header else where)
    header_types = {k.lower(): v for k, v in header_types.items()}
    declared = {**header_types, **declared_types(types, lower, where)}
    if not lower:
        return _nullary(body, report)
    body = [(line, cells) for line, cells in body if cells]
    for line, cells in body:
        if len(cells) != len(lower):
            raise DataFormatError(f"{where}, line {line}: {len(cells)} cells for "
                                  f"{len(lower)} attributes ({', '.join(lower)})",
                                  source=where, line=line)
    column_types = [declared.get(n) or infer_type([cells[i] for _, cells in body])
                    for i, n in enumerate(lower)]
    heading = Heading.of(list(zip(lower, column_types)))
    return _relation(heading, lower, body, nulls, report, name or where, where)


def _check_delimiter(delimiter):
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in "\"\r\n":
        raise DataFormatError(f"delimiter={delimiter!r}: the delimiter is one character other "
                              f"than a quote or a line break", value=repr(delimiter))


@contextlib.contextmanager
def _large_fields():
    old = csv.field_size_limit()
    csv.field_size_limit(_FIELD_LIMIT)
    try:
        yield
    finally:
        csv.field_size_limit(old)


def _records(source, delimiter, where) -> list:
    """``(first line, cells)`` for every record; a blank line is a record without cells."""
    out = []
    try:
        with _large_fields(), open_text(source) as f:
            reader = csv.reader(f, delimiter=delimiter, strict=True)
            while True:
                start = reader.line_num + 1
                try:
                    cells = next(reader)
                except StopIteration:
                    return out
                except csv.Error as err:
                    raise DataFormatError(f"{where}, line {start}: {_csv_problem(err)}",
                                          source=where, line=start) from None
                out.append((start, cells))
    except UnicodeDecodeError as err:
        raise DataSourceError(source=where, reason=f"not UTF-8 text ({err.reason} at byte "
                                                   f"{err.start})") from None


def _csv_problem(err) -> str:
    text = str(err)
    if "unexpected end of data" in text:
        return "a quoted cell is never closed (unterminated quote)"
    return text


def _header(cells, where) -> tuple:
    """Names in file order and {name: declared type} for the ``name:type`` cells."""
    names, declared = [], {}
    for number, cell in enumerate(cells, 1):
        name, sep, type_name = cell.strip().partition(":")
        name = name.strip()
        names.append(name)
        if sep:
            declared[name] = to_type(type_name.strip(),
                                     f"{where}, line 1, column {number} ('{name}')")
    return names, declared


def _given_names(names, types, where) -> list:
    if names is not None:
        return [str(n) for n in names]
    if types:
        return [str(n) for n in (types.keys() if hasattr(types, "keys") else
                                 (n for n, _ in types))]
    raise DataFormatError(f"{where}: header=False needs names= (or types=) giving the "
                          f"attribute names in column order", source=where)


def _nullary(body, report) -> Relation:
    """A file whose header line is empty: degree 0, TABLE_DEE when any line follows."""
    report.finish(len(body), 1 if body else 0, 0)
    return Relation(Heading(), frozenset({()}) if body else frozenset())


def _relation(heading, lower, body, nulls, report, relvar, where) -> Relation:
    columns = [lower.index(n) for n in heading.names]  # heading position -> file column
    readers = [None if t == STRING else t for t in heading.types]
    tally = NullTally()
    rows = []
    for line, cells in body:
        row = []
        for position, (column, read) in enumerate(zip(columns, readers)):
            value = _cell(read, cells[column], heading.types[position], report, where, line,
                          heading.names[position])
            if isinstance(value, _Missing):
                tally.note(lower[column], value.kind, line)
            row.append(value)
        rows.append((line, tuple(row)))
    # attributes in file order, so the error names the first NULL column as the file shows it
    tally.rows = {n: tally.rows[n] for n in lower if n in tally.rows}
    drop = tally.apply(nulls, relvar, report)
    relation = Relation(heading, frozenset(row for line, row in rows if line not in drop))
    report.finish(len(body), len(relation), len(drop))
    return relation


def _cell(t, text, declared, report, where, line, attribute):
    """One cell as a value of its type, or a _Missing marker."""
    if t is None:
        return text
    if text.strip().lower() in NULL_TOKENS:
        return _NULL_CELL
    try:
        value = read_scalar(t, text, report)
    except (ValueError, OverflowError, SiraError) as err:
        clipped = text if len(text) <= 60 else text[:57] + "..."
        problem = (err.message if isinstance(err, DataFormatError) else
                   f"cannot read {clipped!r} as {declared.name} "
                   f"({getattr(err, 'message', None) or err})")
        raise DataFormatError(f"{where}, line {line}, attribute '{attribute}': {problem}",
                              value=clipped, source=where, line=line,
                              attribute=attribute) from None
    return _NAN_CELL if value is NAN else value


# =========================================================================== inference
def infer_type(cells) -> Type:
    """The type of a column from its cells (NULL cells ignored; no evidence: STRING).

    >>> infer_type(["1", "2", ""]), infer_type(["1", "2.5"]), infer_type(["007", "1"])
    (INT, FLOAT, STRING)
    """
    values = [c.strip() for c in cells if c.strip().lower() not in NULL_TOKENS]
    if not values:
        return STRING
    if all(v.lower() in _BOOLEAN_WORDS for v in values):
        return BOOLEAN
    if all(_PLAIN_INT.fullmatch(v) for v in values):
        return _integer_type(values)
    if _all_numbers(values):
        return FLOAT
    if all(_is_timestamp(v) for v in values):
        return DATE if all(len(v) == 10 for v in values) else TIMESTAMP
    return STRING


def _integer_type(values) -> Type:
    try:
        numbers = [text_to_int(v) for v in values]
    except ValueError:  # more digits than a reader accepts
        return STRING
    for t in (INT, LONG):
        if all(t.min <= n <= t.max for n in numbers):
            return t
    return BIGINT


def _all_numbers(values) -> bool:
    """Every cell a number (integers no larger than 2**53, so FLOAT holds them exactly), at
    least one of them not inf or nan."""
    real = False
    for v in values:
        if v.startswith("+") or _LEADING_ZERO.match(v):
            return False
        if _PLAIN_INT.fullmatch(v):
            if abs(text_to_int(v)) > 2 ** 53:
                return False
            real = True
        elif FLOAT_TEXT.fullmatch(v):
            real = True
        elif not (INFINITY_TEXT.fullmatch(v) or NAN_TEXT.fullmatch(v)):
            return False
    return real


def _is_timestamp(text: str) -> bool:
    try:
        read_timestamp(text)
    except ValueError:
        return False
    return True


# =========================================================================== writing
def write_csv(relation: Relation, target, *, delimiter: str = ",", header: bool = True,
              typed_header: bool = True) -> None:
    """Write the relation as CSV, tuples in canonical order, columns in the heading's order.

    The header cells are ``name:type`` (``typed_header=False``: bare names), so that
    :func:`read_csv` gives the same relation back. Cells: integers of any size, floats as
    Python prints them (``inf``), raw text, ``true``/``false``, ISO dates and timestamps, and
    values of the other types in the text syntax. A relation of degree 0 is an empty header
    line followed by one empty line for TABLE_DEE.

    Args:
        target: a path or a text file object (open it with ``newline=""``).
    """
    _check_delimiter(delimiter)
    heading = relation.heading
    with unlimited_int_digits(), open_text(target, "w") as f:
        writer = csv.writer(f, delimiter=delimiter)
        if header:
            writer.writerow([f"{n}:{type_text(t)}" if typed_header else n
                             for n, t in heading.attributes])
        for row in relation.sorted_body():
            writer.writerow([cell_text(t, v) for t, v in zip(heading.types, row)])


def cell_text(t: Type, value) -> str:
    """One value as a CSV cell (:func:`read_csv` reads it back as the same value)."""
    if t == STRING:
        return value
    if isinstance(t, IntegerType):
        return int_to_text(value)
    if t == FLOAT:
        return repr(value)
    if t == BOOLEAN:
        return "true" if value else "false"
    if t in (DATE, TIMESTAMP):
        return value.isoformat()
    return t.literal(value)
