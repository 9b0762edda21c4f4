"""Relations to Arrow tables and back (the layout of ``types.py``).

A relation value enters DuckDB as an Arrow table registered as a view (one column per
attribute, in the heading's order); a result leaves as an Arrow table converted column by
column (an interval column from its begin and end columns). Relation-valued attributes leave
Python in any order: the scan puts them in their canonical (DuckDB-sorted) order. Both run with
the cyclic garbage collector paused (``sira.collector``): they make millions of small objects
and no cycle.

    >>> from sira import INT, INTINTERVAL, Interval, Relation
    >>> r = Relation.from_rows({"a": INT, "x": INTINTERVAL}, [(1, Interval(2, None))])
    >>> to_relation(to_arrow(r), r.heading) == r
    True
"""

from __future__ import annotations

import decimal

import pyarrow as pa

from sira.collector import collector_paused
from sira.errors import IntOverflow
from sira.intervals import Interval, IntervalType, _EmptyInterval, empty_interval
from sira.types import (AVERAGE, BIGINT, BOOLEAN, DATE, FLOAT, INT, LONG, STRING, TIMESTAMP,
                        Average, RelationType, TupleType)
from sira.values import Relation, Tuple

from .sql import DEE_NAME

_ARROW = {INT: pa.int32(), LONG: pa.int64(), BIGINT: pa.decimal128(38, 0),
          FLOAT: pa.float64(), STRING: pa.string(), BOOLEAN: pa.bool_(), DATE: pa.date32(),
          TIMESTAMP: pa.timestamp("us")}

_HUGEINT_DIGITS = 38


def arrow_type(t) -> pa.DataType:
    """The Arrow type a value of sira type ``t`` is sent to DuckDB as."""
    if t in _ARROW:
        return _ARROW[t]
    if t == AVERAGE:
        return pa.struct([("count", pa.int64()), ("value", pa.float64())])
    if isinstance(t, IntervalType):
        p = arrow_type(t.point)
        return pa.struct([("begin", p), ("end", p)])
    if isinstance(t, TupleType):
        return arrow_struct(t.heading)
    if isinstance(t, RelationType):
        return pa.list_(arrow_struct(t.heading))
    raise TypeError(f"no Arrow type for {t}")


def arrow_struct(heading) -> pa.DataType:
    if heading.degree == 0:
        return pa.struct([(DEE_NAME, pa.bool_())])
    return pa.struct([(n, arrow_type(t)) for n, t in heading.attributes])


def _simple(t) -> bool:
    return t in _ARROW and t != BIGINT


def _bigint(v: int):
    if len(str(abs(v))) > _HUGEINT_DIGITS:
        raise IntOverflow(f"{v} does not fit BIGINT on DuckDB (at most {_HUGEINT_DIGITS} "
                          f"digits)", type="BIGINT", value=v)
    return decimal.Decimal(v)


def to_arrow_value(t, v):
    """A sira value as the Python value Arrow builds the DuckDB value from."""
    if _simple(t):
        return v
    if t == BIGINT:
        return _bigint(v)
    if t == AVERAGE:
        return {"count": v.count, "value": v.value}
    if isinstance(t, IntervalType):
        if v.empty:
            v = empty_interval(t)
        return {"begin": v.begin, "end": v.end}
    if isinstance(t, TupleType):
        return _struct_value(t.heading, v.values)
    if isinstance(t, RelationType):
        return [_struct_value(t.heading, row) for row in v.body]
    raise TypeError(f"no Arrow value for {t}")


def _struct_value(heading, values) -> dict:
    if heading.degree == 0:
        return {DEE_NAME: True}
    return {n: to_arrow_value(t, v) for (n, t), v in zip(heading.attributes, values)}


@collector_paused()
def to_arrow(relation: Relation) -> pa.Table:
    """The relation as an Arrow table (one column per attribute; the dummy column for a
    relation without attributes)."""
    h = relation.heading
    if h.degree == 0:
        return pa.table({DEE_NAME: pa.array([True] * len(relation.body), pa.bool_())})
    rows = list(relation.body)
    arrays = []
    for i, (name, t) in enumerate(h.attributes):
        values = [row[i] for row in rows]
        if isinstance(t, IntervalType) and _simple(t.point):  # two plain columns, no dicts
            if _EmptyInterval in map(type, values):  # held as the one canonical empty struct
                empty = empty_interval(t)
                values = [empty if v.empty else v for v in values]
            p = arrow_type(t.point)
            arrays.append(pa.StructArray.from_arrays(
                [pa.array([v[0] for v in values], type=p),
                 pa.array([v[1] for v in values], type=p)], names=["begin", "end"]))
            continue
        if not _simple(t):
            values = [to_arrow_value(t, v) for v in values]
        arrays.append(pa.array(values, type=arrow_type(t)))
    return pa.table(arrays, names=list(h.names))


# ----------------------------------------------------------------------------- back to sira

def from_duckdb_value(t, v):
    """A Python value as DuckDB (or Arrow's ``to_pylist``) gives it, as a sira value."""
    if t == BIGINT:
        return int(v)
    if t in (INT, LONG, STRING, BOOLEAN, DATE):
        return v
    if t == FLOAT:
        return float(v) + 0.0
    if t == TIMESTAMP:
        return v.replace(tzinfo=None) if v.tzinfo is None else v
    if t == AVERAGE:
        return Average(v["count"], v["value"])
    if isinstance(t, IntervalType):
        p = t.point
        end = v["end"]
        return Interval(from_duckdb_value(p, v["begin"]),
                        None if end is None else from_duckdb_value(p, end))
    if isinstance(t, TupleType):
        return Tuple(t.heading, _row_of(t.heading, v))
    if isinstance(t, RelationType):
        return Relation(t.heading, frozenset(_row_of(t.heading, r) for r in v))
    raise TypeError(f"no sira value for {t}")


def _row_of(heading, struct: dict) -> tuple:
    return tuple(from_duckdb_value(t, struct[n]) for n, t in heading.attributes)


_PLAIN_POINTS = (INT, LONG, DATE, TIMESTAMP, FLOAT)


def _column_values(column, t) -> list:
    if isinstance(t, IntervalType) and t.point in _PLAIN_POINTS:
        return _intervals(column, t.point)
    values = column.to_pylist()
    if t in (INT, LONG, STRING, BOOLEAN, DATE, TIMESTAMP):
        return values
    if t == FLOAT:
        return [v + 0.0 for v in values]
    return [from_duckdb_value(t, v) for v in values]


def _intervals(column, point) -> list:
    """An interval column as Interval values, from its begin and end columns (a NULL end:
    unbounded), never a dict per value."""
    out = []
    for chunk in column.chunks:
        begin, end = chunk.flatten()  # the struct's fields, sliced as the chunk is
        begins, ends = begin.to_pylist(), end.to_pylist()
        if point == FLOAT:  # as from_duckdb_value: -0.0 is 0.0
            begins = [v + 0.0 for v in begins]
            ends = [None if v is None else v + 0.0 for v in ends]
        out.extend(map(Interval, begins, ends))
    return out


@collector_paused()
def to_relation(table: pa.Table, heading) -> Relation:
    """An Arrow table (columns named after the heading's attributes) as a relation;
    duplicates collapse."""
    if heading.degree == 0:
        return Relation(heading, frozenset({()}) if table.num_rows else frozenset())
    columns = []
    for n, t in heading.attributes:
        try:
            columns.append(_column_values(table.column(n), t))
        except OverflowError:  # DuckDB's TIMESTAMP and DATE reach further than Python's
            raise IntOverflow(type=str(t), value=f"a value of {n} after year 9999") from None
    return Relation(heading, frozenset(zip(*columns)))
