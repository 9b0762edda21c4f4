"""Spark translation of SPL windows (SPLWINDOW), matching ``sira/engine/spl.py`` (the reference).

Time arithmetic is done on a LONG column (the timestamp itself, or microseconds since the epoch
for a TIMESTAMP); ``at`` and ``pane`` are turned back into the timestamp's type at the end.

Tumbling and sliding windows without partition eviction or with ``partitionage`` are computed
split across partitions (seed 003, section 5; :func:`_split`): the stream is range-partitioned
in stream order and numbered, each partition of it a *bucket*; a tuple's
position in its key is a running count in two passes (per bucket, then the buckets' totals summed
over the earlier buckets); each policy says which windows hold each tuple -- a range of window
numbers or timer ticks, exploded -- and a groupBy per window assembles ``tuples``. The tuple
evicting each tuple of a sliding delta window is found per bucket by a min-heap (``mapInArrow``),
then across buckets from the buckets' maxima and prefix records. A tumbling ``delta(a, D)`` window
and a ``delta(a, D)`` trigger follow a chain -- each window starts (each trigger fires) at the
first tuple of the key exceeding the previous start by more than D -- found by
:mod:`sira_spark.spl_chain`: the stream range-partitioned by (key, position) into chunks, a
speculative first pass per chunk, a report of one row per chunk to the driver, and a second pass
correcting the chunks a key continues into until their chain meets the speculative one. O(n log n +
output), no step holding more than a bucket of the stream or one window.

``partitionage(T)`` does not couple the keys, and is split the same way (:func:`_epochs`): a
key's partition is evicted before its next tuple exactly when that tuple comes more than T after
the key's previous one (nothing reads the partition between the two), so each key's tuples fall
into epochs -- a running count of those breaks -- and each epoch is a key of its own for
:func:`_split`, the windows renumbered per key afterwards (``instance`` keeps counting across an
eviction). Under a sliding ``time`` eviction the partition may first end by expiry, which keeps
a count or delta trigger's state: whether it is aged before it expires is found from the first
tuple after each of the two moments. A tick ages a partition whose last tuple is more than T before
it: a tumbling time window is then dropped, and a time trigger stops T after the epoch's last
tuple.

``partitioncount(N)`` on a sliding window with a count or delta eviction and no ticks is split too,
per epoch (:func:`_lru_epochs`): such a partition never ends on its own, so the partitions that
exist are always the N keys updated last, and a tuple starts a new epoch of its key exactly when
its key is not among them -- a set of N keys carried along the stream in two passes. The rest of
``partitioncount(N)`` and ``tuplecount(N)`` couples the keys: whether a key's window survives a
tuple depends on how many *other* keys hold a window at that moment (or how many tuples they
hold), and which of them do depends on their own flushes, expiries and evictions, so the state
carried along the stream is the whole set of live windows, not a summary of a few values per
bucket. That state machine (:class:`sira.engine.spl.SplScanner`, the reference's own) forgets:
a partition ends when it flushes or is evicted. So the stream is cut into chunks of its order,
each scanned from an empty state at once, and each chunk entered with another state is scanned
again from it until the two scans reach the same state (:mod:`sira_spark.spl_scan`,
:func:`_coupled`); a join on the tuples' numbers and a groupBy per window assemble
``tuples``.

A sliding ``delta(a, D)`` eviction over a FLOAT attribute is split like the others: the
reference subtracts in floating point (a later b evicts a_i when ``b - a_i > D``, rounded), so
the threshold the later values are searched against is not ``a_i + D`` (rounded differently)
but the largest FLOAT b with ``b - a_i <= D`` (:func:`sira.engine.spl.float_reach`).

TimeInterval windows need no fold, and are split across buckets of the stream's order (seed 003,
section 5): each tuple's position and watermark (the largest time before it; tuples below
watermark - discardAge are dropped) are a running count and a running max per bucket, each
bucket starting from the buckets before it (``_watermarked``); each tuple is exploded into its
panes (``sequence`` of pane starts); the position at which the watermark first reaches a pane's
end is the nearest watermark advance following it in value order, per bucket of value, else the
least over the later buckets (``_first_reaching``); per pane, the tuples before that position
form the on-time emission and every later (late) tuple one more emission holding the pane's
tuples up to it; without a partition the emissions are numbered by a running count over
buckets.
"""

from __future__ import annotations

import itertools
from functools import reduce

from pyspark.sql import Window as W
from pyspark.sql import functions as F

from sira.algebra.spl import SplWindow
from sira.engine.spl import (FEW_WINDOWS, RecentKeys, SplScanner, by_recency, float_reach,
                              never_evicted, pane_arithmetic)
from sira.types import FLOAT

from .compiler import ordered, translates
from .convert import local_dataframe
from .guards import check_held, check_held_before, guard_of, windows_counted_in_workers
from .packing import _bucketed, bucket_totals_before, carried_across, running_rows
from .rowbound import partitions_for, sequence_join
from .windows import (TIME_MAX, _from_time, _order_columns, _to_time, exact, time_fits,
                      time_plus)

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


def _positioned(node, df):
    """The stream sorted in stream order and numbered (``__g``: its upper bits are its Spark
    partition; checkpointed, so every later read sees the same numbers), range-partitioned
    into enough partitions for about ``ROWS_PER_CHUNK`` tuples each, and at least the shuffle
    partitions. The scans over one partition in a Python worker (the coupled keys' chunks,
    the delta evictions' buckets) hold that much: the shuffle partitions alone put 2.5M
    tuples in each at 10M, and the delta eviction scan ran out of memory."""
    return _positioned_counted(node, df, count=False)[0]


def _positioned_counted(node, df, count: bool = True) -> tuple:
    """``(`` :func:`_positioned` ``, n)``: n its tuples, the count that sized the partitions
    when the optimizer had no estimate of ``df``, else one count more (None when not
    ``count``)."""
    from .windowby import estimated_or_counted
    order = _stream_order(node)
    rows, counted = estimated_or_counted(df)
    positioned = df.repartitionByRange(partitions_for(df, rows), *order) \
        .sortWithinPartitions(*order).withColumn("__g", F.monotonically_increasing_id()) \
        .localCheckpoint()
    if counted:
        return positioned, rows
    return positioned, positioned.count() if count else None


def _row_struct(heading):
    return F.struct(*[_c(n) for n in heading.names])


def _sorted_rows(content):
    """An array of row structs in the canonical (sorted) form of a relation value."""
    return F.array_sort(content)


@translates(SplWindow)
def _splwindow(node, children, c):
    (df,) = children
    if node.kind == "timeinterval":
        windows = _time_interval(node, df)
    else:
        evicting = _unless_evicting(node, df)
        if not _splittable(evicting):
            with windows_counted_in_workers(c, node):  # the scan refuses them in its workers
                windows = _coupled(evicting, df, c)
        else:
            windows, held = _split(evicting, df)
            # the windows' tuples counted before they were made (exactly, or bounded by the
            # tuples times the windows a tuple can be in): no second count when within it
            if held is not None and held <= guard_of(c, node)[0].limit:
                return windows
    with windows_counted_in_workers(c, node):  # the scan of _coupled counts them too
        return check_held(c, node, windows)  # max_tuples: the tuples the windows hold


# ---------------------------------------------------------------------- tumbling and sliding

def _unless_evicting(node, df):
    """``node`` without its ``partitioncount``/``tuplecount`` policy when the stream's size
    and number of partitions show it can never evict (``sira.engine.spl.never_evicted``; one
    aggregation), so that the windows are split across partitions instead of one scan."""
    import attrs

    pe = node.partition_eviction
    if pe is None or pe.kind not in ("partitioncount", "tuplecount"):
        return node
    keys = [_c(k) for k in node.partition]
    row = df.agg(F.count(F.lit(1)).alias("n"), F.countDistinct(*keys).alias("k")).first()
    if never_evicted(node, row["n"], row["k"]):
        return attrs.evolve(node, partition_eviction=None)
    return node


def _coupled(node, df, c):
    """Tumbling and sliding windows whose ``partitioncount``/``tuplecount`` couples the keys:
    the stream sorted (a range-partitioned sort) and numbered in order (``__g``, checkpointed
    so it is the same everywhere it is read; its Spark partitions are the *chunks*, ``__g``'s
    upper bits); the narrow columns the policies read scanned by :mod:`sira_spark.spl_scan`
    (:class:`SplScanner`, the reference's own state machine, in ``mapInArrow``): a speculative
    first pass per chunk, the chunks' reports on the driver, corrections of the chunks entered
    with another state until their scan meets the speculative one (usually one round, over
    those chunks only); each key's windows numbered across chunks (:func:`_running`), a join
    on ``__g`` and a groupBy per window assemble ``tuples``."""
    import pyarrow as pa

    from .spl_scan import CHECK, REPORT, WINDOW, Walk, correct, first_pass, record_schema

    h = node.source.heading
    keys = list(node.partition)
    ev, tr = node.eviction, node.trigger
    spark = df.sparkSession
    positioned = _positioned(node, df)
    punct = _c(ev.attr) if ev.kind == "punct" else F.lit(False)
    narrow = positioned.select(F.shiftright("__g", 33).alias("__c"), F.col("__g"),
                               _key_text(node, keys).alias("__k"),
                               _to_time(_c(node.ts), node.ts_type).alias("__t"),
                               _delta(node, ev).alias("__a"), punct.alias("__p"),
                               _delta(node, tr).alias("__ta"))
    prototype = SplScanner.guarded(node, guard_of(c, node)[0])
    # the timer's origin, the stream's first time (the stream is in time order)
    origin = narrow.agg(F.min("__t")).first()[0] if prototype.period is not None else None
    floating = node.ts_type == FLOAT
    schema = record_schema("double" if floating else "long")
    types = [pa.int32(), pa.int64(), pa.int64(), pa.int64(), pa.int64(), pa.string(),
             pa.float64() if floating else pa.int64(), pa.list_(pa.int64()), pa.binary(),
             pa.binary()]
    names = [f.split()[0] for f in schema.split(", ")]

    def batch(records):
        return pa.RecordBatch.from_arrays([pa.array(col, t) for col, t in
                                           zip(records.columns, types)], names=names)

    def scan(batches):
        for chunk, columns in _chunks(batches):
            for records in first_pass(chunk, columns, prototype, origin):
                if len(records):
                    yield batch(records)

    first = narrow.mapInArrow(scan, schema).localCheckpoint()
    kind = F.col("kind")
    checks: dict = {}
    empty, exits = {}, {}
    for r in first.where(kind.isin(REPORT, CHECK)).collect():
        if r["kind"] == CHECK:
            checks.setdefault(r["c"], {})[r["g"]] = bytes(r["d"])
        elif r["state"] is None:
            empty[r["c"]] = bytes(r["d"])
        else:
            exits[r["c"]] = bytes(r["state"])
    walk = Walk({chunk: (empty[chunk], exits[chunk]) for chunk in exits}, prototype)
    fixed = []
    while True:
        jobs = walk.wanted()
        if not jobs:
            break
        their_checks = {chunk: checks.get(chunk, {}) for chunk in jobs}

        def fix(batches, jobs=jobs, their_checks=their_checks):
            for chunk, columns in _chunks(batches):
                yield batch(correct(chunk, columns, jobs[chunk], their_checks[chunk],
                                    prototype))

        # the chunks concerned only: a task each (a coalesced task may hold several)
        out = narrow.where(F.col("__c").isin(list(jobs))).coalesce(len(jobs)) \
            .mapInArrow(fix, schema).localCheckpoint()
        for r in out.where(kind == REPORT).collect():
            walk.learn(r["c"], r["tag"], r["g"], None if r["state"] is None
                       else bytes(r["state"]))
        fixed.append(out)
    kept = first.where(kind == WINDOW)
    decided = walk.decisions()
    if decided:
        d = local_dataframe(spark,
                            [(chunk, tag, met) for chunk, (tag, met) in decided.items()],
                            "__dc long, __dtag long, __dmet long")
        kept = kept.join(F.broadcast(d), F.col("c") == F.col("__dc"), "left") \
            .where(F.col("__dmet").isNull() | (F.col("g") > F.col("__dmet"))) \
            .select(*kept.columns)
        for part in fixed:
            kept = kept.unionByName(part.where(kind == WINDOW).join(
                F.broadcast(d), (F.col("c") == F.col("__dc")) & (F.col("tag") == F.col("__dtag")),
                "left_semi"))
    windows = kept.select(
        F.col("c").alias("__c"), F.col("g").alias("__wg"), F.col("seq").alias("__ws"),
        F.col("k").alias("__k"), F.col("at").alias("__at"), F.col("ids").alias("__ids"))
    windows = _running(windows, ["__k"], {"__instance": F.lit(1)}, ["__wg", "__ws"], "__c")
    held = windows.agg(F.sum(F.size("__ids")).cast("long")).first()[0]
    joined = sequence_join(windows.select("*", F.explode("__ids").alias("__m")).drop("__ids"),
                           positioned, F.col("__m") == F.col("__g"))
    grouped = _by_window(joined, ["__wg", "__ws", "__instance", "__at", *[_c(k) for k in keys]],
                         held).agg(_sorted_rows(F.collect_list(_row_struct(h))).alias("tuples"))
    out = grouped.select(*[_c(k) for k in keys], F.col("__instance").alias("instance"),
                         _from_time(F.col("__at"), node.ts_type).alias("at"), "tuples")
    return ordered(out, node.heading)


def _chunks(batches):
    """(chunk, its rows' columns after the chunk id, batch by batch) for each chunk of a
    ``mapInArrow`` input whose first column is the chunk id, in the order the chunks come (a
    coalesced input holds several, one after another). Lazy: each chunk's batches must be
    read before the next chunk's."""
    def pieces():
        for b in batches:
            if not b.num_rows:
                continue
            ids = b.column(0).to_pylist()
            lo = 0
            while lo < len(ids):
                hi = lo + 1 if ids[lo] != ids[-1] else len(ids)
                while hi < len(ids) and ids[hi] == ids[lo]:
                    hi += 1
                yield ids[lo], tuple(b.column(i).slice(lo, hi - lo).to_pylist()
                                     for i in range(1, b.num_columns))
                lo = hi

    for chunk, group in itertools.groupby(pieces(), key=lambda piece: piece[0]):
        yield chunk, (columns for _, columns in group)


def _by_window(df, cols: list, rows: int | None):
    """``df`` grouped by ``cols`` (one window each) over enough hash partitions for each to
    hold about ``ROWS_PER_CHUNK`` of its ``rows`` (the rows grouped, or an upper bound; None:
    the shuffle partitions). Collecting a window's tuples keeps every window of a partition in
    memory at once (Spark's object hash aggregation): 10,000,000 tuples in the 4 shuffle
    partitions of ``SparkEngine.local()`` ran the default heap out."""
    return df.repartition(partitions_for(df, rows), *cols).groupBy(*cols)


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
    df = _watermarked(node, df.withColumn("__t", _to_time(_c(node.ts), t_type)))
    # the watermark advances (g, new watermark): the positions where it grows
    advances = df.where(F.col("__wmb").isNull() | (F.col("__t") > F.col("__wmb"))) \
        .select(F.col("__t").alias("__v"), F.lit(1).alias("__flag"), F.col("__g").alias("__ag"))
    low = F.greatest(F.col("__wmb"), F.lit(-2 ** 63 + discard).cast("long")) - discard  # floored
    kept = df.where(F.col("__wmb").isNull() | (F.col("__t") >= low))
    # the pane starts holding t, without overflow (pane_arithmetic): t - d - jP, j = 0 .. top
    t = F.col("__t")
    r, q, cut = pane_arithmetic(duration, period, offset)
    p = F.lit(period).cast("long")
    d = F.pmod(F.pmod(t, p) - r, p)
    top = F.lit(q).cast("long") - (d > cut).cast("long")
    held = None  # the (tuple, pane) pairs, when counted
    if q > 0:  # every pane a tuple enters is emitted holding it: a short creation period puts
        # one tuple in billions of panes, refused before they are made
        kept, held = check_held_before(kept, F.when(d < duration, top + 1).otherwise(0))
    starts = F.when(d < duration, F.sequence(t - d - top * p, t - d, p)).otherwise(
        F.array().cast("array<bigint>"))  # a creation period longer than the duration: gaps
    panes = kept.withColumn("__start", F.explode(starts)) \
        .withColumn("__row", _row_struct(h))
    by_pane = _by_window(panes, [*keys, "__start"], held).agg(F.array_sort(F.collect_list(F.struct(
        F.col("__g").alias("g"), F.col("__wmb").alias("wmb"), F.col("__row").alias("row"))))
        .alias("__arr"))
    by_pane = by_pane.withColumn("__end", F.col("__start") + duration)
    # c: the position at which the watermark first reaches the pane's end (null: never)
    marks = by_pane.select(F.col("__end").alias("__v"), F.lit(0).alias("__flag"),
                           F.lit(None).cast("long").alias("__ag"), *keys, "__start")
    reached = _first_reaching(marks.unionByName(advances, allowMissingColumns=True)) \
        .where(F.col("__flag") == 0).select(*[k.alias(f"__rk_{n}") for k, n in
                                              zip(keys, node.partition)],
                                            F.col("__start").alias("__rstart"), "__c")
    cond = reduce(lambda a, b: a & b, [k == F.col(f"__rk_{n}") for k, n in
                                       zip(keys, node.partition)],
                  F.col("__start") == F.col("__rstart"))
    joined = sequence_join(by_pane, reached, cond)  # a row per pane on each side
    arr, cpos, end = F.col("__arr"), F.col("__c"), F.col("__end")
    on_time = F.filter(arr, lambda y: cpos.isNull() | (y["g"] < cpos))
    late = F.filter(arr, lambda y: cpos.isNotNull() & (y["g"] > cpos))
    em_type = "array<struct<e:bigint,at:bigint,content:array<struct<g:bigint,wmb:bigint,row:" + \
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
    # numbered per partition by a running count over buckets of e (one partition may hold
    # most emissions)
    em = running_rows(em.withColumn("__ee", e["e"]), ["__ee", F.col("__start")],
                      {"__inst": F.lit(1)}, [(k, h.type_of(k)) for k in node.partition])
    inst = F.col("__inst")
    em = em.where(time_fits(F.col("__start"), t_type, "SPLWINDOW")
                  & time_fits(F.col("__end"), t_type, "SPLWINDOW")
                  & time_fits(e["at"], t_type, "SPLWINDOW"))
    pane = F.struct(_from_time(F.col("__start"), t_type).alias("begin"),
                    _from_time(F.col("__end"), t_type).alias("end"))
    out = em.select(*keys, inst.cast("long").alias("instance"),
                    _from_time(e["at"], t_type).alias("at"), pane.alias("pane"),
                    _sorted_rows(F.transform(e["content"], lambda y: y["row"])).alias("tuples"))
    return ordered(out, node.heading)


def _watermarked(node, df):
    """``df`` with ``__g``, each tuple's position (from 1) in the stream's order, and
    ``__wmb``, the watermark before it (the largest time ``__t`` of the tuples before it; null
    for the first): a running count and a running max per bucket of the order, each bucket
    starting from what the buckets before it carry (seed 003, section 5)."""
    order = _stream_order(node)
    first = node.arrival if node.arrival is not None else node.ts
    rows, several = _bucketed(df, first)
    w = W.partitionBy("__bk").orderBy(*order)
    g = F.count(F.lit(1)).over(w.rowsBetween(W.unboundedPreceding, 0))
    wmb = F.max("__t").over(w.rowsBetween(W.unboundedPreceding, -1))
    if several:
        rows = carried_across(rows, {"n": (F.lit(1).cast("long"), "sum", "before"),
                                     "wm": (F.col("__t"), "max", "before")})
        g, wmb = g + F.col("__c_n"), F.greatest(wmb, F.col("__c_wm"))  # greatest skips nulls
    return rows.withColumn("__g", g.cast("long")).withColumn("__wmb", wmb) \
        .drop("__bk", "__c_n", "__c_wm")


def _first_reaching(events):
    """``events`` (pane ends ``__flag`` 0, watermark advances ``__flag`` 1 at ``__ag``, both
    at value ``__v``) with ``__c``: the position of the first advance at or after each event
    in (``__v``, ``__flag``) order. The watermark only grows, so that is also the least such
    position: per bucket of ``__v``, the nearest one following (``last`` over a frame growing
    in reverse order: linear), else the least over the buckets after it."""
    rows, several = _bucketed(events, "__v")
    back = W.partitionBy("__bk").orderBy(F.col("__v").desc(), F.col("__flag").desc()) \
        .rowsBetween(W.unboundedPreceding, 0)
    c = F.last("__ag", ignorenulls=True).over(back)
    if several:
        rows = carried_across(rows, {"ag": (F.col("__ag"), "min", "after")})
        c = F.coalesce(c, F.col("__c_ag"))
    return rows.withColumn("__c", c).drop("__bk", "__c_ag")


# ---------------------------------------------------------------------- split across partitions

def _splittable(node) -> bool:
    """Whether the windows are computed by :func:`_split` (no step holds the whole stream):
    every tumbling and sliding window without partition eviction or with ``partitionage``
    (per epoch, :func:`_epochs`), ``partitioncount`` where it evicts by recency alone
    (``sira.engine.spl.by_recency``; per epoch, :func:`_lru_epochs`). The others go through
    the scan of :func:`_coupled`. (The timestamp is INT, LONG or TIMESTAMP: ticks and bounds
    are exact integers; a FLOAT delta attribute is compared as the reference rounds it,
    :func:`_evictions`.)"""
    pe = node.partition_eviction
    return pe is None or pe.kind == "partitionage" or by_recency(node)


def _div(col, n: int):
    """floor(col / n) as LONG, exactly: in decimal(20,0), as a double quotient rounds past
    2**53 (nanosecond times more than 104 days apart)."""
    col, n = exact(col), exact(F.lit(n))
    return ((col - F.pmod(col, n)) / n).cast("long")


def _tick_number(t, o: int, period: int):
    """floor((t - o) / period), the number of whole timer periods from the first time o to t,
    in decimal(20,0): over times from LONG's smallest to its largest a ``time(1)`` timer has
    2**64 ticks, past LONG (as DuckDB numbers them in HUGEINT)."""
    x, n = exact(exact(t) - o), exact(F.lit(period))
    return exact((x - F.pmod(x, n)) / n)


def _tick(o, m, period: int):
    """o + m * period, the m-th tick after the first time o, exactly (o may be far below zero
    and m * period past LONG; a tick is never after the stream's last time)."""
    return (exact(F.lit(o)) + exact(m) * period).cast("long")


def _running(df, keys: list, sums: dict, order: list, bucket: str = "__b"):
    """``df`` with, for each ``name: expr`` of ``sums``, the running sum of expr per key in
    ``order`` (inclusive), in two passes (seed 003, section 5): per bucket (a contiguous run of
    the order, one Spark partition's worth) and key, a window sums the bucket's rows; the
    buckets' totals (one row per bucket and key) are summed over the earlier buckets and added.
    ``bucket`` must be non-decreasing along ``order`` within a key. No step holds more than a
    bucket, whatever the keys; a key's summary rows are at most the number of buckets."""
    part = W.partitionBy(bucket, *keys).orderBy(*order).rowsBetween(W.unboundedPreceding, 0)
    local = df.select("*", *[F.sum(e).over(part).alias(f"__l_{n}") for n, e in sums.items()])
    if keys:
        before = bucket_totals_before(df, sums, keys, bucket)
    else:  # the buckets' totals: a handful of rows, each summed over the earlier ones
        totals = df.groupBy(bucket).agg(*[F.sum(e).alias(n) for n, e in sums.items()])
        a = totals.select(F.col(bucket).alias("__ba"))
        b = totals.select(F.col(bucket).alias("__bb"), *[F.col(n).alias(f"__v_{n}")
                                                          for n in sums])
        before = a.join(b, F.col("__ba") > F.col("__bb"), "left").groupBy("__ba").agg(
            *[F.coalesce(F.sum(f"__v_{n}"), F.lit(0)).alias(f"__c_{n}") for n in sums]) \
            .withColumnRenamed("__ba", bucket)
    # per key, a row per bucket and key (as many as the tuples, with many keys); without a
    # key, the handful of buckets' rows, broadcast
    out = sequence_join(local, before, [bucket, *keys]) if keys \
        else local.join(F.broadcast(before), on=[bucket])
    for n in sums:
        out = out.withColumn(n, (F.col(f"__l_{n}") + F.col(f"__c_{n}")).cast("long"))
    return out.drop(*[f"__l_{n}" for n in sums], *[f"__c_{n}" for n in sums])


def _with_key_sizes(x, base, keys: list, n: int):
    """(``x``, the number of tuples of each row's key, its last position): a join with the
    keys' counts, or without a key the stream's count ``n``."""
    if not keys:
        return x, F.lit(n).cast("long")
    counts = base.groupBy(*keys).agg(F.count(F.lit(1)).alias("__n"))
    return x.join(counts, on=keys), F.col("__n")


def _instances(windows, keys: list, order: list):
    """Number each key's windows 1, 2, ... in ``order`` (columns; ``__e``: a position of the
    window's, whose bucket is non-decreasing in ``order``)."""
    windows = windows.withColumn("__b", F.shiftright(F.col("__e"), 33))
    return _running(windows, keys, {"instance": F.lit(1)}, order)


def _split(node, df):
    """Tumbling and sliding windows without a scan: the stream is range-partitioned in stream
    order and numbered (``__g``, whose upper bits are its Spark partition: the bucket ``__b``);
    each tuple's position in its key (``__j``) is a running count in two passes (:func:`_running`).
    Each policy then says, tuple by tuple, which windows hold it -- a range of window numbers or
    timer ticks, exploded (the output's size) -- and a groupBy per window assembles them:

    * tumbling ``count(N)``: window (j - 1) div N, emitted when it holds N tuples, at its last;
    * tumbling ``punct(p)``: window = the number of punctuated tuples of its key before it;
      emitted when it ends with one;
    * tumbling ``time(T)``: window (t - o) div T (o: the stream's first time), emitted at
      o + (w + 1)T when that tick happens (it is not after the stream's last time);
    * sliding, ``count(M)`` trigger (default 1): emissions at the positions j, multiples of M,
      with i <= j <= last(i): i + N - 1 for ``count(N)`` eviction, for ``time(T)`` the last
      position of the key whose time is at most t_i + T (a running count over the tuples and
      the points t_i + T sorted together);
    * sliding, ``time(T2)`` trigger: ticks o + mT2 with t_i < tick <= end(i) and tick <= the
      stream's last time: end(i) is the time of the key's position i + N (``count(N)``: a join
      on the position) or t_i + T (``time(T)``);
    * tumbling ``delta(a, D)``: the chain's members (:func:`_delta_chain`) start the windows;
      window w (a running count of members) holds the tuples from member w on and is emitted
      at member w + 1 (a join on w - 1), the last one never;
    * sliding, ``delta(a, D)`` trigger: the chain's members after the first fire, each with
      the window *before* its tuple; tuple i is in the emissions of the members at positions
      j_i < j <= end(i), end(i) being i + N (``count(N)``), the key's last position with time
      at most t_i + T (``time(T)``) or the position of the tuple evicting i (``delta``): the
      member numbers from the running count at i plus one to the one at end(i) (a join on the
      position), exploded.

    ``instance`` is the window's rank in its key, again a running count. Each step is a sort,
    a join or an aggregation over the stream and the windows' content: O(n log n + output), no
    step holding more than one Spark partition's share of the stream or of one window.

    Returns ``(windows, held)``: ``held`` is at least the tuples the windows hold, all windows
    together (``max_tuples``): the stream's size for a tumbling window (a tuple is in one at
    most), that times ceil(N/M) for a sliding ``count(N)`` window triggered every M tuples,
    else the exact sum counted before the windows are made (which refuses them past the
    limit; None outside a translation)."""
    h = node.source.heading
    keys = outer = list(node.partition)
    ev, tr = node.eviction, node.trigger
    scanner = SplScanner(node)
    positioned, n = _positioned_counted(node, df)  # n: what a tumbling window's groupBy reads
    timed = ev.kind == "time" or (tr is not None and tr.kind == "time")
    o = last = 0
    if timed:
        first = positioned.agg(F.min(_to_time(_c(node.ts), node.ts_type)),
                               F.max(_to_time(_c(node.ts), node.ts_type))).first()
        if first[0] is not None:
            o, last = first
    pe = node.partition_eviction  # a window state per epoch of each key
    aged = pe is not None and pe.kind == "partitionage"
    if pe is not None:
        positioned = (_epochs if aged else _lru_epochs)(node, positioned, keys)
        keys = [*outer, "__ep"]
    base = positioned.select(*[_c(k) for k in keys], "__g",
                             F.shiftright(F.col("__g"), 33).alias("__b"),
                             _to_time(_c(node.ts), node.ts_type).alias("__t"),
                             (_c(ev.attr).cast("long") if ev.kind == "punct" else F.lit(0))
                             .alias("__p"), _row_struct(h).alias("__row"))
    tuples = _sorted_rows(F.collect_list("__row")).alias("tuples")
    t, j, g = F.col("__t"), F.col("__j"), F.col("__g")
    numbered = None

    def ranked(windows, order: str, within=None):
        """``windows`` with ``instance``: ``within`` (a column numbering the windows 1, 2, ...
        in ``order`` in each key), else each window's rank in its key in ``order``. Under
        partition eviction the rank runs over the key's epochs (``instance`` keeps counting
        across an eviction): a key's epochs follow each other in stream order, and ``__e``
        never goes down along (epoch, ``order``) -- the window's first position (a tumbling
        window's tuples come after the one before; a sliding window's oldest tuple only moves
        on), or a delta trigger's own position."""
        if pe is not None:
            return _instances(windows.drop("instance"), outer, [F.col("__ep"), F.col(order)])
        if within is not None:
            return windows.withColumn("instance", within)
        return _instances(windows, keys, [F.col(order)])

    if node.kind == "tumbling":
        if ev.kind == "time":
            period = scanner.ev_amount
            ticks = (last - o) // period  # the ticks that happen: o + T, ..., o + ticks*T
            w = base.withColumn("__w", _tick_number(t, o, period)).where(
                F.col("__w") < exact(F.lit(str(ticks))))
            numbered = _by_window(w, [*keys, "__w"], n).agg(
                tuples, F.min("__g").alias("__e"), F.max("__t").alias("__lt")) \
                .withColumn("__at", _tick(o, F.col("__w") + 1, period))
            if aged:  # the tick ages a window whose last tuple is more than T before it
                numbered = numbered.where(time_plus(F.col("__lt"), scanner.pe_amount)
                                          >= F.col("__at"))
            numbered = ranked(numbered, "__w")
        elif ev.kind == "delta":  # window w: from the chain's member w to member w + 1
            x = _running(_with_members(node, positioned, n, base, keys, ev), keys,
                         {"__w": F.col("__mem")}, [g])
            closers = x.where(F.col("__mem") == 1).select(
                *[_c(k) for k in keys], (F.col("__w") - 1).alias("__w"), t.alias("__at"))
            # the tuples of the windows that close, before they are grouped: a key's last
            # window never closes, and may hold most of the stream (a value no later one
            # exceeds by D): collected, it was one task's, and ran the heap out
            closed = sequence_join(x, closers, [*keys, "__w"])
            numbered = ranked(_by_window(closed, [*keys, "__w", "__at"], n)
                              .agg(tuples, F.min("__g").alias("__e")), "__w", F.col("__w"))
        else:
            counted = _running(base, keys, {"__j": F.lit(1), "__c": F.col("__p")}, [g])
            if ev.kind == "count":
                size = scanner.ev_amount
                w = counted.withColumn("__w", _div(j - 1, size))
                full = F.count(F.lit(1)) == size
            else:  # punct: the punctuated tuple closes its window
                w = counted.withColumn("__w", F.col("__c") - F.col("__p"))
                full = F.max("__p") == 1
                # the tuples of the windows that close only: after a key's last punctuation
                # the window never closes, and may hold most of the stream
                closers = counted.where(F.col("__p") == 1).select(
                    *[_c(k) for k in keys], (F.col("__c") - 1).alias("__w"))
                w = sequence_join(w, closers, [*keys, "__w"], "left_semi")
            numbered = ranked(_by_window(w, [*keys, "__w"], n)
                              .agg(tuples, F.max("__t").alias("__at"), full.alias("__full"),
                                   F.min("__g").alias("__e"))
                              .where("__full"), "__w", F.col("__w") + 1)
    elif tr is None or tr.kind == "count":
        every = scanner.tr_amount
        x = _running(base, keys, {"__j": F.lit(1)}, [g])
        few = ev.kind == "count" and -(-scanner.ev_amount // every) <= FEW_WINDOWS
        if ev.kind == "count":  # a window past the key's last tuple never fires
            end = j + (scanner.ev_amount - 1)
            if not few:  # not made
                x, size = _with_key_sizes(x, base, keys, n)
                end = F.least(end, size)
        elif ev.kind == "delta":  # up to the tuple evicting it, else to the key's last one
            x = _evictions(node, positioned, base, x, keys, scanner.ev_amount)
            x, size = _with_key_sizes(x, base, keys, n)
            end = F.coalesce(F.col("__jE") - 1, size)
        else:  # time: the key's tuples up to t + T
            x = sequence_join(x, _reach(base, keys, scanner.ev_amount), "__g")
            end = F.col("__end")
        start = _div(j + (every - 1), every) * every
        # each (tuple, window) is one tuple an emission holds (every window up to the key's
        # last tuple fires): counted before they are made, unless a tuple is in a few at most
        held = n * -(-scanner.ev_amount // every) if few else None  # a tuple's windows
        if not few:
            x, held = check_held_before(x, F.greatest(_div(end - start, every) + 1,
                                                      F.lit(0)))
        x = x.withColumn("__w", F.explode(F.when(start <= end, F.sequence(
            start, end.cast("long"), F.lit(every).cast("long"))).otherwise(
            F.array().cast("array<bigint>"))))
        numbered = ranked(_by_window(x, [*keys, "__w"], held)
                          .agg(tuples, F.max("__t").alias("__at"), F.max("__j").alias("__top"),
                               F.min("__g").alias("__e"))
                          .where(F.col("__top") == F.col("__w")), "__w",
                          _div(F.col("__w"), every))
    elif tr.kind == "delta":  # the chain's members after the first trigger
        x = _running(_with_members(node, positioned, n, base, keys, tr), keys,
                     {"__j": F.lit(1), "__w": F.col("__mem")}, [g])
        x, size = _with_key_sizes(x, base, keys, n)
        # the last position of the key whose trigger finds the tuple still in the window
        if ev.kind == "count":
            end = F.least(j + scanner.ev_amount, size)
        elif ev.kind == "delta":
            x = _evictions(node, positioned, base, x, keys, scanner.ev_amount)
            end = F.coalesce(F.col("__jE"), size)
        else:
            x = sequence_join(x, _reach(base, keys, scanner.ev_amount), "__g")
            end = F.col("__end")
        x = x.withColumn("__je", end.cast("long")).localCheckpoint()  # read three times
        triggers = x.where((F.col("__mem") == 1) & (F.col("__w") > 1)).select(
            *[_c(k) for k in keys], F.col("__w").alias("__m"), t.alias("__at"),
            g.alias("__e"))
        lookup = x.select(*[_c(k) for k in keys], j.alias("__je"), F.col("__w").alias("__we"))
        x = sequence_join(x, lookup, [*keys, "__je"])
        lo, hi = F.col("__w") + 1, F.col("__we")
        x, held = check_held_before(x, F.greatest(hi - lo + 1, F.lit(0)))  # before made
        x = x.withColumn("__m", F.explode(F.when(lo <= hi, F.sequence(lo, hi)).otherwise(
            F.array().cast("array<bigint>"))))
        numbered = sequence_join(_by_window(x, [*keys, "__m"], held).agg(tuples), triggers,
                                 [*keys, "__m"])
        numbered = ranked(numbered, "__m")
    else:  # a time trigger: the ticks o + mT2 with t < tick <= end, not after the last time
        period = scanner.tr_amount
        if ev.kind == "count":
            x = _running(base, keys, {"__j": F.lit(1)}, [g])
            later = x.select(*keys, (j - scanner.ev_amount).alias("__j"),
                             t.alias("__tn"))
            x = sequence_join(x, later, [*keys, "__j"], "left")
            end = F.least(F.coalesce(F.col("__tn"), F.lit(last)), F.lit(last))
        elif ev.kind == "delta":
            x = _evictions(node, positioned, base, _running(base, keys, {"__j": F.lit(1)}, [g]),
                           keys, scanner.ev_amount)
            end = F.least(F.coalesce(F.col("__tE"), F.lit(last)), F.lit(last))
        else:
            x = base
            end = F.least(time_plus(t, scanner.ev_amount), F.lit(last))
        if aged:  # the first tick more than T after the epoch's last tuple ages it
            x = x.join(base.groupBy(*keys).agg(F.max("__t").alias("__le")), on=keys)
            end = F.least(end, time_plus(F.col("__le"), scanner.pe_amount))
        # the tuple's ticks m1..m2, numbered in decimal (past LONG over the whole of LONG);
        # how many there are is what its windows hold, counted first, so it fits LONG
        x = x.withColumn("__m1", _tick_number(t, o, period) + 1) \
            .withColumn("__n", _tick_number(end, o, period) - F.col("__m1") + 1)
        x, held = check_held_before(x, F.greatest(F.col("__n"), F.lit(0)))  # (tuple, tick)s
        x = x.withColumn("__o", F.explode(F.when(F.col("__n") > 0, F.sequence(
            F.lit(0).cast("long"), (F.col("__n") - 1).cast("long"))).otherwise(
            F.array().cast("array<bigint>")))) \
            .withColumn("__w", exact(F.col("__m1") + F.col("__o")))
        numbered = _by_window(x, [*keys, "__w"], held).agg(tuples, F.min("__g").alias("__e")) \
            .withColumn("__at", _tick(o, F.col("__w"), period))
        numbered = ranked(numbered, "__w")
    out = numbered.select(*[_c(k) for k in outer], F.col("instance").cast("long").alias("instance"),
                          _from_time(F.col("__at"), node.ts_type).alias("at"), "tuples")
    return ordered(out, node.heading), n if node.kind == "tumbling" else held


def _epochs(node, positioned, keys: list):
    """``positioned`` with ``__ep``, the epoch of each tuple in its key: how many times
    ``partitionage(T)`` evicted the key's partition before it, a running count of the breaks
    (:func:`_running`; the key's previous tuple, at position j - 1, by a join). Without a
    sliding time eviction a tuple breaks when the key's previous one, at p, is more than T
    before it (p + T < t): the partition is evicted at the first tuple or tick after p + T,
    and as nothing reads it in between, that is the same as at t. Under a sliding ``time(T2)``
    eviction the partition may first end by expiry, keeping its count or delta trigger's
    state: then the break needs aging to come first (:func:`_aged_before_expired`). (A time
    trigger keeps no state, and a partition aged or expired holds no tuple either way: every
    gap may break.) The result is hash-partitioned by bucket (``__g >> 33``), so no bucket is
    cut between Spark partitions."""
    age = SplScanner(node).pe_amount
    t, g = F.col("__t"), F.col("__g")
    b = positioned.select(*[_c(k) for k in keys], "__g", F.shiftright(g, 33).alias("__b"),
                          _to_time(_c(node.ts), node.ts_type).alias("__t"))
    x = _running(b, keys, {"__j": F.lit(1)}, [g])
    prev = x.select(*[_c(k) for k in keys], (F.col("__j") + 1).alias("__j"), t.alias("__pt"))
    x = sequence_join(x, prev, [*keys, "__j"], "left")
    brk = F.col("__pt").isNotNull() & (time_plus(F.col("__pt"), age) < t)
    tr = node.trigger
    if node.kind == "sliding" and node.eviction.kind == "time" \
            and (tr is None or tr.kind != "time"):
        x = sequence_join(_aged_before_expired(node, b, x.where(brk)), x, "__g", "right")
        brk = brk & F.coalesce(F.col("__aged"), F.lit(False))
    return _numbered_epochs(positioned, keys, x.withColumn("__brk", brk.cast("long")))


def _numbered_epochs(positioned, keys: list, breaks):
    """``positioned`` with ``__ep``, each tuple's epoch in its key: the running count of the
    breaks (``__brk``, 1 where the key's partition starts afresh) of ``breaks`` (``__g``,
    ``__b``, the keys) up to the tuple (:func:`_running`), hash-partitioned by bucket
    (``__g >> 33``), so no bucket is cut between Spark partitions."""
    g = F.col("__g")
    epochs = _running(breaks, keys, {"__ep": F.col("__brk")}, [g]).select("__g", "__ep")
    return sequence_join(positioned, epochs, "__g").repartition(F.shiftright(g, 33)) \
        .localCheckpoint()


def _key_text(node, keys: list):
    """A key's values as one string (JSON; a FLOAT -0.0 as 0.0, the one partition it is in
    the reference): the identity of a partition for the Python passes over the stream."""
    if not keys:
        return F.lit("")
    h = node.source.heading
    return F.to_json(F.struct(*[(_c(k) + F.lit(0.0)).alias(k) if k in h.names
                                and h.type_of(k) == FLOAT else _c(k) for k in keys]))


class _Recency:
    """:class:`sira.engine.spl.RecentKeys` over the buckets of one Spark partition (which may
    hold several), each bucket starting from ``entering[bucket]`` (none: no key); each bucket
    ended is added to ``ended`` with its last keys (:func:`_lru_epochs`)."""

    def __init__(self, n_keep: int, entering: dict):
        self.n_keep, self.entering = n_keep, entering
        self.bucket, self.recent, self.ended = None, None, []

    def feed(self, g: list, k: list) -> list:
        """Read tuples (positions ``g``, keys ``k``) in order; the positions of those whose
        key has no partition (a new one starts)."""
        started, at = [], 0
        for i in range(len(g) + 1):
            if i == len(g) or g[i] >> 33 != self.bucket:
                if at < i:
                    started += self.recent.starts(g[at:i], k[at:i])
                if i < len(g):
                    self.end()
                    self.bucket = g[i] >> 33
                    self.recent = RecentKeys(self.n_keep, self.entering.get(self.bucket, ()))
                at = i
        return started

    def end(self) -> None:
        if self.bucket is not None:
            self.ended.append((self.bucket, list(self.recent.keys)))
            self.bucket = None


def _lru_epochs(node, positioned, keys: list):
    """``positioned`` with ``__ep`` for ``partitioncount(N)`` on a sliding window with a count
    or delta eviction and no ticks (:func:`_splittable`). Such a partition never ends on its
    own (each tuple is inserted as another may leave), so after every insertion the partitions
    that exist are exactly the N keys updated last, and a tuple finds its partition evicted --
    starts a new epoch -- exactly when its key is not among the N keys updated last before it.
    That set is carried along the stream in two passes (seed 003, section 5): each bucket
    (``mapInArrow`` over the stream's own partitions, in order) reports its last N distinct
    keys; the driver combines them in bucket order into the set entering each bucket (at most
    N keys a bucket); each bucket then replays its keys from that set (:class:`_Recency`) and
    marks where a partition starts. O(n) in the passes, memory O(N) a task."""
    import pyarrow as pa

    n_keep = node.partition_eviction.amount
    narrow = positioned.select("__g", _key_text(node, keys).alias("__k")) \
        .sortWithinPartitions("__g")

    def last_keys(batches):
        recency = _Recency(n_keep, {})
        for batch in batches:
            recency.feed(batch.column(0).to_pylist(), batch.column(1).to_pylist())
        recency.end()
        out = [(b, r, k) for b, last in recency.ended for r, k in enumerate(last)]
        yield pa.RecordBatch.from_arrays([pa.array([o[i] for o in out], t) for i, t in
                                          enumerate([pa.int64(), pa.int64(), pa.string()])],
                                         names=["__b", "__r", "__k"])

    entering: dict = {}
    carried = RecentKeys(n_keep)  # the N keys updated last before each bucket
    rows = narrow.mapInArrow(last_keys, "__b long, __r long, __k string").collect()
    for bucket, group in itertools.groupby(sorted(rows, key=lambda r: (r["__b"], r["__r"])),
                                           key=lambda r: r["__b"]):
        entering[bucket] = list(carried.keys)
        last = [row["__k"] for row in group]  # the bucket's last keys, oldest first
        carried.starts(range(len(last)), last)

    def breaks(batches):
        recency = _Recency(n_keep, entering)
        for batch in batches:
            started = recency.feed(batch.column(0).to_pylist(), batch.column(1).to_pylist())
            yield pa.RecordBatch.from_arrays([pa.array(started, pa.int64())], names=["__g"])

    started = narrow.mapInArrow(breaks, "__g long").withColumn("__brk", F.lit(1).cast("long"))
    x = sequence_join(positioned.select(*[_c(k) for k in keys], "__g",
                                        F.shiftright(F.col("__g"), 33).alias("__b")),
                      started, "__g", "left") \
        .withColumn("__brk", F.coalesce(F.col("__brk"), F.lit(0).cast("long")))
    return _numbered_epochs(positioned, keys, x)


def _aged_before_expired(node, b, gaps):
    """(``__g``, ``__aged``) for the tuples ``gaps`` whose key's previous tuple (at p, ``__pt``)
    is more than the partition age T before them, under a sliding ``time(T2)`` eviction and a
    count or delta trigger (no ticks): whether the partition is aged (evicted, its trigger state
    lost) before expiry empties it (ended, its trigger state kept) -- whether the first tuple
    after p + T comes before the first after p + T2 (at the same tuple, expiry goes first).
    Both are found by :func:`_first_reaching` over the stream's times and the queries sorted
    together (integer times: "after v" is "at or after v + 1")."""
    scanner = SplScanner(node)
    pt, g, q = F.col("__pt"), F.col("__g"), F.col("__q")
    # "after p + T" is "at or after p + T + 1"; past LONG no tuple is after it (no query)
    queries = gaps.select((g * 2).alias("__q"), _after(pt, scanner.pe_amount).alias("__v")) \
        .unionByName(gaps.select((g * 2 + 1).alias("__q"),
                                 _after(pt, scanner.ev_amount).alias("__v"))) \
        .where(F.col("__v").isNotNull())
    events = b.select(F.col("__t").alias("__v"), F.lit(1).alias("__flag"),
                      F.col("__t").alias("__ag"), F.lit(None).cast("long").alias("__q")) \
        .unionByName(queries.select("__v", F.lit(0).alias("__flag"),
                                    F.lit(None).cast("long").alias("__ag"), "__q"))
    found = _first_reaching(events).where(F.col("__flag") == 0)
    by_age = found.where(q % 2 == 0).select(F.shiftright(q, 1).alias("__g"),
                                            F.col("__c").alias("__na"))
    by_expiry = found.where(q % 2 == 1).select(F.shiftright(q, 1).alias("__g"),
                                               F.col("__c").alias("__nx"))
    na, nx = F.col("__na"), F.col("__nx")  # nx null: no tuple after p + T2, nothing expires
    return sequence_join(sequence_join(gaps.select("__g"), by_age, "__g", "left"), by_expiry,
                         "__g", "left").select(
        "__g", (na.isNotNull() & (nx.isNull() | (na < nx))).alias("__aged"))


def _after(t, amount: int):
    """t + amount + 1, the least time after t + amount; null when that is past LONG."""
    return F.when(t < F.lit(TIME_MAX - amount).cast("long"), t + (amount + 1))


def _reach(base, keys: list, span):
    """(``__g``, ``__end``): for each tuple, the last position of its key whose time is at
    most t + span -- a running count over the key's tuples and the points t + span sorted
    together (a point after the tuples of its own time)."""
    t = F.col("__t")
    points = base.select(*[_c(k) for k in keys], t.alias("__v"), F.lit(0).alias("__q"), "__g",
                         F.lit(1).alias("__one")).unionByName(
        base.select(*[_c(k) for k in keys], time_plus(t, span).alias("__v"), F.lit(1).alias("__q"),
                    "__g", F.lit(0).alias("__one")))
    # stored: _running reads the numbers twice, and a second sort could cut the partitions
    # elsewhere (its range bounds come from a sample seeded by the plan's RDD ids)
    points = points.orderBy(*[_c(k) for k in keys], "__v", "__q", "__g").withColumn(
        "__pg", F.monotonically_increasing_id()).withColumn(
        "__b", F.shiftright(F.col("__pg"), 33)).localCheckpoint()
    return _running(points, keys, {"__end": F.col("__one")}, [F.col("__pg")]) \
        .where(F.col("__q") == 1).select("__g", "__end")


def _with_members(node, positioned, n: int, base, keys: list, policy):
    """``base`` with ``__mem``: 1 for the members of the chain of the delta ``policy``
    (:func:`_delta_chain`; ``positioned`` holds ``n`` tuples), else 0."""
    members = _delta_chain(node, positioned, n, keys, policy).withColumn("__mem", F.lit(1))
    return sequence_join(base, members, "__g", "left").withColumn(
        "__mem", F.coalesce(F.col("__mem"), F.lit(0)))


def _evictions(node, positioned, base, x, keys: list, delta):
    """``x`` (the stream with ``__j``) with the position ``__jE`` and time ``__tE`` of the tuple
    whose push evicts each tuple from its sliding ``delta(a, D)`` window (null: never): the
    key's first later tuple with a - a_i > D. First pass, per bucket (``mapInArrow`` over the
    stream's own partitions, in order): a min-heap of the tuples still waiting, per key, finds
    the evictions inside the bucket and marks the bucket's records (a tuple whose a exceeds
    every earlier a of its key in the bucket). Second pass, for the tuples still waiting at the
    end of their bucket: the first later bucket of the key whose largest a is above a_i + D
    (:func:`_first_later_above`, from the buckets' maxima: one row per bucket and key; log B
    steps per tuple, not one per later bucket), then in that bucket the first record above
    a_i + D (:func:`least_above`: records and thresholds sorted together per bucket and key,
    cut across partitions however many tuples wait for one bucket).
    Over FLOAT the threshold is ``sira.engine.spl.float_reach(a_i, D)``, found in the first
    pass: the largest value b with b - a_i <= D as the reference rounds it."""
    import heapq

    import pyarrow as pa

    floating = node.source.heading.type_of(node.eviction.attr) == FLOAT
    a_type, a_arrow = ("double", pa.float64()) if floating else ("long", pa.int64())
    key = _key_text(node, keys)
    narrow = positioned.select("__g", key.alias("__k"),
                               _delta(node, node.eviction).cast(a_type).alias("__a"))

    def scan(batches):
        waiting: dict = {}  # key -> heap of (a, g) of the tuples not yet evicted
        top: dict = {}  # key -> the largest a so far in this bucket
        gs, ks, values, records, evicted = [], [], [], [], {}
        bucket = None
        for batch in batches:
            g, k, a = (batch.column(i).to_pylist() for i in range(3))
            ks.extend(k)
            values.extend(a)
            for i in range(batch.num_rows):
                if g[i] >> 33 != bucket:  # a Spark partition may hold several buckets
                    bucket, waiting, top = g[i] >> 33, {}, {}
                heap = waiting.setdefault(k[i], [])
                while heap and a[i] - heap[0][0] > delta:
                    evicted[heapq.heappop(heap)[1]] = g[i]
                heapq.heappush(heap, (a[i], g[i]))
                best = top.get(k[i])
                records.append(best is None or a[i] > best)
                if best is None or a[i] > best:
                    top[k[i]] = a[i]
                gs.append(g[i])
        eg = [evicted.get(v) for v in gs]
        reach = [float_reach(v, delta) if e is None else None for v, e in zip(values, eg)] \
            if floating else [None] * len(gs)
        yield pa.RecordBatch.from_arrays(
            [pa.array(gs, pa.int64()), pa.array([v >> 33 for v in gs], pa.int64()),
             pa.array(ks, pa.string()), pa.array(values, a_arrow), pa.array(eg, pa.int64()),
             pa.array(records, pa.bool_()), pa.array(reach, a_arrow)],
            names=["__g", "__b", "__k", "__a", "__eg", "__rec", "__v"])

    local = narrow.sortWithinPartitions("__g").mapInArrow(
        scan, f"__g long, __b long, __k string, __a {a_type}, __eg long, __rec boolean, "
              f"__v {a_type}").localCheckpoint()
    maxima = local.groupBy("__k", F.col("__b").alias("__bq")).agg(F.max("__a").alias("__top"))
    waiting = local.where(F.col("__eg").isNull())
    if not floating:
        waiting = waiting.withColumn("__v", time_plus(F.col("__a"), delta))
    found = _first_later_above(waiting.select("__g", "__k", "__b", "__v"), maxima, bool(keys))
    queries = sequence_join(waiting, found, "__g").select(
        "__k", F.col("__bq").alias("__b"), "__v", "__g")
    records = local.where("__rec").select("__k", "__b", F.col("__a").alias("__v"),
                                          F.col("__g").alias("__rg"))
    later = least_above(queries, records, ["__b", "__k"]).withColumnRenamed("__rg", "__eg")
    evictor = local.where(F.col("__eg").isNotNull()).select("__g", "__eg").unionByName(later)
    at = x.select(F.col("__g").alias("__eg"), F.col("__j").alias("__jE"),
                  F.col("__t").alias("__tE"))
    return sequence_join(sequence_join(x, evictor, "__g", "left"), at, "__eg", "left") \
        .drop("__eg")


#: up to this many buckets, :func:`_first_later_above` tries every later bucket of the key (a
#: join filtered as it runs: 2.5 s for 2,000,000 tuples waiting over 200 buckets on local[2],
#: against 6.6 s for the block search); past it, the block search (7.7 s over 2,000 buckets,
#: against 19.8 s)
DIRECT_BUCKETS = 512


def _first_later_above(waiting, maxima, keyed: bool, direct: int | None = None):
    """(``__g``, ``__bq``): for each row of ``waiting`` (``__g``, key ``__k``, bucket ``__b``,
    threshold ``__v``), the first later bucket ``__bq`` of its key whose largest value
    ``__top`` (``maxima``: one row per key and bucket holding it) is above ``__v``; no row when
    there is none. O((W + M) log B) for W rows waiting, M rows of maxima and buckets numbered
    below B, whatever the thresholds: the buckets after a tuple's own are cut into at most
    log B aligned blocks of 2**L bucket numbers (its canonical blocks, nearest first), and a
    join with the blocks' maxima per key finds the first block holding a value above the
    threshold; in that block, the first such bucket is the first of the block's records (a
    value above every earlier value of the block) that is above it (:func:`least_above`, as
    in the second pass of :func:`_evictions`). Up to ``direct``
    (default ``DIRECT_BUCKETS``) buckets, a bounded factor, a join with every later bucket of
    the key is faster (a cross join, with the buckets' few rows broadcast, when not ``keyed``:
    ``__k`` is then one value).

    >>> from sira_spark import default_engine
    >>> spark = default_engine().spark
    >>> maxima = spark.createDataFrame([("", 0, 5), ("", 1, 3), ("", 2, 4), ("", 3, 9)],
    ...                                "__k string, __bq long, __top long")
    >>> waiting = spark.createDataFrame([(7, "", 0, 3), (8, "", 0, 8), (9, "", 2, 9)],
    ...                                 "__g long, __k string, __b long, __v long")
    >>> sorted(tuple(r) for r in _first_later_above(waiting, maxima, False, direct=0).collect())
    [(7, 2), (8, 3)]
    """
    maxima = maxima.localCheckpoint()  # small: one row per key and bucket; read three times
    last = maxima.agg(F.max("__bq")).first()[0]
    levels = (last or 0).bit_length()  # 2**levels > every bucket number
    if not levels or last < (DIRECT_BUCKETS if direct is None else direct):
        # without a key, a row per bucket: fewer than DIRECT_BUCKETS, broadcast
        near = waiting.join(maxima, on="__k") if keyed \
            else waiting.crossJoin(F.broadcast(maxima))
        return near.where(
            (F.col("__bq") > F.col("__b")) & (F.col("__top") > F.col("__v"))) \
            .groupBy("__g").agg(F.min("__bq").alias("__bq"))
    blocks = maxima.withColumn("__L", F.explode(F.sequence(F.lit(0), F.lit(levels - 1)))) \
        .withColumn("__c", F.expr("shiftright(__bq, __L)"))
    block = ["__k", "__L", "__c"]
    tops = blocks.groupBy(*block).agg(F.max("__top").alias("__bt"))
    earlier = W.partitionBy(*block).orderBy("__bq").rowsBetween(W.unboundedPreceding, -1)
    records = blocks.withColumn("__before", F.max("__top").over(earlier)).where(
        F.col("__before").isNull() | (F.col("__top") > F.col("__before")))
    # the canonical blocks of the buckets after b: at level L, ceil((b + 1) / 2**L) when odd
    starts = waiting.select("__g", "__k", "__v", F.explode(F.array(*[
        F.struct(F.lit(L).alias("L"), F.shiftright(F.col("__b") + 2 ** L, L).alias("c"))
        for L in range(levels)])).alias("__blk"))
    starts = starts.where(F.col("__blk.c") % 2 == 1).select(
        "__g", "__k", "__v", F.col("__blk.L").alias("__L"), F.col("__blk.c").alias("__c"))
    first = starts.join(tops, on=block).where(F.col("__bt") > F.col("__v")) \
        .groupBy("__g", "__k", "__v").agg(F.min(F.struct("__L", "__c")).alias("__blk")) \
        .select("__g", "__k", "__v", F.col("__blk.__L").alias("__L"),
                F.col("__blk.__c").alias("__c"))
    steps = records.select(*block, F.col("__top").alias("__v"), F.col("__bq").alias("__rg"))
    return least_above(first.select(*block, "__v", "__g"), steps, block) \
        .withColumnRenamed("__rg", "__bq")


def least_above(queries, records, group: list):
    """(``__g``, ``__rg``): for each row of ``queries`` (the ``group`` columns, a threshold
    ``__v``, an id ``__g``), the id ``__rg`` of the row of ``records`` (``group``, a value
    ``__v``, an id ``__rg``; one value per id) of its group with the least value above the
    threshold; no row when there is none. The sweeps above ask for the first of a group's
    records (each above every earlier one) above a threshold, which is that one.

    Records and queries are sorted together by (group, value downwards, queries first at equal
    values) and range-partitioned in that order (an id breaks ties, so however many queries
    one group holds -- most of a stream waiting for one jump in value -- it is cut across
    partitions); in each partition the answer is the last record before the query (a frame
    growing from the start, computed incrementally), else the least record of the group in the
    partitions before (a join of one row per partition and group). O((Q + R) log(Q + R)), no
    task holding more than a partition's share. The rows are stored once (``localCheckpoint``),
    and so are they range-partitioned: the partitioning is read twice (the window, the least
    records), and a range partitioning computed twice need not cut at the same values (its
    bounds come from a sample seeded by the plan's RDD ids; without adaptive execution's reuse
    of the exchange a row was put in two partitions, a wrong answer).

    >>> from sira_spark import default_engine
    >>> spark = default_engine().spark
    >>> records = spark.createDataFrame([("a", 5, 50), ("a", 9, 90), ("b", 4, 40)],
    ...                                 "__k string, __v long, __rg long")
    >>> queries = spark.createDataFrame([("a", 5, 1), ("a", 2, 2), ("a", 9, 3), ("b", 0, 4)],
    ...                                 "__k string, __v long, __g long")
    >>> sorted(tuple(r) for r in least_above(queries, records, ["__k"]).collect())
    [(1, 90), (2, 50), (4, 40)]
    """
    parts = int(queries.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    rows = queries.select(*group, "__v", F.lit(1).alias("__q"), F.col("__g").alias("__id")) \
        .unionByName(records.select(*group, "__v", F.lit(0).alias("__q"),
                                    F.col("__rg").alias("__id"))).localCheckpoint()
    # stored: read twice, and a second range partitioning could cut elsewhere (its bounds come
    # from a sample seeded by the plan's RDD ids), giving a row two partition numbers
    ranged = rows.repartitionByRange(parts, *group, F.col("__v").desc(), F.col("__q").desc(),
                                     "__id") \
        .withColumn("__pid", F.spark_partition_id()).localCheckpoint()
    before = W.partitionBy("__pid", *group).orderBy(F.col("__v").desc(), F.col("__q").desc()) \
        .rowsBetween(W.unboundedPreceding, -1)
    local = ranged.withColumn("__rg", F.last(F.when(F.col("__q") == 0, F.col("__id")),
                                             ignorenulls=True).over(before)) \
        .where(F.col("__q") == 1)
    found = local.where(F.col("__rg").isNotNull()).select(F.col("__id").alias("__g"), "__rg")
    left = local.where(F.col("__rg").isNull())
    # a group's values go down along the partitions: the least record of the partitions before
    # is the least of their least records
    least = ranged.where(F.col("__q") == 0).groupBy(F.col("__pid").alias("__pp"), *group) \
        .agg(F.min(F.struct("__v", "__id")).alias("__m"))
    carry = sequence_join(left.select("__pid", *group).distinct(), least, group) \
        .where(F.col("__pp") < F.col("__pid")).groupBy("__pid", *group) \
        .agg(F.min("__m").alias("__m"))
    carried = sequence_join(left, carry, ["__pid", *group]).select(
        F.col("__id").alias("__g"), F.col("__m.__id").alias("__rg"))
    return found.unionByName(carried)


def _delta_chain(node, positioned, n: int, keys: list, policy):
    """The members of the chain of ``policy`` (``delta(a, D)``: a tumbling window's starts, a
    delta trigger's references) as a DataFrame of their stream positions ``__g``, found by
    :mod:`sira_spark.spl_chain` over the stream range-partitioned by (key, position) into
    chunks: a first pass per chunk (``mapInArrow``) following the chains from the first
    records of the chunk's first run; the chunks' reports, candidates and groups on the
    driver (a few rows each), which walks the chunks; corrections of the chunks entered past
    their candidates (``mapInArrow`` over those chunks, usually none, else one round); the
    members that stand kept by a broadcast join on (chunk, group)."""
    import pyarrow as pa

    from . import spl_chain
    from .spl_chain import (CANDIDATE, GROUP, MEMBER, REPORT, Chain, correct, first_pass,
                            record_schema)
    spark = positioned.sparkSession
    delta = node.delta_amount(policy)
    limit = spl_chain.CANDIDATES  # read here: the workers get the driver's
    floating = node.source.heading.type_of(policy.attr) == FLOAT
    a_type, a_arrow = ("double", pa.float64()) if floating else ("long", pa.int64())
    schema = record_schema(a_type)
    types = [pa.int32(), pa.int64(), pa.int64(), pa.bool_(), pa.int64(), pa.string(),
             pa.string(), pa.bool_(), pa.int64(), a_arrow, pa.int64(), pa.bool_(), a_arrow,
             pa.bool_(), a_arrow, pa.int64(), pa.int64()]
    names = [f.split()[0] for f in schema.split(", ")]
    key = _key_text(node, keys)
    chunks = partitions_for(positioned, n)
    chunked = positioned.select(key.alias("__k"), "__g", _delta(node, policy).alias("__a")) \
        .repartitionByRange(chunks, "__k", "__g").sortWithinPartitions("__k", "__g") \
        .select(F.spark_partition_id().cast("long").alias("__c"), "__k", "__g", "__a") \
        .localCheckpoint()

    def batch(recs):
        cols = list(zip(*recs))
        return pa.RecordBatch.from_arrays([pa.array(list(col), t) for col, t in
                                           zip(cols, types)], names=names)

    def scan(batches):
        for c, columns in _chunks(batches):
            for recs in first_pass(c, columns, delta, limit):
                if recs:
                    yield batch(recs)

    first = chunked.mapInArrow(scan, schema).localCheckpoint()
    kind = F.col("kind")
    reports, candidates, groups = {}, {}, {}  # a few rows per chunk (CANDIDATES at most)
    for r in first.where(kind != MEMBER).collect():
        if r["kind"] == REPORT:
            reports[r["c"]] = (r["fk"], r["lk"], r["single"], r["eg"], r["ea"], r["mx"],
                               r["more"])
        elif r["kind"] == CANDIDATE:
            candidates.setdefault(r["c"], {})[r["tag"]] = (r["g"], r["a"], r["grp"])
        elif r["kind"] == GROUP:
            groups.setdefault(r["c"], {})[r["grp"]] = (r["into"], r["eg"], r["ea"])
    candidates = {c: [got[i] for i in range(len(got))] for c, got in candidates.items()}
    chain = Chain(reports, delta, candidates, groups)
    fixed = []
    while True:
        jobs = chain.wanted()
        if not jobs:
            break

        def fix(batches, jobs=jobs):
            for c, columns in _chunks(batches):
                gs, values, fk = [], [], None
                for ks, g, a in columns:  # the chunk's first run (the rest is read and left)
                    if fk is None:
                        fk = ks[0]
                    m = len(ks) if ks[-1] == fk else next(
                        (i for i, k in enumerate(ks) if k != fk), 0)
                    gs += g[:m]
                    values += a[:m]
                yield batch(correct(c, (gs, values), jobs[c], delta))

        # the chunks concerned only: a task each (a coalesced task may hold several)
        out = chunked.where(F.col("__c").isin(list(jobs))).coalesce(len(jobs)) \
            .mapInArrow(fix, schema).localCheckpoint()
        for r in out.where(kind == REPORT).collect():
            chain.learn(r["c"], r["tag"], r["drop"], None if r["met"] else (r["eg"], r["ea"]))
        fixed.append(out.where(kind == MEMBER))
    # the members that stand: every later run's; of each first run, those of the groups on
    # its chain's path (from the meeting row on, after a correction) and the corrected ones
    kept, corrected = chain.kept()
    members = first.where(kind == MEMBER)
    standing = local_dataframe(spark, kept or [(-1, -1, 0)],
                               "kc long, kgrp long, kfrom long")
    out = members.where(~F.col("spec")).select("g").unionByName(
        members.where("spec").join(F.broadcast(standing), (F.col("c") == F.col("kc"))
                                   & (F.col("tag") == F.col("kgrp"))
                                   & (F.col("g") >= F.col("kfrom"))).select("g"))
    if corrected:
        d = local_dataframe(spark, list(corrected.items()), "dc long, dtag long")
        for part in fixed:
            out = out.unionByName(part.join(
                F.broadcast(d), (F.col("c") == F.col("dc")) & (F.col("tag") == F.col("dtag")),
                "left_semi").select("g"))
    return out.select(F.col("g").alias("__g"))
