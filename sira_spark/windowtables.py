"""Spark translations of the window table functions TUMBLE, HOP, CUMULATE and SESSION.

Tumbling, hopping and cumulating windows are arithmetic on the timestamp (``explode`` of the
window starts holding it); a session is gaps-and-islands with window functions: per partition,
ordered by time, a new session starts where an element comes later than the previous one plus
the gap, and the session interval is [first time, last time + gap).
"""

from __future__ import annotations

from pyspark.sql import Window as SparkWindow
from pyspark.sql import functions as F

from sira.algebra.windows import WindowTable
from sira.types import TIMESTAMP

from .compiler import translates


def _units(node, c):
    """(time column as integer units, function back to the timestamp's type)."""
    col = F.col(f"`{node.ts}`")
    if node.source.heading.type_of(node.ts) == TIMESTAMP:
        return (F.unix_micros(col.cast("timestamp")),
                lambda u: F.timestamp_micros(u).cast("timestamp_ntz"))
    t = node.source.heading.type_of(node.ts)
    spark_t = "int" if t.name == "INT" else "bigint"
    return col.cast("bigint"), lambda u: u.cast(spark_t)


def _interval(back, begin, end):
    return F.struct(back(begin).alias("begin"), back(end).alias("end"))


@translates(WindowTable)
def _window_table(node, children, c):
    (df,) = children
    t, back = _units(node, c)
    size, slide, offset = node.units("size"), node.units("slide"), node.units("offset")
    name = node.name
    if node.kind == "tumble":
        start = F.floor((t - offset) / size).cast("bigint") * size + offset
        return df.withColumn(name, _interval(back, start, start + size))
    if node.kind == "hop":
        last = F.floor((t - offset) / slide).cast("bigint")
        first = F.floor((t - offset - size) / slide).cast("bigint") + 1
        k = F.explode(F.sequence(first, last))
        out = df.withColumn("__k", k)
        start = F.col("__k") * slide + offset
        return out.withColumn(name, _interval(back, start, start + size)).drop("__k")
    if node.kind == "cumulate":
        period = F.floor((t - offset) / size).cast("bigint") * size + offset
        j = F.explode(F.sequence(F.floor((t - period) / slide).cast("bigint") + 1,
                                 F.lit(size // slide).cast("bigint")))
        out = df.withColumn("__j", j)
        return out.withColumn(name, _interval(back, period, period + F.col("__j") * slide)) \
            .drop("__j")
    gap = size
    w = SparkWindow.partitionBy(*[F.col(f"`{p}`") for p in node.partition]).orderBy(t)
    prev = F.lag(t).over(w)
    starts = df.withColumn("__u", t).withColumn(
        "__new", F.when(prev.isNull() | (t > prev + gap), 1).otherwise(0))
    sessions = starts.withColumn("__s", F.sum("__new").over(
        w.rowsBetween(SparkWindow.unboundedPreceding, 0)))
    per = SparkWindow.partitionBy(*[F.col(f"`{p}`") for p in node.partition], "__s")
    out = sessions.withColumn(name, _interval(back, F.min("__u").over(per),
                                              F.max("__u").over(per) + gap))
    return out.drop("__u", "__new", "__s")
