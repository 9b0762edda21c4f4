"""Spark translations of the CQL windows (WINDOW) and ISTREAM, DSTREAM, RSTREAM.

WINDOW gives every stream element the interval ``during`` of ``sira/engine/windows.py``
(``element_intervals``, the reference), computed with window functions over each partition
ordered by (timestamp, arrival attribute, or else every attribute in heading order):

* all time arithmetic is done on a LONG "time" column (the timestamp itself, or microseconds
  since the epoch for a TIMESTAMP) and turned back into the timestamp's type at the end;
  ``ceil(t/L)*L`` is ``t + pmod(-t, L)``;
* ``rows(N)`` ends at ``lead(time, N)``; with ``range(T)`` at the earlier of that and t+T
  (``least`` skips the null of "no N-th later element"); a time slide rounds both ends up;
* ``rows(N) slide(M)`` uses each element's position p: the times at positions ceil(p/M)*M and
  ceil((p+N)/M)*M are leads by a varying offset (a ``when`` over the M possible offsets) when M is
  small, and otherwise a join with the table of batches (last time, size) on (partition, batch);
* ``range(C) on(E)``: when E is non-decreasing along the order (checked with one action, once per
  stream and order in an evaluation) the exit is a "next greater or equal" search: a threshold
  marker row E+C per element is unioned with the elements, ordered by E, and
  ``min(time)`` over the following rows (a growing frame in reverse order, per bucket of value,
  else the least over the later buckets) finds the first element reaching it; otherwise (E
  going up and down) seed 003's two passes over buckets of positions do
  (``_first_reaching_by_buckets``). A
  long stream's positions (per partition) and the arrival check are counted across buckets of
  time (no window over a whole partition, none without one), and no element is compared with
  every later one.

Elements never visible (begin >= end) are dropped; WINDOW does not pack its result. With
``arrival(A)`` the stream must be in order: one action (once per stream in an evaluation) looks
for an element whose timestamp is after that of an element arriving later, and raises the
SiraValueError of the Python engine, with the same ``value`` (the first such arrival).

ISTREAM/DSTREAM pack on ``during`` and take its begin / (bounded) end; RSTREAM joins the ticks on
``begin <= at < end``.

A pointwise SUMMARIZEBY over a ``rows(N)`` window (``summarizebyusing(window(S, ts, partition(k)
rows(N)), (k, during), (...), (during))``: sums of integers, max, min) is compiled here without
the window relation, as one running frame per partition (see ``_summarize_rows``); this module
wraps the SUMMARIZEBY translation of ``aggregation.py`` for that case, and for a SUMMARIZEBY
over a HOP window table (``windowtables.summarize_hop``: aggregated by panes first), and leaves
it every other.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Window as W
from pyspark.sql import functions as F

from sira.algebra.windows import DStream, IStream, RStream, Window
from sira.errors import SiraTypeError, SiraValueError
from sira.intervals import IntervalType
from sira.types import BIGINT, FLOAT, INT, TIMESTAMP, RelationType, TupleType

from .compiler import ordered, translates
from .packing import pack_dataframe, running_rows
from .rowbound import at_most, sequence_join
from .types import spark_type

#: rows(N) slide(M) with M up to this uses leads; larger slides join with the batch table
MAX_SLIDE_LEADS = 16

#: aggregates over a partitioned rows(N) window with N up to this use a frame of N rows; larger
#: windows use running totals and levels of block maxima (``_summarize_rows``)
MAX_FRAME_ROWS = 16


def _c(name):
    return F.col(f"`{name}`")


def _to_time(col, t):
    """A timestamp (or SPL delta attribute) column as LONG time (microseconds since the epoch
    for TIMESTAMP; a FLOAT delta attribute stays a double)."""
    if t == TIMESTAMP:
        return F.unix_micros(col.cast("timestamp"))
    if t == FLOAT:
        return col.cast("double")
    return col.cast("long")


def _from_time(col, t):
    """LONG time back to the timestamp attribute's type."""
    if t == TIMESTAMP:
        return F.timestamp_micros(col).cast("timestamp_ntz")
    return col.cast(spark_type(t))


#: each timestamp type's least and greatest values as LONG time (microseconds since the epoch
#: of 0001-01-01 and 9999-12-31T23:59:59.999999 for TIMESTAMP), as DuckDB's ``TIME_RANGE``
TIME_RANGE = {INT: (-2 ** 31, 2 ** 31 - 1),
              TIMESTAMP: (-62135596800000000, 253402300799999999),
              BIGINT: (-2 ** 63, 2 ** 63 - 1)}


def time_fits(col, t, operator: str):
    """A condition true where the LONG time ``col`` (null: no bound) is a value of the timestamp
    type ``t``, failing the query with IntOverflow (naming ``operator``) where it is not. In a
    filter it makes Spark compute the bound on every row, as the Python engine does: a bound
    computed only for a column that is projected away, or only compared, would otherwise never
    be checked (Spark's own TIMESTAMP goes on past year 9999, and it prunes what nothing
    reads). As DuckDB's ``time_fits``."""
    from .functions import sira_error
    low, high = TIME_RANGE.get(t, TIME_RANGE[BIGINT])
    inside = col.isNull() | ((col >= F.lit(low).cast("long")) & (col <= F.lit(high).cast("long")))
    return F.when(inside, F.lit(True)).otherwise(sira_error(
        "IntOverflow", f"{operator}: a window bound does not fit {t.name}"))


def _ceil_to(col, step: int):
    """ceil(col / step) * step for any sign of col (no negation: col may be LONG's least)."""
    step = F.lit(step).cast("long")
    return col + F.pmod(step - F.pmod(col, step), step)


#: LONG's largest value: every time (a LONG) is at most this
TIME_MAX = 2 ** 63 - 1


def time_plus(col, amount: int):
    """``t + amount`` for a LONG time and a constant ``amount >= 0``, capped at LONG's largest
    value instead of overflowing: a time x compares with it as with the exact sum in
    ``x <= t + T``, ``x > t + T``, ``t + T < x`` and ``t + T >= x`` (x is at most the cap), which
    is how the windows use it; a bound that lands in a result is added exactly instead (it must
    fit its type: IntOverflow otherwise, as in the Python engine). As DuckDB's ``time_plus``."""
    return F.least(col, F.lit(TIME_MAX - amount).cast("long")) + F.lit(amount).cast("long")


def exact(col):
    """An integer column as decimal(20,0), which holds the sum or difference of any two LONGs
    (Spark has no wider integer; a double quotient rounds past 2**53)."""
    return col.cast("decimal(20,0)")


def _order_columns(heading, names):
    """Sort columns ordering tuples as the Python engine's canonical sort key does."""
    out = []
    for n in names:
        t = heading.type_of(n)
        if isinstance(t, IntervalType):
            out += [_c(n)["begin"].asc(), _c(n)["end"].asc_nulls_last()]
        else:
            out.append(canonical_key(_c(n), t).asc())
    return out


def canonical_key(col, t):
    """A column ordering values of type ``t`` as their Python sort key (``Type.sort_key``)
    does: an interval by (begin, unbounded, end); a relation by its cardinality first, then
    its tuples' keys sorted (Spark's own array order compares the elements first: {5} would
    come after {1, 2}); a tuple by its attributes' keys in heading order; any other value as
    is."""
    if isinstance(t, IntervalType):
        return F.struct(col["begin"].alias("b"), col["end"].isNull().alias("u"),
                        F.coalesce(col["end"], col["begin"]).alias("e"))
    if isinstance(t, RelationType):
        if not t.heading.attributes:
            return F.size(col)
        keys = F.transform(col, lambda x: F.struct(*[canonical_key(x[n], tt).alias(n)
                                                      for n, tt in t.heading.attributes]))
        return F.struct(F.size(col).alias("n"), F.array_sort(keys).alias("v"))
    if isinstance(t, TupleType):
        return F.struct(*[canonical_key(col[n], tt).alias(n) for n, tt in t.heading.attributes])
    return col


def _eq(names, left_prefix, right_prefix):
    return reduce(lambda a, b: a & b,
                  [F.col(f"`{left_prefix}{n}`").eqNullSafe(F.col(f"`{right_prefix}{n}`"))
                   for n in names], F.lit(True))


def _checked_once(c, key) -> bool:
    """True when this compilation already ran the check ``key`` (a stream read by several
    windows is checked once per evaluation)."""
    done = c.__dict__.setdefault("_window_checks", {})
    if key in done:
        return True
    done[key] = True
    return False


def _check_arrival_order(df, node, parts):
    """SiraValueError when, within a partition, an element arrived before a later timestamp
    (the first such arrival, as the Python engine names it).

    An element is out of order when an element of its partition with an earlier time arrived
    after it: when the largest arrival among the earlier times passes its own. That is a
    running max over the time order, cut into buckets of time per partition (seed 003,
    section 5): within a bucket a window over the strictly earlier times, from the partition's
    earlier buckets their largest arrival (:func:`packing.carried_across` without a partition,
    a window per partition over the buckets' maxima with one). Any arrival type that orders
    serves; no step holds a whole partition."""
    from .packing import _bucketed, _joined_per_group, carried_across
    s = node.spec
    h = node.source.heading
    arrival, ts = _c(s.arrival), _c(node.ts)
    time = _to_time(ts, h.type_of(node.ts))
    rows, several = _bucketed(df.withColumn("__w_t", time), "__w_t")
    earlier = F.max(arrival).over(W.partitionBy(*parts, "__bk").orderBy("__w_t").rangeBetween(
        W.unboundedPreceding, -1))  # times are whole units: -1 is "strictly earlier"
    if several and parts:
        group = _group(node)
        summary = rows.groupBy(*parts, "__bk").agg(F.max(arrival).alias("__ma"))
        before = W.partitionBy(*parts).orderBy("__bk").rowsBetween(W.unboundedPreceding, -1)
        carry = summary.select(*[_c(n).alias(f"__k_{n}") for n, _ in group],
                               F.col("__bk").alias("__kb"), F.max("__ma").over(before)
                               .alias("__c_a"))
        rows = _joined_per_group(rows, carry, group)
    elif several:
        rows = carried_across(rows, {"a": (arrival, "max", "before")})
    if several:
        earlier = F.greatest(earlier, F.col("__c_a"))  # greatest skips nulls
    first = rows.withColumn("__w_bad", earlier > arrival).where(F.col("__w_bad")) \
        .orderBy(arrival.asc()).limit(1).select(
        *[_c(n).alias(f"__o_{n}") for n in s.partition], arrival.alias("__o_a"),
        ts.alias("__o_t")).localCheckpoint()  # read twice: one element
    bad = first.first()
    if bad is None:
        return
    later = df.join(F.broadcast(first), reduce(
        lambda x, y: x & y, [_c(n).eqNullSafe(F.col(f"`__o_{n}`")) for n in s.partition],
        arrival > F.col("__o_a"))).select(F.min_by(ts, time)).first()[0]
    raise SiraValueError(f"WINDOW: the stream is out of order on '{node.ts}': the element "
                         f"with {s.arrival} {bad['__o_a']} ({node.ts} {bad['__o_t']}) arrived "
                         f"before an element with an earlier {node.ts} ({later})",
                         operator="WINDOW", value=bad["__o_a"])


def _element_order(df, node, c):
    """(partition columns, order columns) of a window's elements: by timestamp, then arrival
    (checked to agree with the timestamps, once per stream) or the canonical tuple order."""
    s = node.spec
    parts = [_c(n) for n in s.partition]
    if s.arrival is not None:
        if not _checked_once(c, ("arrival", node.source, node.ts, s.partition, s.arrival)):
            _check_arrival_order(df, node, parts)
        return parts, [_c(node.ts).asc(), _c(s.arrival).asc()]
    h = node.source.heading
    return parts, [_c(node.ts).asc()] + _order_columns(h, h.names)


@translates(Window)
def _window(node, children, c):
    (df,) = children
    h = node.source.heading
    s = node.spec
    ts_t = h.type_of(node.ts)
    parts, order = _element_order(df, node, c)
    w = W.partitionBy(*parts).orderBy(*order)
    df = df.withColumn("__w_t", _to_time(_c(node.ts), ts_t))
    t = F.col("__w_t")
    if s.kind == "range_on":
        df = _range_on(df, node, w, order, c)
    else:
        rng, slide = node.range_units, node.slide_units
        if s.kind == "now":
            begin, end = t, t + 1
        elif s.kind == "range" and s.rows is None:
            if rng is None:
                begin, end = t, F.lit(None).cast("long")
            elif slide is None:
                begin, end = t, t + rng
            else:
                begin, end = _ceil_to(t, slide), _ceil_to(t + rng, slide)
        elif s.slide_rows is not None:
            df = _rows_slide_sequence(df, node, order) if _long_sequence(df) \
                else _rows_slide(df, node, w)
            begin, end = F.col("__w_b"), F.col("__w_e")
        else:  # rows N, optionally with a range and a time slide
            if not _long_sequence(df):
                end = F.lead(t, s.rows).over(w)
            else:  # a long stream: the time N positions on, across buckets
                df = _positioned(df, order, group=_group(node))
                df = _time_at(df, F.col("__w_p") + s.rows, "__w_lead", group=_group(node))
                end = F.col("__w_lead")
            begin = t
            if rng is not None:
                end = F.least(end, t + rng)  # least skips the null of "no N-th later element"
            if slide is not None:
                begin, end = _ceil_to(t, slide), _ceil_to(end, slide)
        df = df.withColumn("__w_b", begin).withColumn("__w_e", end)
    b, e = F.col("__w_b"), F.col("__w_e")
    # the bounds of an element that is ever in the window must fit: checked only under that
    # condition, so that no reordering checks an element that never enters (as on DuckDB)
    visible = b.isNotNull() & (e.isNull() | (b < e))
    df = df.where(F.when(visible, time_fits(b, ts_t, "WINDOW") & time_fits(e, ts_t, "WINDOW"))
                  .otherwise(F.lit(False)))
    during = F.struct(_from_time(b, ts_t).alias("begin"), _from_time(e, ts_t).alias("end"))
    return ordered(df.withColumn(node.during, during), node.heading)


def _long_sequence(df) -> bool:
    """Whether a window's elements may be more than one bucket of
    ``packing.SEQUENCE_BUCKET_ROWS``: then positions are counted across buckets of time, per
    partition (:func:`_positioned`), else ``row_number`` or ``lead`` over each partition (one
    short sequence, or partitions none of which can be long). A long stream is cut into buckets
    whether it has partitions or not: one partition may hold most of it."""
    from . import packing
    return not at_most(df, packing.SEQUENCE_BUCKET_ROWS)


def _group(node) -> list:
    """The window's partition attributes, as pairs of name and sira type."""
    h = node.source.heading
    return [(n, h.type_of(n)) for n in node.spec.partition]


def _positioned(df, order, totals: dict | None = None, group: list = ()):
    """``df`` with ``__w_p``, each element's position (from 1) in the window's order within its
    partition (``group``: pairs of name and sira type; none: one sequence), counted over
    buckets of its time (``running_rows``: a running count per partition and bucket plus that
    partition's earlier buckets' counts, seed 003 section 5), and a running total for each
    ``totals`` entry (name -> column). Stored once (a lazy ``localCheckpoint``):
    :func:`_time_at` reads it twice."""
    out = running_rows(df, ["__w_t", *order[1:]], {"__w_p": F.lit(1), **(totals or {})}, group)
    return out.withColumn("__w_p", F.col("__w_p").cast("long")).localCheckpoint(eager=False)


def _time_at(df, position, name: str, columns=("__w_t",), group: list = ()):
    """``df`` (with ``__w_p``) joined with what ``columns`` hold at the element of the same
    partition (``group``) at ``position`` (a column of positions): ``name`` for ``__w_t``,
    ``name_<column>`` for any other column; null where no element is at that position. An
    equi-join on (partition, position) (hash-partitioned), in place of ``lead`` over each
    partition."""
    names = {col: name if col == "__w_t" else f"{name}_{col}" for col in columns}
    keys = [n for n, _ in group]
    at = df.select(*[_c(k).alias(f"{name}__k_{k}") for k in keys],
                   F.col("__w_p").alias(f"{name}__p"),
                   *[F.col(col).alias(out) for col, out in names.items()])
    on = _eq(keys, "", f"{name}__k_") & (position == F.col(f"{name}__p"))
    return sequence_join(df, at, on, "left").drop(f"{name}__p", *[f"{name}__k_{k}" for k in keys])


def _rows_slide_sequence(df, node, order):
    """rows(N) slide(M) over one sequence: as :func:`_rows_slide`, the times at positions
    ceil(p/M)*M (enter) and ceil((p+N)/M)*M (leave), found by equi-joins on positions."""
    s = node.spec
    n, m = s.rows, s.slide_rows
    group = _group(node)
    df = _positioned(df, order, group=group)
    p = F.col("__w_p")
    enter = F.floor((p + (m - 1)) / m).cast("long") * m
    leave = F.floor((p + (n + m - 1)) / m).cast("long") * m
    return _time_at(_time_at(df, enter, "__w_b", group=group), leave, "__w_e", group=group)


def _rows_slide(df, node, w):
    """rows(N) slide(M): columns __w_b (null: never enters) and __w_e by positions."""
    s = node.spec
    n, m = s.rows, s.slide_rows
    t = F.col("__w_t")
    p = F.row_number().over(w)
    df = df.withColumn("__w_p", p)
    p = F.col("__w_p")
    batch = F.floor((p + (m - 1)) / m).cast("long")  # ceil(p/M)
    leave_batch = F.floor((p + (n + m - 1)) / m).cast("long")  # ceil((p+N)/M)
    if m <= MAX_SLIDE_LEADS:
        enter_off = batch * m - p  # 0 .. M-1
        leave_off = leave_batch * m - p  # N .. N+M-1
        begin = F.coalesce(*[F.when(enter_off == k, t if k == 0 else F.lead(t, k).over(w))
                             for k in range(m)])
        end = F.coalesce(*[F.when(leave_off == n + k, F.lead(t, n + k).over(w))
                           for k in range(m)])
        return df.withColumn("__w_b", begin).withColumn("__w_e", end)
    keys = list(s.partition)
    df = df.withColumn("__w_batch", batch).withColumn("__w_leave", leave_batch)
    batches = df.groupBy(*[_c(k) for k in keys], "__w_batch").agg(
        F.max("__w_t").alias("__last"), F.count(F.lit(1)).alias("__size")) \
        .where(F.col("__size") == m)  # a partial batch has no last position
    enter = batches.select(*[_c(k).alias(f"__be_{k}") for k in keys],
                           F.col("__w_batch").alias("__be_batch"), F.col("__last").alias("__w_b"))
    leave = batches.select(*[_c(k).alias(f"__bl_{k}") for k in keys],
                           F.col("__w_batch").alias("__bl_batch"), F.col("__last").alias("__w_e"))
    joined = sequence_join(df, enter, _eq(keys, "", "__be_")
                           & (F.col("__w_batch") == F.col("__be_batch")))
    joined = sequence_join(joined, leave, _eq(keys, "", "__bl_")
                           & (F.col("__w_leave") == F.col("__bl_batch")), "left")
    return joined.drop(*[c for c in joined.columns if c.startswith(("__be_", "__bl_"))])


def _on_values(node):
    """E as a comparable column, and its threshold E + C."""
    s = node.spec
    h = node.source.heading
    et = h.type_of(s.on)
    e = _c(s.on)
    amount = s.on_amount
    if et == TIMESTAMP:
        if not hasattr(amount, "in_units"):  # the algebra lets it through; Python fails too
            raise SiraTypeError(f"WINDOW: range({amount}) on({s.on}) over a TIMESTAMP needs a "
                                f"duration with a unit (range({amount} second))",
                                operator="WINDOW", expected="a duration with a unit",
                                got=str(amount))
        amount = amount.in_units(None, TIMESTAMP)
        ev = F.unix_micros(e.cast("timestamp"))
        return ev, ev + F.lit(amount).cast("long")
    if et == FLOAT:
        ev = e.cast("double")
        return ev, ev + F.lit(float(amount))
    if isinstance(amount, float):
        # an integer E and a FLOAT C: as in the Python engine, E + C is a double (E rounded to
        # one, then C added), which an integer E' reaches exactly when E' >= its ceiling --
        # both compared as decimal(38,0), never with E' rounded to a double
        from .functions import sira_error
        total = e.cast("double") + F.lit(amount)
        if et == BIGINT:  # Spark's ceil is a LONG: past it, no exact ceiling here
            outside = sira_error("SiraValueError", f"WINDOW: range({amount}) on({s.on}): E + C "
                                 f"is past 2**63, where Spark cannot compare it exactly with "
                                 f"a BIGINT E (give C as an integer)")
        else:  # every LONG E is below a sum past 2**63 and reaches one below -2**63
            outside = F.when(total > 0, F.lit(str(2 ** 63))).otherwise(F.lit(str(-2 ** 63)))
        exact_sum = F.when(F.abs(total) >= F.lit(float(2 ** 63)), outside.cast("decimal(38,0)")) \
            .otherwise(F.ceil(total).cast("decimal(38,0)"))
        return e.cast("decimal(38,0)"), exact_sum
    if et == BIGINT:
        return e, e + F.lit(amount).cast(spark_type(BIGINT))
    ev = e.cast("long")  # E + C exactly: near the end of LONG it passes LONG, reached by no E
    return ev, exact(ev) + F.lit(amount).cast("long")


def _range_on(df, node, w, order, c):
    """range(C) on(E): the element leaves when the first later element has E >= its E + C.
    ``range(C) on(E)`` takes no partition: the elements are one sequence. Positions are a
    ``row_number`` when the plan shows the sequence is short, else counted across buckets of
    time (:func:`_positioned`)."""
    s = node.spec
    ev, thr = _on_values(node)
    if _long_sequence(df):
        df = _positioned(df.withColumn("__w_ev", ev), order)
        prev = _time_at(df, F.col("__w_p") - 1, "__w_prev", ("__w_ev",))
        previous = F.col("__w_prev___w_ev")
    else:
        df = df.withColumn("__w_p", F.row_number().over(w)).withColumn("__w_ev", ev)
        prev, previous = df, F.lag("__w_ev").over(w)
    df = df.withColumn("__w_thr", thr)
    key = ("monotone", node.source, node.ts, s.partition, s.arrival, s.on, s.on_amount)
    monotone = c.__dict__.setdefault("_window_monotone", {})
    if key not in monotone:
        # a float E + C rounding back to E also breaks the monotone search
        violation = (previous > F.col("__w_ev")) | (thr <= F.col("__w_ev"))
        monotone[key] = not prev.withColumn("__w_bad", violation).where(F.col("__w_bad")) \
            .limit(1).count()
    if monotone[key]:
        exits = _next_reaching(df)
    else:
        exits = _first_reaching_by_buckets(df)
    joined = sequence_join(df, exits, F.col("__w_p") == F.col("__x_pos"), "left").drop("__x_pos")
    return joined.withColumn("__w_b", F.col("__w_t")).withColumn("__w_e", F.col("__exit"))


def _next_reaching(df):
    """E non-decreasing along the order: each element's exit (``__x_pos``, ``__exit``) is the
    least time of an element whose E reaches its threshold E + C. A marker row per threshold is
    unioned with the elements; per bucket of value (``packing._bucketed``), ``min`` of time over
    the rows before it in reverse order of (value, element before marker) is the least time of a
    reaching element in its bucket (a growing frame: linear), else the least over the later
    buckets (``carried_across``, seed 003 section 5). E and time both grow with the position,
    so the least time is the first element reaching it."""
    from .packing import _bucketed, carried_across
    data = df.select(F.col("__w_ev").alias("__k"), F.lit(1).alias("__flag"),
                     F.col("__w_p").alias("__pos"), F.col("__w_t").alias("__x"))
    marks = df.select(F.col("__w_thr").alias("__k"), F.lit(0).alias("__flag"),
                      F.col("__w_p").alias("__pos"), F.lit(None).cast("long").alias("__x"))
    rows, several = _bucketed(data.unionByName(marks), "__k")
    follow = W.partitionBy("__bk") \
        .orderBy(F.col("__k").desc(), F.col("__flag").desc(), F.col("__pos").desc()) \
        .rowsBetween(W.unboundedPreceding, -1)
    exit_ = F.min("__x").over(follow)
    if several:
        rows = carried_across(rows, {"x": (F.col("__x"), "min", "after")})
        exit_ = F.coalesce(exit_, F.col("__c_x"))
    return rows.withColumn("__exit", exit_).where(F.col("__flag") == 0) \
        .select(F.col("__pos").alias("__x_pos"), "__exit")


def _first_reaching_by_buckets(df):
    """E in any order: each element's exit (``__x_pos``, ``__exit``) is the time of the first
    later element whose E reaches its threshold, by seed 003's two passes over buckets of
    positions (contiguous runs, one Spark partition's worth each; up to
    ``packing.SEQUENCE_BUCKET_ROWS`` elements are one bucket):

    * first pass, per bucket in order of position (``mapInArrow``): the reference's search
      (thresholds waiting in a sorted list, each element taking those it reaches) finds the
      exits inside the bucket; the thresholds still waiting at its end are handed on;
    * the driver holds the largest E of each bucket (one row each); a threshold handed on goes
      to the first later bucket whose largest E reaches it (binary lifting over the buckets'
      maxima) or nowhere;
    * second pass, per bucket: its running maximum of E is sorted, so the first element
      reaching a threshold handed to it is a binary search.

    O(n log n) time, no step holding more than a bucket and the thresholds handed to it."""
    import bisect

    import pyarrow as pa
    from sortedcontainers import SortedList

    from . import packing
    n = df.agg(F.max("__w_p")).first()[0] or 0
    parts = int(df.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    buckets = 1 if n <= packing.SEQUENCE_BUCKET_ROWS else packing.bucket_count(n, parts)
    size = max(1, -(-n // buckets))  # positions per bucket
    from pyspark.sql import types as T
    from pyspark.sql.pandas.types import to_arrow_schema
    thr_spark = df.schema["__w_thr"].dataType  # wider than E's when E + C may pass LONG
    thr_type = thr_spark.simpleString()
    narrow = df.select(((F.col("__w_p") - 1) / size).cast("long").alias("__bk"), "__w_p",
                       "__w_ev", "__w_thr", "__w_t").localCheckpoint(eager=False)
    arranged = narrow.repartition(buckets, "__bk").sortWithinPartitions("__bk", "__w_p")
    schema = f"__x_pos long, __exit long, __bk long, __thr {thr_type}"
    arrow = to_arrow_schema(T.StructType([T.StructField(n, t) for n, t in (
        ("__x_pos", T.LongType()), ("__exit", T.LongType()), ("__bk", T.LongType()),
        ("__thr", thr_spark))]))

    def first_pass(batches):
        bucket, waiting = None, SortedList(key=lambda item: item[0])
        out = [[], [], [], []]

        def hand_on():
            for thr, pos in waiting:
                out[0].append(pos), out[1].append(None), out[2].append(bucket), \
                    out[3].append(thr)
            waiting.clear()
        for batch in batches:
            bk, pos, ev, thr, t = (batch.column(i).to_pylist() for i in range(5))
            for i in range(batch.num_rows):
                if bk[i] != bucket:
                    hand_on()
                    bucket = bk[i]
                while waiting and waiting[0][0] <= ev[i]:
                    _, j = waiting.pop(0)
                    out[0].append(j), out[1].append(t[i]), out[2].append(bucket), \
                        out[3].append(None)
                waiting.add((thr[i], pos[i]))
            yield _batch(out, arrow)
            out = [[], [], [], []]
        hand_on()
        yield _batch(out, arrow)

    first = arranged.mapInArrow(first_pass, schema).localCheckpoint(eager=False)
    found = first.where(F.col("__exit").isNotNull()).select("__x_pos", "__exit")
    maxima = dict(narrow.groupBy("__bk").agg(F.max("__w_ev")).collect())
    tops = [maxima.get(b) for b in range(buckets)]
    levels = [tops]  # levels[k][b]: the largest E of buckets b .. b + 2^k - 1
    while (1 << len(levels)) <= buckets:
        k, below = len(levels), levels[-1]
        levels.append([_larger(below[b], below[b + (1 << (k - 1))])
                       if b + (1 << (k - 1)) < buckets else below[b] for b in range(buckets)])

    def route(batches):  # each waiting threshold to the first later bucket reaching it
        for batch in batches:
            pos, bk, thr = (batch.column(i).to_pylist() for i in (0, 2, 3))
            dest = []
            for b, x in zip(bk, thr):
                cur = b + 1
                for k in range(len(levels) - 1, -1, -1):
                    if cur < buckets and (levels[k][cur] is None or levels[k][cur] < x):
                        cur += 1 << k
                dest.append(cur if cur < buckets else None)
            yield pa.RecordBatch.from_arrays(
                [pa.array(pos, pa.int64()), pa.array(dest, pa.int64()),
                 batch.column(3)], names=["__x_pos", "__bk", "__thr"])

    waiting = first.where(F.col("__exit").isNull()).mapInArrow(
        route, f"__x_pos long, __bk long, __thr {thr_type}").where(F.col("__bk").isNotNull())
    both = narrow.select("__bk", F.col("__w_p").alias("__x_pos"), F.lit(1).alias("__el"),
                         F.col("__w_ev").alias("__v"), "__w_t") \
        .unionByName(waiting.select("__bk", "__x_pos", F.lit(0).alias("__el"),
                                    F.col("__thr").alias("__v"),
                                    F.lit(None).cast("long").alias("__w_t")))
    both = both.repartition(buckets, "__bk").sortWithinPartitions("__bk", F.col("__el").desc(),
                                                                   "__x_pos")

    def second_pass(batches):  # per bucket: its elements, then the thresholds handed to it
        bucket, running, times = None, [], []
        for batch in batches:
            bk, pos, el, v, t = (batch.column(i).to_pylist() for i in range(5))
            got = [[], []]
            for i in range(batch.num_rows):
                if bk[i] != bucket:
                    bucket, running, times = bk[i], [], []
                if el[i]:
                    running.append(v[i] if not running else _larger(running[-1], v[i]))
                    times.append(t[i])
                else:
                    got[0].append(pos[i])
                    got[1].append(times[bisect.bisect_left(running, v[i])])
            yield pa.RecordBatch.from_arrays([pa.array(got[0], pa.int64()),
                                              pa.array(got[1], pa.int64())],
                                             names=["__x_pos", "__exit"])

    later = both.mapInArrow(second_pass, "__x_pos long, __exit long")
    return found.unionByName(later)


def _larger(a, b):
    return b if a is None or (b is not None and b > a) else a


def _batch(columns, arrow):
    """An Arrow batch of ``columns`` (lists) with the Arrow schema ``arrow``."""
    import pyarrow as pa
    return pa.RecordBatch.from_arrays([pa.array(c, f.type) for c, f in zip(columns, arrow)],
                                      schema=arrow)


def _stream_of(node, children, pick_end: bool):
    (df,) = children
    h = node.source.heading
    packed = pack_dataframe(df, h, [node.during])
    iv = _c(node.during)
    if pick_end:
        packed = packed.where(iv["end"].isNotNull())
    point = h.type_of(node.during).point
    at = (iv["end"] if pick_end else iv["begin"]).cast(spark_type(point))
    return ordered(packed.withColumn(node.at, at), node.heading)


@translates(IStream)
def _istream(node, children, c):
    return _stream_of(node, children, pick_end=False)


@translates(DStream)
def _dstream(node, children, c):
    return _stream_of(node, children, pick_end=True)


@translates(RStream)
def _rstream(node, children, c):
    df, ticks = children
    point = node.source.heading.type_of(node.during).point
    ticks = ticks.select(_c(node.at).cast(spark_type(point)).alias("__tick")).distinct()
    iv = _c(node.during)
    cond = (F.col("__tick") >= iv["begin"]) & (iv["end"].isNull() | (F.col("__tick") < iv["end"]))
    joined = df.join(ticks, cond, "inner").withColumn(node.at, F.col("__tick"))
    result = ordered(joined, node.heading).distinct()
    from .guards import check_rows
    check_rows(c, node, result)  # max_tuples
    return result


# ------------------------------------------------------------------ windowed aggregates, fused
#
# ``summarizebyusing(window(S, ts, [partition(k...)] rows(N)), (k..., during), (x(plus(e)) ...),
# (during))`` -- CQL's ``select k, sum(e), count(*) from S[partition by k rows N] group by k``
# -- compiled without the window relation and without splitting it at every boundary of its
# group (which, with N-row windows, replicates each key's boundaries to each of its rows).
# Per partition, in the window's order, the window relation holds positions j-N+1..j from the
# time of position j up to the next distinct time, where j is the last position at its time:
# the aggregates over positions j-N+1..j (a short frame, or running totals and a sparse table of
# block maxima: ``_summarize_rows``), taken at the last row of each time, and the next time
# (none after the partition's last element: unbounded).
# The compiler then packs the result on ``during`` as for every SUMMARIZEBY. Sums of integers,
# max and min of plain scalars only; anything else goes to the family's own translation
# (sira_spark/aggregation.py).

def _fused_rows_window(node):
    """The Window under a SUMMARIZEBY that :func:`_summarize_rows` compiles, else None."""
    from sira.expressions.evaluate import infer_type
    from sira.expressions.nodes import attributes_used
    from sira.types import BOOLEAN, DATE, INTEGER_TYPES, STRING
    win = node.source
    if not isinstance(win, Window) or node.using != (win.during,):
        return None
    s = win.spec
    if s.kind != "rows" or s.rows is None or s.slide_rows is not None or s.range is not None \
            or s.slide is not None:
        return None
    if set(node.by) != set(s.partition) | {win.during}:
        return None
    stream = win.source.heading
    for _, op, expr in node.specs:
        if win.during in attributes_used(expr):
            return None
        t = infer_type(expr, stream)
        if op == "plus" and t in INTEGER_TYPES:
            continue
        if op in ("max", "min") and (t in INTEGER_TYPES or t in (STRING, DATE, BOOLEAN)):
            continue
        return None
    return win


def _summarize_rows(node, win, c):
    """The SUMMARIZEBY over a ``rows(N)`` window that :func:`_fused_rows_window` accepts. Up to
    ``MAX_FRAME_ROWS`` rows, per partition (or one short sequence), a frame of N rows gives
    every aggregate; a larger N uses running totals and block maxima instead of a frame:

    * a sum over positions p-N+1..p is R(p) - R(p-N) of running totals R (DECIMAL(38), so no
      running total overflows where a window's sum does not);
    * a max (min) is that of two blocks of 2^k positions (2^k <= N < 2^(k+1)), one ending at p
      and one at p - (N - 2^k): levels of block maxima ending at each position, level j + 1
      the larger of level j here and 2^j positions back (a sparse table, k levels);
    * the next element's time ends the interval, and only the last element of each time is kept.

    Values at earlier or later positions are ``lag``/``lead`` over each partition; over a long
    stream (one sequence, or partitions one of which may hold most of it) they are equi-joins
    on (partition, position), positions counted per partition across buckets
    (:func:`_positioned`, seed 003 section 5), so no step holds a whole sequence. O(n log N)."""
    from sira.algebra.aggregation import aggregations
    from sira.expressions.evaluate import infer_type

    from .functions import column, exact_sum
    df = c.compile(win.source)
    h = win.source.heading
    n = win.spec.rows
    ts_t = h.type_of(win.ts)
    parts, order = _element_order(df, win, c)
    aggs = aggregations(node.specs, win.heading, node.operator_name)
    df = df.withColumn("__w_t", _to_time(_c(win.ts), ts_t))
    values = {f"__w_v{i}": column(expr, h, c) for i, (_, _, expr) in enumerate(node.specs)}
    sums = {f"__w_v{i}": v.cast("decimal(38,0)") for i, ((_, op, _), v)
            in enumerate(zip(node.specs, values.values())) if op == "plus"}
    framed = None
    if _long_sequence(df):
        df = _positioned(df, order, sums, _group(win))

        def at(df, offset, name, cols):  # the values ``offset`` positions back (ahead: < 0)
            return _time_at(df, F.col("__w_p") - offset, name, cols, _group(win)) \
                .localCheckpoint(eager=False)
    else:
        w = W.partitionBy(*parts).orderBy(*order)
        if n <= MAX_FRAME_ROWS:  # a short frame is cheaper than the levels
            frame = w.rowsBetween(-(n - 1), 0)
            agg = {"plus": lambda v, t: exact_sum(v, t, frame),
                   "max": lambda v, t: F.max(v).over(frame),
                   "min": lambda v, t: F.min(v).over(frame)}
            framed = {r: agg[op](v, infer_type(e, h)) for r, (_, op, e), v
                      in zip(values, node.specs, values.values())}
            sums, values = {}, {}
        running = w.rowsBetween(W.unboundedPreceding, 0)
        df = df.select("*", *[F.sum(v).over(running).alias(r) for r, v in sums.items()])

        def at(df, offset, name, cols):
            shift = (lambda col: F.lag(col, offset).over(w)) if offset > 0 else \
                (lambda col: F.lead(col, -offset).over(w))
            return df.select("*", *[shift(col).alias(name if col == "__w_t" else f"{name}_{col}")
                                    for col in cols])
    out = {}
    if framed is not None:
        df = df.select("*", *[v.alias(r) for r, v in framed.items()])
        out = {r: F.col(r) for r in framed}
    df = df.select("*", *[v.alias(r) for r, v in values.items() if r not in sums])
    if sums:
        df = at(df, n, "__w_back", tuple(sums))
        out.update({r: F.col(r) - F.coalesce(F.col(f"__w_back_{r}"), F.lit(0)) for r in sums})
    blocks = {r: op for r, (_, op, _) in zip(values, node.specs) if op != "plus"}
    if blocks:
        pick = {"max": F.greatest, "min": F.least}
        k = n.bit_length() - 1
        for j in range(k):  # level j + 1: blocks of 2^(j+1) positions ending at each one
            df = at(df, 1 << j, f"__w_l{j}", tuple(blocks))
            df = df.select(*[pick[blocks[r]](F.col(r), F.col(f"__w_l{j}_{r}")).alias(r)
                             if r in blocks else F.col(r) for r in df.columns
                             if not r.startswith(f"__w_l{j}_")])
        if n > 1 << k:
            df = at(df, n - (1 << k), "__w_rest", tuple(blocks))
        out.update({r: pick[op](F.col(r), F.col(f"__w_rest_{r}")) if n > 1 << k else F.col(r)
                    for r, op in blocks.items()})
    df = at(df, -1, "__w_e", ("__w_t",))
    df = df.where(F.col("__w_e").isNull() | (F.col("__w_e") != F.col("__w_t")))  # last of its time
    during = F.struct(_from_time(F.col("__w_t"), ts_t).alias("begin"),
                      _from_time(F.col("__w_e"), ts_t).alias("end"))
    cols = [out[f"__w_v{i}"].cast(spark_type(agg.result_type)).alias(name)
            for i, ((name, _, _), agg) in enumerate(zip(node.specs, aggs))]
    return ordered(df.select(*[_c(p) for p in win.spec.partition], during.alias(win.during),
                             *cols), node.heading)


def summarize_window(node, c):
    """A DataFrame for the SUMMARIZEBY ``node`` when it is a windowed aggregate with a direct
    plan (running sums over a partitioned ``rows(N)`` window, panes for a HOP), else None."""
    from .windowtables import fused_hop, summarize_hop
    win = _fused_rows_window(node)
    if win is not None:
        return _summarize_rows(node, win, c)
    win = fused_hop(node)
    if win is not None:
        return summarize_hop(node, win, c)
    return None
