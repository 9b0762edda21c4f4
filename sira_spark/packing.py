"""PACK, UNPACK and split-point normalisation as DataFrame plans.

* PACK on one attribute is gaps-and-islands with window functions: per group of the other
  attributes, ordered by begin, a tuple starts a new island when its begin lies after every end
  seen before it; islands are then aggregated to (min begin, max end). A long input is cut into
  buckets of begin, each (group, bucket) scanned in its own task and the state carried between
  a group's buckets (``_pack_islands``, seed 003 section 5), so neither a relation whose only
  attribute is the interval nor one group holding most tuples is one task.
* A set operator pointwise on one interval attribute is a sweep line (``sweep``): begin/end
  events, running coverage per input, gaps-and-islands; its result comes out packed.
* Splitting numbers the distinct boundaries of each group of key attributes (running counts
  per key over buckets of point, ``_numbered``), finds each interval's begin and end numbers by
  equi-joins and spreads it over the pieces between them (``sequence``, ``explode``, an
  equi-join back to the boundaries): the cost follows the pieces made, never the interval
  lengths.
* PACK on several attributes splits first, then packs on each in order (as the Python engine).
* UNPACK counts first (an action) and refuses results beyond ``max_tuples``; a long interval is
  cut into pieces spread over partitions before it is exploded. A split is part of the plan
  and is not counted before it runs (the Python engine counts its splits).
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Window
from pyspark.sql import functions as F

from sira.algebra.packing import Pack, Unpack
from sira.engine.guards import DEFAULT_MAX_TUPLES, Guard, max_tuples
from sira.errors import IntervalError
from sira.types import DATE, IntegerType

from .compiler import ordered, translates
from .convert import local_dataframe
from .rowbound import at_most, partitions_for, sequence_join, stored
from .types import equal, spark_type

#: The limit UNPACK had before ``max_tuples`` covered every operator; kept as an alias.
DEFAULT_UNPACK_LIMIT = DEFAULT_MAX_TUPLES


def _c(name):
    return F.col(f"`{name}`")


def _nonempty(df, name):
    """Drop empty intervals (``end <= begin``, which IINTERSECT can make): they hold no points."""
    iv = _c(name)
    return df.where(iv["end"].isNull() | (iv["end"] > iv["begin"]))


def _rebuild(df, name, begin, end, is_open):
    """The interval column ``name`` rebuilt from plain begin/end columns (open: null end)."""
    end = F.when(is_open, F.lit(None)).otherwise(end)
    return df.withColumn(name, F.struct(begin.alias("begin"), end.alias("end")))


def packed_source(df, node, name):
    """``df`` (the translation of ``node``, a set) packed on ``name``: PACK (:func:`pack_one`),
    or ``df`` as it is where ``node`` is packed on ``name`` by construction
    (:func:`sira.algebra.packing.packed_on`: a CQL window, whose every element keeps its own
    period, need not be grouped by all its attributes again)."""
    from sira.algebra.packing import packed_on
    if packed_on(node, name):
        return df
    return pack_one(df, node.heading, name)


def pack_one(df, heading, name):
    """PACK on one interval attribute: gaps and islands per value of the other attributes.

    The interval is flattened to plain ``__b``/``__e`` columns, and the islands are found by
    :func:`_pack_islands`: per group of the other attributes (and, in a long input, per bucket
    of begin, so that one group holding most tuples is still spread over many tasks), ordered by
    begin, a tuple starts an island when its begin lies after every end seen before it; the
    islands are aggregated to (min begin, max end). Duplicates in the input do not change the
    islands, so no ``distinct`` is needed before it.
    """
    others = [(n, heading.type_of(n)) for n in heading.names if n != name]
    iv = _c(name)
    flat = _nonempty(df, name).select(*[_c(n) for n, _ in others], iv["begin"].alias("__b"),
                                      iv["end"].alias("__e"))
    out = _pack_islands(flat, others)
    return ordered(_rebuild(out, name, F.col("__b"), F.col("__e"), F.col("__open")), heading)


# ------------------------------------------------------ islands, split across buckets of begin
#
# Every island depends on every earlier end of its group (the other attributes' values), so a
# group is one sequence; with no other attribute, or with one group holding most tuples, that
# sequence is the whole input. Seed 003, section 5: the input is cut into buckets, contiguous
# ranges of begin (one job: the row count and the quantiles of begin), and each (group, bucket) is
# sorted and scanned in its own task. The scan finds *local* islands: a row starts one when its
# begin lies after every earlier end of its (group, bucket); each local island is one row (its
# start), keyed by its first begin and ended by a ``lead`` over the starts (the islands are
# stored, read by the summaries and the join). The state carried into a bucket is the largest end
# before it in its group, whether an open end lies before it, and the key of the island running
# into it. A bucket's real island starts are its local starts whose begin lies after the incoming
# end (a suffix of them, as begins grow), so a local island keeps its key when its first begin
# lies after the incoming end, and joins the incoming island otherwise. Islands never share a
# first begin in a group, so (group, key) names an island, which is aggregated to (min begin, max
# end). The carried states come from one row per (group, bucket): walked on the driver when there
# is no group (a handful of rows), by a window per group ordered by bucket otherwise.

#: a sequence of at most this many rows is one bucket (one task, no summaries job)
SEQUENCE_BUCKET_ROWS = 200_000

#: buckets per shuffle partition (the least a long sequence is cut into)
BUCKETS_PER_PARTITION = 4

#: about the most rows of a long sequence a bucket holds (more buckets for a longer one):
#: the windows over (key, bucket) buffer a bucket, so its size must not grow with the input
ROWS_PER_BUCKET = 100_000

#: the most buckets a sequence is cut into (the quantiles of its order asked for at once)
MOST_BUCKETS = 256


def bucket_count(rows: int, partitions: int) -> int:
    """How many buckets a sequence of ``rows`` rows is cut into: ``BUCKETS_PER_PARTITION``
    per shuffle partition, more when that leaves more than ``ROWS_PER_BUCKET`` rows in each,
    at most ``MOST_BUCKETS``.

        >>> bucket_count(1_000, 4), bucket_count(10_000_000, 4), bucket_count(10 ** 9, 4)
        (16, 100, 256)
    """
    least = BUCKETS_PER_PARTITION * partitions
    return max(least, min(MOST_BUCKETS, -(-rows // ROWS_PER_BUCKET)))


def _bucket_of(value, bounds, lo, hi):
    """The number of ``bounds[lo:hi]`` at most ``value``, plus lo (a tree of comparisons)."""
    if lo == hi:
        return F.lit(lo)
    mid = (lo + hi) // 2
    return F.when(value < F.lit(bounds[mid]), _bucket_of(value, bounds, lo, mid)) \
        .otherwise(_bucket_of(value, bounds, mid + 1, hi))


def _numeric(col, dtype):
    """A DOUBLE image of ``col`` that never decreases along its order (for the quantiles)."""
    from pyspark.sql import types as T
    if isinstance(dtype, T.DateType):
        return F.unix_date(col).cast("double")
    if isinstance(dtype, (T.TimestampNTZType, T.TimestampType)):
        return F.unix_micros(col.cast("timestamp")).cast("double")
    return col.cast("double")


def _fractions(count: int):
    """The literal array [1/count, 2/count, ..., (count - 1)/count] of DOUBLE, made in one call
    to the JVM: a Python list of them became one ``lit`` each, about 1,000 Py4J round trips
    and 120 ms for the 255 quantiles :func:`_bucketed` asks for (measured). The text holds only
    numbers made here, each written exactly (``repr`` of a float reads back as that float).

        >>> from sira_spark import default_engine
        >>> default_engine().spark.range(1).select(_fractions(4).alias("f")).first()["f"]
        [0.25, 0.5, 0.75]
    """
    return F.expr("array(" + ", ".join(f"{i / count!r}D" for i in range(1, count)) + ")")


def _bucketed(df, order: str):
    """``df`` (read three times: stored once by a lazy ``localCheckpoint``) with an INT column
    ``__bk``: contiguous ranges of the column ``order``, numbered in its order (equal values
    share a bucket; :func:`bucket_count` of them), and whether there are several buckets. One
    job: the row count and the quantiles of ``order``; up to ``SEQUENCE_BUCKET_ROWS`` rows are
    one bucket, and when the plan alone shows there are no more (``rowbound.at_most``)
    neither the job nor the store is needed."""
    if at_most(df, SEQUENCE_BUCKET_ROWS):
        return df.withColumn("__bk", F.lit(0).cast("int")), False
    spark = df.sparkSession
    df = df.localCheckpoint(eager=False)
    image = _numeric(F.col(order), df.schema[order].dataType)
    parts = int(spark.conf.get("spark.sql.shuffle.partitions"))
    # the quantiles of every bucket count (a multiple of the least count, whose own quantiles
    # are then among them, and at least MOST_BUCKETS), in the same job as the count
    least = BUCKETS_PER_PARTITION * parts
    asked = least * -(-MOST_BUCKETS // least)
    row = df.agg(F.count(F.lit(1)).alias("n"),
                 F.percentile_approx(image, _fractions(asked), 10_000).alias("q")).first()
    quantiles, bounds = row["q"] or [], []
    if row["n"] > SEQUENCE_BUCKET_ROWS and quantiles:
        buckets = bucket_count(row["n"], parts)
        bounds = sorted({quantiles[round(i * asked / buckets) - 1] for i in range(1, buckets)})
    return df.withColumn("__bk", _bucket_of(image, bounds, 0, len(bounds)).cast("int")), \
        bool(bounds)


def _carried(df, rows: list, fields: list):
    """``df`` joined (broadcast, on ``__bk``) with the state carried into each bucket: ``rows``
    of (bucket, values...) computed on the driver, ``fields`` their (name, Spark type)."""
    from pyspark.sql import types as T
    schema = T.StructType([T.StructField("__bk", T.IntegerType())]
                          + [T.StructField(n, t) for n, t in fields])
    carried = local_dataframe(df.sparkSession, rows, schema)
    return df.join(F.broadcast(carried), "__bk", "left")


def _local_islands(rows, part: list):
    """The islands of ``rows`` (``__b``, ``__e``) within each group of the columns ``part``:
    rows ``(part..., __lk, __b, __e, __open)``, ``__lk`` the island's first begin, ``__e`` its
    greatest end (``__open``: one of its ends is open, and ``__e`` means nothing). One sort per
    group, no aggregation: ordered by (begin, end), a row starts an island when its begin lies
    after every end before it (none open); only the starts are kept. An island ends at the
    greatest end before the next start (``lead`` over the starts alone, in the same order), the
    last one at the group's greatest end, open when any end of the group is (no start follows an
    open end, so only the last island can hold one). A copy of a start sorts after it and sees
    its end, above its begin, so duplicates never start a second island; starts are unique on
    begin, so their order has no ties."""
    w = Window.partitionBy(*part).orderBy(F.col("__b"), F.col("__e").asc_nulls_last())
    before = w.rowsBetween(Window.unboundedPreceding, -1)
    whole = w.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    is_open = F.col("__e").isNull()
    marked = rows.select(*part, "__b", F.max("__e").over(before).alias("__pe"),
                         F.coalesce(F.max(is_open).over(before), F.lit(False)).alias("__po"),
                         F.max("__e").over(whole).alias("__le"),
                         F.max(is_open).over(whole).alias("__lo"))
    starts = marked.where(~F.col("__po") & (F.col("__pe").isNull() | (F.col("__b") >
                                                                       F.col("__pe"))))
    # the next start's end before it: never null (a start is not its group's first row, and
    # some end before it is finite, as none is open); null after the last start
    following = F.lead("__pe").over(Window.partitionBy(*part).orderBy(F.col("__b")))
    nx = F.col("__nx")
    return starts.select(*part, "__b", "__le", "__lo", following.alias("__nx")).select(
        *part, F.col("__b").alias("__lk"), "__b", F.coalesce(nx, F.col("__le")).alias("__e"),
        (nx.isNull() & F.col("__lo")).alias("__open"))


def _walked(local, dtype):
    """``local`` (one group) joined with the state carried into each bucket, walked through the
    buckets' summaries on the driver (a handful of rows)."""
    from pyspark.sql import types as T
    summary = local.groupBy("__bk").agg(F.max("__e").alias("__me"), F.max("__open").alias("__mo"),
                                        F.max("__lk").alias("__lb")).collect()
    carried, end, is_open, key = [], None, False, None
    for s in sorted(summary, key=lambda r: r["__bk"]):
        carried.append((s["__bk"], end, is_open, key))
        if not is_open and (end is None or s["__lb"] > end):
            key = s["__lb"]
        end = s["__me"] if end is None or (s["__me"] is not None and s["__me"] > end) else end
        is_open = is_open or bool(s["__mo"])
    return _carried(local, carried, [("__ce", dtype), ("__co", T.BooleanType()),
                                     ("__ck", dtype)])


def _windowed(local, others: list):
    """``local`` joined with the state carried into each (group, bucket): running over the
    buckets' summaries by a window per group ordered by bucket, exactly as :func:`_walked`."""
    group = [_c(n) for n, _ in others]
    summary = local.groupBy(*group, "__bk").agg(
        F.max("__e").alias("__me"), F.max("__open").alias("__mo"), F.max("__lk").alias("__lb"))
    before = Window.partitionBy(*group).orderBy("__bk").rowsBetween(
        Window.unboundedPreceding, -1)
    states = summary.select(
        *group, "__bk", "__lb", F.max("__me").over(before).alias("__ce"),
        F.coalesce(F.max("__mo").over(before), F.lit(False)).alias("__co"))
    real_last = F.when(~F.col("__co") & (F.col("__ce").isNull() | (F.col("__lb") > F.col("__ce"))),
                       F.col("__lb"))  # the bucket's last local start, when it is a real one
    carry = states.withColumn("__rl", real_last).select(
        *[_c(n).alias(f"__k_{n}") for n, _ in others], F.col("__bk").alias("__kb"), "__ce",
        "__co", F.max("__rl").over(before).alias("__ck"))
    return _joined_per_group(local, carry, others)


def _joined_per_group(rows, carry, group: list):
    """``rows`` (in buckets ``__bk``) joined with ``carry``, one row per group and bucket whose
    group columns are named ``__k_<name>`` and bucket ``__kb``: on the group (``group``: pairs of
    name and sira type; null-safe where a null may be inside) and the bucket."""
    match = [equal(rows[f"`{n}`"], carry[f"`__k_{n}`"], t) for n, t in group]
    on = reduce(lambda a, b: a & b, match + [rows["__bk"] == carry["__kb"]])
    return sequence_join(rows, carry, on).drop(*[f"__k_{n}" for n, _ in group], "__kb")


def _pack_islands(flat, others: list, several: bool | None = None):
    """Islands of the rows ``(others..., __b, __e)`` per value of the other attributes
    ``others`` (pairs of name and sira type; none: one sequence), as rows
    ``(others..., __b, __e, __open)``. ``several``: the rows are in buckets of begin already
    (``__bk``, as :func:`running_sequence` left them), several of them or not."""
    rows = flat
    if several is None:
        rows, several = _bucketed(flat, "__b")
    local = _local_islands(rows, [*[_c(n) for n, _ in others], F.col("__bk")])
    if not several:
        return local.drop("__bk", "__lk")
    # read twice (the buckets' summaries, then the islands joined with what they carry):
    # stored once as the first read makes it, not computed again for the second
    local = local.localCheckpoint(eager=False)
    joined = _windowed(local, others) if others else \
        _walked(local, flat.schema["__b"].dataType)
    lk, ce = F.col("__lk"), F.col("__ce")
    key = F.when(~F.col("__co") & (ce.isNull() | (lk > ce)), lk).otherwise(F.col("__ck"))
    return joined.groupBy(*[_c(n) for n, _ in others], key.alias("__key")).agg(
        F.min("__b").alias("__b"), F.max("__e").alias("__e"), F.max("__open").alias("__open"))


def _totals_before(rows, sums: dict, first: str | None = None, group: list = ()):
    """``rows`` (in several buckets ``__bk``) joined with what each bucket inherits from the
    buckets before it: for each ``sums`` entry (new name -> the column it sums), the total of
    that column over every earlier bucket (``__c_<name>``), and when ``first`` names a column,
    its least value in the next bucket that has rows (``__nf``). One summaries job; the driver
    adds up the buckets' totals in order.

    With ``group`` (pairs of name and sira type) each group's buckets inherit from that group's
    earlier buckets only: the buckets' totals run by a window per group ordered by bucket."""
    if group:
        return _totals_before_per_group(rows, sums, first, group)
    from decimal import Decimal

    from pyspark.sql import types as T
    types = {n: rows.select(c.alias("x")).schema["x"].dataType for n, c in sums.items()}
    aggs = [F.sum(c).alias(f"__t_{n}") for n, c in sums.items()]
    if first is not None:
        aggs.append(F.min(first).alias("__first"))
    summary = sorted(rows.groupBy("__bk").agg(*aggs).collect(), key=lambda r: r["__bk"])
    totals = {n: Decimal(0) if isinstance(t, T.DecimalType) else 0 for n, t in types.items()}
    carried = []
    for i, b in enumerate(summary):
        nxt = [] if first is None else \
            [summary[i + 1]["__first"] if i + 1 < len(summary) else None]
        carried.append((b["__bk"], *totals.values(), *nxt))
        totals = {n: t + (b[f"__t_{n}"] or 0) for n, t in totals.items()}
    fields = [(f"__c_{n}", t) for n, t in types.items()]
    if first is not None:
        fields.append(("__nf", rows.schema[first].dataType))
    return _carried(rows, carried, fields)


def _totals_before_per_group(rows, sums: dict, first, group: list):
    """:func:`_totals_before` per group (:func:`bucket_totals_before`), joined back."""
    carry = bucket_totals_before(rows, sums, [_c(n) for n, _ in group], "__bk", first)
    carry = carry.select(*[_c(n).alias(f"__k_{n}") for n, _ in group],
                         F.col("__bk").alias("__kb"), *[f"__c_{n}" for n in sums],
                         *(["__nf"] if first is not None else []))
    return _joined_per_group(rows, carry, group)


def bucket_totals_before(rows, sums: dict, keys: list, bucket: str, first: str | None = None):
    """One row per key and ``bucket`` of ``rows`` (``keys``: columns; ``bucket``: a column
    numbering contiguous runs of each key's order): the key, the bucket, and for each ``sums``
    entry (new name -> the column it sums) its total over the key's earlier buckets
    (``__c_<name>``, 0 when there are none); when ``first`` names a column, its least value in
    the key's next bucket (``__nf``). A window per key ordered by bucket runs the buckets'
    totals (seed 003, section 5): no step holds more than one key's buckets."""
    aggs = [F.sum(c).alias(f"__t_{n}") for n, c in sums.items()]
    if first is not None:
        aggs.append(F.min(first).alias("__first"))
    summary = rows.groupBy(*keys, bucket).agg(*aggs)
    order = Window.partitionBy(*keys).orderBy(bucket)
    before = order.rowsBetween(Window.unboundedPreceding, -1)
    carried = [F.coalesce(F.sum(f"__t_{n}").over(before), F.lit(0)).alias(f"__c_{n}")
               for n in sums]
    if first is not None:
        carried.append(F.lead("__first").over(order).alias("__nf"))
    return summary.select(*keys, bucket, *carried)


def carried_across(rows, specs: dict):
    """``rows`` (in several buckets ``__bk``) joined with, for each ``specs`` entry ``name:
    (column, kind, direction)``, the ``kind`` ("max", "min" or "sum") of ``column`` over every
    bucket before (``direction`` "before") or after ("after") each bucket, as ``__c_<name>``
    (for max and min null when those buckets hold no value, for a sum 0). One summaries job;
    the driver combines the buckets' values in order (seed 003, section 5)."""
    from decimal import Decimal

    from pyspark.sql import types as T
    pick = {"max": max, "min": min, "sum": lambda a, b: a + b}
    aggregate = {"max": F.max, "min": F.min, "sum": F.sum}
    types = {n: rows.select(col.alias("x")).schema["x"].dataType
             for n, (col, _, _) in specs.items()}
    summary = sorted(rows.groupBy("__bk").agg(*[
        aggregate[kind](col).alias(f"__t_{n}")
        for n, (col, kind, _) in specs.items()]).collect(), key=lambda r: r["__bk"])
    carried = {b["__bk"]: {} for b in summary}
    for n, (_, kind, direction) in specs.items():
        seen = None if kind != "sum" else \
            Decimal(0) if isinstance(types[n], T.DecimalType) else 0
        for b in (summary if direction == "before" else reversed(summary)):
            carried[b["__bk"]][n] = seen
            value = b[f"__t_{n}"]
            if value is not None:
                seen = value if seen is None else pick[kind](seen, value)
    return _carried(rows, [(bk, *[values[n] for n in specs]) for bk, values in carried.items()],
                    [(f"__c_{n}", types[n]) for n in specs])


def running_sequence(points, sums: list, group: list = ()):
    """Sequences of points ``(<group>..., __p, <sums>...)``, one per group (``group``: pairs
    of name and sira type; none: one sequence), cut into buckets of ``__p``: rows
    ``(<group>..., __bk, __p, __q, <sums>...)`` with ``__q`` the group's next point (null after its
    last) and each sum running over every point of the group up to this one; and whether there
    are several buckets. Each bucket starts from the totals of its group's buckets before it,
    and its last point's next point is the next bucket's first (``_totals_before``). The
    sweeps (``sweep``, SUMMARIZEBYUSING by ``aggregation._swept``) read it."""
    rows, several = _bucketed(points, "__p")
    cols = [_c(n) for n, _ in group]
    w = Window.partitionBy(*cols, "__bk").orderBy("__p")
    run = w.rowsBetween(Window.unboundedPreceding, 0)
    carry, following = [F.lit(0)] * len(sums), F.lit(None)
    if several:
        rows = _totals_before(rows, {x: F.col(x) for x in sums}, first="__p", group=group)
        carry, following = [F.col(f"__c_{x}") for x in sums], F.col("__nf")
    return rows.select(*cols, "__bk", "__p",
                       F.coalesce(F.lead("__p").over(w), following).alias("__q"),
                       *[(F.sum(x).over(run) + c).alias(x) for x, c in zip(sums, carry)]), \
        several


def running_rows(df, order: list, sums: dict, group: list = ()):
    """``df`` with running sums over the order ``order`` (sort columns, the first a column
    name) within each group (``group``: pairs of name and sira type; none: one sequence), cut
    into buckets of that first column: ``sums`` maps a new column's name to the column it sums
    (numbers), each running over every row of the group up to this one in the order, each
    bucket starting from the totals of its group's buckets before it (``_totals_before``). A
    null first column sorts last (its rows are one bucket, the last)."""
    rows, several = _bucketed(df.select("*", *[c.alias(f"__v_{n}") for n, c in sums.items()]),
                              order[0])
    w = Window.partitionBy(*[_c(n) for n, _ in group], "__bk").orderBy(
        *[F.col(order[0]).asc_nulls_last(), *order[1:]])
    run = w.rowsBetween(Window.unboundedPreceding, 0)
    carry = {n: F.lit(0) for n in sums}
    if several:
        rows = _totals_before(rows, {n: F.col(f"__v_{n}") for n in sums}, group=group)
        carry = {n: F.col(f"__c_{n}") for n in sums}
    out = rows.select("*", *[(F.sum(f"__v_{n}").over(run) + carry[n]).alias(n) for n in sums])
    return out.drop("__bk", *[f"__v_{n}" for n in sums], *[f"__c_{n}" for n in sums])


def pack_dataframe(df, heading, names):
    """PACK on ``names`` in order (split first when there are several: the split relation is
    made distinct, as ``max_tuples`` counts its tuples, not the pieces cut from overlapping
    tuples that coincide, as on the Python engine)."""
    names = list(names)
    if len(names) > 1:
        key = [n for n in heading.names if n not in names]
        (df,) = split_dataframes([df], [heading], names, key)
    for name in names:
        df = pack_one(df, heading, name)
    return df


def sweep(dfs, heading, name, keep):
    """A pointwise set operation on one interval attribute, packed, by a sweep line.

    ``keep`` maps the list of coverage counts (one per input, at a point) to whether the point
    is in the result: MINUS keeps ``c0 > 0 and c1 == 0``, UNION ``any > 0`` and so on. This is
    the same relation as splitting the inputs, applying the set operator and packing, but
    without arrays or joins: every interval becomes a begin event (+1 on its input's counter)
    and an end event (-1; none for an open end), summed per (key, point) (the key: the other
    attributes); per key, in order of point, the running coverage and the next point
    (``running_sequence``: per key and bucket of point, each bucket starting from its key's
    earlier buckets) say that [point, next) is in the result when ``keep`` holds (next null:
    unbounded above). Consecutive kept segments meet, so gaps-and-islands (``_pack_islands``,
    on the same buckets) packs them.
    Coverage counts ignore duplicate tuples, so the inputs need no ``distinct``.
    """
    key = [n for n in heading.names if n != name]
    m = len(dfs)

    def events(df, i):
        iv = _c(name)
        df = _nonempty(df, name)

        def deltas(v):
            return [F.lit(v if j == i else 0).alias(f"__d{j}") for j in range(m)]
        starts = df.select(*[_c(k) for k in key], iv["begin"].alias("__p"), *deltas(1))
        ends = df.where(iv["end"].isNotNull()).select(*[_c(k) for k in key],
                                                      iv["end"].alias("__p"), *deltas(-1))
        return starts.unionByName(ends)

    ev = reduce(lambda a, b: a.unionByName(b), [events(df, i) for i, df in enumerate(dfs)])
    pts = ev.groupBy(*[_c(k) for k in key], "__p").agg(
        *[F.sum(f"__d{j}").alias(f"__d{j}") for j in range(m)])
    group = [(k, heading.type_of(k)) for k in key]
    segments, several = running_sequence(pts, [f"__d{j}" for j in range(m)], group)
    kept = segments.where(keep([F.col(f"__d{j}") for j in range(m)])).select(
        *[_c(k) for k in key], "__bk", F.col("__p").alias("__b"), F.col("__q").alias("__e"))
    packed = _pack_islands(kept, group, several)
    out = _rebuild(packed, name, F.col("__b"), F.col("__e"), F.col("__open"))
    return ordered(out, heading)


def _key_condition(left, right, key, heading):
    """Null-safe where an interval may hold a null: the key attributes of ``left`` equal to
    those of ``right`` (whose key columns are named ``__k_<name>``)."""
    return [equal(left[f"`{k}`"], right[f"`__k_{k}`"], heading.type_of(k)) for k in key]


def _numbered(points, group: list):
    """The distinct points ``(<group>..., __p)`` numbered in order within each group from 1
    (``__si``), each with the group's next point (``__sq``, null after the last) and the
    group's number of points (``__sn``): running counts over buckets of point
    (:func:`running_sequence`), the last point (the one with no next) giving the count."""
    cols = [_c(n) for n, _ in group]
    numbered, _ = running_sequence(points.withColumn("__si", F.lit(1).cast("long")), ["__si"],
                                   group)
    numbered = numbered.select(*cols, "__p", "__si", F.col("__q").alias("__sq"))
    last = numbered.where(F.col("__sq").isNull()).select(
        *[_c(n).alias(f"__l_{n}") for n, _ in group], F.col("__si").alias("__sn"))
    if not group:
        return numbered.crossJoin(F.broadcast(last))
    match = [equal(numbered[f"`{n}`"], last[f"`__l_{n}`"], t) for n, t in group]
    return numbered.join(last, reduce(lambda a, b: a & b, match)).drop(
        *[f"__l_{n}" for n, _ in group])


def split_dataframes(dfs, headings, names, key):
    """Split several DataFrames together on interval attributes ``names`` within groups ``key``.

    For each attribute: the distinct boundaries (begins and ends of every input) of each key are
    numbered, each with the next one and the key's count (:func:`_numbered`); each interval
    finds the numbers of its begin and its end by equi-joins, is spread over the pieces between
    them (``sequence``/``explode``; an open end runs to the key's last boundary) and each piece
    number meets its boundaries by an equi-join on (key, number). O(n log n + pieces): no
    interval is compared with the boundaries outside it. Cutting can make equal pieces of
    different tuples, so each result gets one ``distinct`` (after the last attribute, not per
    attribute): ``max_tuples`` counts the split relation's tuples, as on the Python engine.
    """
    out = list(dfs)
    for name in names:
        points = []
        for df in out:
            iv = _c(name)
            points.append(df.select(*[_c(k).alias(f"__k_{k}") for k in key],
                                    iv["begin"].alias("__p")))
            points.append(df.where(iv["end"].isNotNull())
                          .select(*[_c(k).alias(f"__k_{k}") for k in key],
                                  iv["end"].alias("__p")))
        bounds = stored(_numbered(reduce(lambda a, b: a.unionByName(b), points).distinct(),
                                  [(f"__k_{k}", headings[0].type_of(k)) for k in key]))
        split = []
        for df, heading in zip(out, headings):
            iv = _c(name)
            b = bounds.select(*[F.col(f"`__k_{k}`") for k in key], F.col("__p").alias("__bp"),
                              F.col("__si").alias("__bi"), F.col("__sn").alias("__bn"))
            e = bounds.select(*[F.col(f"`__k_{k}`").alias(f"__e_{k}") for k in key],
                              F.col("__p").alias("__ep"), F.col("__si").alias("__ei"))
            first = sequence_join(df, b, reduce(lambda x, y: x & y, _key_condition(
                df, b, key, heading) + [b["__bp"] == iv["begin"]]))
            e_cond = [equal(first[f"`{k}`"], e[f"`__e_{k}`"], heading.type_of(k)) for k in key]
            spans = sequence_join(first, e, reduce(lambda x, y: x & y,
                                                   e_cond + [e["__ep"] == iv["end"]]), "left")
            last = F.when(F.col("__ei").isNull(), F.col("__bn")).otherwise(F.col("__ei") - 1)
            pieces = spans.withColumn("__g", F.explode(F.sequence(F.col("__bi"), last))) \
                .select(*[_c(n) for n in heading.names if n != name], "__g")
            g = bounds.select(*[F.col(f"`__k_{k}`") for k in key], "__si", "__p", "__sq")
            cut = sequence_join(pieces, g, reduce(lambda x, y: x & y, _key_condition(
                pieces, g, key, heading) + [g["__si"] == pieces["__g"]]))
            cut = cut.withColumn(name, F.struct(F.col("__p").alias("begin"),
                                                F.col("__sq").alias("end")))
            split.append(ordered(cut, heading))
        out = split
    out = [df.distinct() for df in out]
    from .guards import check_current
    # max_tuples counts the pieces; a count kept with them lets the PACK after the split keep
    # a short sequence in one bucket without counting it again (_bucketed)
    return [_with_known_rows(df, check_current(df, "splitting the intervals at their "
                                                   "boundaries")) for df in out]


def _with_known_rows(df, rows: int | None):
    """``df``, stored lazily with its number of rows ``rows`` (None: unknown) when that
    number is news to its plan (:mod:`rowbound`) and at most ``SEQUENCE_BUCKET_ROWS``: a PACK
    over it is then one bucket with no job to count and cut it (:func:`_bucketed`). A longer
    ``df`` is left as it is: :func:`_bucketed` counts it with its quantiles, in one job."""
    if rows is None or rows > SEQUENCE_BUCKET_ROWS or at_most(df, SEQUENCE_BUCKET_ROWS):
        return df
    return stored(df, eager=False, rows=rows)


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
    if isinstance(point, IntegerType):  # as LONGs: an INT interval may hold 2**32 - 1 points
        return iv["end"].cast("long") - iv["begin"].cast("long")
    if point == DATE:
        return F.datediff(iv["end"], iv["begin"]).cast("long")
    return F.unix_micros(iv["end"].cast("timestamp")) - F.unix_micros(iv["begin"].cast("timestamp"))


#: an interval of more points than this is first cut into pieces of this many points, spread
#: over partitions before each piece is exploded (one task never holds a long array)
UNPACK_PIECE_POINTS = 100_000


def _pieces(t, iv, size: int):
    """``iv`` (bounded) cut into consecutive intervals of ``size`` points (the last shorter):
    an array of structs, one per piece (``size`` points per element, not one)."""
    point = t.point
    count = F.call_function("div", _points(t, iv) - 1, F.lit(size).cast("long"))
    if isinstance(point, IntegerType):
        at = lambda j: (iv["begin"] + j * size).cast(spark_type(point))  # noqa: E731
    elif point == DATE:
        at = lambda j: F.date_add(iv["begin"], (j * size).cast("int"))  # noqa: E731
    else:
        at = lambda j: iv["begin"] + F.expr("INTERVAL 1 MICROSECOND") * (j * size)  # noqa: E731
    return F.transform(F.sequence(F.lit(0).cast("long"), count), lambda j: F.struct(
        at(j).alias("begin"), F.least(at(j + 1), iv["end"]).alias("end")))


@translates(Unpack)
def _unpack(node, children, c):
    """UNPACK, counted first: the points of every tuple are summed (one action); when the sum
    passes ``max_tuples`` the input is packed (points covered by overlapping tuples then count
    once) and summed again, and only a result really over the limit is refused, before any
    tuple is exploded. An interval longer than ``UNPACK_PIECE_POINTS`` is first cut into pieces
    of that many points, spread over partitions sized by the sum, so a long interval is
    exploded by many tasks. The points are made distinct over partitions sized by that sum."""
    (df,) = children
    h = node.heading
    limit = max_tuples(c.options)
    if not node.on:
        return df
    points, longest, unbounded = _point_total(df, h, node.on, limit)
    if unbounded:
        raise IntervalError("UNPACK: an interval is unbounded, so it holds no finite set of "
                            "points", operator="UNPACK")
    if points > limit:
        df = stored(pack_dataframe(df, h, node.on))
        points, longest, _ = _point_total(df, h, node.on, limit)
        if points > limit:
            raise Guard("UNPACK", limit).error()
    parts = partitions_for(df, points)
    for n in node.on:  # an empty interval (IINTERSECT) holds no point: its tuple goes
        df = _nonempty(df, n)
        if longest > UNPACK_PIECE_POINTS:
            df = df.withColumn(n, F.explode(_pieces(h.type_of(n), _c(n), UNPACK_PIECE_POINTS))) \
                .repartition(parts, *[_c(x) for x in h.names])
        df = df.withColumn(n, F.explode(_unit_intervals(h.type_of(n), _c(n))))
    # made distinct in partitions of about ROWS_PER_CHUNK points: in the shuffle partitions
    # alone, the 40M points of 10M short intervals ran the heap out. The points counted are
    # kept with a short result (a PACK after UNPACK then counts nothing: _with_known_rows)
    return _with_known_rows(df.repartition(parts, *[_c(n) for n in h.names]).distinct(),
                            points)


def _point_total(df, heading, names, limit: int) -> tuple:
    """``(total, longest, unbounded)`` in one action: the combinations of points the rows of
    ``df`` hold, summed; the most points one interval of ``names`` holds; whether an interval
    of ``names`` is unbounded (it holds no finite set of points). Counted exactly (DECIMAL: an
    INT or LONG interval may hold more points than a LONG, which overflowed on Spark where
    the other engines said TooManyTuples), each count and product held at ``limit + 1`` at
    most: a total past the limit is only ever compared with it."""
    cap = F.lit(min(limit + 1, 1 << 62)).cast("decimal(38,0)")
    counts = [F.least(F.greatest(_exact_points(heading.type_of(n), _c(n)), F.lit(0)), cap)
              for n in names]
    size = reduce(lambda a, b: F.least(a * b, cap), counts)
    unbounded = reduce(lambda a, b: a | b, [_c(n)["end"].isNull() for n in names])
    row = df.select(F.sum(size).alias("n"),
                    F.greatest(*[F.max(x) for x in counts], F.lit(0)).alias("m"),
                    F.max(unbounded).alias("u")).first()
    return int(row["n"] or 0), int(row["m"] or 0), bool(row["u"])


def _exact_points(t, iv):
    """The points of ``iv`` (null when it is unbounded) as DECIMAL(38, 0)."""
    if isinstance(t.point, IntegerType):
        return iv["end"].cast("decimal(38,0)") - iv["begin"].cast("decimal(38,0)")
    return _points(t, iv).cast("decimal(38,0)")
