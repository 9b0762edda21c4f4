"""sira types as DuckDB types, and back.

INT -> INTEGER, LONG -> BIGINT, BIGINT -> HUGEINT (DuckDB's widest exact integer: a BIGINT
value beyond 128 bits is an IntOverflow on DuckDB), FLOAT -> DOUBLE, STRING -> VARCHAR,
BOOLEAN -> BOOLEAN, DATE -> DATE, TIMESTAMP -> TIMESTAMP (microseconds, naive, read as UTC),
AVERAGE -> STRUCT(count BIGINT, value DOUBLE) (a count of billions of observations fits), an interval -> STRUCT(begin P, end P) (a NULL
end means "unbounded above": the only NULL sira keeps inside DuckDB, never a NULL value), a
tuple-valued attribute -> STRUCT, a relation-valued attribute -> a LIST of STRUCTs kept sorted
and distinct (its canonical form, so equality, joins and grouping work). A heading without
attributes is a STRUCT with one dummy field.

    >>> from sira import INT, INTINTERVAL
    >>> duckdb_type(INTINTERVAL)
    'STRUCT("begin" INTEGER, "end" INTEGER)'
"""

from __future__ import annotations

from sira.errors import SiraTypeError
from sira.intervals import INTERVAL_TYPES, IntervalType
from sira.types import (AVERAGE, BIGINT, BOOLEAN, DATE, FLOAT, INT, LONG, STRING, TIMESTAMP,
                        RelationType, TupleType)
from sira.values import Heading

from .sql import DEE, DEE_NAME, ident

_SCALARS = {INT: "INTEGER", LONG: "BIGINT", BIGINT: "HUGEINT", FLOAT: "DOUBLE",
            STRING: "VARCHAR", BOOLEAN: "BOOLEAN", DATE: "DATE", TIMESTAMP: "TIMESTAMP"}


def duckdb_type(t) -> str:
    """The DuckDB type (SQL text) holding values of sira type ``t``."""
    if t in _SCALARS:
        return _SCALARS[t]
    if t == AVERAGE:
        return 'STRUCT("count" BIGINT, "value" DOUBLE)'
    if isinstance(t, IntervalType):
        p = duckdb_type(t.point)
        return f'STRUCT("begin" {p}, "end" {p})'
    if isinstance(t, TupleType):
        return struct_type(t.heading)
    if isinstance(t, RelationType):
        return struct_type(t.heading) + "[]"
    raise SiraTypeError(f"{t} has no DuckDB type", expected="a sira type", got=str(t))


def struct_type(heading) -> str:
    """STRUCT of a heading's attributes in order (one dummy BOOLEAN field for none)."""
    if heading.degree == 0:
        return f"STRUCT({DEE} BOOLEAN)"
    return "STRUCT(" + ", ".join(f"{ident(n)} {duckdb_type(t)}"
                                  for n, t in heading.attributes) + ")"


def may_hold_nulls(t) -> bool:
    """Whether a value of sira type ``t`` can hold a NULL inside (an interval's open end, or a
    value nested in a tuple or relation). Top-level sira values are never NULL."""
    return isinstance(t, (IntervalType, TupleType, RelationType))


def equal(left: str, right: str, t) -> str:
    """Join-key equality of two SQL values of sira type ``t``: plain ``=`` for scalars (a hash
    join key), ``IS NOT DISTINCT FROM`` where a NULL may be inside."""
    if may_hold_nulls(t):
        return f"({left} IS NOT DISTINCT FROM {right})"
    return f"({left} = {right})"


def has_relation_inside(t) -> bool:
    """Whether values of ``t`` hold a relation value somewhere (and so a canonical order)."""
    if isinstance(t, RelationType):
        return True
    if isinstance(t, TupleType):
        return any(has_relation_inside(a) for a in t.heading.types)
    return False


# ----------------------------------------------------------------------------- DuckDB to sira

_FROM_DUCKDB = {
    "integer": INT, "smallint": INT, "tinyint": INT, "utinyint": INT, "usmallint": INT,
    "bigint": LONG, "uinteger": LONG, "hugeint": BIGINT, "ubigint": BIGINT, "uhugeint": BIGINT,
    "double": FLOAT, "float": FLOAT, "varchar": STRING, "boolean": BOOLEAN, "date": DATE,
    "timestamp": TIMESTAMP, "timestamp_ns": TIMESTAMP, "timestamp_ms": TIMESTAMP,
    "timestamp_s": TIMESTAMP, "timestamp with time zone": TIMESTAMP,
}


def sira_type_of(dtype, where: str = "a column"):
    """The sira type of a DuckDB column type (for relvars given as DataFrames, Arrow tables,
    files or tables). Raises SiraTypeError for a type sira has no counterpart for."""
    kind = dtype.id
    if kind in _FROM_DUCKDB:
        return _FROM_DUCKDB[kind]
    if kind == "decimal" and str(dtype).endswith(",0)"):
        return BIGINT
    if kind == "struct":
        fields = [(n, c) for n, c in dtype.children]
        names = [n.lower() for n, _ in fields]
        if names == ["begin", "end"]:
            point = sira_type_of(fields[0][1], where)
            for it in INTERVAL_TYPES.values():
                if it.point == point:
                    return it
        if names == ["count", "value"]:
            return AVERAGE
        if names == [DEE_NAME]:
            return TupleType(Heading())
        return TupleType(Heading.of([(n, sira_type_of(c, where)) for n, c in fields]))
    if kind == "list":
        (_, child), = dtype.children
        inner = sira_type_of(child, where)
        if isinstance(inner, TupleType):
            return RelationType(inner.heading)
    raise SiraTypeError(f"{where} has DuckDB type {dtype}, which has no sira type",
                        expected="a type sira knows", got=str(dtype))
