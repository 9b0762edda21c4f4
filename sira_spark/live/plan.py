"""Compiling a live query into a streaming plan: the sources with their watermarks, the key its
state is partitioned by, and the path it takes (native, vectorised or general)."""

from __future__ import annotations

import attrs

from sira.algebra.aggregation import SummarizeBy
from sira.algebra.basic import Extend, Project, RelvarRef, Rename, Restrict
from sira.algebra.joins import Join, SemiJoin, SemiMinus
from sira.algebra.nesting import Ungroup
from sira.algebra.spl import SplWindow
from sira.algebra.windowby import WindowBy
from sira.algebra.windows import Changes, DStream, IStream, Window, WindowTable
from sira.errors import SiraTypeError, SiraValueError, UnknownRelvar
from sira.types import AVERAGE, INT, LONG
from sira.values import Relation, normalize_name

from .common import (EVENT_TIME, HEARTBEAT, LATE_ROW, MAX_ROWTIME, METRIC, SHIFT, SOURCE,
                     LiveSource, StreamShape, from_pandas_columns, marker, output_schema,
                     to_pandas_columns)

#: the paths a live query can take on Spark, fastest first ("auto" picks the first that fits)
PATHS = ("native", "vectorised", "general")


@attrs.frozen
class LivePlan:
    """A compiled live query: its tree, the key its state is partitioned by, the path it takes
    and the streaming DataFrame of its output rows: the query's heading and, when late rows
    are kept, :data:`LATE_ROW`; a row whose :func:`~sira_spark.live.common.marker` column is
    NULL marks a late row; ``observed`` says whether the late rows are already counted in the
    observed metric."""

    node: object
    key: tuple
    path: str
    output: object
    observed: bool = False
    keep_late_rows: bool = False


def compile_live(engine, expr, sources: dict, relvars: dict | None = None, path: str = "auto",
                 keep_late_rows: bool = False) -> LivePlan:
    """The streaming plan of a live query (see :func:`~sira_spark.live.stream` for the
    arguments; ``path`` is ``"auto"`` or one of :data:`PATHS`).

    Raises:
        NotSupportedLive: the query has a part that cannot run continuously.
        UnknownRelvar: a name is neither a source nor a relvar.
        SiraTypeError: a rowtime column is not LONG or INT, or a relvar is not a Relation.
        SiraValueError: ``path`` is unknown, or names a path the query cannot take.
    """
    import sira
    from sira.streams.runtime import compile_query

    from ..convert import heading_of_dataframe
    if path != "auto" and path not in PATHS:
        raise SiraValueError(f"path must be 'auto' or one of {', '.join(PATHS)} (got {path!r})",
                             operator="STREAM", value=path)
    sources = {normalize_name(k): _source(v) for k, v in sources.items()}
    relations = {normalize_name(k): v for k, v in (relvars or {}).items()}
    for name, value in relations.items():
        if not isinstance(value, Relation):
            raise SiraTypeError(f"relvar '{name}': a live query's constant relvars are "
                                f"Relations (got {type(value).__name__})", operator="STREAM",
                                expected="a Relation", got=type(value).__name__)
    shapes = {}
    for name, src in sources.items():
        heading = heading_of_dataframe(_payload(src), name)
        rowtime = normalize_name(src.rowtime)
        if rowtime not in heading or heading.type_of(rowtime) not in (LONG, INT):
            got = heading.type_of(rowtime) if rowtime in heading else "missing"
            raise SiraTypeError(f"stream '{name}': the rowtime column '{rowtime}' must be LONG "
                                f"or INT (it is {got})", operator="STREAM", expected="LONG",
                                got=str(got))
        shapes[name] = StreamShape(name, heading, rowtime)
    catalog = {name: s.heading for name, s in shapes.items()}
    catalog.update({name: r.heading for name, r in relations.items()})
    node = sira.parse(expr, catalog) if isinstance(expr, str) else expr
    used = _names_used(node)
    for name in sorted(used - set(shapes) - set(relations)):
        raise UnknownRelvar(relvar=name, available=tuple(sorted(set(shapes) | set(relations))))
    compile_query(node, shapes, relations)  # NotSupportedLive for what cannot run
    read = [name for name in shapes if name in used]
    read_shapes = {n: shapes[n] for n in read}
    key = partition_key(node, read_shapes)
    chosen, shape = _choose(node, read_shapes, relations, key, path, keep_late_rows)
    build = {"native": _native_plan, "vectorised": _vector_plan, "general": _general_plan}
    output, observed = build[chosen](engine, node, read, shapes, sources, relations, key, shape,
                                     keep_late_rows)
    return LivePlan(node, key, chosen, output, observed, keep_late_rows)


def _choose(node, shapes, relations, key, path, keep_late_rows):
    """The path ``node`` takes and its shape there (the first of :data:`PATHS` that fits, or
    the one asked for). The native path hands late rows on as a count only (its admission step
    and Spark's aggregation cannot both feed one output), so a query keeping them takes
    another."""
    from .native import native_shape
    from .vector import window_sums_of
    found = {"native": None if keep_late_rows else native_shape(node, shapes, relations),
             "vectorised": window_sums_of(node, shapes, key) if len(shapes) == 1 else None,
             "general": True}
    if path == "auto":
        chosen = next(p for p in PATHS if found[p] is not None)
        return chosen, found[chosen]
    if found[path] is None:
        why = " that keeps late rows (late_rows_sink)" if path == "native" and \
            keep_late_rows else ""
        raise SiraValueError(f"path={path!r}: {node!r} has no {path} plan on Structured "
                             f"Streaming{why} (path='auto' picks the one it has)",
                             operator="STREAM", value=path)
    return path, found[path]


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
        >>> partition_key(n, {"s": StreamShape("s", h, "ts")})
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
    if isinstance(node, (Restrict, Extend, IStream, DStream, Changes, Ungroup)):
        return below
    if isinstance(node, SplWindow):
        return below & set(node.partition) if _spl_per_partition(node) else set()
    if isinstance(node, WindowBy):
        return below & set(node.partition)
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


def _spl_per_partition(node) -> bool:
    """Whether an SPL window's partitions run apart: not when a timer ticks for all of them
    from the stream's first tuple, a partition eviction policy weighs them against each
    other, or a timeInterval watermark is the largest event time of the whole stream in
    arrival order (without ``arrival(...)`` the stream is in ts order, so each partition's
    panes are complete when the bound passes their end)."""
    if node.partition_eviction is not None:
        return False
    if node.kind == "timeinterval":
        return node.arrival is None
    if node.kind == "tumbling" and node.eviction.kind == "time":
        return False
    return node.trigger is None or node.trigger.kind != "time"


# ------------------------------------------------------------------------------ sources

def source_frame(src: LiveSource, shape: StreamShape):
    """A source's rows with the watermarked event time (:data:`EVENT_TIME`, see
    :mod:`sira_spark.live.common`) and the heartbeat flag (:data:`HEARTBEAT`); a rowtime
    outside 0..MAX_ROWTIME fails the query."""
    from pyspark.sql import functions as F

    from ..functions import sira_error
    df = src.df.toDF(*[c.lower() for c in src.df.columns])
    t = F.col(f"`{shape.rowtime}`").cast("long")
    evt = F.when(t.between(0, MAX_ROWTIME), F.timestamp_millis(t * 2 + SHIFT)).otherwise(
        sira_error("SiraValueError", f"stream '{shape.name}': a rowtime '{shape.rowtime}' "
                   f"outside 0..{MAX_ROWTIME} (live queries on Spark take rowtimes in that "
                   f"range: epoch milliseconds fit, microseconds do not)"))
    df = df.withColumn(EVENT_TIME, evt).withWatermark(EVENT_TIME, f"{SHIFT + 1} milliseconds")
    if src.punctuation is None:
        df = df.withColumn(HEARTBEAT, F.lit(False))
    else:
        flag = normalize_name(src.punctuation)
        beat = F.coalesce(F.col(f"`{flag}`"), F.lit(False))
        df = df.withColumn(HEARTBEAT, beat).drop(flag)
    return _read_as_sira(df, shape)


def _read_as_sira(df, shape: StreamShape):
    """A source's rows as sira reads a DataFrame (``sira_spark.convert.as_read``: a
    ``timestamp`` instant as its UTC date and time, -0.0 as 0.0, relation-valued attributes
    distinct, one struct for every empty interval), a row (not a heartbeat) holding a NULL or
    NaN inside an interval, tuple, AVERAGE or relation, or an interval whose end is before its
    begin, failing the query (NullValue, DataFormatError) as Spark reads it. A NULL or NaN in a
    scalar column is the handlers' to count and refuse (``common.check_no_nulls``)."""
    from pyspark.sql import functions as F

    from ..convert import as_read, fault_conditions
    from ..functions import sira_error
    from ..types import may_hold_nulls
    heading = shape.heading
    faults = [f for f in fault_conditions(df, heading) if may_hold_nulls(heading.type_of(f[0]))
              or heading.type_of(f[0]) == AVERAGE]
    if faults:
        check = F
        for name, kind, cond in faults:
            what = "an interval whose end is before its begin" if kind == "INVERTED" else \
                f"{kind} (sira has no nulls)"
            cls = "DataFormatError" if kind == "INVERTED" else "NullValue"
            check = check.when(~F.col(HEARTBEAT) & cond, sira_error(
                cls, f"stream '{shape.name}': attribute '{name}' holds {what}"))
        df = df.where(check.otherwise(F.lit(True)))
    return as_read(df, heading, keep=[c for c in df.columns if c not in heading])


def without_heartbeats(df):
    """Heartbeats move the watermark, then leave: one predicate reading the event time, so that
    Spark does not push it below the watermark (which would then never see them)."""
    from pyspark.sql import functions as F
    return df.where(~F.col(HEARTBEAT) | (F.col(EVENT_TIME) < F.timestamp_millis(F.lit(0)))) \
        .drop(HEARTBEAT)


def observed(df, heading):
    """``df`` (a handler's output) with its late rows counted in the observed metric."""
    from pyspark.sql import functions as F
    marked = F.col(f"`{marker(heading)}`").isNull()
    return df.observe(METRIC, F.coalesce(F.sum(F.when(marked, 1).otherwise(0)), F.lit(0))
                      .alias("late_rows"))


# ------------------------------------------------------------------------------ the paths

def _grouped(df, key):
    from pyspark.sql import functions as F
    if key:
        return df.groupBy(*[F.col(f"`{k}`") for k in key])
    return df.withColumn("__sira_all", F.lit(0)).groupBy("__sira_all")  # one global order


def _general_plan(engine, node, read, shapes, sources, relations, key, shape, keep_late_rows):
    """Every source, shuffled by the key into the live runtime's dataflow per key."""
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    from .general import STATE_SCHEMA, GeneralHandler
    frames = [to_pandas_columns(without_heartbeats(source_frame(sources[name], shapes[name])),
                                shapes[name].heading)
              .withColumn(SOURCE, F.lit(i)) for i, name in enumerate(read)]
    merged = frames[0]
    for df in frames[1:]:
        merged = merged.unionByName(df, allowMissingColumns=True)
    handler = GeneralHandler(node, [(n, shapes[n].heading, shapes[n].rowtime) for n in read],
                             relations, key, keep_late_rows)
    out = _grouped(merged, key).applyInPandasWithState(
        handler, output_schema(node.heading, keep_late_rows), STATE_SCHEMA, "append",
        GroupStateTimeout.EventTimeTimeout)
    return from_pandas_columns(out, node.heading), False


def _vector_plan(engine, node, read, shapes, sources, relations, key, shape, keep_late_rows):
    """The one source, shuffled by the key into the vectorised handler."""
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    from .vector import STATE_SCHEMA, VectorHandler
    (name,) = read
    df = without_heartbeats(source_frame(sources[name], shapes[name]))
    df = df.select(*[F.col(f"`{n}`") for n in shape.columns], EVENT_TIME)
    out = _grouped(df, key).applyInPandasWithState(
        VectorHandler(shape, key, keep_late_rows), output_schema(node.heading, keep_late_rows),
        STATE_SCHEMA, "append", GroupStateTimeout.EventTimeTimeout)
    return out, False


def _native_plan(engine, node, read, shapes, sources, relations, key, shape, keep_late_rows):
    """The admission step, then Structured Streaming's own operators (see
    :mod:`sira_spark.live.native`)."""
    from .native import (WindowAggregate, admitted, on_time_rows, row_chain_plan,
                         window_aggregate_plan)
    (name,) = read
    stream = shapes[name]
    frame = source_frame(sources[name], stream)
    rows = on_time_rows(admitted(frame, name, stream.heading, stream.rowtime), stream.heading,
                        stream.rowtime)
    if isinstance(shape, WindowAggregate):
        out = window_aggregate_plan(rows, shape)
    else:
        out = row_chain_plan(rows, shape, relations, engine.spark)
    return out, True
