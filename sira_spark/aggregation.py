"""Spark translations of AGGREGATE and SUMMARIZEBY.

Exact aggregations use Spark's own (sum, max, bool_and...); inexact ones (FLOAT, AVERAGE,
IINTERSECT, IUNION) fold the group's values in ascending order with ``aggregate`` over a sorted
array, exactly as the Python engine does, so both engines give the same bits. An empty input
gives the operator's identity.

SUMMARIZEBYUSING on one interval attribute whose aggregates are integer sums is a sweep line
(``_swept``); other aggregates split the intervals at their group's boundaries
(``sira_spark.packing.split_dataframes``, O(n log n + pieces)).
"""

from __future__ import annotations

from pyspark.sql import functions as F

from sira.algebra.aggregation import Aggregate, SummarizeBy, aggregations
from sira.algebra.fallible import fallible_attributes
from sira.errors import NotSupportedOnSpark
from sira.expressions.library import NO_IDENTITY
from sira.intervals import IntervalType
from sira.types import AVERAGE, FLOAT, INTEGER_TYPES, RelationType

from .basic import computed_on_every_row
from .compiler import Packed, ordered, translates
from .functions import (_average_plus, _iunion, column, exact_sum, float_mult, float_plus,
                        interval_intersect, literal_column, sira_error)
from .packing import _c, split_dataframes
from .types import spark_type


def _sorted_values(value, t):
    """The group's values as an array in the Python engine's ascending order."""
    if isinstance(t, IntervalType):
        iv = value
        key = F.struct(iv["begin"].alias("k1"), iv["end"].isNull().alias("k2"),
                       F.coalesce(iv["end"], iv["begin"]).alias("k3"), iv.alias("v"))
        return F.transform(F.array_sort(F.collect_list(key)), lambda s: s["v"])
    return F.array_sort(F.collect_list(value))


def _fold(values, start, merge, t):
    return F.aggregate(values, start.cast(spark_type(t)), merge)


def aggregate_column(agg, value, t, grouped=False):
    """The aggregate expression of one spec over the group's rows. ``grouped``: the rows are a
    group of a groupBy, never empty, so no identity fallback (and no extra count) is needed."""
    op = agg.name
    rt = agg.result_type
    identity = None if agg.identity is NO_IDENTITY else literal_column(rt, agg.identity)
    if op == "plus" and t in INTEGER_TYPES:
        out = exact_sum(value, t).cast(spark_type(rt))
    elif op == "plus" and t == FLOAT:
        out = _fold(_sorted_values(value, t), F.lit(0.0), float_plus, t)
    elif op == "plus" and t == AVERAGE:
        out = F.aggregate(F.array_sort(F.collect_list(value)), identity, _average_plus)
    elif op == "mult" and t in INTEGER_TYPES:
        out = F.aggregate(F.collect_list(value.cast("decimal(38,0)")),
                          F.lit(1).cast("decimal(38,0)"), lambda a, x: a * x).cast(spark_type(rt))
    elif op == "mult" and t == FLOAT:
        out = _fold(_sorted_values(value, t), F.lit(1.0), float_mult, t)
    elif op == "max":
        out = F.max(value)
    elif op == "min":
        out = F.min(value)
    elif op == "and":
        out = F.bool_and(value)
    elif op == "or":
        out = F.bool_or(value)
    elif op == "iintersect":
        out = F.aggregate(_sorted_values(value, t), identity,
                          lambda acc, x: interval_intersect(acc, x, t))
    elif op == "iunion":
        values = _sorted_values(value, t)
        out = F.aggregate(F.slice(values, 2, 1 << 30), F.element_at(values, 1),
                          lambda a, x: _iunion([a, x], None, None))
    elif op == "union" and isinstance(t, RelationType):
        out = F.array_sort(F.array_distinct(F.flatten(F.collect_list(value))))
    elif op == "intersect" and isinstance(t, RelationType):
        values = F.collect_list(value)
        out = F.array_sort(F.aggregate(F.slice(values, 2, 1 << 30), F.element_at(values, 1),
                                       lambda a, x: F.array_intersect(a, x)))
    elif op == "xminus" and isinstance(t, RelationType):
        out = F.array_sort(F.aggregate(
            F.collect_list(value), identity,
            lambda a, x: F.array_union(F.array_except(a, x), F.array_except(x, a))))
    else:
        raise NotSupportedOnSpark(node=f"aggregation {op} over {t}")
    if grouped:
        return out
    empty = F.count(F.lit(1)) == 0
    fallback = identity if identity is not None else sira_error(
        "SiraValueError", f"{op} has no identity value for {rt}, so it cannot aggregate an "
        "empty relation")
    return F.when(empty, fallback).otherwise(out)


def _specs(node, heading, c, grouped=False):
    from sira.expressions.evaluate import infer_type
    aggs = aggregations(node.specs, heading, node.operator_name)
    return [aggregate_column(a, column(e, heading, c), infer_type(e, heading), grouped).alias(n)
            for (n, _, e), a in zip(node.specs, aggs)]


@translates(Aggregate)
def _aggregate(node, children, c):
    (df,) = children
    if not node.specs:  # TABLE_DEE whatever the input holds (Spark refuses an empty agg)
        return df.agg(F.count(F.lit(1)).alias("__n")).drop("__n")
    return computed_on_every_row(df.agg(*_specs(node, node.source.heading, c)),
                                 fallible_attributes(node))


def _direct_summary(node, c):
    """A windowed aggregate with a plan of its own (running sums over a partitioned ``rows(N)``
    window, panes for a HOP: ``windows.summarize_window``), compiled from the window's source;
    else None."""
    from sira.algebra.derived import summarize_by_points

    from .windows import summarize_window
    if summarize_by_points(node) is not None:
        return None
    direct = summarize_window(node, c)
    return None if direct is None else computed_on_every_row(direct, fallible_attributes(node))


@translates(SummarizeBy, direct=_direct_summary)
def _summarizeby(node, children, c):
    """Every group's aggregates are computed, even those of groups a restriction above drops
    or of attributes nothing reads, when they may fail (see ``sira.algebra.fallible``)."""
    from sira.algebra.derived import summarize_by_points
    by_points = summarize_by_points(node)  # a formula reads a USING attribute: the definition
    if by_points is not None:
        return Packed(c.compile(by_points))
    swept = _swept(node, children, c)
    if swept is not None:
        return Packed(computed_on_every_row(swept, fallible_attributes(node)))
    return computed_on_every_row(_summarized(node, children, c), fallible_attributes(node))


def _swept(node, children, c):
    """SUMMARIZEBYUSING on one interval attribute with integer sums only (``plus`` of an
    integer, counts), by a sweep line instead of the split, or None.

    Pointwise, a sum is over the distinct tuples present at a point: the source is packed on the
    interval first (a rest's intervals then neither overlap nor meet, so each distinct rest is
    present at a point at most once); every packed interval is a begin event (+1, +value) and an end
    event (-1, -value), summed per (group, point) in DECIMAL(38); per group in order of point
    (``running_sequence``, over buckets of point) the running count and sums and the next point say
    that [point, next) holds them where the count is positive; PACK then joins the segments that
    meet with equal sums. O(n log n + output) however long the intervals (the split costs their
    overlaps), as on the DuckDB engine."""
    from sira.algebra.aggregation import sweepable
    from .packing import pack_one, running_sequence
    swept = sweepable(node, {"plus"})
    if swept is None:
        return None
    during, aggs = swept
    h = node.source.heading
    (df,) = children
    packed = pack_one(df, h, during)
    keys = [_c(n) for n in node.by if n != during]
    values = [column(e, h, c).cast("decimal(38,0)") for _, _, e in node.specs]
    sums = [f"__s{j}" for j in range(len(values))]
    iv = _c(during)
    starts = packed.select(*keys, iv["begin"].alias("__p"), F.lit(1).alias("__cnt"),
                           *[v.alias(x) for v, x in zip(values, sums)])
    ends = packed.where(iv["end"].isNotNull()).select(
        *keys, iv["end"].alias("__p"), F.lit(-1).alias("__cnt"),
        *[(-v).alias(x) for v, x in zip(values, sums)])
    points = starts.unionByName(ends).groupBy(*keys, "__p").agg(
        *[F.sum(x).alias(x) for x in ["__cnt"] + sums])
    # per group, cut into buckets of point (seed 003, section 5)
    segments, _ = running_sequence(points, ["__cnt"] + sums,
                                   [(n, h.type_of(n)) for n in node.by if n != during])
    result = segments.where(F.col("__cnt") > 0).select(
        *keys, F.struct(F.col("__p").alias("begin"), F.col("__q").alias("end")).alias(during),
        *[F.col(x).cast(spark_type(a.result_type)).alias(n)
          for x, a, (n, _, _) in zip(sums, aggs, node.specs)])
    return pack_one(ordered(result, node.heading), node.heading, during)


def _summarized(node, children, c):
    (df,) = children
    h = node.source.heading
    if node.using:
        key = [n for n in node.by if n not in node.using]
        (df,) = split_dataframes([df], [h], list(node.using), key)
    if node.by and not node.specs:  # the groups alone (Spark refuses an empty agg)
        return df.select(*[F.col(f"`{n}`") for n in node.by]).distinct()
    if node.by:  # groups are never empty: Spark's aggregates as they are
        return df.groupBy(*[F.col(f"`{n}`") for n in node.by]).agg(*_specs(node, h, c, True))
    # a global aggregation yields a row even for an empty input, which SUMMARIZEBY must not
    out = df.agg(*_specs(node, h, c), F.count(F.lit(1)).alias("__n"))
    return out.where(F.col("__n") > 0).drop("__n")
