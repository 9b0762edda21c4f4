"""sira types as Spark SQL types.

INT -> int, LONG -> bigint, BIGINT -> decimal(38,0) (Spark's widest exact integer: BIGINT
values beyond 38 digits are an overflow on Spark), FLOAT -> double, STRING -> string, BOOLEAN ->
boolean, DATE -> date, TIMESTAMP -> timestamp_ntz, AVERAGE -> struct<count:int,value:double>,
an interval -> struct<begin:P,end:P> (a null end means "unbounded above"; sira values never hold
nulls), a tuple-valued attribute -> struct, a relation-valued attribute -> array of structs kept
sorted and distinct (its canonical form, so equality, joins and grouping work).

This is the layout sira writes. Reading a DataFrame, table or Parquet file that did not come
from sira, more Spark types are accepted (timestamp, float, smallint, decimal(p,0)...) and cast
to these, NULLs and NaN are refused or dropped: see ``sira_spark.convert``.

    >>> from sira import INT, INTINTERVAL
    >>> spark_type(INTINTERVAL).simpleString()
    'struct<begin:int,end:int>'
"""

from __future__ import annotations

from pyspark.sql import types as T

from sira.errors import NotSupportedOnSpark
from sira.intervals import IntervalType
from sira.types import (AVERAGE, BIGINT, BOOLEAN, DATE, FLOAT, INT, LONG, STRING, TIMESTAMP,
                        RelationType, TupleType)

_SCALARS = {
    INT: T.IntegerType(), LONG: T.LongType(), BIGINT: T.DecimalType(38, 0),
    FLOAT: T.DoubleType(), STRING: T.StringType(), BOOLEAN: T.BooleanType(),
    DATE: T.DateType(), TIMESTAMP: T.TimestampNTZType(),
}


def spark_type(t) -> T.DataType:
    """The Spark type holding values of sira type ``t``."""
    if t in _SCALARS:
        return _SCALARS[t]
    if t == AVERAGE:
        return T.StructType([T.StructField("count", T.IntegerType(), False),
                             T.StructField("value", T.DoubleType(), False)])
    if isinstance(t, IntervalType):
        p = spark_type(t.point)
        return T.StructType([T.StructField("begin", p, False), T.StructField("end", p, True)])
    if isinstance(t, TupleType):
        return schema_of(t.heading)
    if isinstance(t, RelationType):
        return T.ArrayType(schema_of(t.heading), False)
    raise NotSupportedOnSpark(node=f"the type {t}")


def schema_of(heading) -> T.StructType:
    """A DataFrame schema: one column per attribute, in the heading's (sorted) order."""
    return T.StructType([T.StructField(n, spark_type(t), False) for n, t in heading.attributes])


def may_hold_nulls(t) -> bool:
    """Whether a column of sira type ``t`` can hold a null somewhere inside: an interval's open
    end, or any value nested in a tuple- or relation-valued attribute. Top-level sira values are
    never null, so scalar columns never do."""
    return isinstance(t, (IntervalType, TupleType, RelationType))


def equal(left, right, t):
    """Join-key equality of two columns of sira type ``t``: plain ``==`` for scalars (a plain
    equi-join key Spark can hash or sort on directly), null-safe where a null may be inside."""
    return left.eqNullSafe(right) if may_hold_nulls(t) else left == right
