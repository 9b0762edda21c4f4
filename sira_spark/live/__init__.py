"""Live queries on Spark Structured Streaming: sira's continuous queries (``sira.streams``) over
unbounded DataFrames, with rowtime bounds as watermarks, results equal to the batch algebra on
the on-time input, and exactly-once restarts from a checkpoint location.

    >>> engine = sira_spark.default_engine()                            # doctest: +SKIP
    >>> orders = engine.spark.readStream.schema(                        # doctest: +SKIP
    ...     "k int, v int, ts long").json("in/")
    >>> q = engine.stream(                                              # doctest: +SKIP
    ...     "changes(summarizebyusing(window(s, ts, range(10)), (k, during),"
    ...     " (total(plus(v))), (during)), at)",
    ...     {"s": LiveSource(orders, rowtime="ts")},
    ...     sink="parquet", sink_options={"path": "out/"}, checkpoint="ck/")
    >>> q.query.processAllAvailable(); q.path, q.late_rows              # doctest: +SKIP
    ('vectorised', 0)

**What runs where.** The query is first compiled by sira's own live runtime
(:func:`sira.streams.runtime.compile_query`), so exactly the expressions it runs are accepted and
the others raise :class:`~sira.streams.NotSupportedLive` naming the operator (``UNSUPPORTED``
lists them). It then takes the first of three paths that fits (``SparkLiveQuery.path``;
``stream(..., path=...)`` asks for one):

* ``native`` (:mod:`~sira_spark.live.native`): Structured Streaming's own operators where their
  semantics are exactly sira's: ``window``/``session_window`` aggregation for SUMMARIZEBY per
  TUMBLE, HOP or SESSION window, ``where``/``select`` and stream-static joins for a stream
  through RESTRICT, EXTEND, PROJECT, RENAME and JOIN, SEMIJOIN, SEMIMINUS with constant
  relations, behind an admission step that rejects late rows as sira does;
* ``vectorised`` (:mod:`~sira_spark.live.vector`): CHANGES, ISTREAM or DSTREAM of an integer
  SUMMARIZEBY over a ``now``, ``range`` or ``range ... slide`` window, per key with numpy in
  ``applyInPandasWithState``;
* ``general`` (:mod:`~sira_spark.live.general`): every other query, each key's part of the live
  runtime's dataflow in ``applyInPandasWithState`` with its operators' state as sira's
  data-only checkpoint JSON.

The keyed paths shuffle the rows by a *key* (:func:`partition_key`): the source attributes
every operator of the query keeps apart (a CQL window's partition, a SUMMARIZEBY's BY
attributes, a join's common attributes...), so the state is distributed; a query that needs one
global order (an unpartitioned ``rows`` window, ``range ... on``) runs on one key. ``MAPPING``
is the operator-by-operator table. All three give the same rows (tests/test_spark_live.py
compares them with each other and with the live runtime).

**Bounds as watermarks.** A source's rowtime (a LONG or INT column, from 0 to 4e12: epoch
milliseconds fit) is two milliseconds of event time: Spark's watermark ``W`` is ``2b - 1`` where
``b`` is the stream's bound (its latest rowtime), so a row is late exactly when sira would
reject it (``t < b``), and a result that becomes final when the bound passes ``t`` leaves in the
micro-batch where the watermark passes ``2t`` (see :mod:`sira_spark.live.common`). A source may
carry punctuation (heartbeat) rows: ``LiveSource(df, rowtime, punctuation="is_bound")`` names a
boolean column; rows where it is true only advance the bound. Spark keeps one watermark per
query, the earliest of its sources' (``spark.sql.streaming.multipleWatermarkPolicy=min``), so in
a query reading several streams a row is judged against that bound.

**Sources are read as sira reads a DataFrame** (``sira_spark.convert``): every column type a
batch relvar may have (intervals, tuples, relations, AVERAGE, BIGINT, TIMESTAMP from year 1 to
9999, a ``timestamp`` instant as its UTC date and time), -0.0 as 0.0, an empty interval as the
one empty interval; a NULL or NaN fails the query with NullValue naming the stream and the
attribute, an interval whose end is before its begin with DataFormatError. The handlers'
pandas frames carry TIMESTAMPs as microseconds (``common.pandas_type``): pandas' nanoseconds
hold the years 1677 to 2262 only.

**Late rows** are never dropped silently: they are left out of every result (as sira's runtime
rejects them), counted in the observed metric ``sira_live.late_rows`` (and
:attr:`SparkLiveQuery.late_rows`) and, with ``late_rows_sink=``, written out: a callable
``(late_df, batch_id)`` gets each micro-batch's late rows with the columns ``stream``,
``rowtime``, ``bound`` (the bound they were judged against) and ``row`` (the row as a JSON
object). Spark itself drops only rows more than ``2**39`` units late (counted in its
``numRowsDroppedByWatermark``, which ``late_rows`` includes, but not written out).

**Restarts.** Spark's checkpoint (``checkpoint=``) holds the source offsets and the state
store; with a replayable source (files, Kafka) and the file sink, or ``foreachBatch`` writing by
batch id, stopping a query and starting the same one again continues with no lost and no
duplicated output.

**On a cluster.** Ship sira to the executors and submit the driver script::

    spark-submit --master spark://host:7077 --py-files sira.zip \\
        --conf spark.sql.shuffle.partitions=64 my_live_query.py

where ``my_live_query.py`` builds ``SparkEngine(spark=SparkSession.builder.getOrCreate())``,
reads its sources (for Kafka: ``spark.readStream.format("kafka").option(
"kafka.bootstrap.servers", ...).option("subscribe", "orders").load()`` and ``from_json`` of the
value into columns, with the rowtime as a LONG column), calls ``engine.stream(...)`` with a
checkpoint on a shared file system (HDFS, S3) and waits with
``query.await_termination()`` (a failed query raises its sira error).
"""

from __future__ import annotations

from sira.errors import SiraError

from .common import LATE_ROW, METRIC, LiveSource, marker
from .plan import PATHS, LivePlan, compile_live, partition_key

#: operators that cannot run continuously (on sira's live runtime, so on Spark): the name the
#: NotSupportedLive error gives, an example over streams ``s`` and ``r`` ({k, v: INT, ts, seq:
#: LONG}), and why. tests/test_spark_live.py checks every example raises naming the operator.
UNSUPPORTED = {
    "RSTREAM": ("rstream(window(s, ts, range(5)), at, relation(heading(at(long)) "
                "body(tuple(at(long(1))))))", "needs an explicit, finite set of instants"),
    "GROUP": ("group(s, (vs(v)))", "nests a whole relation, which a stream never is"),
    "AGGREGATE": ("aggregate(s, (n(plus(1))))", "aggregates a whole relation; summarize per "
                  "window instead"),
    "SUMMARIZEBY": ("summarizeby(s, (k), (n(plus(1))))", "a summary of a stream is final only "
                    "at the end of input: summarize per window, or pointwise over a CQL window"),
    "PACK": ("pack(window(s, ts, range(5)), (during))", "needs the whole relation"),
    "TCLOSE": ("tclose(project(s, (k, v)), (k, v))", "needs the whole relation"),
    "JOIN": ("join(s, r)", "a stream joins constant relations only: window the streams first"),
    "MINUS": ("minus(s, r)", "of streams needs the whole relation: window the streams first"),
    "WINDOW": ("window(s, v, range(5))", "a live window is on the rowtime its stream travels "
               "with"),
}

#: sira operator -> what runs on Structured Streaming, and on which path (the README's table)
MAPPING = {
    "stream (a source)": "a streaming DataFrame; its rowtime t -> event time 2t ms, "
                         "withWatermark",
    "rowtime bound b / punctuation": "the watermark W = 2b - 1 ms (the earliest of the "
                                     "sources'); heartbeat rows move it, then leave",
    "late row (t < b)": "left out before any operator sees it (by the keyed handler, or the "
                        "admission step of the native path), counted in the observed metric "
                        "sira_live.late_rows, written to late_rows_sink",
    "RESTRICT, EXTEND, PROJECT, RENAME of a stream": "where / select, then dropDuplicates with "
                                                     "the event time (native)",
    "JOIN, SEMIJOIN, SEMIMINUS of a stream with a constant relation": "stream-static join: "
                                                                      "inner, left_semi, "
                                                                      "left_anti against the "
                                                                      "relation broadcast "
                                                                      "(native)",
    "SUMMARIZEBY per TUMBLE or HOP window": "groupBy(window(t, 2T ms, 2L ms)) in append mode "
                                            "(native)",
    "SUMMARIZEBY per SESSION window (BY = its partition)": "groupBy(session_window(t, 2G+1 "
                                                           "ms)) in append mode (native)",
    "CHANGES / ISTREAM / DSTREAM of an integer SUMMARIZEBY over now, range, range ... slide":
        "applyInPandasWithState keyed by the group, numpy per key (vectorised)",
    "everything else the live runtime runs (UNION of streams, rows and partitioned windows, "
    "CUMULATE, joins of windows...)": "applyInPandasWithState keyed by partition_key, the "
                                       "live runtime's operators per key (general)",
    "SPL windows (splwindow)": "applyInPandasWithState keyed by the window's partition "
                               "attributes, the live runtime's SPL operator per key; one key "
                               "when partitions are coupled: a time tick, a partition eviction "
                               "policy, a timeInterval watermark in arrival order (general)",
    "WINDOWBY": "applyInPandasWithState keyed by its partition(...) attributes, the live "
                "runtime's WindowBy operator per key (general)",
}


class SparkLiveQuery:
    """A running live query: ``query`` is Spark's ``StreamingQuery``; ``node`` the sira tree;
    ``key`` the attributes its state is partitioned by; ``path`` the path it takes
    (``native``, ``vectorised`` or ``general``)."""

    def __init__(self, query, node, key, path="general"):
        self.query = query
        self.node = node
        self.key = key
        self.path = path

    @property
    def late_rows(self) -> int:
        """Late rows left out by this run so far (over Spark's recent progress history, the
        last ``spark.sql.streaming.numRecentProgressUpdates`` micro-batches)."""
        return sum(late_rows_of(progress) for progress in self.query.recentProgress)

    def await_termination(self, timeout: float | None = None) -> bool | None:
        """Wait until the query stops (``timeout`` seconds at most: then whether it stopped), as
        ``query.awaitTermination`` does; a query that failed raises the sira error it failed
        with (a NULL in a row: :class:`~sira.errors.NullValue` naming the stream and the
        attribute; a rowtime out of range: :class:`~sira.errors.SiraValueError`), Spark's
        ``StreamingQueryException`` as its cause. Example: ``q.await_termination()`` after
        ``engine.stream(..., trigger={"availableNow": True})`` returns once the input is
        consumed (the README's example)."""
        from pyspark.errors import StreamingQueryException

        from ..compiler import translate_failure
        try:
            return self.query.awaitTermination(timeout)
        except StreamingQueryException as err:
            raise translate_failure(err, self.node) from err

    def stop(self) -> None:
        self.query.stop()

    def __repr__(self):
        return f"<SparkLiveQuery {self.node!r} key={list(self.key)} path={self.path}>"


def late_rows_of(progress) -> int:
    """The late rows one micro-batch left out, from its ``StreamingQueryProgress``: those sira's
    handlers left out and the (very late) ones Spark's watermark dropped before them."""
    observed = (progress.observedMetrics or {}).get(METRIC)
    total = int(observed["late_rows"] or 0) if observed is not None else 0
    return total + sum(int(op.numRowsDroppedByWatermark or 0)
                       for op in progress.stateOperators or ())


# ------------------------------------------------------------------------------ entry point

def stream(engine, expr, sources: dict, sink=None, checkpoint: str | None = None,
           trigger: dict | None = None, sink_options: dict | None = None,
           relvars: dict | None = None, query_name: str | None = None, path: str = "auto",
           late_rows_sink=None) -> SparkLiveQuery:
    """Start a live query on Spark Structured Streaming.

    Args:
        engine: a :class:`~sira_spark.SparkEngine`.
        expr: the query, as text or a tree, over the streams named in ``sources`` and the
            constant relations in ``relvars``.
        sources: stream name -> :class:`LiveSource` (or a streaming DataFrame whose rowtime
            column is ``ts``).
        sink: a callable ``(batch_df, batch_id)`` (``foreachBatch``: write by batch id to be
            idempotent), or a format name (``"parquet"``, ``"json"``, ``"memory"``...) with
            ``sink_options`` (``path``, ``queryName``...).
        checkpoint: the checkpoint location (required: it makes restarts exactly-once).
        trigger: ``DataStreamWriter.trigger`` arguments, e.g. ``{"availableNow": True}``.
        relvars: constant relations (name -> Relation) the query reads.
        path: ``"auto"`` (the fastest that fits) or ``"native"``, ``"vectorised"``,
            ``"general"`` (see the module docstring).
        late_rows_sink: a callable ``(late_df, batch_id)`` receiving each micro-batch's late
            rows (columns ``stream``, ``rowtime``, ``bound``, ``row``); ``sink`` must then be a
            callable too (both are written by one ``foreachBatch``).

    Returns:
        a :class:`SparkLiveQuery` (already started).

    Raises:
        NotSupportedLive: the query has a part that cannot run continuously.
        UnknownRelvar: a name is neither a source nor a relvar.
        SiraTypeError: a rowtime column is not LONG or INT, or two sources disagree on a type.
        SiraValueError: ``path`` names a path the query cannot take.
        SiraError: no checkpoint, or a sink that is neither a callable nor a format name.
    """
    if checkpoint is None:
        raise SiraError("a live query on Spark needs checkpoint=<location> (it makes "
                        "restarts exactly-once)")
    if late_rows_sink is not None and not (callable(late_rows_sink) and callable(sink)):
        raise SiraError("late_rows_sink and sink must both be callables (batch_df, batch_id): "
                        "they are written by one foreachBatch")
    if not callable(sink) and not isinstance(sink, str):
        raise SiraError(f"sink must be a callable (batch_df, batch_id) or a Spark sink format "
                        f"name (got {sink!r})")
    from sira.engine.guards import check_relvar_names
    check_relvar_names(list(sources) + list(relvars or {}))  # a stream and a relation too
    plan = compile_live(engine, expr, sources, relvars, path=path,
                        keep_late_rows=late_rows_sink is not None)
    output = plan.output if plan.observed else _observed(plan.output, plan.node.heading)
    if late_rows_sink is None:
        output = _results(output, plan.node.heading, False)
    writer = output.writeStream.outputMode("append").option("checkpointLocation",
                                                            str(checkpoint))
    if query_name is not None:
        writer = writer.queryName(query_name)
    if trigger:
        writer = writer.trigger(**trigger)
    if late_rows_sink is not None:
        writer = writer.foreachBatch(_split(plan.node.heading, sink, late_rows_sink))
    elif callable(sink):
        writer = writer.foreachBatch(sink)
    else:
        writer = writer.format(sink).options(**{k: str(v) for k, v in
                                                (sink_options or {}).items()})
    return SparkLiveQuery(writer.start(), plan.node, plan.key, plan.path)


def _observed(df, heading):
    from .plan import observed
    return observed(df, heading)


def _results(df, heading, keep_late_rows):
    """The result rows of a plan's output, in the query's columns."""
    from pyspark.sql import functions as F
    df = df.where(F.col(f"`{marker(heading)}`").isNotNull())
    return df.select(*[F.col(f"`{n}`") for n in heading.names])


def late_rows_table(df):
    """The late rows a plan's output carries, as the late rows table: ``stream``, ``rowtime``,
    ``bound``, ``row`` (JSON)."""
    from pyspark.sql import functions as F
    detail = df.where(F.col(LATE_ROW).isNotNull())
    return detail.select(
        F.get_json_object(LATE_ROW, "$.stream").alias("stream"),
        F.get_json_object(LATE_ROW, "$.rowtime").cast("long").alias("rowtime"),
        F.get_json_object(LATE_ROW, "$.bound").cast("long").alias("bound"),
        F.get_json_object(LATE_ROW, "$.row").alias("row"))


def _split(heading, sink, late_sink):
    """The ``foreachBatch`` function writing a micro-batch's results to ``sink`` and its late
    rows to ``late_sink``."""
    def write(batch, batch_id):
        batch.persist()
        try:
            sink(_results(batch, heading, True), batch_id)
            late_sink(late_rows_table(batch), batch_id)
        finally:
            batch.unpersist()
    return write


def _engine_stream(self, expr, sources: dict, sink=None, checkpoint: str | None = None,
                   trigger: dict | None = None, sink_options: dict | None = None,
                   relvars: dict | None = None, query_name: str | None = None,
                   path: str = "auto", late_rows_sink=None):
    """Start a live query on Structured Streaming: ``engine.stream(text, {"s": LiveSource(df,
    "ts")}, sink="parquet", sink_options={"path": out}, checkpoint=ck)`` (see
    :func:`sira_spark.live.stream` for the arguments; returns a :class:`SparkLiveQuery`)."""
    return stream(self, expr, sources, sink=sink, checkpoint=checkpoint, trigger=trigger,
                  sink_options=sink_options, relvars=relvars, query_name=query_name, path=path,
                  late_rows_sink=late_rows_sink)


def _install() -> None:
    """``SparkEngine.stream``: the engine's entry point for live queries."""
    from ..session import SparkEngine
    SparkEngine.stream = _engine_stream


_install()

__all__ = ["LivePlan", "LiveSource", "MAPPING", "PATHS", "SparkLiveQuery", "UNSUPPORTED",
           "compile_live", "late_rows_of", "partition_key", "stream"]
