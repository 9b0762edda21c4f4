"""Spark translation of SPL windows (SPLWINDOW), matching ``sira/engine/spl.py`` (the reference).

Time arithmetic is done on a LONG column (the timestamp itself, or microseconds since the epoch
for a TIMESTAMP); ``at`` and ``pane`` are turned back into the timestamp's type at the end.

Tumbling and sliding windows are sequential: each partition's stream is sorted, gathered with
``collect_list`` into one array of element structs ``(lp, t, a, p, ta)`` -- the position in the
partition, the time, the delta values and the punctuation flag -- and folded with ``aggregate``
whose state is the partition's window (the array of its current elements, the open time, trigger
counter, next trigger time, last triggering value, last arrival time) plus the list of emissions
``(ws, we, at)``. A window's content is always a run of consecutive positions ``ws..we`` of its
partition, so ``tuples`` is a ``slice`` of the partition's sorted rows, emitted with
``posexplode`` (instance = index + 1). No Python UDF and no ``collect()``.

* Without a partition eviction, or with ``partitionage(T)`` (which only looks at the partition's
  own tuples), the fold runs per partition key, in parallel across keys.
* ``partitioncount(N)`` and ``tuplecount(N)`` couple the partitions, so the fold runs once over
  the whole stream, its state holding an array of partition states (the least recently updated
  one is found by its last update position); emissions are then joined back to each key's rows.

Limits: a partition's whole sequence (the whole stream with ``partitioncount``/``tuplecount``)
is one array, so it must fit in one task's memory; the fold copies its state at every step, so
a partition of n tuples costs O(n * (window size + emissions)).

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
from sira.types import FLOAT

from .compiler import ordered, translates
from .types import spark_type
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
    pe = node.partition_eviction
    if pe is not None and pe.kind in ("partitioncount", "tuplecount"):
        return _sequential_global(node, df)
    return _sequential_per_key(node, df)


# ---------------------------------------------------------------------- tumbling and sliding

def _value_type(node, policy):
    h = node.source.heading
    if policy is None or policy.kind != "delta":
        return "long"
    return "double" if h.type_of(policy.attr) == FLOAT else "long"


def _value(node, policy):
    h = node.source.heading
    if policy is None or policy.kind != "delta":
        return F.lit(0).cast("long")
    return _to_time(_c(policy.attr), h.type_of(policy.attr))


def _amount(node, policy):
    """A delta threshold as a literal column of the delta values' type."""
    amount = node.delta_amount(policy)
    return F.lit(float(amount)) if _value_type(node, policy) == "double" else \
        F.lit(int(amount)).cast("long")


def _elements(node, df, position):
    """Add the element struct ``__x`` (lp, t, a, p, ta) and the row struct ``__row``."""
    h = node.source.heading
    ev = node.eviction
    punct = _c(ev.attr) if ev.kind == "punct" else F.lit(False)
    x = F.struct(position.cast("int").alias("lp"),
                 _to_time(_c(node.ts), node.ts_type).alias("t"),
                 _value(node, ev).alias("a"), punct.alias("p"),
                 _value(node, node.trigger).alias("ta"))
    return df.withColumn("__x", x).withColumn("__row", _row_struct(h))


def _content_type(node):
    return f"array<struct<lp:int,t:long,a:{_value_type(node, node.eviction)}>>"


def _fresh(node, lp=None):
    """The fields of an empty partition state (typed, so every fold step has the same type)."""
    return {
        "c": F.array().cast(_content_type(node)),
        "o": F.lit(None).cast("long"),
        "cnt": F.lit(0).cast("int"),
        "nt": F.lit(None).cast("long"),
        "la": F.lit(None).cast(_value_type(node, node.trigger)),
        "lt": F.lit(None).cast("long"),
    }


def _state_struct(fields: dict):
    return F.struct(*[v.alias(k) for k, v in fields.items()])


def _step(node, s, x):
    """One element into one partition state ``s`` (a struct column): the new state's fields and
    the emission (condition, first position, last position)."""
    ev, tr = node.eviction, node.trigger
    pe = node.partition_eviction
    fields = {k: s[k] for k in _fresh(node)}
    if pe is not None and pe.kind == "partitionage":
        reset = s["lt"].isNotNull() & (x["t"] - s["lt"] >= node.units(pe.amount))
        fresh = _fresh(node)
        fields = {k: F.when(reset, fresh[k]).otherwise(v) for k, v in fields.items()}
    c = fields["c"]
    xe = F.array(F.struct(x["lp"].alias("lp"), x["t"].alias("t"), x["a"].alias("a")))
    c1 = F.concat(c, xe)
    empty = F.array().cast(_content_type(node))
    nonempty = F.size(c) > 0
    first = F.get(c, 0)["lp"]
    out = dict(fields, lt=x["t"])
    if node.kind == "tumbling":
        if ev.kind in ("count", "punct"):
            emit = (F.size(c1) == ev.amount) if ev.kind == "count" else x["p"]
            out["c"] = F.when(emit, empty).otherwise(c1)
            return out, emit, F.get(c1, 0)["lp"], x["lp"]
        if ev.kind == "time":
            emit = nonempty & (x["t"] >= fields["o"] + node.units(ev.amount))
            out["o"] = F.when(emit | ~nonempty, x["t"]).otherwise(fields["o"])
        else:
            emit = nonempty & (x["a"] - F.get(c, 0)["a"] > _amount(node, ev))
        out["c"] = F.when(emit, xe).otherwise(c1)
        return out, emit, first, x["lp"] - 1
    if ev.kind == "count":
        kept = F.slice(c1, F.greatest(F.size(c1) - ev.amount + 1, F.lit(1)), ev.amount)
    else:
        if ev.kind == "time":
            keep = lambda y: y["t"] > x["t"] - node.units(ev.amount)  # noqa: E731
        else:
            keep = lambda y: x["a"] - y["a"] <= _amount(node, ev)  # noqa: E731
        start = F.array_position(F.transform(c1, keep), True).cast("int")
        kept = F.slice(c1, start, F.size(c1) - start + 1)
    out["c"] = kept
    if tr is None:
        emit = F.lit(True)
    elif tr.kind == "count":
        cnt = fields["cnt"] + 1
        emit = cnt == tr.amount
        out["cnt"] = F.when(emit, F.lit(0)).otherwise(cnt).cast("int")
    elif tr.kind == "time":
        period = node.units(tr.amount)
        nt = fields["nt"]
        emit = nt.isNotNull() & (x["t"] >= nt)
        gap = x["t"] - nt  # the next multiple after t: nt + gap - gap mod T + T
        out["nt"] = F.when(nt.isNull(), x["t"] + period) \
            .when(emit, nt + gap - F.pmod(gap, F.lit(period).cast("long")) + period) \
            .otherwise(nt)
    else:
        la = fields["la"]
        emit = la.isNotNull() & (x["ta"] - la > _amount(node, tr))
        out["la"] = F.when(la.isNull() | emit, x["ta"]).otherwise(la)
    return out, emit, F.get(kept, 0)["lp"], x["lp"]


_EMISSION = "struct<ws:int,we:int,at:long>"


def _sequential_per_key(node, df):
    keys = [_c(k) for k in node.partition]
    w = W.partitionBy(*keys).orderBy(*_stream_order(node))
    df = _elements(node, df, F.row_number().over(w))
    seqs = df.groupBy(*keys).agg(
        F.array_sort(F.collect_list(F.struct(F.col("__x")["lp"].alias("lp"),
                                             F.col("__x").alias("x"),
                                             F.col("__row").alias("row")))).alias("__seq"))
    init = F.struct(_state_struct(_fresh(node)).alias("s"),
                    F.array().cast(f"array<{_EMISSION}>").alias("out"))

    def merge(acc, e):
        x = e["x"]
        fields, emit, ws, we = _step(node, acc["s"], x)
        emission = F.array(F.struct(ws.cast("int").alias("ws"), we.cast("int").alias("we"),
                                    e["lp"].cast("long").alias("at")))
        out = F.when(emit, F.concat(acc["out"], emission)).otherwise(acc["out"])
        return F.struct(_state_struct(fields).alias("s"), out.alias("out"))

    folded = seqs.withColumn("__out", F.aggregate("__seq", init, merge)["out"])
    em = folded.select(*keys, "__seq", F.posexplode("__out").alias("__i", "__e"))
    e = F.col("__e")
    rows = F.transform(F.slice("__seq", e["ws"], e["we"] - e["ws"] + 1), lambda y: y["row"])
    at = F.element_at("__seq", e["at"].cast("int"))["row"][node.ts]
    out = em.select(*keys, (F.col("__i") + 1).cast("long").alias("instance"),
                    at.alias("at"), _sorted_rows(rows).alias("tuples"))
    return ordered(out, node.heading)


def _sequential_global(node, df):
    """partitioncount / tuplecount: one fold over the whole stream, partition states in an
    array."""
    pe = node.partition_eviction
    keys = list(node.partition)
    key_struct = F.struct(*[_c(k) for k in keys])
    local = W.partitionBy(*[_c(k) for k in keys]).orderBy(*_stream_order(node))
    glob = W.orderBy(*_stream_order(node))
    df = _elements(node, df, F.row_number().over(local)) \
        .withColumn("__k", key_struct).withColumn("__g", F.row_number().over(glob))
    seq = df.groupBy().agg(F.array_sort(F.collect_list(F.struct(
        F.col("__g").alias("g"), F.col("__k").alias("k"), F.col("__x").alias("x"),
        _c(node.ts).alias("ts")))).alias("__seq"))
    key_type = df.schema["__k"].dataType.simpleString()
    fresh = _fresh(node)
    part_fields = dict(k=F.lit(None).cast(key_type), upd=F.lit(0).cast("int"), **fresh)
    part_type = _state_struct(part_fields)
    emission = f"struct<k:{key_type},ws:int,we:int,at:{spark_type(node.ts_type).simpleString()}>"
    init = F.struct(F.array().cast(f"array<{_type_of(df, part_type)}>").alias("parts"),
                    F.array().cast(f"array<{emission}>").alias("out"))

    def merge(acc, e):
        x, k = e["x"], e["k"]
        parts = acc["parts"]
        present = F.exists(parts, lambda p: p["k"] == k)
        if pe.kind == "partitioncount":
            oldest = F.array_min(F.transform(parts, lambda p: p["upd"]))
            full = ~present & (F.size(parts) >= pe.amount)
            parts = F.when(full, F.filter(parts, lambda p: p["upd"] != oldest)).otherwise(parts)
        new_part = _state_struct(dict(k=k, upd=e["g"].cast("int"), **fresh))
        parts = F.when(present, parts).otherwise(F.concat(parts, F.array(new_part)))
        mine = F.get(F.filter(parts, lambda p: p["k"] == k), 0)
        fields, emit, ws, we = _step(node, mine, x)
        updated = _state_struct(dict(k=k, upd=e["g"].cast("int"), **fields))
        parts = F.transform(parts, lambda p: F.when(p["k"] == k, updated).otherwise(p))
        if pe.kind == "tuplecount":
            parts = _keep_recent(parts, pe.amount)
        em = F.array(F.struct(k.alias("k"), ws.cast("int").alias("ws"),
                              we.cast("int").alias("we"), e["ts"].alias("at")))
        out = F.when(emit, F.concat(acc["out"], em)).otherwise(acc["out"])
        return F.struct(parts.alias("parts"), out.alias("out"))

    emissions = seq.select(F.posexplode(F.aggregate("__seq", init, merge)["out"])
                           .alias("__i", "__e"))
    emissions = emissions.select("__i", *[F.col("__e")["k"][n].alias(f"__ek_{n}") for n in keys],
                                 F.col("__e")["ws"].alias("__ws"), F.col("__e")["we"].alias("__we"),
                                 F.col("__e")["at"].alias("at"))
    rows = df.groupBy(*[_c(k) for k in keys]).agg(F.array_sort(F.collect_list(F.struct(
        F.col("__x")["lp"].alias("lp"), F.col("__row").alias("row")))).alias("__rows"))
    cond = reduce(lambda a, b: a & b, [_c(n) == F.col(f"__ek_{n}") for n in keys])
    joined = emissions.join(rows, cond, "inner")
    content = F.transform(F.slice("__rows", F.col("__ws"), F.col("__we") - F.col("__ws") + 1),
                          lambda y: y["row"])
    inst = F.row_number().over(W.partitionBy(*[_c(k) for k in keys]).orderBy("__i"))
    out = joined.select(*[_c(k) for k in keys], inst.cast("long").alias("instance"), "at",
                        _sorted_rows(content).alias("tuples"))
    return ordered(out, node.heading)


def _type_of(df, col):
    return df.select(col.alias("t")).schema["t"].dataType.simpleString()


def _keep_recent(parts, limit):
    """tuplecount(N): keep the most recently updated partitions while their sizes sum to at
    most N (evicting from the least recently updated one)."""
    recent = F.array_sort(parts, lambda l, r: F.when(l["upd"] > r["upd"], -1)
                          .when(l["upd"] < r["upd"], 1).otherwise(0))
    sizes = F.transform(recent, lambda p: F.size(p["c"]))
    prefix = F.transform(recent, lambda p, i: F.aggregate(
        F.slice(sizes, 1, i + 1), F.lit(0), lambda a, v: a + v))
    keep = F.arrays_zip(recent.alias("p"), prefix.alias("n"))
    return F.transform(F.filter(keep, lambda z: z["n"] <= limit), lambda z: z["p"])


# ---------------------------------------------------------------------- timeInterval

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
