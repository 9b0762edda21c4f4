"""Spark translations of AGGREGATE and SUMMARIZEBY.

Exact aggregations use Spark's own (sum, max, bool_and...); FLOAT sums are the exact sum rounded
once, from partial sums of exact limbs per bucket of exponent (:func:`_exact_float_sums`, joined
on the group: no group's values gathered in one array); a product of INTs or LONGs multiplies a
bounded list of factors (:func:`_bounded_products`, joined on the group) and IINTERSECT is the
largest begin and least end; the inexact ones (FLOAT products, AVERAGE) and IUNION fold the
group's values in ascending order with ``aggregate`` over a sorted array, exactly as the Python
engine does, so both engines give the same bits (and IUNION fails where it does). An empty input
gives the operator's identity.

SUMMARIZEBYUSING on one interval attribute never splits when its aggregates are integer sums, max,
min, and, or, iintersect, products of INTs or LONGs, or integer and FLOAT sums alone: sums alone are
a sweep line (``_swept``; FLOAT sums as exact limbs), the others a segment tree over each group's
elementary segments (``_tree``); both O(n log n + output), however long the intervals, as on the
DuckDB engine. Other aggregates split the intervals at their group's boundaries
(``sira_spark.packing.split_dataframes``).
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Window
from pyspark.sql import functions as F

from sira.algebra.aggregation import Aggregate, SummarizeBy, aggregations, bounded_product
from sira.algebra.fallible import fallible_attributes
from sira.errors import NotSupportedOnSpark
from sira.expressions.library import NO_IDENTITY
from sira.intervals import IntervalType
from sira.types import AVERAGE, FLOAT, INTEGER_TYPES, RelationType

from .basic import computed_on_every_row
from .compiler import Packed, ordered, translates
from .functions import (_average_plus, _iunion, column, exact_sum, float_mult, float_round_column,
                        float_sum_column, literal_column, sira_error)
from .packing import _c, split_dataframes
from .rowbound import sequence_join, stored
from .types import equal, spark_type


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
        out = float_sum_column(F.collect_list(value))
    elif op == "plus" and t == AVERAGE:
        out = F.aggregate(F.array_sort(F.collect_list(value)), identity, _average_plus)
    elif op == "mult" and t in INTEGER_TYPES:  # 0 with a zero among the factors, whatever
        # the others' product (CASE evaluates only the branch taken; the product of nonzero
        # integers grows at every step, so it fits DECIMAL(38) whenever the result may)
        product = F.aggregate(F.collect_list(value.cast("decimal(38,0)")),
                              F.lit(1).cast("decimal(38,0)"), lambda a, x: a * x)
        out = F.when(F.bool_or(value == 0), F.lit(0).cast("decimal(38,0)")) \
            .otherwise(product).cast(spark_type(rt))
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
    elif op == "iintersect":  # the largest begin and least end: no list, whatever the order
        out = _final(agg, [f(v) for v, f in _parts(agg, value)])
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


def _specs(node, heading, c, grouped=False, skip=()):
    from sira.expressions.evaluate import infer_type
    aggs = aggregations(node.specs, heading, node.operator_name)
    return [aggregate_column(a, column(e, heading, c), infer_type(e, heading), grouped).alias(n)
            for j, ((n, _, e), a) in enumerate(zip(node.specs, aggs)) if j not in skip]


def _float_sums(node, heading) -> list:
    """The positions of the node's FLOAT sums."""
    aggs = aggregations(node.specs, heading, node.operator_name)
    return [j for j, a in enumerate(aggs) if a.name == "plus" and a.result_type == FLOAT]


def _products(node, heading) -> list:
    """The positions of the node's products of INTs or LONGs (``bounded_product``)."""
    aggs = aggregations(node.specs, heading, node.operator_name)
    return [j for j, a in enumerate(aggs) if bounded_product(a)]


def _summary(df, node, heading, c, by: list, grouped: bool):
    """``df`` aggregated per value of the attributes ``by`` (none: one row, with ``__n`` its
    count) with the node's specs. FLOAT sums come from partial sums of their exact limbs
    (:func:`_exact_float_sums`) and products of INTs or LONGs from a bounded list of factors
    (:func:`_bounded_products`), joined on the group, so that no group's values are gathered
    in one array; the others are Spark's aggregates."""
    floats, products = _float_sums(node, heading), _products(node, heading)
    cols = [F.col(f"`{n}`") for n in by]
    rest = _specs(node, heading, c, grouped, floats + products)
    if not by:
        rest.append(F.count(F.lit(1)).alias("__n"))
    summary = df.groupBy(*cols).agg(*rest) if by and rest else \
        df.select(*cols).distinct() if by else df.agg(*rest)
    if not floats and not products:
        return summary
    group = [(n, heading.type_of(n)) for n in by]
    for apart in ([_exact_float_sums(df, node, heading, c, by, floats)] if floats else []) + \
            ([_bounded_products(df, node, heading, c, by, products)] if products else []):
        summary = _joined(summary, apart, group, []) if by else summary.crossJoin(apart)
    names = [n for n in by] + [n for n, _, _ in node.specs] + ([] if by else ["__n"])
    return summary.select(*[F.col(f"`{n}`") for n in names])


def _bounded_products(df, node, heading, c, by: list, products: list):
    """One row per value of ``by`` (one row when empty, also for no input) with each product
    of INTs or LONGs of ``products``: how many values are zero and how many negative
    (Spark's partial sums), and the product of at most ``_FACTORS`` magnitudes of at least 2
    from each partition of the group's rows (:func:`_few_factors`, a bounded list however
    large the group), capped at ``_PRODUCT_CAP``; of its type or ``IntOverflow``
    (:func:`_final`), as in the segment tree."""
    cols = [F.col(f"`{n}`") for n in by]
    aggs = aggregations(node.specs, heading, node.operator_name)
    parts = []
    for j in products:
        v = column(node.specs[j][2], heading, c)
        magnitude = F.abs(v.cast("decimal(38,0)"))
        parts.append(df.select(*cols, F.lit(j).alias("__j"), (v == 0).cast("long").alias("__z"),
                               (v < 0).cast("long").alias("__g"),
                               magnitude.alias("__m")))
    keyed = [*by, "__j"]
    factors = _few_factors(reduce(lambda a, b: a.unionByName(b), parts), keyed, ["__m"])
    per = factors.groupBy(*[_c(n) for n in keyed]).agg(
        F.sum("__z").alias("__z"), F.sum("__g").alias("__g"), _capped_product("__m").alias("__m"))
    one = F.lit(1).cast("decimal(38,0)")

    def part(j, name, none):
        return F.coalesce(F.max(F.when(F.col("__j") == j, F.col(name))), none)
    return per.groupBy(*cols).agg(*[  # (no input: no zero, no negative, a product of 1)
        _final(aggs[j], [part(j, "__z", F.lit(0)), part(j, "__g", F.lit(0)),
                         part(j, "__m", one)]).alias(node.specs[j][0]) for j in products])


def _exact_float_sums(df, node, heading, c, by: list, floats: list):
    """One row per value of ``by`` (one row when empty, also for no input) with each FLOAT
    sum of ``floats``: every value cut into its bucket of exponent and exact limb
    (:func:`_float_limbs`), the limbs summed per (group, sum, bucket) and the infinities
    counted (Spark's partial aggregates), then gathered per group (a few buckets each) and
    rounded once (``float_round_column``)."""
    cols = [F.col(f"`{n}`") for n in by]
    parts = []
    for j in floats:
        v = column(node.specs[j][2], heading, c)
        valued = df.select(*cols, v.alias("__v"))
        x = F.col("__v")
        finite = x.isNotNull() & (x != F.lit(0.0)) & ~x.isin(float("inf"), float("-inf"))
        bucket, limb = _float_limbs(F.when(finite, x).otherwise(F.lit(1.0)))  # (never log2(0))
        parts.append(valued.select(
            *cols, F.lit(j).alias("__j"), F.when(finite, bucket).otherwise(-1).alias("__lb"),
            F.when(finite, limb).otherwise(F.lit(0).cast("decimal(38,0)")).alias("__d"),
            (x == F.lit(float("inf"))).cast("long").alias("__pi"),
            (x == F.lit(float("-inf"))).cast("long").alias("__ni")))
    limbs = reduce(lambda a, b: a.unionByName(b), parts).groupBy(*cols, "__j", "__lb").agg(
        F.sum("__d").alias("__d"), F.sum("__pi").alias("__pi"), F.sum("__ni").alias("__ni"))
    counts = []
    for j in floats:
        for x in ("__pi", "__ni"):
            counts.append(F.coalesce(F.sum(F.when(F.col("__j") == j, F.col(x))), F.lit(0))
                          .alias(f"{x}{j}"))
    limb = F.struct(F.col("__j").alias("j"), F.col("__lb").alias("b"), F.col("__d").alias("s"))
    gathered = limbs.groupBy(*cols).agg(  # (bucket -1: no finite value, nothing to add)
        F.collect_list(F.when(F.col("__lb") >= 0, limb)).alias("__limbs"), *counts)
    return gathered.select(*cols, *[
        float_round_column(F.col("__limbs"), j, F.col(f"__pi{j}"), F.col(f"__ni{j}"))
        .alias(node.specs[j][0]) for j in floats])


@translates(Aggregate)
def _aggregate(node, children, c):
    (df,) = children
    if not node.specs:  # TABLE_DEE whatever the input holds (Spark refuses an empty agg)
        return df.agg(F.count(F.lit(1)).alias("__n")).drop("__n")
    summary = _summary(df, node, node.source.heading, c, [], False).drop("__n")
    return computed_on_every_row(summary, fallible_attributes(node))


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
    from sira.algebra.derived import float_sums_apart, summarize_by_points
    by_points = summarize_by_points(node)  # a formula reads a USING attribute: the definition
    if by_points is not None:
        return Packed(c.compile(by_points))
    apart = float_sums_apart(node, _TREED)  # FLOAT sums by the sweep, the rest by the tree
    if apart is not None:
        return Packed(c.compile(apart))
    swept = _swept(node, children, c)
    if swept is not None:
        return Packed(computed_on_every_row(swept, fallible_attributes(node)))
    return computed_on_every_row(_summarized(node, children, c), fallible_attributes(node))


def _swept(node, children, c):
    """SUMMARIZEBYUSING on one interval attribute with sums only (``plus`` of an integer or a
    FLOAT, counts), by a sweep line instead of the split; with max, min, and, or, iintersect
    or a product of INTs or LONGs among integer sums, by a segment tree (:func:`_tree`); None
    for other aggregates.

    Pointwise, a sum is over the distinct tuples present at a point: the source is packed on the
    interval first, unless it is packed by construction, as a CQL window is (a rest's intervals
    then neither overlap nor meet, so each distinct rest is present at a point at most once);
    every packed interval is a begin event (+1, +value) and an end event (-1, -value), summed
    per (group, point) in DECIMAL(38); per group in order of point (``running_sequence``, over
    buckets of point) the running count and sums and the next point say that [point, next)
    holds them where the count is positive; PACK then joins the segments that meet with equal
    sums. A FLOAT sum runs exactly: its infinities as counts, its finite values as integer limbs
    (:func:`_float_segments`), rounded once per segment. O(n log n + output) however long the
    intervals (the split costs their overlaps), as on the DuckDB engine."""
    from sira.algebra.aggregation import sweepable
    from .packing import pack_one, packed_source, running_sequence
    swept = sweepable(node, _TREED, floats=True)
    if swept is None:
        return None
    during, aggs = swept
    floats = [j for j, a in enumerate(aggs) if a.result_type == FLOAT]
    if any(a.name == "mult" and not bounded_product(a) for a in aggs):
        return None  # a FLOAT or BIGINT product: the split
    if any(a.name != "plus" for a in aggs):
        return None if floats else _tree(node, children, c, during, aggs)
    h = node.source.heading
    (df,) = children
    packed = packed_source(df, node.source, during)
    if floats:
        packed = packed.localCheckpoint(eager=False)  # read by the limbs too
    keys = [_c(n) for n in node.by if n != during]
    group = [(n, h.type_of(n)) for n in node.by if n != during]
    values, sums = [], []  # FLOAT sums: their counts of +inf and -inf here (limbs below)
    for j, (_, _, e) in enumerate(node.specs):
        v = column(e, h, c)
        if j in floats:
            values += [(v == F.lit(float("inf"))).cast("decimal(38,0)"),
                       (v == F.lit(float("-inf"))).cast("decimal(38,0)")]
            sums += [f"__pi{j}", f"__ni{j}"]
        else:
            values.append(v.cast("decimal(38,0)"))
            sums.append(f"__s{j}")
    iv = _c(during)
    starts = packed.select(*keys, iv["begin"].alias("__p"), F.lit(1).alias("__cnt"),
                           *[v.alias(x) for v, x in zip(values, sums)])
    ends = packed.where(iv["end"].isNotNull()).select(
        *keys, iv["end"].alias("__p"), F.lit(-1).alias("__cnt"),
        *[(-v).alias(x) for v, x in zip(values, sums)])
    points = starts.unionByName(ends).groupBy(*keys, "__p").agg(
        *[F.sum(x).alias(x) for x in ["__cnt"] + sums])
    # per group, cut into buckets of point (seed 003, section 5)
    segments, _ = running_sequence(points, ["__cnt"] + sums, group)
    outs = {j: F.col(f"__s{j}") for j in range(len(aggs)) if j not in floats}
    segments = segments.where(F.col("__cnt") > 0)
    if floats:
        segments = _float_segments(node, h, c, packed, points, segments, floats, group)
        outs.update({j: F.col(f"__o{j}") for j in floats})
    result = segments.select(
        *keys, F.struct(F.col("__p").alias("begin"), F.col("__q").alias("end")).alias(during),
        *[outs[j].cast(spark_type(a.result_type)).alias(n)
          for j, (a, (n, _, _)) in enumerate(zip(aggs, node.specs))])
    return pack_one(ordered(result, node.heading), node.heading, during)


def _float_limbs(v):
    """``(bucket, limb)`` columns for a finite, nonzero FLOAT column ``v``: ``v`` is exactly
    ``limb * 2**(32 * bucket - 1074)``, the limb an integer below 2**85 in magnitude, in
    DECIMAL(38,0) (as ``sira_duckdb.aggregation._float_limbs``: the bucket from the exponent,
    ``log2`` corrected by the powers of two around it, which Java's ``pow`` gives exactly; the
    scaling two exact multiplications by a power of two). Spark's cast of a DOUBLE to a
    DECIMAL goes through its shortest decimal text, so the limb is cast as two exact LONGs,
    its multiple of 2**32 and the rest."""
    x = F.abs(v)
    e0 = F.floor(F.log2(x)).cast("int")
    e = e0 - (F.pow(F.lit(2.0), e0) > x).cast("int") + \
        (F.pow(F.lit(2.0), e0 + 1) <= x).cast("int")
    bucket = F.floor(F.greatest(e + 1022, F.lit(0)) / 32).cast("int")
    half = F.pow(F.lit(2.0), F.lit(537) - bucket * 16)
    scaled = v * half * half
    high = F.floor(scaled / F.lit(2.0 ** 32))
    low = scaled - high * F.lit(2.0 ** 32)
    limb = high.cast("long").cast("decimal(38,0)") * F.lit(2 ** 32).cast("decimal(38,0)") + \
        low.cast("long").cast("decimal(38,0)")
    return bucket, limb


def _float_segments(node, h, c, packed, points, segments, floats, group):
    """The segments with each FLOAT sum's value (``__o<j>``): the running limbs of its finite
    values per (group, sum, bucket) at every point of the group (``running_sequence``, over
    buckets of point), gathered per point and rounded once with the running counts of
    infinities (``float_round_column``). Rows: the group's points times its (sum, bucket)
    lanes; the buckets a group's values use are few (one per factor 2**32 of their range)."""
    from sira.types import INT

    from .functions import float_round_column
    from .packing import running_sequence
    (during,) = node.using
    iv = _c(during)
    keys = [_c(n) for n, _ in group]
    rows = []
    for j in floats:
        v = column(node.specs[j][2], h, c)
        for at, sign, kept in ((iv["begin"], 1, packed),
                               (iv["end"], -1, packed.where(iv["end"].isNotNull()))):
            valued = kept.select(*keys, at.alias("__p"), v.alias("__v")).where(
                (F.col("__v") != F.lit(0.0)) & ~F.col("__v").isin(float("inf"), float("-inf")))
            bucket, limb = _float_limbs(F.col("__v"))
            rows.append(valued.select(*keys, "__p", F.lit(j).alias("__j"), bucket.alias("__lb"),
                                      (limb * F.lit(sign)).alias("__d")))
    limbs = reduce(lambda a, b: a.unionByName(b), rows).groupBy(
        *keys, "__j", "__lb", "__p").agg(F.sum("__d").alias("__d"))
    limbs = limbs.localCheckpoint(eager=False)
    lanes = limbs.select(*keys, "__j", "__lb").distinct()
    grid = _joined(lanes, points.select(*keys, "__p"), group, []) if group else \
        points.select("__p").crossJoin(F.broadcast(lanes))  # a few lanes: on every point
    grid = _joined(grid, limbs, group, ["__j", "__lb", "__p"], "left") \
        .select(*keys, "__j", "__lb", "__p",
                F.coalesce(F.col("__d"), F.lit(0).cast("decimal(38,0)")).alias("__d"))
    lane = group + [("__j", INT), ("__lb", INT)]
    running, _ = running_sequence(grid, ["__d"], lane)
    gathered = running.where(F.col("__d") != 0).groupBy(*keys, "__p").agg(F.collect_list(
        F.struct(F.col("__j").alias("j"), F.col("__lb").alias("b"),
                 F.col("__d").alias("s"))).alias("__limbs"))
    joined = _joined(segments, gathered, group, ["__p"], "left")
    return joined.select("*", *[float_round_column(F.col("__limbs"), j, F.col(f"__pi{j}"),
                                                   F.col(f"__ni{j}")).alias(f"__o{j}")
                                for j in floats])


def _joined(left, right, group: list, on: list, how: str = "inner"):
    """``left`` joined with ``right`` on the group attributes (``group``: pairs of name and
    sira type; null-safe where a null may be inside) and the columns ``on``; ``right``'s
    copies of them dropped."""
    names = [n for n, _ in group] + on
    renamed = right.select(*[_c(n).alias(f"__r{i}") if n in names else _c(n)
                             for i, n in enumerate(right.columns)])
    where = {n: f"__r{i}" for i, n in enumerate(right.columns) if n in names}
    match = [equal(left[f"`{n}`"], renamed[where[n]], t) for n, t in group] + \
        [left[f"`{n}`"] == renamed[where[n]] for n in on]
    return sequence_join(left, renamed, reduce(lambda a, b: a & b, match, F.lit(True)),
                         how).drop(*where.values())


#: what the segment tree combines: node values -> a segment's value (sums in DECIMAL(38))
_TREE = {"plus": F.sum, "max": F.max, "min": F.min, "and": F.bool_and, "or": F.bool_or}

#: the aggregations the segment tree takes: those of ``_TREE``, and IINTERSECT and a product
#: of INTs or LONGs as parts
_TREED = frozenset(_TREE) | {"iintersect", "mult"}

#: 2**63 + 1, more than the magnitude of any INT or LONG: the segment tree's products of
#: magnitudes stop there (two such multiply below 10**38, inside a DECIMAL(38))
_PRODUCT_CAP = 2 ** 63 + 1

#: a block multiplies at most this many magnitudes of at least 2 from each partition of its
#: values: more multiply past ``_PRODUCT_CAP`` anyway
_FACTORS = 64


def _capped_product(v):
    """The product of the DECIMAL(38) magnitudes ``v`` (a column or its name) of a group,
    capped at ``_PRODUCT_CAP`` after each step; nulls (every row but the few factors that
    :func:`_few_factors` keeps) are left out of the list."""
    from decimal import Decimal
    cap = F.lit(Decimal(_PRODUCT_CAP)).cast("decimal(38,0)")
    return F.aggregate(F.collect_list(v), F.lit(1).cast("decimal(38,0)"),
                       lambda a, x: F.least(a * x, cap))


def _few_factors(df, keys: list, products: list):
    """``df`` ready for :func:`_capped_product` of each of its columns ``products`` grouped by
    ``keys``: its rows with those columns null, and for each product, the rows holding one of
    its magnitudes of at least 2, at most ``_FACTORS`` of them (the least) per group in each
    partition, with the other columns null (which sums, max, min and the like pass over). A
    group's list is then bounded, however many rows it holds: in full when they hold at most
    ``_FACTORS`` such magnitudes; else at least ``_FACTORS`` of them, whose product already
    passes the cap. The window is partitioned by the group and the partition the row is in,
    so a group of most rows is spread over as many tasks as ``df`` has partitions, and it
    sorts only the factors (a product that fits has at most 63 of them, however many ones)."""
    if not products:
        return df

    def empty(name):
        return F.lit(None).cast(df.schema[name].dataType).alias(name)
    whole = df.select(*[empty(n) if n in products else _c(n) for n in df.columns])
    for v in products:
        rank = F.row_number().over(Window.partitionBy(*[_c(k) for k in keys], "__pid")
                                   .orderBy(_c(v)))
        few = df.where(_c(v) >= 2).withColumn("__pid", F.spark_partition_id()) \
            .withColumn("__rank", rank).where(F.col("__rank") <= _FACTORS)
        whole = whole.unionByName(few.select(*[_c(n) if n in keys or n == v else empty(n)
                                               for n in df.columns]))
    return whole


#: the tree's levels from this one up reach the segments that read them by broadcast: only a
#: group of more than 2^16 elementary segments has nodes there, a handful per level, each read
#: by up to every segment of its group (the root by all of them), so they are not a join key
#: (a key's rows meet in one partition) but a small table every partition holds
_BROADCAST_LEVEL = 16


def _tree(node, children, c, during, aggs):
    """SUMMARIZEBYUSING on one interval attribute with max, min, and, or, iintersect, a product
    of INTs or LONGs (and integer sums) beside them, by a segment tree over each group's
    elementary segments (as ``sira_duckdb.aggregation._tree``).

    The source is packed on the interval (each distinct rest then covers a point at most
    once). Each group's distinct boundaries are numbered 0..m-1 (``packing._numbered``, over
    buckets of point): elementary segment ``s`` is [boundary s, boundary s+1) (the last one
    unbounded above), and an interval covers the segments [rank of its begin, rank of its end)
    (m for an open end), found by equi-joins. That range is cut into its canonical dyadic
    blocks, at most two per level (level j, index x: segments [x * 2^j, (x + 1) * 2^j)), so
    every segment it covers lies in exactly one of them; each block aggregates the values of
    the intervals cut into it (a hash aggregation; IINTERSECT as its parts, :func:`_parts`).
    A segment's aggregate combines the blocks on its path, (j, s >> j) for every level j,
    found by an equi-join (the levels from ``_BROADCAST_LEVEL`` up broadcast); segments with no
    block are covered by nothing and give no tuple. PACK then joins the segments that meet
    with equal aggregates. O(n log n + output) rows, however long the intervals (the split
    costs their overlaps).
    """
    from .packing import _numbered, pack_one, packed_source
    h = node.source.heading
    (df,) = children
    packed = packed_source(df, node.source, during)
    group = [(n, h.type_of(n)) for n in node.by if n != during]

    def keys(frame_prefix, alias_prefix=None):
        return [F.col(f"{frame_prefix}{i}").alias(f"{alias_prefix or frame_prefix}{i}")
                for i in range(len(group))]

    def match(left, lp, right, rp):
        return [equal(left[f"{lp}{i}"], right[f"{rp}{i}"], t) for i, (_, t) in enumerate(group)]

    def every(conditions):
        return reduce(lambda a, b: a & b, conditions)
    iv = _c(during)
    parts = [_parts(a, column(e, h, c)) for a, (_, _, e) in zip(aggs, node.specs)]
    vals = [f"__v{j}" for j in range(sum(len(x) for x in parts))]
    combine = [f for x in parts for _, f in x]
    valued = packed.select(*[_c(n).alias(f"__r{i}") for i, (n, _) in enumerate(group)],
                           iv["begin"].alias("__b"), iv["end"].alias("__e"),
                           *[v.alias(x) for (v, _), x in zip((y for x in parts for y in x),
                                                             vals)])
    points = valued.select(*keys("__r", "__k"), F.col("__b").alias("__p")).unionByName(
        valued.where(F.col("__e").isNotNull()).select(*keys("__r", "__k"),
                                                      F.col("__e").alias("__p")))
    bounds = stored(_numbered(points.distinct(),
                              [(f"__k{i}", t) for i, (_, t) in enumerate(group)]))
    b = bounds.select(*keys("__k", "__bk"), F.col("__p").alias("__bp"),
                      F.col("__si").alias("__bi"), F.col("__sn").alias("__bn"))
    first = sequence_join(valued, b, every(match(valued, "__r", b, "__bk") +
                                           [b["__bp"] == valued["__b"]]))
    e = bounds.select(*keys("__k", "__ek"), F.col("__p").alias("__ep"),
                      F.col("__si").alias("__ei"))
    spans = sequence_join(first, e, every(match(first, "__r", e, "__ek") +
                                          [e["__ep"] == first["__e"]]), "left")
    lo, hi = F.col("__lo"), F.col("__hi")
    ranged = spans.select(*keys("__r"), (F.col("__bi") - 1).cast("long").alias("__lo"),
                          F.coalesce(F.col("__ei") - 1, F.col("__bn")).cast("long")
                          .alias("__hi"), *vals)
    # levels 0 .. floor(log2(hi - lo)) + 1, and one more should log2 round down; level j keeps
    # the blocks [ceil(lo / 2^j), floor(hi / 2^j)) not kept by a level above: the first when
    # its index is odd, the last when the end index is odd
    j, x, s = F.col("__j"), F.col("__x"), F.col("__s")
    cut = ranged.select("*", F.explode(F.sequence(
        F.lit(0), F.floor(F.log2(hi - lo)).cast("int") + 2)).alias("__j"))
    cut = cut.select("*", _shr(lo + _shl(F.lit(1).cast("long"), j) - 1, j).alias("__x"),
                     _shr(hi, j).alias("__s"))
    blocks = cut.where((x < s) & (x % 2 == 1)).select(*keys("__r"), "__j", "__x", *vals) \
        .unionByName(cut.where((x < s) & (s % 2 == 1)).select(
            *keys("__r"), "__j", (s - 1).alias("__x"), *vals))
    blocks = _few_factors(blocks, [*[f"__r{i}" for i in range(len(group))], "__j", "__x"],
                          [v for f, v in zip(combine, vals) if f is _capped_product])
    tree = blocks.groupBy(*keys("__r"), "__j", "__x").agg(
        *[f(v).alias(v) for f, v in zip(combine, vals)])
    # every segment with its path up the tree (levels 0 .. bit length of m, and one more)
    segs = bounds.select(*keys("__k", "__sk"), (F.col("__si") - 1).cast("long").alias("__i"),
                         "__p", "__sq", F.explode(F.sequence(
                             F.lit(0), F.floor(F.log2(F.col("__sn"))).cast("int") + 2))
                         .alias("__pj"))
    segs = segs.withColumn("__px", _shr(F.col("__i"), F.col("__pj")))
    high = F.col("__pj") >= _BROADCAST_LEVEL

    def on(path, node_):
        return every(match(path, "__sk", node_, "__r") + [
            node_["__j"] == path["__pj"], node_["__x"] == path["__px"]])
    low_p, low_t = segs.where(~high), tree.where(j < _BROADCAST_LEVEL)
    high_p, high_t = segs.where(high), F.broadcast(tree.where(j >= _BROADCAST_LEVEL))
    named = [*keys("__sk"), "__i", "__p", "__sq", *vals]
    paths = sequence_join(low_p, low_t, on(low_p, low_t)).select(*named).unionByName(
        high_p.join(high_t, on(high_p, high_t)).select(*named))
    segments = paths.groupBy(*keys("__sk"), "__i", "__p", "__sq").agg(
        *[f(v).alias(v) for f, v in zip(combine, vals)])
    at, finals = 0, []
    for a, kept, (n, _, _) in zip(aggs, parts, node.specs):
        finals.append(_final(a, [F.col(v) for v in vals[at:at + len(kept)]]).alias(n))
        at += len(kept)
    result = segments.select(
        *[F.col(f"__sk{i}").alias(n) for i, (n, _) in enumerate(group)],
        F.struct(F.col("__p").alias("begin"), F.col("__sq").alias("end")).alias(during),
        *finals)
    return pack_one(ordered(result, node.heading), node.heading, during)


def _parts(agg, value) -> list:
    """What the segment tree keeps of one aggregate's value: (column, combining aggregate)
    pairs; integer sums in DECIMAL(38). IINTERSECT keeps the largest begin and least end of
    the non-empty intervals (an unbounded end is null, which ``min`` passes over) and whether
    an empty one is among them. A product of INTs or LONGs keeps how many values are zero and
    how many negative, and the product of the magnitudes of the others capped at
    ``_PRODUCT_CAP`` (past it the product fits no INT or LONG, whatever else it holds)."""
    if agg.name == "plus":
        return [(value.cast("decimal(38,0)"), F.sum)]
    if agg.name == "mult":
        magnitude = F.when(value == 0, F.lit(1)).otherwise(F.abs(value.cast("decimal(38,0)")))
        return [((value == 0).cast("long"), F.sum), ((value < 0).cast("long"), F.sum),
                (magnitude.cast("decimal(38,0)"), _capped_product)]
    if agg.name != "iintersect":
        return [(value, _TREE[agg.name])]
    b, e = value["begin"], value["end"]
    empty = e.isNotNull() & (e <= b)
    return [(F.when(~empty, b), F.max), (F.when(~empty, e), F.min), (empty, F.bool_or)]


def _final(agg, parts: list):
    """One aggregate's value from its combined parts (:func:`_parts`), of its type:
    IINTERSECT is [largest begin, least end), the empty interval when that holds no point or
    an empty one was among the intervals."""
    from sira.intervals import empty_interval
    t = agg.result_type
    if agg.name == "mult":  # 0 with a zero among the values; else signed, and in its type
        zeros, negatives, magnitude = parts
        signed = F.when(negatives % 2 == 1, -magnitude).otherwise(magnitude)
        return F.when(zeros > 0, F.lit(0)).when(
            (signed < t.min) | (signed > t.max),
            sira_error("IntOverflow", f"mult: the product does not fit {t}")) \
            .otherwise(signed).cast(spark_type(t))
    if agg.name != "iintersect":
        (value,) = parts
        return value.cast(spark_type(t))
    b, e, empty = parts
    return F.when(empty | b.isNull() | (e.isNotNull() & (e <= b)),
                  literal_column(t, empty_interval(t))).otherwise(
        F.struct(b.alias("begin"), e.alias("end")))


def _shr(value, bits):
    """``value >> bits``, both columns (``F.shiftright`` takes a Python int of bits)."""
    return F.call_function("shiftright", value, bits)


def _shl(value, bits):
    """``value << bits``, both columns."""
    return F.call_function("shiftleft", value, bits)


def _summarized(node, children, c):
    (df,) = children
    h = node.source.heading
    if node.using:
        key = [n for n in node.by if n not in node.using]
        (df,) = split_dataframes([df], [h], list(node.using), key)
    if node.by and not node.specs:  # the groups alone (Spark refuses an empty agg)
        return df.select(*[F.col(f"`{n}`") for n in node.by]).distinct()
    if node.by:  # groups are never empty: Spark's aggregates as they are
        return _summary(df, node, h, c, list(node.by), True)
    # a global aggregation yields a row even for an empty input, which SUMMARIZEBY must not
    out = _summary(df, node, h, c, [], False)
    return out.where(F.col("__n") > 0).drop("__n")
