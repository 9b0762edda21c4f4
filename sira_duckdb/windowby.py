"""DuckDB translation of WINDOWBY (seed 003), the windows of ``sira/engine/windowby.py``.

Segmentations -- TUMBLING without LABEL, START without a condition, END reading only its own
variables, as in sessions by timeout (seed 003, section 4.3) -- are window functions: one sort
per partition, END on each row with its lag/lead, a running count of END positions, and one
GROUP BY (see ``_segments``). Conditions there are compiled to SQL by :func:`condition_sql`
with a ``Scope`` mapping each variable to a column: MISSING is NULL (a part reading a PREV/NEXT
that does not exist is NULL), SQL's AND/OR/NOT on NULLs are SQL++'s three-valued truth tables on
MISSING, ``is_missing`` is ``IS NULL`` of such a part, and a clause fires only where its
condition is TRUE.

Every other WINDOWBY (sliding, LABEL, ONLY, START conditions, ENDs reading the start or the label)
numbers each partition and each position of it into a temporary table of rows. Where every position
is found by a per-row condition or by arithmetic -- a SLIDING window without LABEL whose END is
pinned to its start (``ep - sp = 3``), unbounded or unconditional; a LABEL window whose START is
pinned to the label, unbounded, or reads no label variable (the sequence's first START position),
and whose END is pinned to the label or the start, unbounded or unconditional -- the windows are
found in SQL: each clause's condition on the rows (with ``lag``/``lead`` for PREV/NEXT) and the
rows at the pinned positions by hash joins on the position (:func:`_pinned_windows`,
:func:`_label_windows`). A TUMBLING window with a START condition and such an END is a chain (each
window opens at the first START position after the previous one's end): SQL finds the START
positions and whether a window opened at each would close, and the chain is walked over them by
binary search, one step per window (:func:`_chained_windows`). Otherwise the windows are found by
the reference's own search (``sira.engine.windowby.find_windows``, which walks only the windows it
finds, or uses arithmetic for positions pinned to another variable) over those rows as DuckDB
sorted them, so positions and three-valued conditions are the Python engine's by construction; each
window's variables are rows looked up by (partition, position) and its tuples the rows at its
positions, by equi-joins, gathered into the sorted list of an RVA or folded into the pushed-down
aggregates. No partition is gathered into one list: time and memory are linear in the input plus
the windows' tuples, whatever the partitions look like.

Ties on the order attributes are broken by the tuple itself (the canonical tie-break; interval
attributes sort by (begin, unbounded, end) as in Python).
"""

from __future__ import annotations

from sira.algebra.windowby import Absence, Strict, WindowBy
from sira.expressions.nodes import attributes_used
from sira.types import RelationType
from sira.values import Heading

from .basic import fenced_node
from .compiler import translates
from .functions import Scope, aggregated, can_fail, canonical_list, expression, once
from .guards import held
from .sql import ident, or_any, struct_pack
from .types import duckdb_type
from .windows import order_columns

_VISIBLE = {"label": ("label",), "start": ("label", "start"),
            "end": ("label", "start", "end")}



# ---------------------------------------------------------------------- three-valued conditions

def condition_sql(node, which, c, values: dict, exists: dict) -> str:
    """A WINDOWBY clause's condition as a BOOLEAN that is never NULL: TRUE where it is TRUE,
    FALSE where it is FALSE or MISSING (a clause fires only on TRUE).

    Args:
        values: the SQL of each variable the clause sees.
        exists: for PREV/NEXT variables (and a LABEL window's start variables in END), SQL
            telling whether the variable exists.
    """
    part = node.condition(which)
    if part is None:
        return "TRUE"
    inline, c.inline_operands = getattr(c, "inline_operands", False), True
    try:  # conditions run inside lambdas: relational operands become literals
        value, _ = _part_sql(part, node.scope(which), c, values, exists)
    finally:
        c.inline_operands = inline
    return f"coalesce({value}, FALSE)"


def _part_sql(part, scope, c, values, exists):
    """(value, missing) of a three-valued part: value is NULL exactly where the part is
    MISSING, and ``missing`` (never NULL) says so."""
    if isinstance(part, Strict):
        holes = {name: _part_sql(p, scope, c, values, exists) for name, p in part.holes}
        heading = part.heading(scope)
        cols = {**values, **{name: v for name, (v, _) in holes.items()}}
        value = expression(part.expr, heading, c, Scope(cols))
        flags = [f"NOT ({exists[n]})" for n in sorted(part.needs) if n in exists]
        flags += [m for _, m in holes.values()]
        if not flags:
            return value, "FALSE"
        missing = or_any(flags)
        return f"(CASE WHEN NOT ({missing}) THEN {value} END)", f"({missing})"
    if isinstance(part, Absence):
        _, missing = _part_sql(part.part, scope, c, values, exists)
        return missing, "FALSE"
    parts = [_part_sql(p, scope, c, values, exists)[0] for p in part.parts]
    if part.op == "not":
        value = f"(NOT {parts[0]})"
    elif any(map(_may_fail, part.parts)):
        value = _in_order(part.op, parts, c)
    else:
        value = "(" + f" {part.op.upper()} ".join(parts) + ")"
    return value, f"({value} IS NULL)"


def _may_fail(part) -> bool:
    """Whether a three-valued part may raise for some tuple."""
    if isinstance(part, Strict):
        return can_fail(part.expr) or any(_may_fail(p) for _, p in part.holes)
    if isinstance(part, Absence):
        return _may_fail(part.part)
    return any(map(_may_fail, part.parts))


def _in_order(op: str, parts: list, c) -> str:
    """A three-valued ``and``/``or`` of ``parts`` (SQL, NULL for MISSING) evaluated as the
    reference's: left to right, up to the first part that decides (FALSE for ``and``, TRUE
    for ``or``; a MISSING one does not). Each part is bound once (:func:`once`) where the ones
    before it have not decided, so the SQL grows linearly however deep the parts nest; the
    plain AND/OR would let DuckDB evaluate a later part first, or absorb a failing one
    (``(n.val > 0 AND 6 // s.val > 1) OR n.val > 0`` became ``n.val > 0``).

        >>> print(_in_order("and", ["p", "q"], None))
        (CASE WHEN (p) IS NOT DISTINCT FROM FALSE THEN FALSE ELSE (CASE WHEN (q) IS NOT \
DISTINCT FROM FALSE THEN FALSE ELSE ((p) AND (q)) END) END)
    """
    stop = "FALSE" if op == "and" else "TRUE"

    def rest(i: int, bound: list) -> str:
        if i == len(parts):  # no part decided: each TRUE or MISSING (and), FALSE or MISSING (or)
            return "(" + f" {op.upper()} ".join(f"({v})" for v in bound) + ")"
        return once(c, parts[i], lambda v: f"(CASE WHEN ({v}) IS NOT DISTINCT FROM {stop} THEN "
                                           f"{stop} ELSE {rest(i + 1, [*bound, v])} END)")
    return rest(0, [])


# ---------------------------------------------------------------------- sequences

def _sequence_order(node) -> list:
    """ORDER BY items: the order attributes, then the tuple (canonical tie-break)."""
    h = node.source.heading
    skip = set(node.partition) | set(node.order)
    return order_columns(h, node.order) + order_columns(h, [n for n in h.names if n not in skip])


def _row(heading) -> str:
    return struct_pack([(n, ident(n)) for n in heading.names])


def _group_aggregates(node, rows: str, c) -> list:
    """The pushed-down aggregates of windows that are groups of a GROUP BY over the sequence's
    rows (a set: the operand of a WINDOWBY is read distinct): ``count``, ``min``, ``max`` and
    integer ``sum`` are SQL aggregates over the group, which DuckDB computes in parallel and
    without a list; the others fold ``rows``, the group's tuples as a list
    (:func:`_result_aggregates`)."""
    from sira.expressions.evaluate import aggregated_type
    from sira.types import INTEGER_TYPES

    from .functions import cast

    scope = Heading.of({node.result: RelationType(node.source.heading)})
    out = []
    for name, e in node.aggregates:
        _, at, rt = aggregated_type(e, scope)
        if e.op == "count":
            value = "CAST(count(*) AS INTEGER)"
        elif e.op in ("min", "max"):
            value = f"{e.op}({ident(e.name)})"
        elif e.op == "sum" and at in INTEGER_TYPES:
            value = cast(f"sum({ident(e.name)})", rt)
        else:
            out += _result_aggregates(node, rows, c, [(name, e)])
            continue
        out.append(f"{value} AS {ident(name)}")
    return out


def _result_aggregates(node, rows: str, c, specs=None) -> list:
    """The pushed-down aggregates over ``rows``, a window's tuples as a list without
    duplicates in any order (each aggregation that depends on the order sorts its values
    itself, as the Python engine does)."""
    scope = Heading.of({node.result: RelationType(node.source.heading)})
    return [f"{aggregated(e, rows, scope, c)} AS {ident(name)}"
            for name, e in (node.aggregates if specs is None else specs)]


@translates(WindowBy)
def _windowby(node, children, c):
    """Conditions and aggregates that may fail run on every partition and window, whatever
    the query does with the result (see ``sira.algebra.fallible``)."""
    windows = _windows_of(node, children, c)
    if not node.aggregates:  # max_tuples: the tuples its windows hold
        windows = f"SELECT * FROM {held(c, node, windows, ident(node.result))}"
    return fenced_node(node, windows)


def _windows_of(node, children, c):
    (child,) = children
    if _segmentation(node):
        return _segments(node, child, c)
    return _searched(node, child, c)


def _searched(node, child, c) -> str:
    """WINDOWBY in general: DuckDB numbers each partition (``pidx``) and each position in it
    (``pos``, in sequence order) into a temporary table of rows; the windows (label, start,
    end, opened, closed per partition) are found by the reference's own search over those
    rows (:func:`_found_windows`); each window's variables are rows looked up by (partition,
    position) and its tuples the rows at positions ``s..e`` (one row per member, an equi-join),
    gathered into the sorted list of an RVA or folded into the pushed-down aggregates. Hash
    joins and one sort per partition: linear in the input plus the windows' tuples, whatever
    the partitions look like."""
    h = node.source.heading
    keys = [ident(n) for n in node.partition]
    pidx, pos, r = c.helper("pidx"), c.helper("pos"), c.helper("r")
    number = (f"dense_rank() OVER (ORDER BY {', '.join(order_columns(h, node.partition))})"
              if keys else "1")
    part = f"PARTITION BY {', '.join(keys)} " if keys else ""
    rows = c.materialize(
        f"SELECT {', '.join(keys + [''])}{number} AS {pidx}, row_number() OVER ({part}ORDER BY "
        f"{', '.join(_sequence_order(node))}) AS {pos}, {_row(h)} AS {r} FROM {child}",
        "sequences", node)
    offset, frame, chain = _end_offset(node), _label_frame(node), _chain_offset(node)
    if offset is not None:
        found = _pinned_windows(node, c, rows, pidx, pos, r, offset)
    elif chain is not None:
        found = c.register(_chained_windows(node, c, rows, pidx, pos, r, chain), "windows")
    elif frame is not None:
        found = _label_windows(node, c, rows, pidx, pos, r, *frame)
    else:
        found = c.register(_found_windows(node, c, rows, pidx, pos, r), "windows")
    wid = c.helper("wid")
    windows = c.define(f"SELECT *, row_number() OVER () AS {wid} FROM {found}", "windows")
    members = c.define(
        f"SELECT m.{wid}, list(q.{r}) AS {r} FROM (SELECT {wid}, pidx, "
        f"unnest(range(s, e + 1)) AS {pos} FROM {windows}) AS m JOIN {rows} AS q "
        f"ON q.{pidx} = m.pidx AND q.{pos} = m.{pos} GROUP BY m.{wid}", "members")
    joins, cols = [], []
    if keys:
        joins.append(f"JOIN (SELECT DISTINCT {', '.join(keys)}, {pidx} FROM {rows}) AS k "
                     f"ON k.{pidx} = f.pidx")
        cols += [f"k.{k}" for k in keys]
    empty = f"CAST([] AS {duckdb_type(RelationType(h))})"
    for role, at in (("label", "f.l"), ("start", "f.s"), ("end", "f.e")):
        for kind, name in node.variables(role):
            if kind == "at":
                cols.append(f"CAST({at} AS BIGINT) AS {ident(name)}")
                continue
            alias = c.helper(f"v{len(joins)}")
            shift = {"as": "", "prev": " - 1", "next": " + 1"}[kind]
            joins.append(f"LEFT JOIN {rows} AS {alias} ON {alias}.{pidx} = f.pidx AND "
                         f"{alias}.{pos} = {at}{shift}")
            if kind == "as":
                cols.append(f"{alias}.{r} AS {ident(name)}")
            else:
                cols.append(f"CASE WHEN {alias}.{r} IS NULL THEN {empty} ELSE [{alias}.{r}] "
                            f"END AS {ident(name)}")
    cols.append("f.closed AS closed")
    if node.label is not None:
        cols.append("f.opened AS opened")
    content = canonical_list(f"m.{r}")
    if node.aggregates:  # a window's members are distinct positions of a set
        cols += _result_aggregates(node, f"m.{r}", c)
    else:
        cols.append(f"{content} AS {ident(node.result)}")
    joins.append(f"JOIN {members} AS m ON m.{wid} = f.{wid}")
    where = " WHERE f.closed" if node.only else ""
    return f"SELECT {', '.join(cols)} FROM {windows} AS f {' '.join(joins)}{where}"


def _end_offset(node):
    """For a SLIDING WINDOWBY without LABEL whose END is unbounded (``"unbounded"``), has no
    condition (it holds at the start: offset 0) or is pinned to the start (``ep - sp = k``:
    k), what :func:`_pinned_windows` needs; None for every other WINDOWBY."""
    if node.label is not None or node.kind != "sliding" or node.start.unbounded:
        return None
    return _start_pinned_end(node)


def _start_pinned_end(node):
    """``"unbounded"`` for an unbounded END, 0 for one without condition (it holds at the
    start), k for one pinned to the start (``ep - sp = k``), else None."""
    from sira.engine.windowby import _pin

    if node.end.unbounded:
        return "unbounded"
    if node.end.when is None:
        return 0
    pin = _pin(node, "end", ("label", "start"))
    return pin[1] if pin is not None and pin[0] == "start" else None


def _label_frame(node):
    """For a WINDOWBY with LABEL whose START is unbounded, pinned to the label (``lp - sp =
    k``) or reads no label variable (the sequence's first START position, shared by every
    label), and whose END is unbounded, has no condition, or is pinned to the label or the
    start: ``(start, end)`` as :func:`_label_windows` reads them; None for any other."""
    from sira.algebra.fallible import may_fail
    from sira.engine.windowby import _pin, _reads_roles

    if node.label is None:
        return None
    if node.start.unbounded:
        start = ("unbounded",)
    else:
        pin = _pin(node, "start", ("label",))
        if pin is not None:
            start = ("pin", pin[1])
        elif not _reads_roles(node, "start", ("label",)) and not may_fail(node.start.when):
            # (the reference tests START only up to its first position: one that may fail
            # must not be tested past it)
            start = ("shared",)
        else:
            return None
    if node.end.unbounded:
        end = ("unbounded",)
    elif node.end.when is None:
        end = ("always",)
    else:
        pin = _pin(node, "end", ("label", "start"))
        if pin is None:
            return None
        end = ("pin",) + pin
    return start, end


def _rowed(c, rows: str, pidx: str, pos: str, r: str) -> tuple:
    """``rows`` with each row's predecessor and successor rows and its sequence's length: the
    name of that table and the helper names (prev, next, n)."""
    w = f"(PARTITION BY {pidx} ORDER BY {pos})"
    prev, nxt, n = c.helper("prev"), c.helper("next"), c.helper("n")
    rowed = c.define(f"SELECT {pidx}, {pos}, {r}, lag({r}) OVER {w} AS {prev}, lead({r}) OVER "
                     f"{w} AS {nxt}, count(*) OVER (PARTITION BY {pidx}) AS {n} FROM {rows}",
                     "rowed")
    return rowed, prev, nxt, n


def _variables(node, role, alias, at, r, prev, nxt, n, there=None) -> tuple:
    """(values, exists) of ``role``'s variables read from the row ``alias`` at position
    ``at`` (SQL) for :func:`condition_sql`; ``there``: SQL saying whether the role's position
    exists at all (a LABEL window's unopened start), else it always does."""
    values = {"at": at, "as": f"{alias}.{r}", "prev": f"{alias}.{prev}",
              "next": f"{alias}.{nxt}"}
    neighbour = {"prev": f"({at} > 1)", "next": f"({at} < {n})"}

    def exists(kind):
        own = neighbour.get(kind)
        if there is None:
            return own
        return there if own is None else f"({there} AND {own})"

    names = node.variables(role)
    return ({name: values[kind] for kind, name in names},
            {name: exists(kind) for kind, name in names if exists(kind) is not None})


def _label_windows(node, c, rows: str, pidx: str, pos: str, r: str, start, end) -> str:
    """The windows (pidx, l, s, e, opened, closed) of a WINDOWBY :func:`_label_frame` accepts,
    in SQL, as the reference's search (``find_windows``) finds them: a window for every
    position lp where LABEL holds (its condition on the row, its ``lag`` and its ``lead``);
    its start is position 1 (unbounded), lp + k when START holds there (pinned), or the
    sequence's first position where START holds (shared) -- else position 1, unopened, its
    variables MISSING in END; its END is the one candidate q (the label's or the start's
    position plus k), closed when s <= q <= n and END holds there, else the window runs to the
    sequence's end unclosed. The rows at the label, the start and the end are found by hash
    joins on the position: O(n log n)."""
    rowed, prev, nxt, n = _rowed(c, rows, pidx, pos, r)
    cols = (r, prev, nxt, n)
    label_values, label_exists = _variables(node, "label", "lb", f"lb.{pos}", *cols[:3],
                                            f"lb.{n}")
    labels = condition_sql(node, "label", c, label_values, label_exists)
    if start[0] == "unbounded":
        found = (f"SELECT lb.{pidx} AS pidx, lb.{pos} AS l, 1 AS s, TRUE AS opened, lb.{n} AS n "
                 f"FROM {rowed} AS lb WHERE {labels}")
    elif start[0] == "shared":
        values, exists = _variables(node, "start", "st", f"st.{pos}", *cols[:3], f"st.{n}")
        holds = condition_sql(node, "start", c, values, exists)
        first = c.define(f"SELECT st.{pidx} AS pidx, min(st.{pos}) AS s FROM {rowed} AS st "
                         f"WHERE {holds} GROUP BY st.{pidx}", "first_start")
        found = (f"SELECT lb.{pidx} AS pidx, lb.{pos} AS l, coalesce(f.s, 1) AS s, "
                 f"f.s IS NOT NULL AS opened, lb.{n} AS n FROM {rowed} AS lb "
                 f"LEFT JOIN {first} AS f ON f.pidx = lb.{pidx} WHERE {labels}")
    else:
        p = f"(lb.{pos} + {start[1]})"
        values, exists = _variables(node, "start", "st", p, *cols[:3], f"lb.{n}")
        holds = condition_sql(node, "start", c, {**label_values, **values},
                              {**label_exists, **exists})
        opened = f"CASE WHEN {p} BETWEEN 1 AND lb.{n} THEN {holds} ELSE FALSE END"
        found = (f"SELECT pidx, l, CASE WHEN opened THEN s ELSE 1 END AS s, opened, n FROM "
                 f"(SELECT lb.{pidx} AS pidx, lb.{pos} AS l, {p} AS s, {opened} AS opened, "
                 f"lb.{n} AS n FROM {rowed} AS lb LEFT JOIN {rowed} AS st "
                 f"ON st.{pidx} = lb.{pidx} AND st.{pos} = {p} WHERE {labels}) AS x")
    starts = c.define(found, "label_starts")
    if end[0] == "unbounded":
        return c.define(f"SELECT pidx, l, s, n AS e, opened, TRUE AS closed FROM {starts}",
                        "windows")
    if end[0] == "always":
        return c.define(f"SELECT pidx, l, s, s AS e, opened, TRUE AS closed FROM {starts}",
                        "windows")
    _, role, k = end
    # pinned to an unopened start, END cannot hold: its pin reads the MISSING start
    q = f"(w.l + {k})" if role == "label" else f"(w.s + {k})"
    label_values, label_exists = _variables(node, "label", "lb", "w.l", *cols[:3], "w.n")
    start_values, start_exists = _variables(node, "start", "st", "w.s", *cols[:3], "w.n",
                                            there="w.opened")
    end_values, end_exists = _variables(node, "end", "en", q, *cols[:3], "w.n")
    holds = condition_sql(node, "end", c, {**label_values, **start_values, **end_values},
                          {**label_exists, **start_exists, **end_exists})
    closed = f"CASE WHEN {q} BETWEEN w.s AND w.n THEN {holds} ELSE FALSE END"
    joined = c.define(
        f"SELECT w.pidx, w.l, w.s, w.opened, w.n, {q} AS q, {closed} AS closed FROM {starts} "
        f"AS w LEFT JOIN {rowed} AS lb ON lb.{pidx} = w.pidx AND lb.{pos} = w.l "
        f"LEFT JOIN {rowed} AS st ON st.{pidx} = w.pidx AND st.{pos} = w.s "
        f"LEFT JOIN {rowed} AS en ON en.{pidx} = w.pidx AND en.{pos} = {q}", "label_ends")
    return c.define(f"SELECT pidx, l, s, CASE WHEN closed THEN q ELSE n END AS e, opened, "
                    f"closed FROM {joined}", "windows")


def _pinned_windows(node, c, rows: str, pidx: str, pos: str, r: str, offset) -> str:
    """The windows (pidx, l, s, e, opened, closed) of a WINDOWBY :func:`_end_offset` accepts,
    in SQL: every position where START holds opens a window (:func:`_candidates`), ending at
    its END's one candidate when closed, else running to the sequence's end unclosed -- the
    reference's search (``find_windows``) with a pinned END. One sort and one join:
    O(n log n)."""
    candidates = _candidates(node, c, rows, pidx, pos, r, offset)
    end = "e" if offset == "unbounded" else f"CASE WHEN closed THEN s + {offset} ELSE e END"
    return c.define(f"SELECT pidx, CAST(NULL AS BIGINT) AS l, s, {end} AS e, TRUE AS opened, "
                    f"closed FROM {candidates}", "windows")


def _candidates(node, c, rows: str, pidx: str, pos: str, r: str, offset) -> str:
    """(pidx, s, e, closed) for every position s where START holds (its condition on the row,
    its ``lag`` and its ``lead``), e being the sequence's length: whether the window opened at
    s closes at its END's one candidate q = s + k (q in the sequence and END holding there, the
    row at q by a hash join on the position), or always (an unbounded END)."""
    rowed, prev, nxt, n = _rowed(c, rows, pidx, pos, r)
    start_values, start_exists = _variables(node, "start", "st", f"st.{pos}", r, prev, nxt,
                                            f"st.{n}")
    opens = condition_sql(node, "start", c, start_values, start_exists)
    if offset == "unbounded":
        closed = "TRUE"
        joined = ""
    else:
        q = f"(st.{pos} + {offset})"
        end_values, end_exists = _variables(node, "end", "en", q, r, prev, nxt, f"st.{n}")
        holds = condition_sql(node, "end", c, {**start_values, **end_values},
                              {**start_exists, **end_exists})
        inside = f"{q} <= st.{n}" if offset >= 0 else "FALSE"
        closed = f"CASE WHEN {inside} THEN {holds} ELSE FALSE END"
        joined = (f" LEFT JOIN {rowed} AS en ON en.{pidx} = st.{pidx} AND en.{pos} = {q}")
    return c.define(f"SELECT st.{pidx} AS pidx, st.{pos} AS s, st.{n} AS e, {closed} AS closed "
                    f"FROM {rowed} AS st{joined} WHERE {opens}", "candidates")


def _chain_offset(node):
    """For a TUMBLING WINDOWBY without LABEL whose START has a condition and whose END is
    unbounded, has no condition (offset 0) or is pinned to the start (``ep - sp = k``), both
    conditions total: what :func:`_chained_windows` needs; None for every other WINDOWBY.
    (The reference tests START only outside the windows it found, and END only at the
    windows' starts: a condition that may fail must not be tested elsewhere.)"""
    if node.label is not None or node.kind != "tumbling" or node.start.unbounded \
            or node.start.when is None or not _total_but_pins(node, "start"):
        return None
    if node.end.when is not None and not _total_but_pins(node, "end"):
        return None
    return _start_pinned_end(node)


def _total_but_pins(node, which) -> bool:
    """Whether clause ``which``'s condition cannot fail, the conjuncts that pin its position
    to another clause's aside (``ep - sp = 3``: positions are far from overflowing)."""
    from sira.algebra.fallible import may_fail
    from sira.algebra.windowby import conjuncts, pinned_offset
    from sira.engine.windowby import _at_name

    target = _at_name(node, which)
    others = {_at_name(node, r) for r in ("label", "start", "end") if r != which} - {None}
    return not any(may_fail(e) for e in conjuncts(node.boundary(which).when)
                   if target is None or pinned_offset(e, target, others) is None)


def _chained_windows(node, c, rows: str, pidx: str, pos: str, r: str, offset):
    """The windows (an Arrow table: pidx, l, s, e, opened, closed) of a WINDOWBY
    :func:`_chain_offset` accepts: SQL finds every position where START holds and whether a
    window opened there would close (:func:`_candidates`); the chain of tumbling windows --
    each opened at the first such position after the previous one's end, until one does not
    close -- is walked over those positions (a binary search per window), as the reference's
    search walks it, without evaluating a condition in Python. O(n log n) in SQL plus
    O(log n) per window."""
    import bisect

    import pyarrow as pa

    candidates = _candidates(node, c, rows, pidx, pos, r, offset)
    table = c.con.sql(f"{c.with_clause()}SELECT pidx, s, e, closed FROM {candidates} "
                      f"ORDER BY pidx, s").to_arrow_table()
    parts, starts, lengths, closes = (table.column(i).to_pylist() for i in range(4))
    out = {k: [] for k in ("pidx", "s", "e", "closed")}
    i = 0
    while i < len(parts):
        stop = bisect.bisect_right(parts, parts[i], i)
        while i < stop:  # one sequence: window after window
            s, closed = starts[i], closes[i]
            e = lengths[i] if offset == "unbounded" or not closed else s + offset
            for k, v in zip(out, (parts[i], s, e, closed)):
                out[k].append(v)
            # (an unclosed window runs to the sequence's end: no start comes after it)
            i = bisect.bisect_left(starts, e + 1, i, stop)
        i = stop
    count = len(out["s"])
    return pa.table({"pidx": pa.array(out["pidx"], pa.int64()), "l": pa.nulls(count, pa.int64()),
                     "s": pa.array(out["s"], pa.int64()), "e": pa.array(out["e"], pa.int64()),
                     "opened": pa.array([True] * count, pa.bool_()),
                     "closed": pa.array(out["closed"], pa.bool_())})


def _found_windows(node, c, rows: str, pidx: str, pos: str, r: str):
    """The windows of every sequence (an Arrow table: pidx, l, s, e, opened, closed), found by
    the reference's own search (:func:`sira.engine.windowby.find_windows`) over the
    sequences' tuples as DuckDB numbered them: positions and conditions are the Python
    engine's by construction, and each search walks only the windows it finds (or uses
    arithmetic, for pinned positions), never every later position of every start."""
    import pyarrow as pa

    from sira.engine.windowby import _Condition, _Sequence, find_windows

    from .convert import _column_values

    h = node.source.heading
    fields = ", ".join([pidx] + [f"({r}).{ident(n)} AS {ident(n)}" for n in h.names])
    table = c.con.sql(f"SELECT {fields} FROM {rows} ORDER BY {pidx}, {pos}").to_arrow_table()
    parts = table.column(0).to_pylist()
    columns = [_column_values(table.column(j + 1), t) for j, (_, t) in enumerate(h.attributes)]
    tuples = list(zip(*columns)) if columns else [()] * len(parts)
    conds = {w: _Condition(node, w, c.relation_value) for w in ("label", "start", "end")}
    out = {k: [] for k in ("pidx", "l", "s", "e", "opened", "closed")}
    start = 0
    while start < len(parts):
        stop = start
        while stop < len(parts) and parts[stop] == parts[start]:
            stop += 1
        found = find_windows(node, _Sequence(h, tuples[start:stop]), conds["label"],
                             conds["start"], conds["end"])
        for lp, s, e, opened, closed in found:
            for k, v in zip(out, (parts[start], lp, s, e, opened, closed)):
                out[k].append(v)
        start = stop
    return pa.table({"pidx": pa.array(out["pidx"], pa.int64()),
                     "l": pa.array(out["l"], pa.int64()), "s": pa.array(out["s"], pa.int64()),
                     "e": pa.array(out["e"], pa.int64()),
                     "opened": pa.array(out["opened"], pa.bool_()),
                     "closed": pa.array(out["closed"], pa.bool_())})


# ---------------------------------------------------------------------- segmentations

def _segmentation(node) -> bool:
    """True when the windows are the segments of each sequence cut after every position whose
    END holds: TUMBLING without LABEL, a START without condition (every position may start a
    window), and an END condition that reads only the END variables."""
    if node.label is not None or node.kind != "tumbling" or node.start.unbounded \
            or node.start.when is not None:
        return False
    if node.end.unbounded or node.end.when is None:
        return True
    start_names = {n for _, n in node.variables("start")}
    return not (attributes_used(node.end.when) & start_names)


def _segments(node, child, c) -> str:
    """WINDOWBY by window functions when :func:`_segmentation` holds (the usual sessions:
    ``tumbling, start(as(s)), end(as(e) next(en) when(en.t - e.t > gap))``).

    One sort per partition: each position's END is evaluated on its own row, its lag and its
    lead; a window's number is how many END positions come before it (a running sum); one
    GROUP BY (partition, window) then gives the start variables (at the window's first
    position, ``arg_min``), the end variables (at its last, ``arg_max``), ``closed`` (its last
    position satisfies END: only a sequence's last window can be unclosed) and either ``w``
    (the sorted list, the canonical RVA) or the pushed-down aggregates. Equal to the scan of
    ``sira/engine/windowby.py``: a tumbling window starts right after the previous one ended,
    at the next position, because every position satisfies START.
    """
    h = node.source.heading
    keys = [ident(n) for n in node.partition]
    part = f"PARTITION BY {', '.join(keys)} " if keys else ""
    w = f"({part}ORDER BY {', '.join(_sequence_order(node))})"
    p, r = c.helper("p"), c.helper("r")
    prev, nxt, hp, hn = c.helper("prev"), c.helper("next"), c.helper("hasprev"), c.helper("hasnext")
    lagged = struct_pack([(n, f"lag({ident(n)}) OVER {w}") for n in h.names])
    led = struct_pack([(n, f"lead({ident(n)}) OVER {w}") for n in h.names])
    rowed = c.define(f"SELECT *, row_number() OVER {w} AS {p}, {_row(h)} AS {r}, {lagged} AS "
                     f"{prev}, {led} AS {nxt}, lag(1) OVER {w} IS NOT NULL AS {hp}, "
                     f"lead(1) OVER {w} IS NOT NULL AS {hn} FROM {child}", "sequence")
    source = {"at": f"CAST({p} AS BIGINT)", "as": r, "prev": prev, "next": nxt}
    exists = {"prev": hp, "next": hn}
    if node.end.unbounded or node.end.when is None:
        flag = "FALSE" if node.end.unbounded else "TRUE"
    else:
        flag = condition_sql(node, "end", c,
                             {name: source[kind] for kind, name in node.variables("end")},
                             {name: exists[kind] for kind, name in node.variables("end")
                              if kind in exists})
    f, wid = c.helper("f"), c.helper("wid")
    flagged = c.define(f"SELECT *, {flag} AS {f} FROM {rowed}", "flagged")
    numbered = c.define(f"SELECT *, coalesce(sum(CAST({f} AS BIGINT)) OVER ({part}ORDER BY {p} "
                        f"ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS {wid} "
                        f"FROM {flagged}", "numbered")
    empty = f"CAST([] AS {duckdb_type(RelationType(h))})"
    aggs = list(keys)
    for role in ("start", "end"):
        pick = "arg_min" if role == "start" else "arg_max"
        for kind, name in node.variables(role):
            if kind == "at":
                value = f"{'min' if role == 'start' else 'max'}({source['at']})"
            elif kind == "as":
                value = f"{pick}({r}, {p})"
            else:
                there = exists[kind]
                value = f"{pick}(CASE WHEN {there} THEN [{source[kind]}] ELSE {empty} END, {p})"
            aggs.append(f"{value} AS {ident(name)}")
    aggs.append(f"{'TRUE' if node.end.unbounded else f'bool_or({f})'} AS closed")
    rows = canonical_list(f"list({r})")
    if node.aggregates:
        aggs += _group_aggregates(node, f"list({r})", c)
    else:
        aggs.append(f"{rows} AS {ident(node.result)}")
    having = f" HAVING bool_or({f})" if node.only and not node.end.unbounded else ""
    return (f"SELECT {', '.join(aggs)} FROM {numbered} GROUP BY {', '.join(keys + [wid])}"
            f"{having}")
