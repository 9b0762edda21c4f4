"""Relations to and from Arrow tables, pandas DataFrames, Parquet and Arrow IPC files.

Arrow is the hub: pandas goes through it and Parquet stores it. The types follow the mapping
in :mod:`sira.io.mapping`. Reading converts column by column (Arrow casts and ``to_pylist``),
then builds the body from the columns in one pass; writing transposes the body (in canonical
order) into columns.
"""

from __future__ import annotations

import operator
import os

from ..collector import collector_paused
from ..errors import DataFormatError, DataSourceError, SiraError
from ..intervals import Interval, IntervalType, as_held
from ..types import (AVERAGE, BIGINT, BOOLEAN, DATE, FLOAT, INT, LONG, STRING, TIMESTAMP,
                     Average, RelationType, TupleType, Type)
from ..values import Heading, Relation, Tuple, type_text
from ._support import attribute_names, declared_types, require, source_name, to_type
from .literals import NAN, interval_value, read_scalar
from .mapping import CARDINALITY_KEY, TYPE_KEY, arrow_schema, arrow_type, sira_type_of
from .report import NullTally, ReadReport, check_policy

_FEATURE = "Arrow, Parquet and pandas conversion"
_BEGIN, _END = operator.attrgetter("begin"), operator.attrgetter("end")


def _pa():
    return require("pyarrow", _FEATURE)


def _pc():
    require("pyarrow", _FEATURE)
    return require("pyarrow.compute", _FEATURE)


# =========================================================================== reading
@collector_paused()
def from_arrow(table, *, types=None, nulls: str = "error", report: ReadReport | None = None,
               name: str | None = None) -> Relation:
    """A relation from an Arrow table (or record batch); one attribute per column.

    Args:
        table: a ``pyarrow.Table`` or ``pyarrow.RecordBatch``.
        types: ``{column: type}`` (a sira type or its text, ``"int"``) overriding the mapping.
        nulls: ``"error"`` (default): a NULL or NaN anywhere raises :class:`NullValue` naming
            the attribute and the number of rows; ``"drop"``: those rows are left out.
        report: a :class:`ReadReport` to fill in (rows, duplicates collapsed, rows dropped).
        name: the relvar name, for messages.
    Returns:
        the relation (duplicate rows collapse).
    Raises:
        NullValue, DataFormatError, DuplicateAttribute, MissingExtra.

    >>> import pyarrow as pa
    >>> r = from_arrow(pa.table({"a": pa.array([1, 2, 2], pa.int32())}))
    >>> r.heading, len(r)
    (Heading({a: INT}), 2)
    """
    pa = _pa()
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    if not isinstance(table, pa.Table):
        raise DataFormatError(f"from_arrow takes a pyarrow Table or RecordBatch, not "
                              f"{type(table).__name__}", value=type(table).__name__)
    return relation_from_table(table, types=types, nulls=nulls, report=report, name=name,
                               where=name or "<arrow table>")


def relation_from_table(table, *, types=None, hints=None, nulls="error", report=None, name=None,
                        where: str, cardinality: int | None = None) -> Relation:
    """The shared reader behind from_arrow, from_pandas, read_parquet and read_arrow.

    ``hints`` ({name: type text}) decide only where the Arrow type cannot: a column of nulls
    (an empty object column from pandas) and structs (interval, AVERAGE or tuple)."""
    check_policy(nulls)
    report = report if report is not None else ReadReport()
    report.source = report.source or where
    names = attribute_names(table.column_names, where)
    declared = declared_types(types, names, where)
    heading = Heading.of([(n, _column_type(n, field, declared, hints, where))
                          for n, field in zip(names, table.schema)])
    if heading.degree == 0:
        return _nullary(table, cardinality, report)
    tally = NullTally()
    columns = {}
    for n, column in zip(names, table.columns):
        values, bad = column_values(heading[n], column, f"{where}: attribute '{n}'", report)
        for row, kind in bad.items():
            tally.note(n, kind, row)
        columns[n] = values
    drop = tally.apply(nulls, name or where, report)
    rows = zip(*(columns[n] for n in heading.names))
    if drop:
        rows = (row for i, row in enumerate(rows) if i not in drop)
    relation = Relation(heading, frozenset(rows))
    report.finish(table.num_rows, len(relation), len(drop))
    return relation


def _nullary(table, cardinality, report) -> Relation:
    metadata = table.schema.metadata or {}
    if cardinality is None and CARDINALITY_KEY in metadata:
        cardinality = int(metadata[CARDINALITY_KEY])
    if cardinality is None:
        cardinality = table.num_rows
    report.finish(cardinality, 1 if cardinality else 0, 0)
    return Relation(Heading(), frozenset({()}) if cardinality else frozenset())


def _column_type(name, field, declared, hints, where) -> Type:
    """types= first, then the sira type written in the field's metadata, then a hint where
    Arrow cannot tell, then the mapping."""
    pa = _pa()
    if name in declared:
        return declared[name]
    metadata = field.metadata or {}
    if TYPE_KEY in metadata:
        return to_type(metadata[TYPE_KEY].decode("utf-8", "replace"),
                       f"{where}: column '{field.name}' (its sira.type metadata)")
    hint = (hints or {}).get(name)
    if hint is not None and (pa.types.is_null(field.type) or pa.types.is_struct(field.type)
                             or pa.types.is_list(field.type)):
        return to_type(hint, f"{where}: column '{field.name}'")
    return sira_type_of(field.type, f"{where}: column '{field.name}'")


def column_values(t: Type, column, where: str, report) -> tuple:
    """``(values, bad)``: the Python values of one column (or nested array) as values of
    ``t``, and ``{row: "NULL" | "NaN"}`` for the rows holding a null or a NaN anywhere inside
    (an interval's null end excepted: it means unbounded)."""
    pa = _pa()
    if isinstance(column, pa.ChunkedArray) and not _is_plain(t):
        column = column.combine_chunks()
    dt = column.type
    if pa.types.is_dictionary(dt):
        column = column.cast(dt.value_type)
        dt = column.type
    if pa.types.is_null(dt):
        return [None] * len(column), {i: "NULL" for i in range(len(column))}
    if _is_text(pa, dt) and t != STRING:
        return _parsed_values(t, column, where, report)
    if isinstance(t, IntervalType):
        return _interval_values(t, column, where, report)
    if t == AVERAGE:
        return _average_values(column, where, report)
    if isinstance(t, TupleType):
        rows, bad = _struct_rows(t.heading, column, where, report)
        return [None if row is None else Tuple(t.heading, row) for row in rows], bad
    if isinstance(t, RelationType):
        return _relation_values(t, column, where, report)
    return _scalar_values(t, column, where, report)


def _is_plain(t) -> bool:
    return t in (INT, LONG, BIGINT, FLOAT, STRING, BOOLEAN, DATE, TIMESTAMP)


def _is_text(pa, dt) -> bool:
    view = getattr(pa.types, "is_string_view", lambda _: False)
    return pa.types.is_string(dt) or pa.types.is_large_string(dt) or view(dt)


def _null_rows(column) -> dict:
    if column.null_count == 0:
        return {}
    pc = _pc()
    return {i: "NULL" for i in pc.indices_nonzero(pc.is_null(column)).to_pylist()}


def _scalar_values(t, column, where, report) -> tuple:
    pa, pc = _pa(), _pc()
    bad = _null_rows(column)
    column = _cast(t, column, where, report)
    if t == FLOAT:
        nan = pc.is_nan(column)
        if pc.any(nan).as_py():
            for i in pc.indices_nonzero(nan).to_pylist():
                bad.setdefault(i, "NaN")
        column = pc.add(column, pa.scalar(0.0))  # -0.0 and 0.0 are one value
    try:
        values = column.to_pylist()
    except (ValueError, OverflowError) as err:  # a timestamp beyond year 9999...
        raise DataFormatError(f"{where}: {err}", source=where) from None
    if t == BIGINT and pa.types.is_decimal(column.type):
        values = [None if v is None else int(v) for v in values]
    return values, bad


def _cast(t, column, where, report):
    """The column as the Arrow type sira reads values of ``t`` from (a checked cast)."""
    pa = _pa()
    dt = column.type
    types = pa.types
    accepted = {
        INT: types.is_integer(dt) or (types.is_decimal(dt) and dt.scale == 0),
        LONG: types.is_integer(dt) or (types.is_decimal(dt) and dt.scale == 0),
        BIGINT: types.is_integer(dt) or (types.is_decimal(dt) and dt.scale == 0),
        FLOAT: types.is_floating(dt) or types.is_integer(dt) or types.is_decimal(dt),
        STRING: _is_text(pa, dt), BOOLEAN: types.is_boolean(dt),
        DATE: types.is_date(dt) or (types.is_timestamp(dt) and dt.tz is None),
        TIMESTAMP: types.is_timestamp(dt) or types.is_date(dt),
    }
    if not accepted.get(t, False):
        raise DataFormatError(f"{where}: a column of Arrow type {dt} cannot be read as {t.name}",
                              value=str(dt), source=where)
    if t == BIGINT:
        return column
    if t == DATE and types.is_timestamp(dt):
        return _midnights(column, where)
    if t == TIMESTAMP and types.is_timestamp(dt) and dt.tz is not None:
        report.converted_to_utc += len(column) - column.null_count
    target = arrow_type(t)
    if dt == target:
        return column
    try:
        return column.cast(target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
        hint = (" (TIMESTAMP holds microseconds: round the column first)"
                if t == TIMESTAMP else "")
        raise DataFormatError(f"{where}: cannot read {dt} as {t.name}: {err}{hint}",
                              value=str(dt), source=where) from None


def _midnights(column, where):
    """Timestamps declared DATE (pandas holds dates as datetime64): each must be a midnight,
    since Arrow's cast would drop a time of day without a word."""
    pa, pc = _pa(), _pc()
    dates = column.cast(pa.date32())
    if not pc.all(pc.equal(dates.cast(column.type), column)).as_py() in (True, None):
        raise DataFormatError(f"{where}: timestamps with a time of day cannot be read as DATE "
                              f"(declare the attribute a TIMESTAMP)", source=where)
    return dates


def _parsed_values(t, column, where, report) -> tuple:
    """A text column declared as another type: each cell read as a literal of that type."""
    bad = {}
    values = []
    for i, text in enumerate(column.to_pylist()):
        if text is None:
            bad[i] = "NULL"
            values.append(None)
            continue
        try:
            value = read_scalar(t, text, report)
        except (ValueError, SiraError) as err:
            reason = getattr(err, "message", None) or str(err)
            raise DataFormatError(f"{where}, row {i + 1}: cannot read {text[:60]!r} as "
                                  f"{t.name} ({reason})", value=text[:60], source=where,
                                  line=i + 1) from None
        if value is NAN:
            bad[i] = "NaN"
            value = None
        values.append(value)
    return values, bad


def _fields(column, names: tuple, where: str) -> dict:
    """The flattened children of a struct column by (lowercased) name, parent nulls merged in;
    the children must be exactly ``names``."""
    pa = _pa()
    if not pa.types.is_struct(column.type):
        raise DataFormatError(f"{where}: a column of Arrow type {column.type} where a struct "
                              f"with fields {', '.join(names) or '(none)'} is expected",
                              value=str(column.type), source=where)
    dt = column.type
    given = [dt.field(i).name.lower() for i in range(dt.num_fields)]
    if sorted(given) != sorted(names):
        raise DataFormatError(f"{where}: struct fields {', '.join(given) or '(none)'} where "
                              f"{', '.join(names) or '(none)'} are expected",
                              value=str(dt), source=where)
    return dict(zip(given, column.flatten()))


def _interval_values(t: IntervalType, column, where, report) -> tuple:
    """Intervals from a struct<begin, end> column: a null end is unbounded; begin after end
    is an error; begin equal to end is the empty interval (only IINTERSECT makes one)."""
    children = _fields(column, ("begin", "end"), where)
    begins, bad = column_values(t.point, children["begin"], f"{where}.begin", report)
    ends, end_bad = column_values(t.point, children["end"], f"{where}.end", report)
    bad.update({i: kind for i, kind in end_bad.items() if kind == "NaN"})
    for i, (begin, end) in enumerate(zip(begins, ends)):
        if end is not None and begin is not None and end < begin and i not in bad:
            try:
                interval_value(t, begin, end)
            except SiraError as err:
                raise DataFormatError(f"{where}, row {i + 1}: {err.message}", source=where,
                                      line=i + 1) from None
    return list(map(Interval, begins, ends)), bad  # the values of bad rows are never used


def _average_values(column, where, report) -> tuple:
    children = _fields(column, ("count", "value"), where)
    counts, bad = column_values(LONG, children["count"], f"{where}.count", report)
    means, value_bad = column_values(FLOAT, children["value"], f"{where}.value", report)
    for i, kind in value_bad.items():
        bad.setdefault(i, kind)
    return [None if i in bad else Average(c, v)
            for i, (c, v) in enumerate(zip(counts, means))], bad


def _struct_rows(heading: Heading, column, where, report) -> tuple:
    """Rows (tuples in heading order) of a struct column, and the bad rows."""
    pa = _pa()
    if heading.degree == 0:
        if not pa.types.is_struct(column.type) or column.type.num_fields:
            _fields(column, (), where)
        bad = _null_rows(column)
        return [None if i in bad else () for i in range(len(column))], bad
    children = _fields(column, heading.names, where)
    bad = {}
    parts = []
    for n, t in heading.attributes:
        values, child_bad = column_values(t, children[n], f"{where}.{n}", report)
        for i, kind in child_bad.items():
            bad.setdefault(i, kind)
        parts.append(values)
    rows = [None if i in bad else row for i, row in enumerate(zip(*parts))]
    return rows, bad


def _relation_values(t: RelationType, column, where, report) -> tuple:
    pa = _pa()
    if not (pa.types.is_list(column.type) or pa.types.is_large_list(column.type)):
        raise DataFormatError(f"{where}: a column of Arrow type {column.type} where a list of "
                              f"structs is expected", value=str(column.type), source=where)
    bad = _null_rows(column)
    offsets = column.offsets.to_pylist()
    base = offsets[0]
    rows, inner_bad = _struct_rows(t.heading, column.flatten(), f"{where}[]", report)
    values = []
    for i in range(len(column)):
        start, end = offsets[i] - base, offsets[i + 1] - base
        kinds = [inner_bad[j] for j in range(start, end) if j in inner_bad] if inner_bad else ()
        if kinds:
            bad.setdefault(i, kinds[0])
        if i in bad:
            values.append(None)
        else:
            values.append(Relation(t.heading, frozenset(rows[start:end])))
    return values, bad


# =========================================================================== writing
@collector_paused()
def to_arrow(relation: Relation, *, ordered: bool = True):
    """The relation as an Arrow table: one column per attribute (in the heading's order), each
    field's sira type in its metadata.

    Args:
        relation: the relation.
        ordered: the rows in canonical order (the order sira prints them in), so that the same
            relation always gives the same table and file; False leaves them in no particular
            order, which is faster (relation-valued attributes are always in canonical order).
    Raises:
        DataFormatError: a BIGINT of more than 38 digits.

    >>> import sira
    >>> r = sira.Relation.from_rows({"a": sira.INT}, [(2,), (1,)])
    >>> to_arrow(r).column("a").to_pylist()
    [1, 2]
    """
    pa = _pa()
    heading = relation.heading
    schema = arrow_schema(heading, len(relation))
    if heading.degree == 0:
        placeholder = pa.table({"_": pa.nulls(len(relation))})
        return placeholder.drop_columns(["_"]).replace_schema_metadata(schema.metadata)
    sortable = all(_arrow_sortable(t) for t in heading.types)
    rows = relation.sorted_body() if ordered and not sortable else relation.body
    columns = list(zip(*rows)) if rows else [()] * heading.degree
    arrays = [_array(t, column, n) for (n, t), column in zip(heading.attributes, columns)]
    table = pa.Table.from_arrays(arrays, schema=schema)
    if ordered and sortable and len(rows) > 1:
        return _canonical_order(table, heading)  # Arrow sorts faster than Python
    return table


def _arrow_sortable(t: Type) -> bool:
    """Whether Arrow's sort orders values of ``t`` as sira's canonical order does (strings
    by code point = UTF-8 bytes; an interval by begin, then bounded before unbounded, then
    end); relation-valued attributes are sorted in Python instead."""
    if isinstance(t, TupleType):
        return all(_arrow_sortable(u) for u in t.heading.types)
    return not isinstance(t, RelationType)


def _sort_keys(t: Type, array) -> list:
    """The arrays whose ascending lexicographic order is the canonical order of ``t``."""
    pc = _pc()
    if isinstance(t, IntervalType):
        begin, end = array.flatten()
        return [begin, pc.is_null(end), end]
    if t == AVERAGE:
        return list(array.flatten())
    if isinstance(t, TupleType):
        return [key for u, field in zip(t.heading.types, array.flatten())
                for key in _sort_keys(u, field)]
    return [array]


def _canonical_order(table, heading: Heading):
    pa, pc = _pa(), _pc()
    keys = [key for t, column in zip(heading.types, table.columns)
            for key in _sort_keys(t, column.combine_chunks())]
    names = [f"k{i}" for i in range(len(keys))]
    order = pc.sort_indices(pa.table(keys, names=names),
                            sort_keys=[(n, "ascending") for n in names])
    return table.take(order)


def _array(t: Type, values, where: str):
    """An Arrow array of sira values of type ``t``."""
    pa = _pa()
    target = arrow_type(t)
    if isinstance(t, IntervalType):
        # every empty interval is one struct (the test skips the common, non-empty, case)
        values = [v if type(v) is Interval else as_held(t, v) for v in values]
        begins = _array(t.point, list(map(_BEGIN, values)), where)
        ends = _array(t.point, list(map(_END, values)), where)
        return pa.StructArray.from_arrays([begins, ends], fields=list(target))
    if t == AVERAGE:
        counts = pa.array([v.count for v in values], pa.int64())
        means = pa.array([v.value for v in values], pa.float64())
        return pa.StructArray.from_arrays([counts, means], fields=list(target))
    if isinstance(t, TupleType):
        return _struct_array(t.heading, [v.values for v in values], where)
    if isinstance(t, RelationType):
        offsets, rows = [0], []
        for relation in values:
            rows.extend(relation.sorted_body())
            offsets.append(len(rows))
        inner = _struct_array(t.heading, rows, f"{where}[]")
        return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), inner, type=target)
    try:
        return pa.array(values, type=target)
    except (pa.ArrowInvalid, OverflowError):
        if t == BIGINT:
            raise DataFormatError(
                f"attribute '{where}': a BIGINT value does not fit Arrow's decimal128(38, 0) "
                f"(Arrow, Parquet and pandas hold BIGINT values of up to 38 digits; CSV and "
                f"JSON hold any size)", attribute=where) from None
        raise


def _struct_array(heading: Heading, rows, where: str):
    pa = _pa()
    if heading.degree == 0:
        return pa.array([{}] * len(rows), type=pa.struct([]))
    columns = list(zip(*rows)) if rows else [()] * heading.degree
    arrays = [_array(t, list(column), f"{where}.{n}")
              for (n, t), column in zip(heading.attributes, columns)]
    return pa.StructArray.from_arrays(arrays, fields=list(arrow_type(TupleType(heading))))


# =========================================================================== pandas
def to_pandas(relation: Relation):
    """The relation as a pandas DataFrame: one column per attribute, rows in canonical order.

    INT, LONG, FLOAT, BOOLEAN and TIMESTAMP become numpy columns (int32, int64, float64, bool,
    datetime64[us]), STRING pandas' string column; DATE, BIGINT, intervals, AVERAGE, tuples and
    relations Arrow-backed columns (``pd.ArrowDtype``) holding their exact Arrow type, so that
    :func:`from_pandas` gives the same relation back. ``df.attrs["sira_types"]`` keeps the
    sira types as well.

    >>> import sira
    >>> df = to_pandas(sira.Relation.from_rows({"a": sira.INT}, [(1,), (2,)]))
    >>> list(df["a"]), str(df["a"].dtype)
    ([1, 2], 'int32')
    """
    pd = require("pandas", "pandas conversion")
    pa = _pa()
    heading = relation.heading
    if heading.degree == 0:
        frame = pd.DataFrame(index=pd.RangeIndex(len(relation)))
    else:
        def arrow_backed(dt):
            if pa.types.is_struct(dt) or pa.types.is_list(dt) or pa.types.is_decimal(dt) \
                    or pa.types.is_date(dt):
                return pd.ArrowDtype(dt)
            return None
        frame = to_arrow(relation).to_pandas(types_mapper=arrow_backed)
    frame.attrs["sira_types"] = {n: type_text(t) for n, t in heading.attributes}
    return frame


def from_pandas(frame, *, types=None, nulls: str = "error", report: ReadReport | None = None,
                name: str | None = None) -> Relation:
    """A relation from a pandas DataFrame; one attribute per column.

    Column types follow the mapping of :mod:`sira.io.mapping` through Arrow (pandas' default
    int64 is LONG: pass ``types={"a": "int"}`` for INT). NaN, None, NaT and pd.NA are NULLs,
    refused unless ``nulls="drop"``. Named index levels become attributes; an unnamed index
    (row numbers) is not data and is left out.

    Args and Raises: as :func:`from_arrow`.

    >>> import pandas as pd
    >>> r = from_pandas(pd.DataFrame({"name": ["Ann", "Bob"], "age": [31, 42]}))
    >>> r.heading
    Heading({age: LONG, name: STRING})
    """
    where = name or "<DataFrame>"
    table = pandas_table(frame, where)
    hints = frame.attrs.get("sira_types") if isinstance(frame.attrs.get("sira_types"),
                                                        dict) else None
    hints = {str(k).lower(): v for k, v in (hints or {}).items()}
    return relation_from_table(table, types=types, hints=hints, nulls=nulls, report=report,
                               name=name, where=where, cardinality=len(frame))


def pandas_table(frame, where: str):
    """The Arrow table sira reads a pandas DataFrame as (:func:`from_pandas`; DuckDB scans
    it too, so both engines see one relation): named index levels as columns, every name
    checked (:func:`attribute_names`), each column converted alone (a column mixing ints and
    strings is refused, never turned into strings; a missing marker is a null, a float NaN
    stays NaN).

        >>> import pandas as pd
        >>> pandas_table(pd.DataFrame({"x": [1]}, index=pd.Index([7], name="i")), "r").to_pydict()
        {'i': [7], 'x': [1]}
    """
    pd = require("pandas", "pandas conversion")
    pa = _pa()
    if not isinstance(frame, pd.DataFrame):
        raise DataFormatError(f"from_pandas takes a DataFrame, not {type(frame).__name__}",
                              value=type(frame).__name__)
    named = [n for n in frame.index.names if n is not None]
    if named:
        frame = frame.reset_index(level=named)
    attribute_names(list(frame.columns), where)
    arrays = [_series_to_arrow(pa, frame.iloc[:, i], frame.columns[i], where)
              for i in range(frame.shape[1])]
    return pa.Table.from_arrays(arrays, names=[str(c) for c in frame.columns])


def _series_to_arrow(pa, series, column, where):
    """One column as Arrow; NaN in a float column stays NaN (reported as such), other missing
    markers become nulls."""
    import numpy as np
    try:
        if series.dtype.kind == "f" and isinstance(series.dtype, np.dtype):
            return pa.array(series.to_numpy(), from_pandas=False)
        return pa.array(series, from_pandas=True)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as err:
        values = list(series)
        if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            try:
                return pa.array(values, type=pa.decimal128(38, 0))
            except (pa.ArrowException, OverflowError):
                pass
        raise DataFormatError(f"{where}: column {column!r} cannot be converted to Arrow "
                              f"({err})", value=str(column), source=where,
                              attribute=str(column)) from None


# =========================================================================== files
def read_parquet(source, *, types=None, nulls: str = "error", report: ReadReport | None = None,
                 name: str | None = None) -> Relation:
    """A relation from a Parquet file (a path or a binary file object).

    Args and Raises: as :func:`from_arrow`; a missing or unreadable file is
    :class:`DataSourceError`.
    """
    _pa()
    pq = require("pyarrow.parquet", "Parquet files")
    read = lambda: pq.read_table(source)  # noqa: E731
    if isinstance(source, (str, os.PathLike)) and (os.path.isdir(source)
                                                   or set(str(source)) & set("*?[")):
        read, kinds = _read_table(lambda: _dataset(source, name), source, name)
        given = {str(k).lower() for k in (types or {})}
        types = {**{k: t for k, t in kinds.items() if k.lower() not in given}, **(types or {})}
    table = _read_table(read, source, name)
    return relation_from_table(table, types=types, nulls=nulls, report=report, name=name,
                               where=name or source_name(source))


def _dataset(source, name):
    """How to read a directory of Parquet files (or the files a glob matches), and its
    partition columns' types: every file of one schema (:func:`one_parquet_schema`), the
    ``name=value`` directories read as text and typed by :mod:`sira.io.partitions`, as every
    engine types them."""
    import glob

    import pyarrow.dataset as ds
    pa, pq = _pa(), require("pyarrow.parquet", "Parquet files")
    from .partitions import dataset_base, partition_types
    base = dataset_base(str(source))
    if os.path.isdir(source):
        files, where = ds.dataset(source, format="parquet").files, source
    else:
        files = sorted(f for f in glob.glob(str(source)) if os.path.isfile(f))
        if not files:
            raise FileNotFoundError(source)
        where = files
    one_parquet_schema([(f, pq.read_schema(f)) for f in files], name or str(source))
    kinds = partition_types(files, base)
    part = ds.partitioning(pa.schema([(n, pa.string()) for n in kinds]), flavor="hive") \
        if kinds else None
    return (lambda: ds.dataset(where, format="parquet", partitioning=part,
                               partition_base_dir=base).to_table()), kinds


def one_parquet_schema(schemas, where: str) -> None:
    """Refuse a Parquet dataset whose files differ in their columns: ``schemas`` is a list of
    (file, columns) with columns as anything comparable (pyarrow schemas, DuckDB rows).
    Reading them as one would cast each file to the first one's columns (a DOUBLE 2.5 read
    as the INT64 2) or leave a column of a later file out.

    Raises:
        DataFormatError: naming two files that differ and their columns.
    """
    first = None
    for file, columns in schemas:
        shown = _columns_text(columns)
        if first is None:
            first = (file, shown)
        elif shown != first[1]:
            raise DataFormatError(f"{where}: the files of a Parquet dataset must have the same "
                                  f"columns; {first[0]} has {first[1]} but {file} has {shown}",
                                  source=where)


def _columns_text(columns) -> str:
    if hasattr(columns, "names") and hasattr(columns, "types"):  # a pyarrow schema
        columns = list(zip(columns.names, (str(t) for t in columns.types)))
    return "(" + ", ".join(f"{n} {t}" for n, t in columns) + ")"


def write_parquet(relation: Relation, target) -> None:
    """Write the relation to a Parquet file (the Arrow table of :func:`to_arrow`)."""
    _pa()
    pq = require("pyarrow.parquet", "Parquet files")
    pq.write_table(to_arrow(relation), target)


def read_arrow(source, *, types=None, nulls: str = "error", report: ReadReport | None = None,
               name: str | None = None) -> Relation:
    """A relation from an Arrow IPC file (``.arrow``, ``.feather`` v2) or stream.

    Args and Raises: as :func:`read_parquet`.
    """
    pa = _pa()
    ipc = require("pyarrow.ipc", "Arrow IPC files")

    def read():
        with pa.OSFile(str(source), "rb") if not hasattr(source, "read") else _keep(source) as f:
            data = f.read()
        buffer = pa.py_buffer(data)
        try:
            return ipc.open_file(buffer).read_all()
        except pa.ArrowInvalid:
            return ipc.open_stream(buffer).read_all()
    table = _read_table(read, source, name)
    return relation_from_table(table, types=types, nulls=nulls, report=report, name=name,
                               where=name or source_name(source))


def write_arrow(relation: Relation, target) -> None:
    """Write the relation to an Arrow IPC file."""
    ipc = require("pyarrow.ipc", "Arrow IPC files")
    table = to_arrow(relation)
    with ipc.new_file(target if hasattr(target, "write") else str(target), table.schema) as w:
        w.write_table(table)


class _keep:
    """A file object used in a ``with`` without being closed."""

    def __init__(self, f):
        self.f = f

    def __enter__(self):
        return self.f

    def __exit__(self, *exc):
        return False


def _read_table(read, source, name):
    pa = _pa()
    try:
        return read()
    except FileNotFoundError:
        raise DataSourceError(relvar=name, source=source_name(source),
                              reason="no such file") from None
    except (OSError, pa.ArrowException) as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise DataSourceError(relvar=name, source=source_name(source), reason=reason) from None


# =========================================================================== relvars
def foreign_relation(value, name: str):
    """``value`` as a Relation when it is a pandas DataFrame or an Arrow table/batch, else
    ``value`` itself (checked by module name, so pandas and pyarrow are never imported here)."""
    module = type(value).__module__ or ""
    kind = type(value).__name__
    if module.startswith("pandas") and kind == "DataFrame":
        return from_pandas(value, name=name)
    if module.startswith("pyarrow") and kind in ("Table", "RecordBatch"):
        return from_arrow(value, name=name)
    return value


def relations_of(relvars):
    """``relvars`` with every DataFrame and Arrow table converted to a Relation (the same
    mapping when there is nothing to convert)."""
    if not relvars:
        return relvars
    converted = {k: foreign_relation(v, k) for k, v in relvars.items()}
    if all(converted[k] is relvars[k] for k in relvars):
        return relvars
    return converted
