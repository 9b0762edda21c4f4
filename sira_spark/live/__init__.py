"""Live queries on Spark Structured Streaming: sira's continuous queries (``sira.streams``) over
unbounded DataFrames, with rowtime bounds as watermarks, results equal to the batch algebra on
the on-time input, and exactly-once restarts from a checkpoint location.

    >>> engine = sira_spark.default_engine()                            # doctest: +SKIP
    >>> orders = engine.spark.readStream.schema("k int, v int, ts long").json("in/")
    >>> q = engine.stream(                                              # doctest: +SKIP
    ...     "changes(summarizebyusing(window(s, ts, range(10)), (k, during),"
    ...     " (total(plus(v))), (during)), at)",
    ...     {"s": LiveSource(orders, rowtime="ts")},
    ...     sink="parquet", sink_options={"path": "out/"}, checkpoint="ck/")
    >>> q.query.processAllAvailable(); q.late_rows                      # doctest: +SKIP
    0

**What runs where.** The query is first compiled by sira's own live runtime
(:func:`sira.streams.runtime.compile_query`), so exactly the expressions it runs are accepted and
the others raise :class:`~sira.streams.NotSupportedLive` naming the operator (``UNSUPPORTED``
lists them). On Spark, the rows of every source are shuffled by a *key* and each key's part of
the dataflow runs in ``applyInPandasWithState`` with an event-time timeout: the same operators
(windows, running aggregates, ISTREAM/DSTREAM/CHANGES, joins with constant relations, window
tables) on that key's rows, their state kept in Spark's state store as sira's data-only
checkpoint JSON. The key (:func:`partition_key`) is the set of source attributes every operator
of the query keeps apart: a CQL window's partition, a SUMMARIZEBY's BY attributes, a join's
common attributes... so the state is distributed; a query that needs one global order (an
unpartitioned ``rows`` window, ``range ... on``) runs on one key. See ``MAPPING`` for the
operator-by-operator table.

**Bounds as watermarks.** A source's rowtime (a LONG or INT column, from 1 to 4.6e15: epoch
milliseconds or microseconds fit) is encoded in a hidden event-time column at two milliseconds
per unit, with a watermark delay of one millisecond. Spark's watermark ``W`` is then
``2b - 1`` where ``b`` is the stream's bound (its latest rowtime): a row is late exactly when
sira would reject it (``t < b``), and a result that becomes final when the bound passes ``t``
leaves in the micro-batch where the watermark passes ``2t``. A source may carry punctuation
(heartbeat) rows: ``LiveSource(df, rowtime, punctuation="is_bound")`` names a boolean column;
rows where it is true only advance the bound. Spark keeps one watermark per query, the earliest
of its sources' (``spark.sql.streaming.multipleWatermarkPolicy=min``), so in a query reading
several streams a row is judged against that bound.

**Late rows** are never dropped silently: they are left out of every result (as sira's runtime
rejects them) and counted. Spark drops rows older than its watermark before the stateful
operator (its ``numRowsDroppedByWatermark``); the handler drops the ones Spark lets through
when micro-batches follow each other closely, and reports them as the observed metric
``sira_live.late_rows``. :attr:`SparkLiveQuery.late_rows` adds the two up.

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
checkpoint on a shared file system (HDFS, S3) and waits with ``query.query.awaitTermination()``.
"""

from __future__ import annotations

import hashlib
import json

import attrs

from sira.algebra.aggregation import SummarizeBy
from sira.algebra.basic import Extend, Project, RelvarRef, Rename, Restrict
from sira.algebra.joins import Join, SemiJoin, SemiMinus
from sira.algebra.windows import Changes, DStream, IStream, Window, WindowTable
from sira.errors import NullValue, SiraError, SiraTypeError, UnknownRelvar
from sira.intervals import IntervalType
from sira.streams.operators import NotSupportedLive
from sira.types import INT, LONG
from sira.values import Heading, Relation, normalize_name

#: the hidden columns a live plan adds (never part of a sira heading)
EVENT_TIME, SOURCE, LATE = "__sira_evt", "__sira_src", "__sira_late"
#: the observed metric carrying the late rows the handler left out, per micro-batch
METRIC = "sira_live"

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

#: sira operator -> what runs on Structured Streaming (the README's mapping table)
MAPPING = {
    "stream source": "a streaming DataFrame; rowtime -> event-time column + withWatermark",
    "rowtime bound / punctuation": "watermark (2 ms per unit, delay 1 ms); heartbeat rows",
    "late row": "left out and counted (numRowsDroppedByWatermark + observed sira_live)",
    "RESTRICT, EXTEND, PROJECT, RENAME": "per key, in the keyed state operator",
    "UNION of streams": "unionByName of the sources (one watermark: the earliest)",
    "JOIN / SEMIJOIN / SEMIMINUS with a constant relation": "per key, against the relation "
                                                            "shipped with the plan",
    "CQL window, pointwise SUMMARIZEBY, ISTREAM / DSTREAM / CHANGES": "applyInPandasWithState "
                                                                      "keyed by partition_key",
    "TUMBLE / HOP / CUMULATE / SESSION and SUMMARIZEBY per window": "applyInPandasWithState "
                                                                    "keyed by partition_key",
}


@attrs.frozen
class LiveSource:
    """A stream for :func:`stream`: a streaming DataFrame whose column ``rowtime`` (LONG or INT)
    is its rowtime; ``punctuation`` optionally names a boolean column marking heartbeat rows
    (their rowtime is a bound; their other columns are ignored)."""

    df: object
    rowtime: str = "ts"
    punctuation: str | None = None


@attrs.frozen
class _StreamShape:
    """What the live runtime's compiler needs to know of a stream (a NamedStream's shape)."""

    name: str
    heading: Heading
    rowtime: str
    seq: int = 0


class SparkLiveQuery:
    """A running live query: ``query`` is Spark's ``StreamingQuery``; ``node`` the sira tree;
    ``key`` the attributes its state is partitioned by."""

    def __init__(self, query, node, key):
        self.query = query
        self.node = node
        self.key = key

    @property
    def late_rows(self) -> int:
        """Late rows left out by this run so far (within Spark's recent progress history):
        those Spark's watermark dropped plus those the handler dropped."""
        total = 0
        for progress in self.query.recentProgress:
            total += late_rows_of(progress)
        return total

    def stop(self) -> None:
        self.query.stop()

    def __repr__(self):
        return f"<SparkLiveQuery {self.node!r} key={list(self.key)}>"


def late_rows_of(progress) -> int:
    """The late rows one micro-batch left out, from its ``StreamingQueryProgress``: those the
    watermark dropped before the stateful operator and those the handler dropped."""
    observed = (progress.observedMetrics or {}).get(METRIC)
    total = int(observed["late_rows"] or 0) if observed is not None else 0
    return total + sum(int(op.numRowsDroppedByWatermark or 0)
                       for op in progress.stateOperators or ())


# ------------------------------------------------------------------------------ entry point

def stream(engine, expr, sources: dict, sink=None, checkpoint: str | None = None,
           trigger: dict | None = None, sink_options: dict | None = None,
           relvars: dict | None = None, query_name: str | None = None) -> SparkLiveQuery:
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

    Returns:
        a :class:`SparkLiveQuery` (already started).

    Raises:
        NotSupportedLive: the query has a part that cannot run continuously.
        UnknownRelvar: a name is neither a source nor a relvar.
        SiraTypeError: a rowtime column is not LONG or INT, or two sources disagree on a type.
    """
    if checkpoint is None:
        raise SiraError("a live query on Spark needs checkpoint=<location> (it makes "
                        "restarts exactly-once)")
    plan = compile_live(engine, expr, sources, relvars)
    writer = plan.output.writeStream.outputMode("append").option("checkpointLocation",
                                                                 str(checkpoint))
    if query_name is not None:
        writer = writer.queryName(query_name)
    if trigger:
        writer = writer.trigger(**trigger)
    if callable(sink):
        writer = writer.foreachBatch(sink)
    elif isinstance(sink, str):
        writer = writer.format(sink).options(**{k: str(v) for k, v in
                                                (sink_options or {}).items()})
    else:
        raise SiraError(f"sink must be a callable (batch_df, batch_id) or a Spark sink format "
                        f"name (got {sink!r})")
    return SparkLiveQuery(writer.start(), plan.node, plan.key)


def _engine_stream(self, expr, sources: dict, sink=None, checkpoint: str | None = None,
                   trigger: dict | None = None, sink_options: dict | None = None,
                   relvars: dict | None = None, query_name: str | None = None):
    """Start a live query on Structured Streaming: ``engine.stream(text, {"s": LiveSource(df,
    "ts")}, sink="parquet", sink_options={"path": out}, checkpoint=ck)`` (see
    :func:`sira_spark.live.stream` for the arguments; returns a :class:`SparkLiveQuery`)."""
    return stream(self, expr, sources, sink=sink, checkpoint=checkpoint, trigger=trigger,
                  sink_options=sink_options, relvars=relvars, query_name=query_name)


def _install() -> None:
    """``SparkEngine.stream``: the engine's entry point for live queries."""
    from .session import SparkEngine
    SparkEngine.stream = _engine_stream


@attrs.frozen
class LivePlan:
    """A compiled live query: its tree, the key its state is partitioned by, and the streaming
    DataFrame of its output rows (the query's heading, in its order)."""

    node: object
    key: tuple
    output: object


def compile_live(engine, expr, sources: dict, relvars: dict | None = None) -> LivePlan:
    """The streaming plan of a live query (see :func:`stream` for the arguments)."""
    import sira
    from sira.streams.runtime import compile_query

    from .convert import heading_of_dataframe
    sources = {normalize_name(k): _source(v) for k, v in sources.items()}
    relations = {normalize_name(k): v for k, v in (relvars or {}).items()}
    for name, value in relations.items():
        if not isinstance(value, Relation):
            raise SiraTypeError(f"relvar '{name}': a live query's constant relvars are "
                                f"Relations (got {type(value).__name__})", operator="STREAM",
                                expected="a Relation", got=type(value).__name__)
    shapes = {}
    for name, src in sources.items():
        df = _payload(src)
        heading = heading_of_dataframe(df, name)
        rowtime = normalize_name(src.rowtime)
        if rowtime not in heading or heading.type_of(rowtime) not in (LONG, INT):
            got = heading.type_of(rowtime) if rowtime in heading else "missing"
            raise SiraTypeError(f"stream '{name}': the rowtime column '{rowtime}' must be LONG "
                                f"or INT (it is {got})", operator="STREAM", expected="LONG",
                                got=str(got))
        shapes[name] = _StreamShape(name, heading, rowtime)
    catalog = {name: s.heading for name, s in shapes.items()}
    catalog.update({name: r.heading for name, r in relations.items()})
    node = sira.parse(expr, catalog) if isinstance(expr, str) else expr
    used = _names_used(node)
    for name in sorted(used - set(shapes) - set(relations)):
        raise UnknownRelvar(relvar=name, available=tuple(sorted(set(shapes) | set(relations))))
    compile_query(node, shapes, relations)  # NotSupportedLive for what cannot run
    read = [name for name in shapes if name in used]
    key = partition_key(node, {n: shapes[n] for n in read})
    output = _plan(engine, node, read, shapes, sources, relations, key)
    return LivePlan(node, key, output)


def _source(value) -> LiveSource:
    return value if isinstance(value, LiveSource) else LiveSource(value)


def _payload(src: LiveSource):
    """The source's columns that are sira attributes (lower-cased), without punctuation."""
    df = src.df.toDF(*[c.lower() for c in src.df.columns])
    if src.punctuation is not None:
        df = df.drop(normalize_name(src.punctuation))
    return df


def _names_used(node) -> set:
    if isinstance(node, RelvarRef):
        return {node.name}
    out = set()
    for child in node.children:
        out |= _names_used(child)
    return out


# ------------------------------------------------------------------------------ the key

def partition_key(node, shapes: dict) -> tuple:
    """The source attributes a query's state can be partitioned by: every operator's work on
    rows differing in them is independent, so each key's rows can run apart (empty: one
    global partition).

        >>> import sira
        >>> h = sira.Heading.of({"k": sira.INT, "v": sira.INT, "ts": sira.LONG})
        >>> n = sira.parse("changes(summarizebyusing(window(s, ts, range(10)), (k, during),"
        ...                " (t(plus(v))), (during)), at)", {"s": h})
        >>> partition_key(n, {"s": _StreamShape("s", h, "ts")})
        ('k',)
    """
    headings = [s.heading for s in shapes.values()]
    names = set(headings[0].names)
    for h in headings[1:]:
        names &= {n for n in h.names if h.type_of(n) == headings[0].type_of(n)}
    return tuple(sorted(_kept(node, names, shapes)))


def _kept(node, cand: set, shapes) -> set:
    """The candidates (source attribute names) still usable as a key above ``node``."""
    if isinstance(node, RelvarRef):
        return set(cand)
    reads = [c for c in node.children if _names_used(c) & set(shapes)]
    below = set(cand)
    for child in reads:
        below &= _kept(child, cand, shapes)
    if isinstance(node, (Restrict, Extend, IStream, DStream, Changes)):
        return below
    if isinstance(node, Project):
        return below & set(node.names)
    if isinstance(node, Rename):
        return below - set(dict(node.pairs))
    if isinstance(node, Window):
        spec = node.spec
        if spec.kind == "range_on" or (spec.rows is not None and not spec.partition):
            return set()  # one order over the whole stream
        if spec.partition:
            return below & set(spec.partition)
        return below
    if isinstance(node, WindowTable):
        return below & set(node.partition) if node.kind == "session" else below
    if isinstance(node, SummarizeBy):
        return below & set(node.by)
    if isinstance(node, (Join, SemiJoin, SemiMinus)) and len(reads) > 1:
        common = set(node.children[0].heading.names)
        for child in node.children[1:]:
            common &= set(child.heading.names)
        return below & common
    return below  # unions and pointwise set operators work value by value


# ------------------------------------------------------------------------------ the plan

def _plan(engine, node, read, shapes, sources, relations, key):
    """The streaming DataFrame: sources with watermarks, shuffled by the key into the keyed
    state operator, late counts observed, the query's columns out."""
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    frames = []
    for i, name in enumerate(read):
        src = sources[name]
        df = src.df.toDF(*[c.lower() for c in src.df.columns])
        rowtime = shapes[name].rowtime
        df = df.withColumn(EVENT_TIME, F.timestamp_millis(F.col(f"`{rowtime}`").cast("long") * 2))
        df = df.withWatermark(EVENT_TIME, "1 millisecond")
        if src.punctuation is not None:  # heartbeats move the watermark, then leave
            flag = F.coalesce(F.col(f"`{normalize_name(src.punctuation)}`"), F.lit(False))
            # one predicate reading the event time, so that Spark does not push it below the
            # watermark (which would never see the heartbeats): rowtimes are >= 1
            df = df.where(~flag | (F.col(EVENT_TIME) < F.timestamp_millis(F.lit(0)))) \
                .drop(normalize_name(src.punctuation))
        df = df.withColumn(SOURCE, F.lit(i))
        frames.append(df)
    merged = frames[0]
    for df in frames[1:]:
        merged = merged.unionByName(df, allowMissingColumns=True)
    handler = _Handler(node, [(n, shapes[n].heading, shapes[n].rowtime) for n in read],
                       relations, key)
    if key:
        grouped = merged.groupBy(*[F.col(f"`{k}`") for k in key])
    else:  # one global order: a single group
        grouped = merged.withColumn("__sira_all", F.lit(0)).groupBy("__sira_all")
    out = grouped.applyInPandasWithState(handler, _output_schema(node.heading),
                                         "state string", "append",
                                         GroupStateTimeout.EventTimeTimeout)
    out = out.observe(METRIC, F.coalesce(F.sum(LATE), F.lit(0)).alias("late_rows"))
    return out.where(F.col(LATE) == 0).select(*[F.col(f"`{n}`") for n in node.heading.names])


def _output_schema(heading):
    from pyspark.sql import types as T

    from .types import spark_type
    fields = [T.StructField(n, spark_type(t), True) for n, t in heading.attributes]
    return T.StructType(fields + [T.StructField(LATE, T.LongType(), False)])


def bound_of(watermark_ms: int) -> int:
    """The stream bound a watermark encodes (``W = 2b - 1``); 1 before any watermark."""
    return max(1, (watermark_ms + 1) // 2)


def timeout_of(instant) -> int:
    """The event-time timeout that fires once the bound has passed ``instant``."""
    return 2 * int(instant)


# ------------------------------------------------------------------------------ the handler

_COMPILED: dict = {}  # per Python worker: plan digest -> (LiveQuery, fresh state)


class _Handler:
    """The function ``applyInPandasWithState`` calls per key: restores the key's dataflow state,
    feeds its on-time rows and the bound, returns the results that became final, saves the
    state (or removes it when nothing is held) and sets the timeout for the next release."""

    def __init__(self, node, streams, relations, key):
        self.text = repr(node)
        self.streams = [(name, heading, rowtime) for name, heading, rowtime in streams]
        self.relations = relations
        self.key = key
        self.names = node.heading.names
        self.attributes = node.heading.attributes
        self.digest = hashlib.sha256(json.dumps(
            [self.text, [(n, str(h), r) for n, h, r in self.streams],
             sorted(self.relations)]).encode()).hexdigest()

    def query(self):
        found = _COMPILED.get(self.digest)
        if found is None:
            import sira
            from sira.streams.runtime import compile_query
            shapes = {n: _StreamShape(n, h, r) for n, h, r in self.streams}
            catalog = {n: h for n, h, _ in self.streams}
            catalog.update({n: r.heading for n, r in self.relations.items()})
            q = compile_query(sira.parse(self.text, catalog), shapes, self.relations)
            from sira.streams.checkpoint import operators_of
            q.operator_list = operators_of(q)  # a fixed order: states are saved by position
            found = _COMPILED[self.digest] = (q, encode_state(q))
        return found

    def __call__(self, key, frames, state):
        import pandas as pd
        q, fresh = self.query()
        watermark = state.getCurrentWatermarkMs()
        b = bound_of(watermark)
        saved = json.loads(state.get[0]) if state.exists else {"ops": fresh, "latest": None}
        decode_state(q, saved["ops"])
        latest = saved["latest"]
        late = 0
        if not state.hasTimedOut:
            pdf = pd.concat(list(frames), ignore_index=True) if frames else None
            if pdf is not None and len(pdf):
                late, latest = self._feed(q, pdf, b, latest)
        for sources in q.sources.values():
            for source in sources:
                source.emit_bound(b)
        results = q.sink.results
        q.sink.results = []
        ops = encode_state(q)
        pending = pending_instant(q)
        if pending is None and (latest is None or latest < b) and _at_rest(ops, fresh):
            state.remove()
        else:
            state.update((json.dumps({"ops": ops, "latest": latest}),))
            if pending is not None:
                state.setTimeoutTimestamp(max(timeout_of(pending), watermark + 1))
        yield from self._frames(results, late)

    def _feed(self, q, pdf, b, latest):
        """Push this key's on-time rows, by source, in rowtime order; the late ones are
        counted and left out."""
        late = 0
        for i, (name, heading, rowtime) in enumerate(self.streams):
            part = pdf[pdf[SOURCE] == i]
            if not len(part):
                continue
            columns = [_values(part[n], n, name) for n in heading.names]
            ts = heading.index(rowtime)
            bodies = sorted(dict.fromkeys(zip(*columns)), key=lambda r: r[ts])
            on_time = [body for body in bodies if body[ts] >= b]
            late += len(bodies) - len(on_time)
            if on_time:
                for source in q.sources.get(name, ()):
                    source.feed_train(on_time, None)
                last = on_time[-1][ts]
                latest = last if latest is None or last > latest else latest
        return late, latest

    def _frames(self, results, late):
        """The results as a pandas frame (intervals as begin/end structs), then a row carrying
        the late count (its sira columns null: it never leaves the plan)."""
        import pandas as pd
        columns = {}
        for i, (n, t) in enumerate(self.attributes):
            values = [r[i] for r in results]
            if isinstance(t, IntervalType):
                values = [{"begin": v.begin, "end": v.end} for v in values]
            columns[n] = values
        columns[LATE] = [0] * len(results)
        yield pd.DataFrame(columns)
        if late:
            meta = {n: pd.Series([None], dtype=object) for n in self.names}
            meta[LATE] = [late]
            yield pd.DataFrame(meta)


def _values(series, column, stream_name) -> list:
    """A column's values as sira values (Python scalars); a NULL is refused."""
    if series.isna().any():
        raise NullValue(relvar=stream_name, attribute=column, count=int(series.isna().sum()))
    return [v.item() if hasattr(v, "item") else v for v in series.tolist()]


# ------------------------------------------------------------------------------ state

def _operators(query) -> list:
    from sira.streams.checkpoint import operators_of
    found = getattr(query, "operator_list", None)
    return found if found is not None else operators_of(query)


def encode_state(query) -> list:
    """The state of every operator of a compiled live query, as checkpoint JSON data."""
    from sira.streams import checkpoint as ck
    return [{"ports": ck._encode_ports(op), "state": ck._STATES[type(op)][0](op)}
            for op in _operators(query)]


def decode_state(query, saved: list) -> None:
    """Restore every operator's state from :func:`encode_state`'s data."""
    from sira.streams import checkpoint as ck
    for op, data in zip(_operators(query), saved):
        ck._decode_ports(op, data["ports"])
        ck._STATES[type(op)][1](op, data["state"])


def _at_rest(ops, fresh) -> bool:
    """Whether the operators hold nothing but what a fresh dataflow holds (their guards and
    the instant they last saw excepted)."""
    def strip(states):
        out = []
        for data in states:
            state = {k: v for k, v in data["state"].items()
                     if k not in ("instant", "seen", "bound", "out_bound", "bounds", "counter")}
            out.append(state)
        return out
    return strip(ops) == strip(fresh)


def pending_instant(query):
    """The earliest instant the bound must pass for some operator of ``query`` to let
    something out, or None when nothing waits."""
    from sira.streams.operators import Merge
    from sira.streams.temporal import WindowOp, WindowSummarize, _Aligned
    times = []
    for op in _operators(query):
        if isinstance(op, (WindowOp, WindowSummarize)):
            if op.buffer:
                times.append(op.buffer[0][0])
            if op.exits:
                times.append(op.exits[0][0])
        if isinstance(op, WindowOp) and op.events:
            times.append(op.events.keys()[0])
        if isinstance(op, _Aligned) and op.pending:
            times.append(op.pending.keys()[0])
        if isinstance(op, Merge) and op.pending:
            times.append(op.pending[0][0])
        if hasattr(op, "pending") and callable(getattr(op, "pending")):
            t = op.pending()
            if t is not None:
                times.append(t)
    return min(times, default=None)


_install()

__all__ = ["LivePlan", "LiveSource", "MAPPING", "SparkLiveQuery", "UNSUPPORTED", "compile_live",
           "partition_key", "stream"]
