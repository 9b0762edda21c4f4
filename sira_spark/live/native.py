"""The native path: Structured Streaming's own operators where their semantics are exactly sira's.

* **Window-table aggregates**: ``summarizeby(tumble|hop(S, ts, ...), (window_start, window_end,
  a...), aggs)`` becomes ``groupBy(window(...), a...)``; ``summarizeby(session(S, ts, gap(G)
  partition(a...)), (window_start, window_end, a...), aggs)`` becomes ``groupBy(session_window
  (...), a...)``. The aggregates Spark folds exactly as sira does: integer sums (checked
  against INT's or LONG's range, as sira's IntOverflow), max and min of INT, LONG or STRING,
  and and or.
* **Streams through row operators and joins with constant relations**: RESTRICT, EXTEND,
  PROJECT, RENAME as ``where``/``select`` (scalar expressions as the batch compiler translates
  them), JOIN, SEMIJOIN, SEMIMINUS with a constant relation as a stream-static join
  (``inner``, ``left_semi``, ``left_anti``) against the relation broadcast.

What makes them exact:

* **Admission.** Spark keeps a row its watermark has passed when the row's window is still open
  (and its late-row filter uses the previous micro-batch's watermark), where sira rejects every
  row earlier than the bound. So the rows first go through an admission step, an
  ``applyInPandasWithState`` keyed by a hash of the row and keeping no state, that drops and
  counts the rows earlier than the bound, exactly as the other paths do. Its output gets the
  watermark again (``2t`` ms, delay 1 ms: the same ``2b - 1``). Spark allows one
  ``applyInPandasWithState`` per query, so this path cannot also hand the late rows on: a
  query with ``late_rows_sink`` takes the vectorised or the general path.
* **Set semantics.** A stream is a set of rows: ``dropDuplicates`` on the rows and their event
  time (state kept until the bound passes the instant) makes a row repeated in a later
  micro-batch one element, before an aggregate and on a stream's output.
* **Instants.** A tumbling or hopping window ``[s, e)`` is ``[2s-1, 2e-1)`` ms of event time
  (windows start ``2·offset - 1`` ms after the epoch), so Spark closes it when ``W = 2b - 1``
  reaches ``2e - 1``: when the bound reaches ``e``, as sira does. A session is a run of rows at
  most ``G`` apart, closed once the bound passes ``last + G``: with each row's session window
  ``[2t, 2t + 2G + 1)`` ms, a row at exactly ``last + G`` (``2t = 2·last + 2G``) overlaps and
  joins the session as sira's PACK of ``[t, t+G)`` merges adjacent intervals, one at
  ``last + G + 1`` does not, and Spark closes it when ``2b - 1 >= 2(last + G) + 1``.

Anything else takes the vectorised or the general path.
"""

from __future__ import annotations

import attrs
import numpy as np

from sira.algebra.aggregation import SummarizeBy, aggregations
from sira.algebra.basic import Extend, Project, RelvarRef, Rename, Restrict
from sira.algebra.joins import Join, SemiJoin, SemiMinus
from sira.algebra.windows import WINDOW_ATTRIBUTES, WindowTable
from sira.expressions.nodes import AttrRef, Literal
from sira.intervals import IntervalType
from sira.types import BOOLEAN, INT, LONG, STRING, RelationType, TupleType

from .common import (HEARTBEAT, METRIC, ReportingHandler, bound_of, check_no_nulls,
                     from_pandas_columns, late_frames, pandas_type, to_pandas_columns)

#: the event-time column the admitted rows get (2t ms, watermark delay 1 ms)
ADMITTED_TIME = "__sira_t"
#: the window column of a native aggregation
WINDOW = "__sira_window"
#: the admission step's key: a hash of the row
BUCKET = "__sira_bucket"
_MAX_ORDERED = (INT, LONG, STRING)


# ------------------------------------------------------------------------------ shapes

@attrs.frozen
class WindowAggregate:
    """``summarizeby(tumble|hop|session(S, ...), by, aggs)`` (see the module docstring)."""

    stream: str
    table: object  # the WindowTable node
    by: tuple  # the BY attributes that are not window attributes
    summary: object  # the SummarizeBy node


@attrs.frozen
class RowChain:
    """A stream through row operators and joins with constant relations."""

    stream: str
    node: object


def native_shape(node, shapes: dict, relations: dict):
    """The native plan's shape for ``node`` (:class:`WindowAggregate` or :class:`RowChain`),
    or None when Spark's own operators cannot give exactly sira's rows."""
    streams = _streams_read(node, shapes)
    if len(streams) != 1:
        return None
    (stream,) = streams
    if isinstance(node, SummarizeBy):
        return _window_aggregate(node, stream, shapes)
    if _row_chain(node, stream, relations):
        return RowChain(stream, node)
    return None


def _streams_read(node, shapes) -> set:
    if isinstance(node, RelvarRef):
        return {node.name} & set(shapes)
    out = set()
    for child in node.children:
        out |= _streams_read(child, shapes)
    return out


def _window_aggregate(node, stream, shapes):
    table = node.source
    if not isinstance(table, WindowTable) or table.kind == "cumulate" or node.using is not None:
        return None
    if not isinstance(table.source, RelvarRef) or table.ts != shapes[stream].rowtime:
        return None
    if not {"window_start", "window_end"} <= set(node.by):
        return None
    by = tuple(n for n in node.by if n not in WINDOW_ATTRIBUTES)
    if table.kind == "session" and set(by) != set(table.partition):
        return None  # Spark's sessions are per group: the group must be the partition
    if any(not _native_aggregate(op, expr, agg) for (_, op, expr), agg in
           zip(node.specs, aggregations(node.specs, table.heading, "SUMMARIZEBY"))):
        return None
    if any(set(WINDOW_ATTRIBUTES) & _attributes(expr) for _, _, expr in node.specs):
        return None
    return WindowAggregate(stream, table, by, node)


def _native_aggregate(op, expr, agg) -> bool:
    """Whether Spark folds this aggregate exactly as sira does."""
    if agg.name == "plus":
        return agg.result_type in (INT, LONG) and (
            isinstance(expr, AttrRef) or (isinstance(expr, Literal) and type(expr.value) is int))
    if not isinstance(expr, AttrRef):
        return False
    if agg.name in ("max", "min"):
        return agg.result_type in _MAX_ORDERED
    return agg.name in ("and", "or") and agg.result_type == BOOLEAN


def _attributes(expr) -> set:
    from sira.expressions.nodes import attributes_used
    return attributes_used(expr)


def _row_chain(node, stream, relations) -> bool:
    """Whether ``node`` is the stream through RESTRICT/EXTEND/PROJECT/RENAME and joins with
    constant relations whose common attributes are scalars."""
    if isinstance(node, RelvarRef):
        return node.name == stream
    if isinstance(node, (Restrict, Extend, Project, Rename)):
        return _row_chain(node.source, stream, relations)
    if isinstance(node, (Join, SemiJoin, SemiMinus)) and len(node.children) == 2:
        left, right = node.children
        if isinstance(node, Join) and stream not in _names(left):
            left, right = right, left
        if stream in _names(right) or not _row_chain(left, stream, relations):
            return False
        common = set(left.heading.names) & set(right.heading.names)
        return not any(isinstance(right.heading.type_of(n), (IntervalType, TupleType,
                                                              RelationType)) for n in common)
    return False


def _names(node) -> set:
    if isinstance(node, RelvarRef):
        return {node.name}
    out = set()
    for child in node.children:
        out |= _names(child)
    return out


# ------------------------------------------------------------------------------ admission

class Admission(ReportingHandler):
    """The admission step's handler (``applyInPandasWithState`` keyed by a hash of the row,
    keeping no state): rows and heartbeats the bound has not passed go on; late rows are
    counted (one marker row each, its rowtime NULL); heartbeats the bound has passed are stale
    and dropped."""

    def __init__(self, stream: str, heading, rowtime: str):
        self.stream = stream
        self.names = heading.names
        self.rowtime = rowtime

    def handle(self, key, frames, state):
        bound = bound_of(state.getCurrentWatermarkMs())
        late = 0
        columns = list(self.names) + [HEARTBEAT]
        for pdf in frames:
            if not len(pdf):
                continue
            beat = pdf[HEARTBEAT].fillna(False).to_numpy(dtype=bool)
            check_no_nulls(pdf[~beat], self.names, self.stream)
            on_time = pdf[self.rowtime].to_numpy() >= bound if bound is not None else \
                np.ones(len(pdf), dtype=bool)
            late += int((~on_time & ~beat).sum())
            yield pdf.loc[on_time, columns]
        yield from late_frames(columns, late)


def admission_schema(heading):
    from pyspark.sql import types as T

    fields = [T.StructField(n, pandas_type(t), True) for n, t in heading.attributes]
    fields.append(T.StructField(HEARTBEAT, T.BooleanType(), True))
    return T.StructType(fields)


def admitted(frame, stream: str, heading, rowtime: str):
    """The admission step over one source's frame (its columns, the watermarked event time and
    the heartbeat flag): its output, the late rows counted in the observed metric (a late
    row's marker has a NULL rowtime)."""
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout
    partitions = int(frame.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    bucket = F.pmod(F.xxhash64(*[F.col(f"`{n}`") for n in heading.names]), F.lit(partitions))
    out = to_pandas_columns(frame.withColumn(BUCKET, bucket), heading).groupBy(BUCKET) \
        .applyInPandasWithState(Admission(stream, heading, rowtime), admission_schema(heading),
                                "unused int", "append", GroupStateTimeout.NoTimeout)
    out = from_pandas_columns(out, heading)
    marked = F.col(f"`{rowtime}`").isNull()
    return out.observe(METRIC, F.coalesce(F.sum(F.when(marked, 1).otherwise(0)), F.lit(0))
                       .alias("late_rows"))


def on_time_rows(admitted_df, heading, rowtime: str):
    """The admitted rows with the watermark again (on ``2t`` ms, delay 1 ms: ``W = 2b - 1``),
    heartbeats dropped once they have moved it, repeats dropped (set semantics)."""
    from pyspark.sql import functions as F
    df = admitted_df.where(F.col(f"`{rowtime}`").isNotNull())
    df = df.withColumn(ADMITTED_TIME, F.timestamp_millis(F.col(f"`{rowtime}`").cast("long") * 2))
    df = df.withWatermark(ADMITTED_TIME, "1 millisecond")
    # one predicate reading the event time, so that Spark does not push it below the watermark
    # (which would then never see the heartbeats); rowtimes are >= 0
    beat = F.coalesce(F.col(HEARTBEAT), F.lit(False))
    df = df.where(~beat | (F.col(ADMITTED_TIME) < F.timestamp_millis(F.lit(0))))
    return df.select(*[F.col(f"`{n}`") for n in heading.names], ADMITTED_TIME) \
        .dropDuplicates(list(heading.names) + [ADMITTED_TIME])


# ------------------------------------------------------------------------------ plans

def window_aggregate_plan(rows, shape: WindowAggregate):
    """The aggregate of each window, from the admitted rows, in the query's columns."""
    from pyspark.sql import functions as F
    table, summary = shape.table, shape.summary
    aggs = aggregations(summary.specs, table.heading, "SUMMARIZEBY")
    grouped = rows.groupBy(_window_column(table).alias(WINDOW),
                           *[F.col(f"`{n}`") for n in shape.by])
    folded = grouped.agg(*[_aggregate(name, expr, agg).alias(name)
                           for (name, _, expr), agg in zip(summary.specs, aggs)])
    start, end = _window_bounds(table)
    t = table.ts_type
    values = {"window_start": _fit(start, t, "window_start"),
              "window_end": _fit(end, t, "window_end"),
              "window_time": (_fit(end, t, "window_end") - 1).cast(_spark(t))}
    values.update({n: F.col(f"`{n}`") for n in shape.by})
    values.update({name: _checked_sum(F.col(f"`{name}`"), agg, name)
                   for (name, _, _), agg in zip(summary.specs, aggs)})
    return folded.select(*[values[n].alias(n) for n in summary.heading.names])


def _window_column(table):
    """Spark's window of each admitted row (see the module docstring for the encoding)."""
    from pyspark.sql import functions as F
    time = F.col(ADMITTED_TIME)
    if table.kind == "session":
        return F.session_window(time, f"{2 * table.units('size') + 1} milliseconds")
    size = table.units("size")
    slide = table.units("slide") or size
    start = (2 * table.units("offset") - 1) % (2 * slide)
    return F.window(time, f"{2 * size} milliseconds", f"{2 * slide} milliseconds",
                    f"{start} milliseconds")


def _window_bounds(table):
    """``window_start`` and ``window_end`` (LONG columns) of the window column."""
    from pyspark.sql import functions as F
    start = F.unix_millis(F.col(f"{WINDOW}.start"))
    end = F.unix_millis(F.col(f"{WINDOW}.end"))
    if table.kind == "session":
        return F.shiftright(start, 1), F.shiftright(end - 1, 1)
    return F.shiftright(start + 1, 1), F.shiftright(end + 1, 1)


def _spark(t):
    from ..types import spark_type
    return spark_type(t)


def _fit(value, t, name):
    """A LONG column as sira type ``t`` (INT or LONG), failing the query when it does not fit
    (sira's IntOverflow)."""
    from pyspark.sql import functions as F

    from ..functions import sira_error
    if t != INT:
        return value.cast(_spark(t))
    low, high = -(2 ** 31), 2 ** 31 - 1
    return F.when((value < low) | (value > high),
                  sira_error("IntOverflow", f"{name} does not fit INT")).otherwise(value) \
        .cast(_spark(t))


def _aggregate(name, expr, agg):
    """The Spark aggregate computing one of sira's (sums widened: checked afterwards)."""
    from pyspark.sql import functions as F
    if agg.name == "plus":
        wide = "long" if agg.result_type == INT else "decimal(38,0)"
        value = F.col(f"`{expr.name}`") if isinstance(expr, AttrRef) else F.lit(expr.value)
        return F.sum(value.cast(wide))
    column = F.col(f"`{expr.name}`")
    return {"max": F.max, "min": F.min, "and": F.bool_and, "or": F.bool_or}[agg.name](column)


def _checked_sum(column, agg, name):
    """A widened sum back to its type, IntOverflow when it does not fit; others as they are."""
    from pyspark.sql import functions as F

    from ..functions import sira_error
    if agg.name != "plus":
        return column.cast(_spark(agg.result_type))
    bits = agg.result_type.bits
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return F.when((column < F.lit(low)) | (column > F.lit(high)),
                  sira_error("IntOverflow", f"plus: the sum '{name}' does not fit "
                             f"{agg.result_type}")).otherwise(column) \
        .cast(_spark(agg.result_type))


def row_chain_plan(rows, shape: RowChain, relations: dict, spark):
    """The stream through its row operators and joins, from the admitted rows (their event
    time carried along), repeats dropped, in the query's columns."""
    from pyspark.sql import functions as F
    df = _rows(rows, shape.node, shape.stream, relations, spark)
    names = shape.node.heading.names
    return df.dropDuplicates(list(names) + [ADMITTED_TIME]) \
        .select(*[F.col(f"`{n}`") for n in names])


def _rows(rows, node, stream, relations, spark):
    """``node``'s rows: the DataFrame of its attributes plus the event time."""
    from pyspark.sql import functions as F

    from ..basic import extended, restricted
    if isinstance(node, RelvarRef):
        return rows
    if isinstance(node, (Join, SemiJoin, SemiMinus)):
        return _join(rows, node, stream, relations, spark)
    df = _rows(rows, node.source, stream, relations, spark)
    h = node.source.heading
    keep = F.col(ADMITTED_TIME)
    if isinstance(node, Restrict):  # fenced where they may fail, as in batch plans
        return restricted(df, node.condition, h, None)
    if isinstance(node, Extend):
        return extended(df, node, None)
    if isinstance(node, Project):
        return df.select(*[F.col(f"`{n}`") for n in node.names], keep)
    mapping = dict(node.pairs)
    return df.select(*[F.col(f"`{n}`").alias(mapping.get(n, n)) for n in h.names], keep)


def _join(rows, node, stream, relations, spark):
    from pyspark.sql import functions as F
    from sira.streams.runtime import _constant

    from ..convert import to_dataframe
    left, right = node.children
    if isinstance(node, Join) and stream not in _names(left):
        left, right = right, left
    df = _rows(rows, left, stream, relations, spark)
    constant = to_dataframe(spark, _constant(right, relations))
    common = [n for n in left.heading.names if n in right.heading]
    how = {Join: "inner", SemiJoin: "left_semi", SemiMinus: "left_anti"}[type(node)]
    if not common:
        if how == "inner":
            return df.crossJoin(F.broadcast(constant))
        has_rows = bool(constant.take(1))  # a constant: with no common attribute, all or none
        return df if has_rows == (how == "left_semi") else df.where(F.lit(False))
    return df.join(F.broadcast(constant), on=common, how=how)


__all__ = ["Admission", "RowChain", "WindowAggregate", "admitted",
           "native_shape", "on_time_rows", "row_chain_plan", "window_aggregate_plan"]
