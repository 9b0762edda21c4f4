"""Spark translations of the window table functions TUMBLE, HOP, CUMULATE and SESSION.

Each element gets its window as the plain columns window_start, window_end and window_time (end
minus one unit). Tumbling, hopping and cumulating windows are arithmetic on the timestamp
(``explode`` of the window starts holding it); a session is gaps-and-islands with window
functions: per partition, ordered by time, a new session starts where an element comes later
than the previous one plus the gap, and the session is [first time, last time + gap). A long
stream is cut into buckets of time, each partition's buckets scanned in their own tasks with
the last time and the running session carried between them (``_sessions``, seed 003 section
5): neither a stream without partition nor one partition holding most elements is one task."""

from __future__ import annotations

from pyspark.sql import Window as SparkWindow
from pyspark.sql import functions as F

from sira.algebra.windows import WINDOW_ATTRIBUTES, WindowTable
from sira.types import TIMESTAMP

from .compiler import translates
from .guards import check_rows, check_sizes
from .windows import time_fits


def _units(node, c):
    """(time column as integer units, function back to the timestamp's type)."""
    col = F.col(f"`{node.ts}`")
    if node.source.heading.type_of(node.ts) == TIMESTAMP:
        return (F.unix_micros(col.cast("timestamp")),
                lambda u: F.timestamp_micros(u).cast("timestamp_ntz"))
    t = node.source.heading.type_of(node.ts)
    spark_t = "int" if t.name == "INT" else "bigint"
    return col.cast("bigint"), lambda u: u.cast(spark_t)


def _window_columns(df, back, start, end, names=WINDOW_ATTRIBUTES, node=None):
    """``df`` with window_start, window_end and window_time (end minus one unit) from integer
    units (those of ``names``: a SUMMARIZEBY may keep only some of them); with the window
    table ``node``, first a filter failing with IntOverflow where a window's start or end does
    not fit the timestamp's type (:func:`sira_spark.windows.time_fits`: on every row, as the
    Python engine checks, also when the window columns are projected away)."""
    if node is not None:
        t, op = node.ts_type, node.kind.upper()
        df = df.where(time_fits(start, t, op) & time_fits(end, t, op))
    columns = {"window_start": start, "window_end": end, "window_time": end - 1}
    for name in names:
        df = df.withColumn(name, back(columns[name]))
    return df


#: hop windows with at most this many windows per element use a literal array of offsets (a
#: filter drops the ones not holding t); longer ones a ``sequence`` of their starts
MAX_HOP_OFFSETS = 64


def _floor_aligned(u, step: int, offset: int):
    """The greatest s <= u with s = offset (mod step) -- floor((u - offset) / step) * step +
    offset -- in exact LONG arithmetic, without computing u - offset (which leaves LONG near
    its least value). As DuckDB's ``floor_aligned``."""
    m = F.lit(step).cast("bigint")
    return u - F.pmod(F.pmod(u, m) - offset % step, m)


@translates(WindowTable)
def _window_table(node, children, c):
    (df,) = children
    t, back = _units(node, c)
    size, slide, offset = node.units("size"), node.units("slide"), node.units("offset")
    if node.kind == "tumble":
        start = _floor_aligned(t, size, offset)
        return _window_columns(df, back, start, start + size, node=node)
    if node.kind == "hop":
        # the windows holding t start at base, base - L, ..., down to more than t - T
        base = _floor_aligned(t, slide, offset)
        count = -(-size // slide)  # ceil(T / L): how many windows may hold t
        if count <= MAX_HOP_OFFSETS:
            out = df.withColumn("__k", F.explode(F.array(*[F.lit(j * slide).cast("bigint")
                                                           for j in range(count)])))
            # the windows holding t (base - k + size > t), without computing the others' starts
            out = out.where(F.col("__k") < size - (t - base))
            start = base - F.col("__k")
        else:
            # offsets 0, L, ..., j*L with j*L < base + T - t (a non-negative count)
            last = F.call_function("div", size - (t - base) - 1, F.lit(slide).cast("bigint"))
            check_sizes(c, node, df, last + 1)  # counted before they are made
            out = df.withColumn("__k", F.explode(F.sequence(
                F.lit(0).cast("bigint"), last * slide, F.lit(slide).cast("bigint"))))
            start = base - F.col("__k")
        result = _window_columns(out, back, start, start + size, node=node).drop("__k")
        check_rows(c, node, result)  # max_tuples
        return result
    if node.kind == "cumulate":
        period = _floor_aligned(t, size, offset)
        first = F.call_function("div", t - period, F.lit(slide).cast("bigint")) + 1
        if size // slide > MAX_HOP_OFFSETS:  # the steps, counted before they are made
            check_sizes(c, node, df, F.lit(size // slide + 1) - first)
        j = F.explode(F.sequence(first, F.lit(size // slide).cast("bigint")))
        out = df.withColumn("__j", j)
        result = _window_columns(out, back, period, period + F.col("__j") * slide,
                                node=node).drop("__j")
        check_rows(c, node, result)  # max_tuples
        return result
    gap = size  # cut into buckets of time per partition (seed 003, section 5)
    h = node.source.heading
    return _sessions(df, t, back, gap, [(p, h.type_of(p)) for p in node.partition], node)


def _sessions(df, t, back, gap: int, group: list, node=None):
    """SESSION, per partition (``group``: pairs of name and sira type; none: one sequence), cut
    into buckets of time (seed 003, section 5; ``packing._bucketed``). A session starts at an
    element later than the one before it plus the gap; past a bucket's first element that is
    known inside the bucket, and the first element's predecessor is the last element of the
    partition's buckets before (carried with the key of the session running into the bucket,
    from one row per partition and bucket: walked on the driver without a partition, by a
    window per partition ordered by bucket with one). A session is keyed by its first time; its
    end is its last time plus the gap (a window per session)."""
    from pyspark.sql import types as T

    from .packing import _bucketed, _carried, _joined_per_group
    cols = [F.col(f"`{n}`") for n, _ in group]
    rows, several = _bucketed(df.withColumn("__u", t), "__u")
    w = SparkWindow.partitionBy(*cols, "__bk").orderBy("__u")
    prev = F.lag("__u").over(w)
    incoming_key = F.lit(None).cast("long")
    if several:
        later = prev.isNotNull() & (F.col("__u") > prev + gap)  # a start inside the bucket
        summary = rows.select(*cols, "__bk", "__u", later.alias("__in")).groupBy(
            *cols, "__bk").agg(F.min("__u").alias("__first"), F.max("__u").alias("__last"),
                               F.max(F.when(F.col("__in"), F.col("__u"))).alias("__key"))
        if group:
            rows = _joined_per_group(rows, _carried_sessions(summary, group, gap), group)
        else:
            rows = _carried(rows, _walked_sessions(summary.collect(), gap),
                            [("__cl", T.LongType()), ("__ck", T.LongType())])
        prev = F.coalesce(prev, F.col("__cl"))
        incoming_key = F.col("__ck")
    # every element at one time together (a RANGE frame): lag may order equal times either
    # way, and only the first of them in lag's order can start a session
    starts = F.when(prev.isNull() | (F.col("__u") > prev + gap), F.col("__u"))
    sessions = rows.withColumn("__s", F.coalesce(F.max(starts).over(
        w.rangeBetween(SparkWindow.unboundedPreceding, 0)), incoming_key))
    per = SparkWindow.partitionBy(*cols, "__s")
    if node is not None:  # a session ends at its last time + gap: checked on every time
        sessions = sessions.where(time_fits(F.col("__u") + gap, node.ts_type, "SESSION"))
    out = _window_columns(sessions, back, F.min("__u").over(per), F.max("__u").over(per) + gap)
    return out.drop("__u", "__s", "__bk", "__cl", "__ck")


def _walked_sessions(summary: list, gap: int) -> list:
    """(bucket, the last time before it, the key of the session running into it) for each
    bucket of one sequence, walked through the buckets' summaries in order."""
    carried, last, key = [], None, None
    for b in sorted(summary, key=lambda r: r["__bk"]):
        carried.append((b["__bk"], last, key))
        if b["__key"] is not None:
            key = b["__key"]
        elif last is None or b["__first"] > last + gap:
            key = b["__first"]
        last = b["__last"]
    return carried


def _carried_sessions(summary, group: list, gap: int):
    """:func:`_walked_sessions` per partition, as a window per partition ordered by bucket over
    the buckets' summaries: rows ``(__k_<name>..., __kb, __cl, __ck)``."""
    cols = [F.col(f"`{n}`") for n, _ in group]
    order = SparkWindow.partitionBy(*cols).orderBy("__bk")
    last = F.lag("__last").over(order)
    first_key = F.when(last.isNull() | (F.col("__first") > last + gap), F.col("__first"))
    own = summary.withColumn("__cl", last).withColumn(
        "__sk", F.coalesce(F.col("__key"), first_key))  # the session running out of it
    return own.select(*[F.col(f"`{n}`").alias(f"__k_{n}") for n, _ in group],
                      F.col("__bk").alias("__kb"), "__cl", F.max("__sk").over(
                          order.rowsBetween(SparkWindow.unboundedPreceding, -1)).alias("__ck"))


# ------------------------------------------------------------------ hop aggregates by panes
#
# ``summarizeby(hop(S, ts, size(T) slide(L)), (k..., window_start, window_end), (x(plus(e))
# ...))``: instead of copying every element into each of its ceil(T/L) windows, the stream is
# first aggregated per key and *pane* -- the intervals of width gcd(T, L) between consecutive
# window boundaries, each wholly inside or outside every window -- and only the pane aggregates
# are copied into their windows and combined there. Sums of INT or LONG, max and min of plain
# scalars: the combination of the panes' values is the window's value exactly. Any other
# SUMMARIZEBY over a window table goes to aggregation.py.

def fused_hop(node):
    """The HOP window table under a SUMMARIZEBY that :func:`summarize_hop` compiles, else
    None."""
    from sira.algebra.aggregation import SummarizeBy
    from sira.expressions.evaluate import infer_type
    from sira.expressions.nodes import attributes_used
    from sira.types import BOOLEAN, DATE, INT, LONG, STRING
    if not isinstance(node, SummarizeBy):
        return None
    win = node.source
    if not isinstance(win, WindowTable) or win.kind != "hop":
        return None
    if node.pack_list:  # packed or pointwise on an interval key: not a plain grouping
        return None
    stream = win.source.heading
    key = [n for n in node.by if n not in WINDOW_ATTRIBUTES]
    if len(key) == len(node.by) or any(n not in stream for n in key):
        return None  # not per window, or grouping by something the window table made
    for _, op, expr in node.specs:
        if set(WINDOW_ATTRIBUTES) & set(attributes_used(expr)):
            return None
        t = infer_type(expr, stream)
        if op == "plus" and t in (INT, LONG):
            continue
        if op in ("max", "min") and (t in (INT, LONG, STRING, DATE, BOOLEAN)):
            continue
        return None
    return win


def summarize_hop(node, win, c):
    from math import gcd

    from sira.algebra.aggregation import aggregations

    from .compiler import ordered
    from sira.expressions.evaluate import infer_type

    from .functions import column, exact_sum
    from .types import spark_type
    df = c.compile(win.source)
    h = win.source.heading
    t, back = _units(win, c)
    size, slide, offset = win.units("size"), win.units("slide"), win.units("offset")
    pane = gcd(size, slide)
    key = [n for n in node.by if n not in WINDOW_ATTRIBUTES]
    aggs = aggregations(node.specs, win.heading, node.operator_name)
    combine = {"plus": F.sum, "max": F.max, "min": F.min}
    first = {"plus": lambda v, e: exact_sum(v, infer_type(e, h)),  # pane sums exactly
             "max": lambda v, e: F.max(v), "min": lambda v, e: F.min(v)}
    panes = df.groupBy(*[F.col(f"`{k}`") for k in key],
                       _floor_aligned(t, pane, offset).alias("__pane")).agg(
        *[first[op](column(expr, h, c), expr).alias(f"__a{i}")
          for i, (_, op, expr) in enumerate(node.specs)])
    p = F.col("__pane")
    base = _floor_aligned(p, slide, offset)
    count = -(-size // slide)
    out = panes.withColumn("__k", F.explode(F.array(*[F.lit(j * slide).cast("bigint")
                                                      for j in range(count)])))
    start = base - F.col("__k")  # of the windows holding the pane (k < size - (p - base))
    out = out.where(F.col("__k") < size - (p - base)).select(*[F.col(f"`{k}`") for k in key],
                                             start.alias("__s"), *[f"__a{i}" for i in
                                                                   range(len(node.specs))])
    result = out.groupBy(*[F.col(f"`{k}`") for k in key], "__s").agg(
        *[combine[op](F.col(f"__a{i}")).cast(spark_type(a.result_type)).alias(name)
          for i, ((name, op, _), a) in enumerate(zip(node.specs, aggs))])
    s = F.col("__s")
    kept = [n for n in WINDOW_ATTRIBUTES if n in node.by]
    return ordered(_window_columns(result, back, s, s + size, kept, node=win), node.heading)
