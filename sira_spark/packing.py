"""PACK, UNPACK and split-point normalisation as DataFrame plans.

* PACK on one attribute is gaps-and-islands with window functions: per group of the other
  attributes, ordered by begin, a tuple starts a new island when its begin lies after every end
  seen before it; islands are then aggregated to (min begin, max end).
* Splitting gathers, per group of key attributes, the sorted array of all boundaries, and cuts
  each interval at the boundaries strictly inside it (``filter`` and ``transform`` on arrays,
  then ``explode``): the cost follows the number of boundaries, never the interval lengths.
* PACK on several attributes splits first, then packs on each in order (as the Python engine).
* UNPACK counts first (an action) and refuses results beyond the limit.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Window
from pyspark.sql import functions as F

from sira.algebra.packing import Pack, Unpack
from sira.errors import IntervalError, TooManyTuples
from sira.types import DATE, IntegerType

from .compiler import ordered, translates
from .types import spark_type

DEFAULT_UNPACK_LIMIT = 10_000_000


def _c(name):
    return F.col(f"`{name}`")


def pack_one(df, heading, name):
    """PACK on one interval attribute."""
    others = [n for n in heading.names if n != name]
    iv = _c(name)
    df = df.where(iv["end"].isNull() | (iv["end"] > iv["begin"]))  # empty intervals: no points
    order = [iv["begin"], iv["end"].asc_nulls_last()]
    w = Window.partitionBy(*[_c(n) for n in others]).orderBy(*order)
    before = w.rowsBetween(Window.unboundedPreceding, -1)
    prev_end = F.max(iv["end"]).over(before)
    prev_open = F.max(iv["end"].isNull().cast("int")).over(before)
    starts = F.when(prev_open == 1, 0).when(prev_end.isNull() | (iv["begin"] > prev_end), 1) \
        .otherwise(0)
    flagged = df.withColumn("__start", starts)
    islands = flagged.withColumn(
        "__island", F.sum("__start").over(w.rowsBetween(Window.unboundedPreceding, 0)))
    packed = islands.groupBy(*[_c(n) for n in others], "__island").agg(
        F.min(iv["begin"]).alias("__b"),
        F.max(iv["end"]).alias("__e"),
        F.max(iv["end"].isNull().cast("int")).alias("__open"))
    end = F.when(F.col("__open") == 1, F.lit(None)).otherwise(F.col("__e"))
    out = packed.withColumn(name, F.struct(F.col("__b").alias("begin"), end.alias("end")))
    return ordered(out, heading)


def pack_dataframe(df, heading, names):
    """PACK on ``names`` in order (split first when there are several)."""
    names = list(names)
    if len(names) > 1:
        key = [n for n in heading.names if n not in names]
        (df,) = split_dataframes([df], [heading], names, key)
    for name in names:
        df = pack_one(df, heading, name)
    return df


def _join_on_key(df, bounds, key):
    if not key:
        return df.crossJoin(bounds)
    b = bounds.select(*[_c(k).alias(f"__k_{k}") for k in key],
                      *[c for c in bounds.columns if c not in key])
    cond = reduce(lambda x, y: x & y, [_c(k).eqNullSafe(F.col(f"`__k_{k}`")) for k in key])
    return df.join(b, cond, "inner").drop(*[f"__k_{k}" for k in key])


def split_dataframes(dfs, headings, names, key):
    """Split several DataFrames together on interval attributes ``names`` within groups ``key``."""
    out = list(dfs)
    for d, name in enumerate(names):
        points = []
        for df in out:
            iv = _c(name)
            points.append(df.select(*[_c(k) for k in key], iv["begin"].alias("__p")))
            points.append(df.where(iv["end"].isNotNull())
                          .select(*[_c(k) for k in key], iv["end"].alias("__p")))
        allpoints = reduce(lambda a, b: a.unionByName(b), points)
        bounds = allpoints.groupBy(*[_c(k) for k in key]).agg(
            F.array_sort(F.collect_set("__p")).alias("__bounds"))
        split = []
        for df, heading in zip(out, headings):
            joined = _join_on_key(df, bounds, key)
            iv = _c(name)
            inner = F.filter("__bounds", lambda x: (x > iv["begin"]) &
                             (iv["end"].isNull() | (x < iv["end"])))
            pts = F.concat(F.array(iv["begin"]), inner, F.array(iv["end"]))
            pieces = F.transform(F.sequence(F.lit(0), F.size(pts) - 2),
                                 lambda i: F.struct(F.element_at(pts, i + 1).alias("begin"),
                                                    F.element_at(pts, i + 2).alias("end")))
            exploded = joined.withColumn(name, F.explode(pieces)).drop("__bounds")
            split.append(ordered(exploded, heading).distinct())
        out = split
    return out


@translates(Pack)
def _pack(node, children, c):
    return children[0]  # the compiler packs every result on its node's pack_list


def _unit_intervals(t, iv):
    point = t.point
    if isinstance(point, IntegerType):
        seq = F.sequence(iv["begin"], (iv["end"] - 1).cast(spark_type(point)))
        step = lambda p: (p + 1).cast(spark_type(point))  # noqa: E731
    elif point == DATE:
        seq = F.sequence(iv["begin"], F.date_sub(iv["end"], 1), F.expr("INTERVAL 1 DAY"))
        step = lambda p: F.date_add(p, 1)  # noqa: E731
    else:
        one = F.expr("INTERVAL 1 MICROSECOND")
        seq = F.sequence(iv["begin"], iv["end"] - one, one)
        step = lambda p: p + one  # noqa: E731
    return F.transform(seq, lambda p: F.struct(p.alias("begin"), step(p).alias("end")))


def _points(t, iv):
    point = t.point
    if isinstance(point, IntegerType):
        return (iv["end"] - iv["begin"]).cast("long")
    if point == DATE:
        return F.datediff(iv["end"], iv["begin"]).cast("long")
    return F.unix_micros(iv["end"].cast("timestamp")) - F.unix_micros(iv["begin"].cast("timestamp"))


@translates(Unpack)
def _unpack(node, children, c):
    (df,) = children
    h = node.heading
    limit = c.options.get("max_tuples", DEFAULT_UNPACK_LIMIT)
    if not node.on:
        return df
    unbounded = reduce(lambda a, b: a | b, [_c(n)["end"].isNull() for n in node.on])
    if df.where(unbounded).limit(1).count():
        raise IntervalError("UNPACK: an interval is unbounded, so it holds no finite set of "
                            "points", operator="UNPACK")
    size = reduce(lambda a, b: a * b, [_points(h.type_of(n), _c(n)) for n in node.on])
    total = df.select(F.sum(size).alias("n")).first()["n"] or 0
    if total > limit:
        raise TooManyTuples(f"UNPACK would produce more than {limit} tuples (raise the limit "
                            f"with max_tuples=...)", operator="UNPACK", limit=limit)
    for n in node.on:
        df = df.withColumn(n, F.explode(_unit_intervals(h.type_of(n), _c(n))))
    return df.distinct()
