"""Spark translation of WINDOWBY (seed 003), the windows of ``sira/engine/windowby.py``.

Every WINDOWBY (sliding, tumbling, LABEL, ONLY, partitioned or not, sessions) runs seed 003's
scheme for sequences split across nodes (section 5), whatever the partitions look like: one
sequence with no key, a few long ones, or one key holding most tuples. See :func:`_split`:

* the input is range-partitioned in the global order (partition attributes, order attributes,
  then the tuple: the canonical tie-break, interval attributes by (begin, unbounded, end) as
  in Python) into *chunks* of about ``ROWS_PER_CHUNK`` rows (at least as many chunks as
  shuffle partitions; the rows from the optimizer's estimate, or a count), so a sequence may
  span many chunks and no step holds a whole sequence;
* each chunk's counts and boundary rows give every row its global number, its position in its
  sequence and its sequence's length by prefix sums on the driver (a few values per chunk);
* the windows are found by :mod:`sira_spark.windowby_scan` in Python workers (``mapInArrow``,
  then ``applyInArrow`` on the items handed over), over the narrow columns the conditions read,
  with the reference's own conditions (three-valued logic, pinned positions): a first pass per
  chunk, then rounds that carry the windows still open across chunk boundaries (their start
  variables, no tuples); tumbling chains hand over at most one open window per chunk;
* the windows (global row numbers) are assembled by one equi-join with the numbered rows: the
  members and the variables' rows, grouped per window into ``w`` (``array_sort``, an RVA's
  canonical form) or folded into the pushed-down aggregates.

Cost: one sort of the input, linear scans of the narrow columns, the searches' walks over the
windows they find (what the reference walks), and a join as large as the result. Ties on the
order attributes are broken by the tuple in the Python engine's canonical order, relation- and
tuple-valued attributes included (``sira_spark.windows.canonical_key``).
"""

from __future__ import annotations

from pyspark.sql import functions as F
from pyspark.sql import types as T

from sira.algebra.windowby import WindowBy
from sira.intervals import IntervalType
from sira.types import RelationType
from sira.values import Heading

from .basic import fenced_node
from .compiler import ordered, reported, translates
from .convert import local_dataframe
from .guards import check_held, guard_of
from .rowbound import KNOWN_LIMIT, bound, sequence_join
from .functions import aggregated_column
from .types import schema_of
from .windows import canonical_key


def _c(name):
    return F.col(f"`{name}`")


@translates(WindowBy)
def _windowby(node, children, c):
    """Conditions and aggregates that may fail run on every partition and window, whatever
    the query does with the result (see ``sira.algebra.fallible``)."""
    windows, held = _windows_of(node, children, c)
    # max_tuples: the tuples its windows hold, counted unless bounded within it before
    if not node.aggregates and (held is None or held > guard_of(c, node)[0].limit):
        windows = check_held(c, node, windows, node.result)
    return fenced_node(node, windows)


def _windows_of(node, children, c):
    """``(windows, held)``: ``held`` bounds the tuples the windows hold, all together (the
    sequences' length for tumbling windows, which never overlap), or is None."""
    (df,) = children
    return _split(node, df, c)


# ---------------------------------------------------------------------- split sequences

#: told what each run does, for tests: ("plan", a DataFrame run), ("chunks", how many),
#: ("round", how many chunks receive windows handed over)
observer = None


def _note(what, value) -> None:
    if observer is not None:
        observer(what, value)


#: the rows of one chunk the Python workers hold at most (the number of chunks grows with n)
ROWS_PER_CHUNK = 250_000

_RECORDS = ("k int, c long, g0 long, gn long, gl long, gs long, ge long, opened boolean, "
            "closed boolean, spec boolean, tag long, blob binary")


def _narrow_heading(node) -> Heading:
    """The attributes the conditions read (``s.val``: val), the order attributes, or the whole
    heading when a condition reads a whole variable (``e = l``)."""
    from sira.algebra.windowby import IS_MISSING
    from sira.expressions.nodes import Aggregated, AttrRef, Call, FieldOf
    h = node.source.heading
    tuples = {name for kind, name in node.variables() if kind != "at"}
    needed = set(node.order)
    whole = False

    def walk(e):
        nonlocal whole
        if isinstance(e, FieldOf) and isinstance(e.source, AttrRef) and e.source.name in tuples:
            needed.add(e.name)
        elif isinstance(e, AttrRef):
            whole = whole or e.name in tuples
        elif isinstance(e, Call) and e.op == IS_MISSING and isinstance(e.args[0], AttrRef):
            pass  # whether a variable exists reads none of its values
        elif isinstance(e, Call):
            for a in e.args:
                walk(a)
        elif isinstance(e, (FieldOf, Aggregated)):
            walk(e.source)
    for b in node.boundaries():
        if b.when is not None:
            walk(b.when)
    if whole:
        return h
    return Heading.of([(n, t) for n, t in h.attributes if n in needed])


def _relation_operands(node, c) -> dict:
    """The relational operands of the conditions, as values (computed once, on the driver)."""
    from sira.expressions.nodes import Aggregated, Call, FieldOf, RelationArg
    from .convert import to_relation
    out = {}

    def walk(e):
        if isinstance(e, RelationArg):
            if e.node not in out:
                out[e.node] = to_relation(c.compile(e.node), e.node.heading)
        elif isinstance(e, Call):
            for a in e.args:
                walk(a)
        elif isinstance(e, (FieldOf, Aggregated)):
            walk(e.source)
    for b in node.boundaries():
        if b.when is not None:
            walk(b.when)
    return out


def _arrow_value(t, v):
    """An Arrow value (``to_pylist``: structs as dicts) as the value ``collect`` gives."""
    from sira.types import AVERAGE, TupleType
    if isinstance(t, IntervalType):
        return (v["begin"], v["end"])
    if t == AVERAGE:
        return (v["count"], v["value"])
    if isinstance(t, TupleType):
        return tuple(_arrow_value(ft, v[n]) for n, ft in t.heading.attributes)
    if isinstance(t, RelationType):
        return [tuple(_arrow_value(ft, r[n]) for n, ft in t.heading.attributes) for r in v]
    return v


def _key_value(types, key) -> tuple:
    """A partition key read from Arrow (``to_pylist``) as sira values of ``types``."""
    from .convert import _from_spark_value, _simple
    return tuple(v if _simple(t) else _from_spark_value(t, _arrow_value(t, v))
                 for t, v in zip(types, key))


def _load(table, keys: int, heading, ends_only=False):
    """(chunk id, keys, narrow rows as sira tuples) of one chunk's Arrow table (with
    ``ends_only``, the rows are its first and last only)."""
    from sira.types import FLOAT
    from sira.values import Tuple
    from .convert import _from_spark_value, _simple
    table = table.sort_by("__i")
    m = table.num_rows
    if ends_only:
        key_list = list(zip(*[table.column(f"__k{i}").to_pylist() for i in range(keys)])) \
            if keys else [()] * m
        ends = [_load(table.slice(i, 1), keys, heading)[2][0] for i in (0, m - 1)]
        return table.column("__c")[0].as_py(), key_list, ends
    key_cols = [table.column(f"__k{i}").to_pylist() for i in range(keys)]
    key_list = list(zip(*key_cols)) if keys else [()] * m
    cols = []
    for n, t in heading.attributes:
        values = table.column(n).to_pylist()
        if t == FLOAT:
            values = [v + 0.0 for v in values]
        elif not _simple(t):
            values = [_from_spark_value(t, _arrow_value(t, v)) for v in values]
        cols.append(values)
    rows = [Tuple(heading, v) for v in zip(*cols)] if cols else [Tuple(heading, ())] * m
    return table.column("__c")[0].as_py(), key_list, rows


def _records(recs):
    """A record batch of :data:`windowby_scan.RECORD_FIELDS` rows."""
    import pyarrow as pa
    types = [pa.int32()] + [pa.int64()] * 6 + [pa.bool_()] * 3 + [pa.int64(), pa.binary()]
    cols = list(zip(*recs)) if recs else [()] * len(types)
    from .windowby_scan import RECORD_FIELDS
    return pa.RecordBatch.from_arrays([pa.array(list(col), t) for col, t in zip(cols, types)],
                                      names=list(RECORD_FIELDS))


def _estimated_rows(df) -> int:
    """The optimizer's estimate of the rows of ``df`` (its size over the width of a row), or
    the bound its plan shows (relations sira holds, ``rowbound``), or else its count."""
    return estimated_or_counted(df)[0]


def estimated_or_counted(df) -> tuple:
    """``(rows, counted)``: :func:`_estimated_rows`, and whether it is the exact count."""
    try:
        stats = df._jdf.queryExecution().optimizedPlan().stats()
        size = int(str(stats.sizeInBytes()))
        rows = stats.rowCount()
        if rows.isDefined():
            return int(str(rows.get())), False
    except Exception:  # noqa: BLE001 - no estimate: count
        size = 1 << 63
    if size < 1 << 50:
        return size // 8, False  # rows of 8 bytes at least: more chunks rather than fewer
    known = bound(df, KNOWN_LIMIT)  # no job: the rows sira made it from, at most
    if known is not None:
        return known, False
    return df.count(), True


def _split(node, df, c):
    """WINDOWBY over sequences split across partitions (seed 003, section 5).

    1. The input is range-partitioned and sorted by (partition attributes, order attributes,
       then the tuple): each Spark partition is a *chunk*, a run of the global order, and a
       sequence may span several chunks. The sorted rows are checkpointed with their chunk
       and their index in it, so every later step reads the same numbering.
    2. A summary of each chunk (its count, its first and last sequence keys and the lengths
       of those runs, its first and last narrow rows) goes to the driver: a handful of values
       per chunk, from which prefix sums give every row's global number, position in its
       sequence and the length of its sequence (``windowby_scan.chunk_infos``).
    3. First pass: each chunk's narrow rows (the attributes the conditions read) go through
       ``mapInArrow`` to :class:`sira_spark.windowby_scan.Chunk`, which finds the windows
       starting in it with the reference's conditions; a window whose search leaves the chunk
       is handed over as an item (start variables, no tuples).
    4. Later rounds: the items and the rows of the chunks they go to are cogrouped by chunk
       (``applyInArrow``); each round moves every open window across one chunk boundary, so
       the rounds are as many as the chunks the longest search crosses, and each reads only
       the chunks some window is open in. Tumbling windows hand over at most one open window
       per chunk and correct the next chunk's speculative chain
       (``windowby_scan.TumblingChain``); usually one round settles them all.
    5. The windows (global numbers of their label, start and end rows) are assembled by one
       equi-join with the numbered rows: the members ``gs..ge`` exploded, and the rows of the
       variables, grouped back per window into the sorted list of ``w`` (or folded into the
       pushed-down aggregates).

    Cost: one sort, linear scans in Python over narrow columns, the windows' own length for
    the searches (what the reference walks), and a join as large as the result. No step puts
    every row of a sequence in one partition: a chunk holds about ``ROWS_PER_CHUNK`` rows.

    Returns ``(windows, held)`` (:func:`_windows_of`).
    """
    from pyspark.sql import functions as F

    from .windowby_scan import (ITEM, REPORT, WINDOW, Chunk, Plan, TumblingChain,
                                chunk_infos, entry_tag, summarize)
    import attrs

    from sira.algebra.basic import RelvarRef

    spark = c.spark
    h = node.source.heading
    narrow_h = _narrow_heading(node)
    narrow_node = attrs.evolve(node, source=RelvarRef("seq", narrow_h), partition=(),
                               aggregates=(), only=False)
    key_types = [h.type_of(n) for n in node.partition]
    plan = Plan(narrow_node, _relation_operands(node, c), key_types)
    codec = plan.codec
    skip = set(node.partition) | set(node.order)
    keys = [_c(n).asc() for n in node.partition] + \
        [canonical_key(_c(n), h.type_of(n)).asc() for n in node.order] + \
        [canonical_key(_c(n), t).asc() for n, t in h.attributes if n not in skip]
    parts = int(spark.conf.get("spark.sql.shuffle.partitions"))
    chunks = max(1, parts, -(-_estimated_rows(df) // ROWS_PER_CHUNK))
    positioned = df.repartitionByRange(chunks, *keys).sortWithinPartitions(*keys).select(
        "*", F.spark_partition_id().alias("__c"), F.monotonically_increasing_id().alias("__m"))
    _note("plan", positioned)
    positioned = positioned.localCheckpoint()
    nk = len(node.partition)
    narrow = positioned.select(
        F.col("__c").cast("long").alias("__c"),
        F.col("__m").bitwiseAND(F.lit((1 << 33) - 1)).alias("__i"),
        *[_c(n).alias(f"__k{i}") for i, n in enumerate(node.partition)],
        *[_c(n) for n in narrow_h.names])

    def chunks_of(batches, ends_only=False):
        import pyarrow as pa
        batches = list(batches)
        if not batches or not sum(b.num_rows for b in batches):
            return None
        return _load(pa.Table.from_batches(batches), nk, narrow_h, ends_only)

    def summary(batches):
        import pyarrow as pa
        loaded = chunks_of(batches, ends_only=True)
        if loaded is not None:
            cid, key_list, ends = loaded
            found = summarize(cid, key_list, ends)
            for k in ("first_key", "last_key"):
                found[k] = _key_value(key_types, found[k])
            blob = codec.dump_summary(found)
            yield pa.RecordBatch.from_arrays([pa.array([blob], pa.binary())], names=["blob"])

    summaries = narrow.mapInArrow(summary, "blob binary")
    _note("plan", summaries)
    loaded = [codec.load_summary(r[0]) for r in summaries.collect()]
    infos = chunk_infos(loaded)
    _note("chunks", len(infos))

    def first_pass(batches):
        loaded = chunks_of(batches)
        if loaded is not None:
            cid, key_list, rows = loaded
            with reported():
                found = Chunk(plan, infos[cid], key_list, rows).first_pass()
            yield _records(found)

    def rounds(items, rows):
        import pyarrow as pa
        if not items.num_rows or not rows.num_rows:
            return pa.Table.from_batches([_records([])])
        cid, key_list, narrow_rows = _load(rows, nk, narrow_h)
        out = []
        with reported():
            chunk = Chunk(plan, infos[cid], key_list, narrow_rows)
            for blob in items.column("blob").to_pylist():
                job = codec.loads(blob)
                if job[0] == "item":
                    out.append(chunk.run(job[1]))
                else:
                    out += chunk.tumble(job[1], job[2])
        return pa.Table.from_batches([_records(out)])

    def run_round(items_df, targets):
        _note("round", len(targets))
        rows = narrow.where(F.col("__c").isin(targets))
        out = items_df.groupBy("__c").cogroup(rows.groupBy("__c")).applyInArrow(rounds, _RECORDS)
        _note("plan", out)
        return out.localCheckpoint()

    first = narrow.mapInArrow(first_pass, _RECORDS)
    _note("plan", first)
    first = first.localCheckpoint()
    kind = F.col("k")
    windows = first.where(kind == WINDOW)
    # one job: the chunks the items go to, and the reports (a few rows per chunk)
    notes = first.where(kind != WINDOW).select(
        "k", "c", F.when(kind == REPORT, F.col("blob")).alias("blob")).distinct().collect()
    targets = [r["c"] for r in notes if r["k"] == ITEM]
    items = first.where(kind == ITEM).select(F.col("c").alias("__c"), "blob")
    while targets:
        out = run_round(items, targets)
        windows = windows.unionByName(out.where(kind == WINDOW))
        items = out.where(kind == ITEM).select(F.col("c").alias("__c"), "blob")
        targets = [r[0] for r in items.select("__c").distinct().collect()]
    if node.kind == "tumbling" and node.label is None and not node.start.unbounded:
        exits = {r["c"]: codec.loads(r["blob"])[1] for r in notes if r["k"] == REPORT}
        chain = TumblingChain(infos, exits)
        fixed = []
        while True:
            wanted = chain.wanted()
            if not wanted:
                break
            jobs = local_dataframe(
                spark, [(cid, codec.dumps(("job", entry, entry_tag(entry))))
                        for cid, entry in wanted], "__c long, blob binary")
            out = run_round(jobs, sorted({cid for cid, _ in wanted}))
            for r in out.where(kind == REPORT).collect():
                chain.learn(r["c"], codec.loads(r["blob"]))
            fixed.append(out.where(kind == WINDOW))
        decided = local_dataframe(
            spark, [(cid, -2 if tag is None else tag, drop)
                    for cid, (tag, drop) in chain.decisions().items()],
            "c long, dtag long, drop long")
        windows = windows.join(F.broadcast(decided), "c", "left").where(
            ~F.col("spec") | F.col("drop").isNull() | (F.col("gs") >= F.col("drop"))) \
            .select(*windows.columns)
        for part in fixed:
            windows = windows.unionByName(part.join(
                F.broadcast(decided), (part["c"] == decided["c"]) &
                (part["tag"] == decided["dtag"]), "left_semi"))
    bases = F.create_map(*[x for cid, info in infos.items()
                           for x in (F.lit(cid), F.lit(info["base"]))]) if infos else None
    full = positioned.select(
        ((bases[F.col("__c").cast("long")] if bases is not None else F.lit(0)) +
         F.col("__m").bitwiseAND(F.lit((1 << 33) - 1))).alias("__g"),
        F.struct(*[_c(n) for n in h.names]).alias("__row"))
    # a tumbling window starts after the one before it ends: each tuple is in one at most
    held = sum(s["count"] for s in loaded) if node.kind == "tumbling" else None
    return _assemble(node, windows, full), held


def _assemble(node, windows, full):
    """The result from the windows (global numbers) and the numbered rows ``full``: each
    window asks for its members ``gs..ge`` and its variables' rows (one explode), one
    equi-join on ``__g`` answers, and a groupBy per window puts them back together."""
    from pyspark.sql import functions as F
    h = node.source.heading
    if node.only:
        windows = windows.where(F.col("closed"))
    at = {"label": F.col("gl"), "start": F.col("gs"), "end": F.col("ge")}
    none = F.lit(None).cast("long")
    asks = [F.transform(F.sequence("gs", "ge"), lambda g: F.struct(g.alias("g"),
                                                                  F.lit("").alias("t")))]
    for role in ("label", "start", "end"):
        for kind, name in node.variables(role):
            g = at[role]
            if kind == "at":
                continue
            if kind == "prev":
                g = F.when(g > F.col("g0"), g - 1).otherwise(none)
            elif kind == "next":
                g = F.when(g < F.col("gn"), g + 1).otherwise(none)
            asks.append(F.array(F.struct(g.alias("g"), F.lit(name).alias("t"))))
    keys = ["g0", "gn", "gl", "gs", "ge", "opened", "closed"]
    req = windows.select(*keys, F.explode(F.concat(*asks)).alias("__a")).select(
        *keys, F.col("__a")["g"].alias("__g"), F.col("__a")["t"].alias("__t"))
    joined = sequence_join(req, full, "__g")  # both sides as long as the sequence
    row, tag = F.col("__row"), F.col("__t")
    names = [name for kind, name in node.variables() if kind != "at"]
    g = joined.groupBy(*keys).agg(
        F.array_sort(F.collect_list(F.when(tag == "", row))).alias("__members"),
        *[F.first(F.when(tag == name, row), ignorenulls=True).alias(f"__v_{name}")
          for name in names])
    members = F.col("__members")
    cols = [members[0][n].alias(n) for n in node.partition]
    empty = F.array().cast(T.ArrayType(schema_of(h), False))
    for role in ("label", "start", "end"):
        for kind, name in node.variables(role):
            if kind == "at":
                cols.append((at[role] - F.col("g0") + 1).cast("long").alias(name))
            elif kind == "as":
                cols.append(F.col(f"__v_{name}").alias(name))
            else:
                v = F.col(f"__v_{name}")
                cols.append(F.when(v.isNull(), empty).otherwise(F.array(v)).alias(name))
    cols.append(F.col("closed").alias("closed"))
    if node.label is not None:
        cols.append(F.col("opened").alias("opened"))
    if node.aggregates:
        scope = Heading.of({node.result: RelationType(h)})
        cols += [aggregated_column(e, members, scope).alias(name) for name, e in node.aggregates]
    else:
        cols.append(members.alias(node.result))
    return ordered(g.select(*cols), node.heading)
