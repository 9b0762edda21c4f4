"""Spark translation of WINDOWBY (seed 003), the windows of ``sira/engine/windowby.py``.

One ``groupBy`` on the partition attributes collects each partition's tuples as an array of
structs, sorted by the order attributes and then by the tuple itself (the canonical tie-break;
interval attributes sort by (begin, unbounded, end) as in Python). The windows are then found
with higher-order functions on positions 1..n of that array, never with ``collect()`` or a
Python UDF:

* a condition is the clause's ``when`` compiled by :func:`condition_column` with a ``Scope``
  that maps each variable to a column: AS/PREV/NEXT to ``get(seq, p-1)`` / ``p-2`` / ``p``, AT
  to the position. MISSING is null: a part reading a PREV/NEXT that does not exist is null
  (whatever its operator would make of a null), Spark's AND/OR/NOT have SQL++'s three-valued
  truth tables on nulls, ``is_missing`` is ``isNull`` of such a part, and the clause fires
  only where the condition is true; no null leaves the condition;
* sliding starts are ``filter(sequence(1, n), START)``; each end is the first element of
  ``filter(sequence(s, n), END)`` (null: unclosed, the end is n);
* tumbling windows are a sequential ``aggregate`` over the positions whose accumulator holds
  the next free position, a stop flag (an unclosed window ends the scan) and the windows so
  far; the end search runs only for the positions that do start a window;
* LABEL: ``filter`` the label positions, then for each the first START position (or 1, with
  ``opened`` false) and its end;
* ``explode`` gives one row per window; ``w`` is ``array_sort(slice(seq, s, e-s+1))`` (an RVA's
  canonical form) and pushed-down aggregates fold that slice without keeping it.

Segmentations -- TUMBLING without LABEL, START without a condition, END reading only its own
variables, as in sessions by timeout (seed 003, section 4.3) -- need no array: the windows are
the runs of positions cut after each position satisfying END, found with window functions (one
sort per partition, END on each row with its lag/lead, a running count of END positions) and
one ``groupBy`` (see ``_segments``).

Limits (other windows): a partition's whole sequence is one array, so it must fit in one task's memory. This is
the paper's two-pass scheme for sequences split across nodes (section 5) done by the shuffle:
``groupBy`` reassembles a sequence whatever partitions its tuples come from, and every window,
local or spanning several of those partitions, is then found in one pass. The end search is
quadratic in the worst case (every position starting a window that never ends). Ties on the
order attributes between tuples that differ only in tuple- or relation-valued attributes may
break in a different order than on the Python engine.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Window as W
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sira.algebra.windowby import Absence, Strict, WindowBy
from sira.intervals import IntervalType
from sira.types import RelationType
from sira.values import Heading

from .basic import fenced_node
from .compiler import ordered, translates
from .functions import Scope, aggregated_column, column
from .types import schema_of

#: one window: label position (null without LABEL), start, end, opened, closed
WINDOW = T.StructType([T.StructField("l", T.IntegerType()), T.StructField("s", T.IntegerType()),
                       T.StructField("e", T.IntegerType()),
                       T.StructField("opened", T.BooleanType()),
                       T.StructField("closed", T.BooleanType())])

_VISIBLE = {"label": ("label",), "start": ("label", "start"),
            "end": ("label", "start", "end")}


def _c(name):
    return F.col(f"`{name}`")


def _sort_key(col, t):
    """A column ordering values of type t as the Python engine's sort key does."""
    if isinstance(t, IntervalType):
        return F.struct(col["begin"].alias("b"), col["end"].isNull().alias("u"),
                        F.coalesce(col["end"], col["begin"]).alias("e"))
    return col


class _Windows:
    """The column expressions of one node over the partition's sequence ``seq``."""

    def __init__(self, node, compiler, seq):
        self.node = node
        self.compiler = compiler
        self.seq = seq
        self.n = F.size(seq)
        self.heading = node.source.heading

    def exists(self, kind, p):
        if kind == "prev":
            return p > 1
        if kind == "next":
            return p < self.n
        return F.lit(True)

    def value(self, kind, p, in_condition):
        if kind == "at":
            return p.cast("long")
        if kind == "as":
            return F.get(self.seq, p - 1)
        q = p - 1 if kind == "prev" else p + 1
        one = F.get(self.seq, q - 1)
        if in_condition:
            return one
        empty = F.array().cast(T.ArrayType(schema_of(self.heading), False))
        return F.when(self.exists(kind, p), F.array(one)).otherwise(empty)

    def condition(self, which, positions: dict):
        """The clause's condition at ``positions`` (a column per role; ``"opened"``, when
        given, says whether a LABEL window's start exists)."""
        node = self.node
        values, exists = {}, {}
        for role in _VISIBLE[which]:
            for kind, name in node.variables(role):
                values[name] = self.value(kind, positions[role], True)
                there = self.exists(kind, positions[role]) if kind in ("prev", "next") \
                    else None
                if role == "start" and "opened" in positions:
                    there = positions["opened"] if there is None else positions["opened"] & there
                if there is not None:
                    exists[name] = there
        return condition_column(node, which, self.compiler, values, exists)

    def first_end(self, positions: dict, s):
        """The first position >= s whose END holds (null when none)."""
        return F.get(F.filter(F.sequence(s, self.n),
                              lambda q: self.condition("end", {**positions, "end": q})), 0)

    def window(self, label, s, opened, end_found):
        """A WINDOW struct from the start and the END search's result (null: unclosed)."""
        if self.node.end.unbounded:
            e, closed = self.n, F.lit(True)
        else:
            e, closed = F.coalesce(end_found, self.n), end_found.isNotNull()
        return F.struct(label.cast("int").alias("l"), s.alias("s"), e.alias("e"),
                        opened.alias("opened"), closed.alias("closed"))

    def _end_or_null(self, positions, s):
        if self.node.end.unbounded:
            return F.lit(None).cast("int")
        return self.first_end(positions, s)

    def all(self):
        """The array of WINDOW structs of the sequence."""
        node = self.node
        positions = F.sequence(F.lit(1), self.n)
        none = F.lit(None).cast("int")
        if node.label is not None:
            labels = F.filter(positions, lambda l: self.condition("label", {"label": l}))
            if node.start.unbounded:
                starts = F.transform(labels, lambda l: F.struct(
                    l.alias("l"), F.lit(1).alias("s"), F.lit(True).alias("opened")))
            else:
                def first_start(l):
                    found = F.get(F.filter(positions, lambda p: self.condition(
                        "start", {"label": l, "start": p})), 0)
                    return F.struct(l.alias("l"), found.alias("found"))
                starts = F.transform(F.transform(labels, first_start), lambda x: F.struct(
                    x["l"].alias("l"), F.coalesce(x["found"], F.lit(1)).alias("s"),
                    x["found"].isNotNull().alias("opened")))
            return F.transform(starts, lambda x: self.window(
                x["l"], x["s"], x["opened"],
                self._end_or_null({"label": x["l"], "start": x["s"], "opened": x["opened"]},
                                  x["s"])))
        if node.start.unbounded:
            one = F.lit(1)
            return F.array(self.window(none, one, F.lit(True),
                                       self._end_or_null({"start": one}, one)))
        if node.kind == "sliding":
            starts = F.filter(positions, lambda s: self.condition("start", {"start": s}))
            found = F.transform(starts, lambda s: F.struct(
                s.alias("s"), self._end_or_null({"start": s}, s).alias("e")))
            return F.transform(found, lambda x: self.window(none, x["s"], F.lit(True), x["e"]))
        # tumbling: a sequential scan; a window starts only after the previous one ended
        empty = F.array().cast(T.ArrayType(WINDOW))
        init = F.struct(F.lit(1).alias("next"), F.lit(False).alias("stop"),
                        empty.alias("wins"))

        def step(acc, i):
            take = ~acc["stop"] & (i >= acc["next"]) & self.condition("start", {"start": i})

            def extend(w):
                return F.struct((w["e"] + 1).alias("next"), (~w["closed"]).alias("stop"),
                                F.concat(acc["wins"], F.array(w)).alias("wins"))
            # the end search, bound once (a one-element transform is a let)
            opened = F.get(F.transform(F.array(self.window(
                none, i, F.lit(True), self._end_or_null({"start": i}, i))), extend), 0)
            return F.when(take, opened).otherwise(acc)
        return F.aggregate(positions, init, step)["wins"]


def condition_column(node, which, compiler, values: dict, exists: dict):
    """A WINDOWBY clause's condition as a non-null BOOLEAN column: true where it is TRUE, false
    where it is FALSE or MISSING (a clause fires only on TRUE).

    Args:
        node: the WindowBy node.
        which: ``"label"``, ``"start"`` or ``"end"``.
        compiler: the Spark compiler (for relational operands).
        values: the column of each variable the clause sees.
        exists: for each PREV/NEXT variable, a non-null column telling whether it exists.
    """
    part = node.condition(which)
    if part is None:
        return F.lit(True)
    value, _ = _part_columns(part, node.scope(which), compiler, values, exists)
    return F.coalesce(value, F.lit(False))


def _part_columns(part, scope, compiler, values, exists):
    """(value, missing) columns of a three-valued part: value is null exactly where the part
    is MISSING, and ``missing`` (never null) says so."""
    if isinstance(part, Strict):
        return _strict_columns(part, scope, compiler, values, exists)
    if isinstance(part, Absence):
        _, missing = _part_columns(part.part, scope, compiler, values, exists)
        return missing, F.lit(False)
    # a Connective: Spark's AND/OR/NOT on nulls are SQL++'s on MISSING
    cols = [_part_columns(p, scope, compiler, values, exists)[0] for p in part.parts]
    if part.op == "not":
        value = ~cols[0]
    elif part.op == "and":
        value = reduce(lambda a, b: a & b, cols)
    else:
        value = reduce(lambda a, b: a | b, cols)
    return value, value.isNull()


def _strict_columns(part, scope, compiler, values, exists):
    """A part that is MISSING (null) when a variable it needs does not exist or a hole is
    MISSING, and otherwise its expression as ``functions.column`` computes it (never null)."""
    holes = {name: _part_columns(p, scope, compiler, values, exists)
             for name, p in part.holes}
    heading = part.heading(scope)
    cols = {**values, **{name: v for name, (v, _) in holes.items()}}
    value = column(part.expr, heading, compiler, Scope(heading, cols, compiler))
    flags = [~exists[n] for n in sorted(part.needs)] + [m for _, m in holes.values()]
    if not flags:
        return value, F.lit(False)
    missing = reduce(lambda a, b: a | b, flags)
    return F.when(~missing, value), missing


def _segmentation(node) -> bool:
    """True when the windows are the segments of each sequence cut after every position whose
    END holds: TUMBLING without LABEL, a START without condition (every position may start a
    window), and an END condition that reads only the END variables (so whether position q ends
    a window does not depend on where the window started)."""
    if node.label is not None or node.kind != "tumbling" or node.start.unbounded \
            or node.start.when is not None:
        return False
    if node.end.unbounded or node.end.when is None:
        return True
    from sira.expressions.nodes import attributes_used
    start_names = {n for _, n in node.variables("start")}
    return not (attributes_used(node.end.when) & start_names)


def _simple_aggregate(expr, h, rt, frame=None):
    """A Spark aggregate (over ``frame`` when given) giving exactly the Python engine's value
    of ``count(w)``, ``sum(w, a)`` of integers, ``min``/``max`` of plain scalars (None: fold
    the sorted array instead)."""
    from sira.types import INTEGER_TYPES, TupleType
    from .types import spark_type

    def over(agg):
        return agg if frame is None else agg.over(frame)
    if expr.op == "count":
        return over(F.count(F.lit(1))).cast("int")
    t = h.type_of(expr.name)
    if expr.op == "sum" and t in INTEGER_TYPES:
        return over(F.sum(_c(expr.name))).cast(spark_type(rt))
    if expr.op in ("min", "max") and not isinstance(t, (IntervalType, RelationType, TupleType)) \
            and t.name not in ("FLOAT", "AVERAGE"):
        return over((F.min if expr.op == "min" else F.max)(_c(expr.name)))
    return None


def _sequence_order(node):
    """The window over each partition's sequence, in WINDOWBY's order (then the tuple's)."""
    h = node.source.heading
    skip = set(node.partition) | set(node.order)
    keys = [_sort_key(_c(n), h.type_of(n)).asc() for n in node.order] + \
        [_sort_key(_c(n), t).asc() for n, t in h.attributes if n not in skip]
    return W.partitionBy(*[_c(n) for n in node.partition]).orderBy(*keys)


def _segments(node, df, c):
    """WINDOWBY by window functions when :func:`_segmentation` holds (the usual sessions:
    ``tumbling, start(as(s)), end(as(e) next(en) when(en.t - e.t > gap))``).

    One sort per partition, as the order (then the tuple) dictates: each position's END is
    evaluated on its own row, its lag and its lead; a window's number is how many END positions
    come before it (a running sum); one ``groupBy(partition, window)`` then gives the start
    variables (at the window's first position, ``min_by``), the end variables (at its last,
    ``max_by``), ``closed`` (its last position satisfies END: only a sequence's last window
    can be unclosed) and either ``w`` (``array_sort(collect_list)``, the canonical RVA) or the
    pushed-down aggregates (Spark aggregates where they are exact, else the sorted fold).
    Equal to the scan of ``sira/engine/windowby.py``: a tumbling window starts right after the
    previous one ended, at the next position, because every position satisfies START.
    """
    h = node.source.heading
    w = _sequence_order(node)
    row = F.struct(*[_c(n) for n in h.names])
    # variables as expressions on each row (never materialised as columns, so that Spark keeps
    # only the fields a condition reads: ``en.ts`` is ``lead(ts)``, not a lead of a struct)
    p = F.row_number().over(w)
    source = {"at": p.cast("long"), "as": row,
              "prev": F.struct(*[F.lag(_c(n)).over(w).alias(n) for n in h.names]),
              "next": F.struct(*[F.lead(_c(n)).over(w).alias(n) for n in h.names])}
    exists = {"prev": F.lag(F.lit(1)).over(w).isNotNull(),
              "next": F.lead(F.lit(1)).over(w).isNotNull()}
    if node.end.unbounded or node.end.when is None:
        flag = F.lit(not node.end.unbounded)
    else:
        flag = condition_column(
            node, "end", c, {name: source[kind] for kind, name in node.variables("end")},
            {name: exists[kind] for kind, name in node.variables("end") if kind in exists})
    # the result's variables, as values on each row: PREV/NEXT as relations of 0 or 1 tuple
    empty = F.array().cast(T.ArrayType(schema_of(h), False))
    cols = {"__f": flag}
    for role in ("start", "end"):
        for kind, name in node.variables(role):
            if kind in ("prev", "next"):
                cols[f"__v_{name}"] = F.when(exists[kind], F.array(source[kind])) \
                    .otherwise(empty)
            else:
                cols[f"__v_{name}"] = source[kind]
    if any(kind != "at" for kind, _ in node.variables()):
        cols["__p"] = p
    df = df.select("*", *[col.alias(n) for n, col in cols.items()])
    df = df.withColumn("__wid", F.coalesce(F.sum(F.col("__f").cast("long")).over(
        w.rowsBetween(W.unboundedPreceding, -1)), F.lit(0)))
    aggs = []
    for role in ("start", "end"):
        for kind, name in node.variables(role):
            value = F.col(f"__v_{name}")
            if kind == "at":
                picked = (F.min if role == "start" else F.max)(value)
            else:
                picked = (F.min_by if role == "start" else F.max_by)(value, F.col("__p"))
            aggs.append(picked.alias(name))
    aggs.append((F.lit(True) if node.end.unbounded else F.bool_or("__f")).alias("closed"))
    rows = F.array_sort(F.collect_list(row))
    if node.aggregates:
        scope = Heading.of({node.result: RelationType(h)})
        from sira.expressions.evaluate import aggregated_type
        for name, e in node.aggregates:
            _, _, rt = aggregated_type(e, scope)
            simple = _simple_aggregate(e, h, rt)
            aggs.append((simple if simple is not None else
                         aggregated_column(e, rows, scope)).alias(name))
    else:
        aggs.append(rows.alias(node.result))
    g = df.groupBy(*[_c(n) for n in node.partition], "__wid").agg(*aggs)
    if node.only:
        g = g.where(F.col("closed"))
    return ordered(g, node.heading)


def _label_frame(node):
    """The frame of every LABEL window when each is the run of positions ending at its label,
    ``C`` positions long (START ``when(lp - sp = C)``, or ``unbounded``: C None) and END
    ``when(ep = lp)``; False otherwise. Variables: AS and AT only; a LABEL condition may read
    its own."""
    from sira.expressions.nodes import AttrRef, Call, Literal, attributes_used
    if node.label is None or node.kind != "sliding" or node.end.unbounded:
        return False
    if any(kind not in ("as", "at") for kind, _ in node.variables()):
        return False
    lp = node.label.at
    ep = node.end.at
    if lp is None or ep is None or node.end.when not in (
            Call("eq", (AttrRef(ep), AttrRef(lp))), Call("eq", (AttrRef(lp), AttrRef(ep)))):
        return False
    if node.label.when is not None and attributes_used(node.label.when) - \
            {n for _, n in node.variables("label")}:
        return False
    if node.start.unbounded:
        return None
    sp, when = node.start.at, node.start.when
    if sp is None or not (isinstance(when, Call) and when.op == "eq" and len(when.args) == 2):
        return False
    diff, amount = when.args
    if diff != Call("minus", (AttrRef(lp), AttrRef(sp))) or not isinstance(amount, Literal) \
            or isinstance(amount.value, bool) or not isinstance(amount.value, int) \
            or amount.value < 0:
        return False
    return amount.value


def _label_frames(node, df, c, back):
    """WINDOWBY by a running frame when :func:`_label_frame` holds (``back`` = C, or None).

    The window of label position lp is positions max(1, lp-C)..lp (the Python scan: the first
    START position is lp-C when lp > C, else none, and the window starts at 1 with ``opened``
    false; END holds first at lp): ``rowsBetween(-C, 0)`` in the sequence's order, so no
    array of the sequence is built. ``w`` and aggregates come from that frame; the LABEL
    condition, if any, filters the rows afterwards.
    """
    h = node.source.heading
    w = _sequence_order(node)
    frame = w.rowsBetween(W.unboundedPreceding if back is None else -back, 0)
    row = F.struct(*[_c(n) for n in h.names])
    p = F.row_number().over(w).cast("long")
    start = F.lit(1).cast("long") if back is None else F.greatest(p - back, F.lit(1))
    opened = F.lit(True) if back is None else p > back
    values = {("label", "as"): row, ("label", "at"): p, ("end", "as"): row, ("end", "at"): p,
              ("start", "as"): F.first(row).over(frame), ("start", "at"): start}
    cols = [_c(n) for n in node.partition]
    for role in ("label", "start", "end"):
        for kind, name in node.variables(role):
            cols.append(values[(role, kind)].alias(name))
    cols += [F.lit(True).alias("closed"), opened.alias("opened")]
    rows = F.array_sort(F.collect_list(row).over(frame))
    if node.aggregates:
        scope = Heading.of({node.result: RelationType(h)})
        from sira.expressions.evaluate import aggregated_type
        for name, e in node.aggregates:
            _, _, rt = aggregated_type(e, scope)
            simple = _simple_aggregate(e, h, rt, frame)
            cols.append((simple if simple is not None else
                         aggregated_column(e, rows, scope)).alias(name))
    else:
        cols.append(rows.alias(node.result))
    if node.label.when is not None:
        where = {name: values[("label", kind)] for kind, name in node.variables("label")}
        cols.append(condition_column(node, "label", c, where, {}).alias("__label"))
        out = df.select(*cols).where(F.col("__label"))
    else:
        out = df.select(*cols)
    return ordered(out, node.heading)


@translates(WindowBy)
def _windowby(node, children, c):
    """Conditions and aggregates that may fail run on every partition and window, whatever
    the query does with the result (see ``sira.algebra.fallible``)."""
    return fenced_node(node, _windows_of(node, children, c))


def _windows_of(node, children, c):
    (df,) = children
    h = node.source.heading
    if _segmentation(node):
        return _segments(node, df, c)
    back = _label_frame(node)
    if back is not False:
        return _label_frames(node, df, c, back)
    entry = F.struct(
        F.struct(*[_sort_key(_c(n), h.type_of(n)).alias(f"k{i}")
                   for i, n in enumerate(node.order)]).alias("k"),
        F.struct(*[_sort_key(_c(n), t).alias(f"t{i}")
                   for i, (n, t) in enumerate(h.attributes)]).alias("t"),
        F.struct(*[_c(n) for n in h.names]).alias("r"))
    parts = [_c(n) for n in node.partition]
    g = df.groupBy(*parts).agg(F.sort_array(F.collect_list(entry)).alias("__seq"))
    if not node.partition:  # a global aggregation yields one row even for an empty input
        g = g.where(F.size("__seq") > 0)
    g = g.withColumn("__seq", F.transform("__seq", lambda x: x["r"]))
    seq = F.col("__seq")
    windows = _Windows(node, c, seq)
    g = g.select(*parts, seq, F.explode(windows.all()).alias("__w"))
    win = F.col("__w")
    if node.only:
        g = g.where(win["closed"])
    cols = [_c(n) for n in node.partition]
    for role, p in (("label", win["l"]), ("start", win["s"]), ("end", win["e"])):
        for kind, name in node.variables(role):
            cols.append(windows.value(kind, p, False).alias(name))
    cols.append(win["closed"].alias("closed"))
    if node.label is not None:
        cols.append(win["opened"].alias("opened"))
    rows = F.array_sort(F.slice(seq, win["s"], win["e"] - win["s"] + 1))
    if node.aggregates:
        scope = Heading.of({node.result: RelationType(h)})
        cols += [aggregated_column(e, rows, scope).alias(name) for name, e in node.aggregates]
    else:
        cols.append(rows.alias(node.result))
    return ordered(g.select(*cols), node.heading)
