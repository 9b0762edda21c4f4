"""Relations to DataFrames and back.

    >>> from sira import INT, Relation
    >>> r = Relation.from_rows({"a": INT}, [(1,), (2,)])
    >>> from sira_spark.session import default_engine
    >>> e = default_engine()
    >>> to_relation(to_dataframe(e.spark, r), r.heading) == r
    True
"""

from __future__ import annotations

import decimal

from sira.intervals import Interval, IntervalType
from sira.types import AVERAGE, BIGINT, Average, RelationType, TupleType
from sira.values import Relation, Tuple

from .types import schema_of


def _to_spark_value(t, v):
    if t == BIGINT:
        return decimal.Decimal(v)
    if t == AVERAGE:
        return (v.count, v.value)
    if isinstance(t, IntervalType):
        return (v.begin, v.end)
    if isinstance(t, TupleType):
        return to_row(t.heading, v.values)
    if isinstance(t, RelationType):
        return [to_row(t.heading, row) for row in v.sorted_body()]
    return v


def _simple(t) -> bool:
    return not (t == BIGINT or t == AVERAGE or isinstance(t, (IntervalType, TupleType,
                                                             RelationType)))


def to_row(heading, values) -> tuple:
    """A body tuple as a Spark row value (a Python tuple in schema order)."""
    return tuple(v if _simple(t) else _to_spark_value(t, v)
                 for t, v in zip(heading.types, values))


def to_dataframe(spark, relation: Relation, num_slices=None):
    """A DataFrame holding the relation (one column per attribute)."""
    h = relation.heading
    schema = schema_of(h)
    if all(_simple(t) for t in h.types):
        rows = list(relation.body)
    else:
        rows = [to_row(h, row) for row in relation.body]
    if h.degree == 0:
        # Spark has no zero-column DataFrames: a dummy column that to_relation drops
        df = spark.range(len(relation.body)).select()
        return df
    return spark.createDataFrame(rows, schema=schema, verifySchema=False)


def _from_spark_value(t, v):
    if t == BIGINT:
        return int(v)
    if t == AVERAGE:
        return Average(v[0], v[1])
    if isinstance(t, IntervalType):
        return Interval(v[0], v[1])
    if isinstance(t, TupleType):
        return Tuple(t.heading, from_row(t.heading, v))
    if isinstance(t, RelationType):
        return Relation(t.heading, frozenset(from_row(t.heading, r) for r in v))
    return v


def from_row(heading, row) -> tuple:
    return tuple(v if _simple(t) else _from_spark_value(t, v)
                 for t, v in zip(heading.types, row))


def sira_type_of(dt):
    """The sira type of a Spark column type (for relvars given as DataFrames)."""
    from pyspark.sql import types as T

    from sira.errors import NotSupportedOnSpark
    from sira.intervals import INTERVAL_TYPES
    from sira.types import BOOLEAN, DATE, FLOAT, INT, LONG, STRING, TIMESTAMP
    from sira.values import Heading
    simple = {T.IntegerType: INT, T.LongType: LONG, T.DoubleType: FLOAT, T.StringType: STRING,
              T.BooleanType: BOOLEAN, T.DateType: DATE, T.TimestampNTZType: TIMESTAMP,
              T.ShortType: INT, T.ByteType: INT, T.FloatType: FLOAT}
    for cls, t in simple.items():
        if isinstance(dt, cls):
            return t
    if isinstance(dt, T.DecimalType) and dt.scale == 0:
        return BIGINT
    if isinstance(dt, T.StructType):
        names = [f.name for f in dt.fields]
        if names == ["begin", "end"]:
            point = sira_type_of(dt.fields[0].dataType)
            for it in INTERVAL_TYPES.values():
                if it.point == point:
                    return it
        if names == ["count", "value"]:
            return AVERAGE
        return TupleType(Heading.of([(f.name, sira_type_of(f.dataType)) for f in dt.fields]))
    if isinstance(dt, T.ArrayType) and isinstance(dt.elementType, T.StructType):
        return RelationType(Heading.of([(f.name, sira_type_of(f.dataType))
                                        for f in dt.elementType.fields]))
    raise NotSupportedOnSpark(node=f"a column of Spark type {dt.simpleString()}")


def heading_of_dataframe(df):
    from sira.values import Heading
    return Heading.of([(f.name, sira_type_of(f.dataType)) for f in df.schema.fields])


def to_relation(df, heading) -> Relation:
    """Collect a DataFrame into a relation of ``heading`` (duplicates collapse)."""
    if heading.degree == 0:
        return Relation(heading, frozenset({()}) if df.limit(1).count() else frozenset())
    rows = df.select(*heading.names).collect()
    if all(_simple(t) for t in heading.types):
        return Relation(heading, frozenset(tuple(r) for r in rows))
    return Relation(heading, frozenset(from_row(heading, r) for r in rows))
