"""Spark translation of SPL windows (SPLWINDOW), matching ``sira/engine/spl.py`` (the reference).

Time arithmetic is done on a LONG column (the timestamp itself, or microseconds since the epoch
for a TIMESTAMP); ``at`` and ``pane`` are turned back into the timestamp's type at the end.

Tumbling and sliding windows are a scan of the whole stream in order (IBM's timers tick for
every partition at once, and partition eviction couples the partitions). The stream is sorted
(a range-partitioned sort) and numbered in order with ``monotonically_increasing_id`` (the
numbering checkpointed, so it is the same wherever it is read); only the columns the policies
read (partition key as JSON, time, delta values, punctuation flag) go, in order, through
``mapInArrow`` to :class:`sira.engine.spl.SplScanner` -- the reference's own state machine, so
the engines follow the same rules by construction -- which gives each window's instance, ``at``
and the numbers of its tuples; a join on those numbers and a groupBy per window assemble
``tuples`` across the cluster. The scan itself is linear in the input plus the windows' size.

TimeInterval windows need no fold: over the whole stream in arrival order, ``max`` over the
preceding rows is each tuple's watermark (tuples below watermark - discardAge are dropped); each
tuple is exploded into its panes (``sequence`` of pane starts); the position at which the running
watermark first reaches a pane's end is found with a "first following" window over the union of
pane ends and watermark advances; per pane, the tuples before that position form the on-time
emission and every later (late) tuple one more emission holding the pane's tuples up to it.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Window as W
from pyspark.sql import functions as F

from sira.algebra.spl import SplWindow
from sira.engine.spl import SplScanner
from sira.types import FLOAT

from .compiler import ordered, translates
from .windows import _from_time, _order_columns, _to_time

_END_OF_INPUT = 2 ** 62  # the emission position of panes emitted at the end of input


def _c(name):
    return F.col(f"`{name}`")


def _stream_order(node):
    h = node.source.heading
    canonical = _order_columns(h, h.names)
    if node.arrival is None:
        return [_c(node.ts).asc()] + canonical
    if node.kind == "timeinterval":
        return [_c(node.arrival).asc(), _c(node.ts).asc()] + canonical
    return [_c(node.ts).asc(), _c(node.arrival).asc()] + canonical


def _row_struct(heading):
    return F.struct(*[_c(n) for n in heading.names])


def _sorted_rows(content):
    """An array of row structs in the canonical (sorted) form of a relation value."""
    return F.array_sort(content)


@translates(SplWindow)
def _splwindow(node, children, c):
    (df,) = children
    if node.kind == "timeinterval":
        return _time_interval(node, df)
    return _sequential(node, df)


# ---------------------------------------------------------------------- tumbling and sliding

def _sequential(node, df):
    """Tumbling and sliding windows: the stream sorted (a range-partitioned sort) and numbered
    in order (``__g``, increasing with the position; the numbering is checkpointed so it is the
    same everywhere it is read); the narrow columns the policies read go, in order, to
    :class:`sira.engine.spl.SplScanner` (the reference's own state machine) in ``mapInArrow``,
    which gives each window's instance, ``at`` and the numbers of its tuples; a join on ``__g``
    and a groupBy per window assemble ``tuples``."""
    import copy

    import pyarrow as pa

    h = node.source.heading
    keys = list(node.partition)
    ev, tr = node.eviction, node.trigger
    positioned = df.orderBy(*_stream_order(node)).withColumn(
        "__g", F.monotonically_increasing_id()).localCheckpoint()
    key = F.to_json(F.struct(*[_c(k) for k in keys])) if keys else F.lit("")
    punct = _c(ev.attr) if ev.kind == "punct" else F.lit(False)
    narrow = positioned.select(F.col("__g"), key.alias("__k"),
                               _to_time(_c(node.ts), node.ts_type).alias("__t"),
                               _delta(node, ev).alias("__a"), punct.alias("__p"),
                               _delta(node, tr).alias("__ta"))
    at_type = pa.float64() if node.ts_type == FLOAT else pa.int64()
    schema = "__e long, __instance long, __at " + ("double" if node.ts_type == FLOAT else "long") \
        + ", __m long"
    prototype = SplScanner(node)

    def scan(batches):
        scanner = copy.deepcopy(prototype)
        counters: dict = {}
        number = 0
        for batch in batches:
            g, k, t, a, p, ta = (batch.column(i).to_pylist() for i in range(6))
            out = [[], [], [], []]
            emitted = []
            for i in range(batch.num_rows):
                emitted.extend(scanner.push(k[i], t[i], g[i], a[i], p[i], ta[i]))
            for key_, at, ids in emitted:
                counters[key_] = counters.get(key_, 0) + 1
                out[0].extend([number] * len(ids))
                out[1].extend([counters[key_]] * len(ids))
                out[2].extend([at] * len(ids))
                out[3].extend(ids)
                number += 1
            yield pa.RecordBatch.from_arrays(
                [pa.array(out[0], pa.int64()), pa.array(out[1], pa.int64()),
                 pa.array(out[2], at_type), pa.array(out[3], pa.int64())],
                names=["__e", "__instance", "__at", "__m"])

    members = narrow.repartition(1).sortWithinPartitions("__g").mapInArrow(scan, schema)
    joined = members.join(positioned, members["__m"] == positioned["__g"])
    grouped = joined.groupBy("__e", "__instance", "__at", *[_c(k) for k in keys]).agg(
        _sorted_rows(F.collect_list(_row_struct(h))).alias("tuples"))
    out = grouped.select(*[_c(k) for k in keys], F.col("__instance").alias("instance"),
                         _from_time(F.col("__at"), node.ts_type).alias("at"), "tuples")
    return ordered(out, node.heading)


def _type_of(df, col):
    return df.select(col.alias("t")).schema["t"].dataType.simpleString()


def _delta(node, policy):
    """The value a delta policy reads, as LONG (microseconds for TIMESTAMP) or double."""
    if policy is None or policy.kind != "delta":
        return F.lit(None).cast("long")
    return _to_time(_c(policy.attr), node.source.heading.type_of(policy.attr))


def _time_interval(node, df):
    h = node.source.heading
    t_type = node.ts_type
    duration, period, discard, offset = node.interval_units
    keys = [_c(k) for k in node.partition]
    glob = W.orderBy(*_stream_order(node))
    df = df.withColumn("__t", _to_time(_c(node.ts), t_type)) \
        .withColumn("__g", F.row_number().over(glob))
    before = glob.rowsBetween(W.unboundedPreceding, -1)
    df = df.withColumn("__wmb", F.max("__t").over(before))
    # the watermark advances (g, new watermark): the positions where it grows
    advances = df.where(F.col("__wmb").isNull() | (F.col("__t") > F.col("__wmb"))) \
        .select(F.col("__t").alias("__v"), F.lit(1).alias("__flag"), F.col("__g").alias("__ag"))
    kept = df.where(F.col("__wmb").isNull() | (F.col("__t") >= F.col("__wmb") - discard))
    t = F.col("__t")
    last_start = (t - offset) - F.pmod(t - offset, F.lit(period).cast("long")) + offset
    low = t - duration - offset
    first_start = low - F.pmod(low, F.lit(period).cast("long")) + offset + period
    starts = F.when(first_start <= last_start, F.sequence(
        first_start, last_start, F.lit(period).cast("long"))).otherwise(
        F.array().cast("array<bigint>"))  # a creation period longer than the duration: gaps
    panes = kept.withColumn("__start", F.explode(starts)) \
        .withColumn("__row", _row_struct(h))
    by_pane = panes.groupBy(*keys, "__start").agg(F.array_sort(F.collect_list(F.struct(
        F.col("__g").alias("g"), F.col("__wmb").alias("wmb"), F.col("__row").alias("row"))))
        .alias("__arr"))
    by_pane = by_pane.withColumn("__end", F.col("__start") + duration)
    # c: the position at which the watermark first reaches the pane's end (null: never)
    marks = by_pane.select(F.col("__end").alias("__v"), F.lit(0).alias("__flag"),
                           F.lit(None).cast("int").alias("__ag"), *keys, "__start")
    follow = W.orderBy("__v", "__flag").rowsBetween(0, W.unboundedFollowing)
    reached = marks.unionByName(advances, allowMissingColumns=True) \
        .withColumn("__c", F.first("__ag", ignorenulls=True).over(follow)) \
        .where(F.col("__flag") == 0).select(*[k.alias(f"__rk_{n}") for k, n in
                                              zip(keys, node.partition)],
                                            F.col("__start").alias("__rstart"), "__c")
    cond = reduce(lambda a, b: a & b, [k == F.col(f"__rk_{n}") for k, n in
                                       zip(keys, node.partition)],
                  F.col("__start") == F.col("__rstart"))
    joined = by_pane.join(reached, cond, "inner")
    arr, cpos, end = F.col("__arr"), F.col("__c"), F.col("__end")
    on_time = F.filter(arr, lambda y: cpos.isNull() | (y["g"] < cpos))
    late = F.filter(arr, lambda y: cpos.isNotNull() & (y["g"] > cpos))
    em_type = "array<struct<e:bigint,at:bigint,content:array<struct<g:int,wmb:bigint,row:" + \
        _type_of(panes, F.col("__row")) + ">>>>"
    first = F.when(F.size(on_time) > 0, F.array(F.struct(
        F.coalesce(cpos.cast("long"), F.lit(_END_OF_INPUT).cast("long")).alias("e"),
        end.cast("long").alias("at"), on_time.alias("content")))) \
        .otherwise(F.array().cast(em_type))
    again = F.transform(late, lambda y: F.struct(
        y["g"].cast("long").alias("e"), y["wmb"].cast("long").alias("at"),
        F.filter(arr, lambda z: z["g"] <= y["g"]).alias("content")))
    em = joined.select(*keys, "__start", "__end",
                       F.explode(F.concat(first.cast(em_type), again.cast(em_type))).alias("__e"))
    e = F.col("__e")
    inst = F.row_number().over(W.partitionBy(*keys).orderBy(e["e"], F.col("__start")))
    pane = F.struct(_from_time(F.col("__start"), t_type).alias("begin"),
                    _from_time(F.col("__end"), t_type).alias("end"))
    out = em.select(*keys, inst.cast("long").alias("instance"),
                    _from_time(e["at"], t_type).alias("at"), pane.alias("pane"),
                    _sorted_rows(F.transform(e["content"], lambda y: y["row"])).alias("tuples"))
    return ordered(out, node.heading)
