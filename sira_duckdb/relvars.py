"""Relvar values as DuckDB scans: Relations, pandas DataFrames, Arrow tables, DuckDB relations,
Parquet and CSV files and tables of the connection.

A Relation is sent to DuckDB as an Arrow table; an Arrow table or a DuckDB relation is
registered as a view and scanned where it is, never converted through Python tuples; a pandas
DataFrame is first the Arrow table :func:`sira.from_pandas` reads it as (its named index
levels are attributes, a column mixing types is refused), so both engines see one relation.
Every column name must be one the text syntax can use, once (DuckDB itself would rename them).
Parquet files are read by DuckDB (``"parquet:/path"``), tables named (``"table:name"``).
CSV, JSON and Arrow files (``"csv:/path"`` ...) and Spark DataFrames are read by sira's own
readers (:mod:`sira.io.intake`), so they give the relation, or the error, that
:func:`sira.read_csv` and its siblings give: typed headers, inference, a ragged row refused
(DuckDB's sniffer would guess). Any other value is refused naming the relvar. Column names are
lowercased; each column's DuckDB type gives the
attribute's sira type (``types.sira_type_of``). A source DuckDB cannot read (a missing file or
table) is a DataSourceError naming the relvar.

Anything but a Relation may hold duplicate rows and NULLs (sira has neither): its scan applies
DISTINCT unless it is asserted unique (``unique(value)``, or ``trust_unique=True`` on the
engine), and a NULL (in any column, nested fields of tuples and relations included; an
interval's NULL end means "unbounded above", as inside sira) or a NaN (in a FLOAT) is refused
with ``NullValue`` naming the relvar, the attribute and the number of rows, before anything
runs, unless the caller names a policy: ``nulls="drop"`` leaves those rows out (the engine's
option, or one call's, which wins); ``trust_no_nulls=True`` skips the checking scan. An
interval whose end is before its begin (at any depth) fails the query with DataFormatError
when it is read, as the readers refuse it, also when the query reads no value of its column.
These are the Spark engine's rules.
"""

from __future__ import annotations

import duckdb

from sira.errors import DataFormatError, DataSourceError, NullValue, SiraValueError
from sira.io._support import attribute_names, column_type_held
from sira.io.arrowdata import pandas_table
from sira.io.intake import kind_of, path_of, refuse, relation_of
from sira.intervals import IntervalType, empty_interval
from sira.types import AVERAGE, FLOAT, INT, STRING, RelationType, TupleType, holds_float
from sira.values import Heading, Relation

from .functions import canonical, literal, once
from .sql import DEE, DEE_NAME, field, ident, sira_error, string, struct_pack
from .types import duckdb_type, sira_type_of

NULL_POLICIES = ("error", "drop")

#: relvar kinds DuckDB does not read itself: sira's readers make them Relations first
READ_BY_SIRA = ("csv", "json", "arrow-file", "spark")


class Unique:
    """A relvar value asserted to hold no duplicate rows; made by :func:`unique`."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"unique({self.value!r})"


def unique(value) -> Unique:
    """Assert that a relvar value (DataFrame, Arrow table, file, table) has no duplicate rows,
    so sira does not apply DISTINCT to it. Asserting it of data with duplicates gives results
    with duplicates."""
    return value if isinstance(value, Unique) else Unique(value)


class Scan:
    """How to read one relvar: the FROM source, its sira heading, and the SELECT list."""

    def __init__(self, name, source, heading, selects, conditions, distinct):
        self.name = name
        self.source = source
        self.heading = heading
        self.selects = selects
        self.conditions = conditions
        self.distinct = distinct

    def sql(self, distinct: bool = True) -> str:
        """The scan (DISTINCT when the source may hold duplicates, unless the caller knows
        they cannot change the result: ``sira.algebra.duplicates``)."""
        where = f" WHERE {' AND '.join(self.conditions)}" if self.conditions else ""
        distinct = "DISTINCT " if self.distinct and distinct else ""
        return f"SELECT {distinct}{', '.join(self.selects)} FROM {self.source}{where}"


def scan(c, name: str, value) -> Scan:
    """The scan of relvar ``name`` holding ``value`` (checked for NULLs unless dropped)."""
    asserted = isinstance(value, Unique)
    if asserted:
        value = value.value
    if kind_of(value) in READ_BY_SIRA or _no_columns(value):  # sira's own readers: the same
        # relation and errors (and TABLE_DEE/DUM, which DuckDB cannot register without columns)
        value = relation_of(value, name, nulls="drop" if _policy(c) == "drop" else "error")
    if isinstance(value, Relation):
        return _relation_scan(c, name, value)
    value = _as_sira_reads_it(value, name)
    source = _source(c, name, value)
    try:
        described = c.con.sql(f"SELECT * FROM {source}")
        names, types = described.columns, described.types
    except duckdb.Error as err:
        raise DataSourceError(relvar=name, source=_describe(value),
                              reason=str(err).strip().splitlines()[0]) from None
    heading, selects, checks = _columns(c, name, names, types)
    conditions = checks + _null_conditions(c, name, value, heading, names, types, source)
    distinct = not (asserted or c.engine.trust_unique
                    or declared_unique(c, value, heading, dict(zip(names, selects))))
    return Scan(name, source, heading, selects, conditions, distinct)


def declared_unique(c, value, heading, selects: dict) -> bool:
    """True when a table of the connection declares a PRIMARY KEY or UNIQUE constraint on
    columns that sira reads as they are (no cast, which could make two values one), so its rows
    are distinct without a DISTINCT of sira's. A UNIQUE column's NULLs are refused or dropped by
    the scan before anything counts them.

    >>> import duckdb, sira_duckdb
    >>> con = duckdb.connect()
    >>> _ = con.execute("CREATE TABLE r (g BIGINT, v BIGINT, PRIMARY KEY (g, v))")
    >>> "DISTINCT" in sira_duckdb.DuckDBEngine(con).sql("r", {"r": "table:r"})
    False
    """
    if kind_of(value) != "table":
        return False
    for kind, columns in table_constraints(c, value):
        if (kind in ("PRIMARY KEY", "UNIQUE") and columns
                and all(_read_as_is(column, heading, selects) for column in columns)):
            return True
    return False


def table_constraints(c, value: str) -> list:
    """[(constraint type, column names)] that the catalog declares on the table ``value``
    names (``"table:name"``, ``"table:schema.name"`` or ``"table:database.schema.name"``), read
    once per query. A name that could mean tables of two schemas gives nothing to trust (its
    columns are then scanned and made distinct)."""
    cache = c.catalog
    if value not in cache:
        parts = value.partition(":")[2].split(".")
        try:
            rows = c.con.execute(
                "SELECT database_name, schema_name, constraint_type, constraint_column_names, "
                "current_database(), current_schema() FROM duckdb_constraints() "
                "WHERE table_name = ?", [parts[-1]]).fetchall()
        except duckdb.Error:
            rows = []
        found = {}
        for database, schema, kind, columns, here, current in rows:
            if len(parts) == 1:
                places = {(here, current)}
            elif len(parts) == 2:
                places = {(here, parts[0]), (parts[0], "main")}
            else:
                places = {(parts[-3], parts[-2])}
            if (database, schema) in places:
                found.setdefault((database, schema), []).append((kind, columns))
        cache[value] = next(iter(found.values())) if len(found) == 1 else []
    return cache[value]


def _read_as_is(column: str, heading, selects: dict) -> bool:
    n = column.lower()
    return (column in selects and n in heading.names
            and selects[column] == f"{ident(column)} AS {ident(n)}")


def _relation_scan(c, name, value: Relation) -> Scan:
    from .convert import to_arrow
    view = c.register(to_arrow(value), "rel")
    h = value.heading
    if h.degree == 0:
        return Scan(name, view, h, [DEE], [], False)
    selects = [f"{canonical(_cast_to(ident(n), t), t, c)} AS {ident(n)}"
               for n, t in h.attributes]
    return Scan(name, view, h, selects, [], False)


def _empty_interval(sql: str, t) -> str:
    """An interval column as read: one whose end equals its begin is the empty interval, as
    sira.io reads it, held as the one canonical empty struct (``sira.intervals.empty_interval``;
    one whose end is before its begin is refused by :func:`_checks` first)."""
    b, e = f"({sql}).\"begin\"", f"({sql}).\"end\""
    return f"(CASE WHEN {e} = {b} THEN {literal(t, empty_interval(t))} ELSE {sql} END)"


def _one_zero(sql: str, t, c) -> str:
    """A value of type ``t`` with every FLOAT -0.0 inside it as 0.0 (sira's FLOAT has one
    zero, as the readers read it; DuckDB keeps -0.0 and would show and write it).

        >>> from sira import FLOAT
        >>> _one_zero('"f"', FLOAT, None)
        '("f" + CAST(0.0 AS DOUBLE))'
    """
    if not holds_float(t):
        return sql
    if t == FLOAT:
        return f"({sql} + CAST(0.0 AS DOUBLE))"
    if isinstance(t, RelationType):
        v = c.lambda_name()
        return f"list_transform({sql}, lambda {v}: {_one_zero(v, TupleType(t.heading), c)})"
    if t == AVERAGE:
        fields = [("count", INT), ("value", FLOAT)]
    elif isinstance(t, IntervalType):
        fields = [("begin", FLOAT), ("end", FLOAT)]
    else:
        fields = t.heading.attributes
    return once(c, sql, lambda v: f"(CASE WHEN {v} IS NULL THEN NULL ELSE " + struct_pack(
        [(n, _one_zero(field(v, n), x, c)) for n, x in fields]) + " END)")


def _checks(c, name: str, raw: str, dtype, t) -> list:
    """WHERE conditions refusing, as the readers refuse them (DataFormatError), the values of
    column ``raw`` that sira cannot hold: a timestamp with a fraction of a microsecond, an
    interval whose end is before its begin (at any depth, inside tuples and relations too).
    In the WHERE, DuckDB checks every row, also when a query reads no value of the column (a
    check in the SELECT list would go with the column when nothing reads it)."""
    col = ident(raw)
    out = []
    if dtype.id == "timestamp_ns":
        finer = sira_error("DataFormatError", None, f"relvar '{name}': column '{raw}' holds a "
                           f"timestamp with a fraction of a microsecond, finer than TIMESTAMP's "
                           f"grain")
        out.append(f"(CASE WHEN epoch_ns({col}) % 1000 <> 0 THEN {finer} ELSE TRUE END)")
    inverted = _inverted_inside(col, t, c)
    if inverted is not None:
        fail = sira_error("DataFormatError", None, f"relvar '{name}': attribute '{raw.lower()}' "
                          f"holds an interval whose end is before its begin")
        out.append(f"(CASE WHEN {inverted} THEN {fail} ELSE TRUE END)")
    return out


def _inverted_inside(sql: str, t, c) -> str | None:
    """SQL true when a value of sira type ``t`` holds an interval whose end is before its
    begin, anywhere inside; None when ``t`` holds no interval.

        >>> from sira.intervals import INTINTERVAL
        >>> _inverted_inside('"x"', INTINTERVAL, None)
        'coalesce(("x")."end" < ("x")."begin", FALSE)'
    """
    if isinstance(t, IntervalType):
        return f"coalesce(({sql}).\"end\" < ({sql}).\"begin\", FALSE)"
    if isinstance(t, TupleType):
        inner = [_inverted_inside(f"({sql}).{ident(n)}", x, c)
                 for n, x in t.heading.attributes]
        inner = [i for i in inner if i is not None]
        return "(" + " OR ".join(inner) + ")" if inner else None
    if isinstance(t, RelationType):
        v = c.lambda_name()
        inner = _inverted_inside(v, TupleType(t.heading), c)
        if inner is None:
            return None
        return f"coalesce(list_bool_or(list_transform({sql}, lambda {v}: {inner})), FALSE)"
    return None


def _cast_to(sql, t):
    return f"CAST({sql} AS {duckdb_type(t)})"


def _describe(value) -> str:
    return value if isinstance(value, str) else type(value).__name__


def _source(c, name, value) -> str:
    if isinstance(value, str):
        kind, sep, rest = value.partition(":")
        if sep and kind == "table":
            return ".".join(ident(part) for part in rest.split("."))
        if sep and kind == "parquet":
            return _parquet_source(c, name, path_of(value))
    elif isinstance(value, duckdb.DuckDBPyRelation) or _registrable(value):
        return c.register(value, "relvar")
    raise refuse(value, name, "DuckDB")


def _parquet_source(c, name, path: str) -> str:
    """``read_parquet`` of a file, a directory or a glob: every file of one schema, and the
    partition columns of ``name=value`` directories read as text, then cast to the types
    :mod:`sira.io.partitions` gives them on every engine (DuckDB's own inference makes every
    integer a BIGINT)."""
    from sira.io.partitions import dataset_base, partition_types
    files = _one_parquet_schema(c, name, string(path))
    kinds = partition_types(files, dataset_base(path)) if len(files) > 0 else {}
    if not kinds:
        return f"read_parquet({string(path)})"
    source = (f"read_parquet({string(path)}, hive_partitioning = true, "
              f"hive_types_autocast = false)")
    casts = [f"CAST({ident(n)} AS {duckdb_type(t)}) AS {ident(n)}"
             for n, t in kinds.items() if t is not STRING]
    return f"(SELECT * REPLACE ({', '.join(casts)}) FROM {source})" if casts else source


def _one_parquet_schema(c, name, path: str) -> list:
    """Refuse Parquet files of different columns read as one relvar (a directory or a glob):
    DuckDB would read them all with the first file's columns (a DOUBLE 2.5 as the BIGINT 2, a
    later file's extra column left out), as :func:`sira.io.arrowdata.one_parquet_schema`
    refuses them on the Python engine. Returns the files."""
    from sira.io.arrowdata import one_parquet_schema
    try:
        rows = c.con.sql(f"SELECT file_name, name, type, logical_type, num_children "
                         f"FROM parquet_schema({path})").fetchall()
    except duckdb.Error:  # no such file...: reading it says so
        return []
    files: dict = {}
    for file, *column in rows:
        files.setdefault(file, []).append(column)
    one_parquet_schema([(f, [(n, " ".join(str(x) for x in rest if x is not None))
                             for n, *rest in cols[1:]])  # (the first row: the root)
                        for f, cols in files.items()],
                       f"relvar '{name}'")
    return list(files)


def _as_sira_reads_it(value, name: str):
    """A DataFrame or Arrow table as sira's readers see it, for DuckDB to scan: a pandas
    DataFrame converted as :func:`sira.from_pandas` converts it (named index levels are
    attributes, a column mixing types is refused), every column name checked as the readers
    check it (DuckDB would rename ``A`` beside ``a`` to ``a_1`` and an empty name to ``v0``),
    and its types cast as the readers cast them (:func:`_widened`)."""
    kind = kind_of(value)
    if kind == "pandas":
        return _widened(pandas_table(value, name), name)
    if kind == "arrow":
        attribute_names(value.schema.names, name)
        return _widened(value, name)
    if kind == "polars" or isinstance(value, duckdb.DuckDBPyRelation):
        attribute_names(list(value.columns), name)  # (a DuckDB relation's own names too)
    return value


def _widened(table, name: str):
    """``table`` checked as sira's readers check it (a column type they refuse is refused
    with their message: DuckDB would read a pandas Period's Arrow extension type as its int64
    ordinals), and with the Arrow types DuckDB cannot scan, or would scan other than sira's
    readers, cast as the readers cast them: FLOAT16 to DOUBLE, nanosecond timestamps to
    microseconds (TIMESTAMP's grain), refused with DataFormatError where a value has a
    fraction of a microsecond (DuckDB would drop it: 1,000 and 1,001 ns would be one value),
    nested fields included."""
    import pyarrow as pa

    from sira.io.mapping import sira_type_of
    for f in table.schema:
        sira_type_of(f.type, f"{name}: column '{f.name}'")
    schema = pa.schema([f.with_type(_readable_type(f.type)) for f in table.schema])
    if schema.equals(table.schema):
        return table
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    try:
        return table.cast(schema, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
        raise DataFormatError(f"{name}: cannot read a column as sira reads it: {err}",
                              source=name) from None


def _readable_type(t):
    import pyarrow as pa
    if pa.types.is_float16(t):
        return pa.float64()
    if pa.types.is_timestamp(t) and t.unit == "ns":
        return pa.timestamp("us", tz=t.tz)
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_readable_type(t.field(i).type))
                          for i in range(t.num_fields)])
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_readable_type(t.value_type)))
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(_readable_type(t.value_type)))
    return t


def _no_columns(value) -> bool:
    kind = kind_of(value)
    if kind == "arrow":
        return value.num_columns == 0
    if kind == "pandas":
        return len(value.columns) == 0
    return False


def _registrable(value) -> bool:
    module = type(value).__module__.split(".")[0]
    return module in ("pandas", "pyarrow", "polars")


def _columns(c, name, names, types):
    if list(names) != [DEE_NAME]:  # each a name the text syntax can use, as the readers ask
        attribute_names(list(names), name)
    seen = {}
    for raw, dtype in zip(names, types):
        with column_type_held(name, raw):
            seen[raw.lower()] = (raw, sira_type_of(dtype, f"relvar '{name}': column '{raw}'"),
                                 dtype)
    if list(seen) == [DEE_NAME] and seen[DEE_NAME][2].id == "boolean":
        return Heading(), [DEE], []
    heading = Heading.of([(k, t) for k, (_, t, _) in seen.items()])
    selects, checks = [], []
    for n, t in heading.attributes:
        raw, _, dtype = seen[n]
        value = ident(raw)
        if dtype.id == "timestamp with time zone":
            value = f"timezone('UTC', {value})"
        elif str(dtype) != duckdb_type(t):  # (TIMESTAMP_NS: checked by _checks first)
            value = _cast_to(value, t)
        if isinstance(t, IntervalType):
            value = _empty_interval(value, t)
        value = _one_zero(value, t, c)
        selects.append(f"{canonical(value, t, c)} AS {ident(n)}")
        checks += _checks(c, name, raw, dtype, t)
    return heading, selects, checks


def _null_conditions(c, name, value, heading, names, types, source) -> list:
    """The WHERE conditions leaving out rows with NULLs (``nulls="drop"``), or none after
    checking there are no NULLs (``NullValue`` otherwise; nothing with ``trust_no_nulls``)."""
    if heading.degree == 0:
        return []
    policy = _policy(c)
    if policy == "trust":
        return []
    raw = {n.lower(): n for n in names}
    clean = known_clean(c, value, raw)
    tests = []  # (attribute, kind, SQL true for a bad row)
    for n, t in heading.attributes:
        col = ident(raw[n])
        if n not in clean:
            tests.append((n, "NULL", null_inside(col, t, c)))
        if t == FLOAT and clean.get(n) != "no NaN":
            tests.append((n, "NaN", f"isnan({col})"))
    if not tests:
        return []
    if policy == "drop":
        return [f"NOT coalesce({t}, FALSE)" for _, _, t in tests]
    counts = ", ".join(f"count(*) FILTER (WHERE {t})" for _, _, t in tests)
    (found,) = c.con.sql(f"SELECT {counts} FROM {source}").fetchall()
    for (attribute, kind, _), count in zip(tests, found):
        if count:
            raise NullValue(relvar=name, attribute=attribute, count=count, value=kind,
                            operator="RELVAR")
    return []


def known_clean(c, value, raw: dict) -> dict:
    """{attribute: "no NULL" | "no NaN"} for the columns whose format says, without a scan
    of sira's, that they hold no NULL (and, where said, no NaN either): an Arrow array's null
    count (nested fields included; NaN by one vectorised pass; a pandas DataFrame is scanned
    as the Arrow table sira reads it as), a Parquet column whose statistics count
    no null in any row group, a DuckDB table's NOT NULL column."""
    kind = kind_of(value)
    out = {}
    try:
        if kind == "arrow":
            import pyarrow.compute as pc
            for n, name in raw.items():
                col = value.column(name)
                if _arrow_nulls(col.type, col) == 0:
                    out[n] = "no NULL"
                    if col.type in _FLOATS and not pc.any(pc.is_nan(col)).as_py():
                        out[n] = "no NaN"
        elif kind == "parquet":
            import pyarrow.parquet as pq
            meta = pq.ParquetFile(path_of(value)).metadata
            for j in range(meta.num_columns):
                column = meta.row_group(0).column(j) if meta.num_row_groups else None
                if column is None or "." in column.path_in_schema:
                    continue  # nested: its fields are checked by the scan
                stats = [meta.row_group(g).column(j).statistics
                         for g in range(meta.num_row_groups)]
                if all(st is not None and st.has_null_count and st.null_count == 0
                       for st in stats):
                    n = column.path_in_schema.lower()
                    if n in raw:
                        out[n] = "no NULL"
        elif kind == "table":
            for kind_of_constraint, columns in table_constraints(c, value):
                if kind_of_constraint == "NOT NULL":
                    out.update({n.lower(): "no NULL" for n in columns if n.lower() in raw})
    except Exception:  # no metadata to trust: the scan checks everything
        return {}
    return out


def _arrow_nulls(t, array) -> int:
    """NULLs in an Arrow (chunked) array, nested fields and list items included."""
    import pyarrow as pa
    total = array.null_count
    if pa.types.is_struct(t):
        chunks = array.chunks if hasattr(array, "chunks") else [array]
        for i in range(t.num_fields):
            total += sum(_arrow_nulls(t.field(i).type, ch.field(i)) for ch in chunks)
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        chunks = array.chunks if hasattr(array, "chunks") else [array]
        total += sum(_arrow_nulls(t.value_type, ch.values) for ch in chunks)
    return total


def _float_types():
    try:
        import pyarrow as pa
        return (pa.float16(), pa.float32(), pa.float64())
    except ImportError:
        return ()


_FLOATS = _float_types()


def _policy(c) -> str:
    """The call's ``nulls`` option, else the engine's (``"trust"``: no check at all)."""
    if "nulls" in c.options:
        policy = c.options["nulls"]
        if policy not in NULL_POLICIES:
            raise SiraValueError(f"nulls must be one of {', '.join(NULL_POLICIES)} (got "
                                 f"{policy!r})", operator="nulls", value=policy)
        return policy
    return "trust" if c.engine.trust_no_nulls else c.engine.nulls


def null_inside(sql: str, t, c) -> str:
    """SQL true when a value of sira type ``t`` is NULL or holds a NULL where sira has none
    (anywhere inside a tuple or relation value; an interval's end may be NULL: unbounded)."""
    if isinstance(t, IntervalType):
        return f"({sql} IS NULL OR ({sql}).\"begin\" IS NULL)"
    if isinstance(t, TupleType):
        inner = [null_inside(f"({sql}).{ident(n)}", x, c) for n, x in t.heading.attributes]
        return "(" + " OR ".join([f"{sql} IS NULL"] + inner) + ")"
    if isinstance(t, RelationType):
        v = c.lambda_name()
        inner = null_inside(v, TupleType(t.heading), c)
        return (f"({sql} IS NULL OR coalesce(list_bool_or(list_transform({sql}, lambda {v}: "
                f"{inner})), FALSE))")
    if t == AVERAGE:
        return f"({sql} IS NULL OR ({sql}).\"count\" IS NULL OR ({sql}).\"value\" IS NULL)"
    return f"({sql} IS NULL)"


__all__ = ["Scan", "Unique", "scan", "unique"]
