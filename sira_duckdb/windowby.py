"""DuckDB translation of WINDOWBY (seed 003), the windows of ``sira/engine/windowby.py``.

Each partition's tuples are gathered into one list of structs, sorted by the order attributes
and then by the tuple itself (the canonical tie-break; interval attributes sort by (begin,
unbounded, end) as in Python). The windows are then found with list functions and lambdas on
positions 1..n of that list, never with Python:

* a condition is the clause's ``when`` compiled by :func:`condition_sql` with a ``Scope`` that
  maps each variable to SQL: AS/PREV/NEXT to ``seq[p]`` / ``seq[p-1]`` / ``seq[p+1]``, AT to the
  position. MISSING is NULL: a part reading a PREV/NEXT that does not exist is NULL (its
  expression is not evaluated), SQL's AND/OR/NOT on NULLs are SQL++'s three-valued truth
  tables on MISSING, ``is_missing`` is ``IS NULL`` of such a part, and the clause fires only
  where the condition is TRUE: no NULL leaves the condition;
* sliding starts are ``list_filter(range(1, n+1), START)``; each end is the first element of
  ``list_filter(range(s, n+1), END)`` (NULL: unclosed, the end is n);
* tumbling windows are a sequential ``list_reduce`` over the positions whose accumulator holds
  the next free position, a stop flag (an unclosed window ends the scan) and the windows so
  far; the end search runs only for the positions that do start a window;
* LABEL: ``list_filter`` the label positions, then for each the first START position (or 1,
  with ``opened`` false, its start variables MISSING in END) and its end;
* ``unnest`` gives one row per window; ``w`` is the sorted slice of the sequence (an RVA's
  canonical form) and pushed-down aggregates fold that slice.

Segmentations -- TUMBLING without LABEL, START without a condition, END reading only its own
variables, as in sessions by timeout (seed 003, section 4.3) -- need no list: the windows are
the runs of positions cut after each position satisfying END, found with window functions (one
sort per partition, END on each row with its lag/lead, a running count of END positions) and
one GROUP BY (see ``_segments``).

Limits (other windows): a partition's whole sequence is one list; the end search is quadratic
in the worst case (every position starting a window that never ends). Ties on the order
attributes between tuples that differ only in relation-valued attributes may break in another
order than on the Python engine.
"""

from __future__ import annotations

from sira.algebra.windowby import Absence, Strict, WindowBy
from sira.expressions.nodes import attributes_used
from sira.types import RelationType
from sira.values import Heading

from .basic import fenced_node
from .compiler import translates
from .functions import Scope, aggregated, canonical_list, expression
from .sql import ident, or_any, struct_pack
from .types import duckdb_type
from .windows import order_columns

_VISIBLE = {"label": ("label",), "start": ("label", "start"),
            "end": ("label", "start", "end")}

_WINDOW = 'STRUCT("l" BIGINT, "s" BIGINT, "e" BIGINT, "opened" BOOLEAN, "closed" BOOLEAN)'


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
    else:
        value = "(" + f" {part.op.upper()} ".join(parts) + ")"
    return value, f"({value} IS NULL)"


# ---------------------------------------------------------------------- sequences

class _Windows:
    """The SQL of one node's windows over the partition's sequence ``seq``."""

    def __init__(self, node, c, seq: str):
        self.node = node
        self.c = c
        self.seq = seq
        self.n = f"len({seq})"
        self.heading = node.source.heading

    def exists(self, kind, p):
        if kind == "prev":
            return f"({p} > 1)"
        if kind == "next":
            return f"({p} < {self.n})"
        return None

    def value(self, kind, p, in_condition: bool) -> str:
        if kind == "at":
            return f"CAST({p} AS BIGINT)"
        if kind == "as":
            return f"{self.seq}[{p}]"
        q = f"({p} - 1)" if kind == "prev" else f"({p} + 1)"
        one = f"{self.seq}[{q}]"
        if in_condition:
            return one
        empty = f"CAST([] AS {duckdb_type(RelationType(self.heading))})"
        return f"(CASE WHEN {self.exists(kind, p)} THEN [{one}] ELSE {empty} END)"

    def condition(self, which, positions: dict) -> str:
        """The clause's condition at ``positions`` (SQL per role; ``"opened"``, when given,
        says whether a LABEL window's start exists)."""
        values, exists = {}, {}
        for role in _VISIBLE[which]:
            for kind, name in self.node.variables(role):
                values[name] = self.value(kind, positions[role], True)
                there = self.exists(kind, positions[role])
                if role == "start" and "opened" in positions:
                    there = positions["opened"] if there is None else \
                        f"({positions['opened']} AND {there})"
                if there is not None:
                    exists[name] = there
        return condition_sql(self.node, which, self.c, values, exists)

    def first_end(self, positions: dict, s: str) -> str:
        """The first position >= s whose END holds (NULL when none)."""
        q = self.c.lambda_name()
        cond = self.condition("end", {**positions, "end": q})
        return f"list_filter(range({s}, {self.n} + 1), lambda {q}: {cond})[1]"

    def window(self, label, s, opened, end_found) -> str:
        if self.node.end.unbounded:
            e, closed = self.n, "TRUE"
        else:
            e, closed = f"coalesce({end_found}, {self.n})", f"({end_found} IS NOT NULL)"
        return (f"CAST({struct_pack([('l', label), ('s', s), ('e', e), ('opened', opened), ('closed', closed)])}"
                f" AS {_WINDOW})")

    def _end_or_null(self, positions, s) -> str:
        if self.node.end.unbounded:
            return "CAST(NULL AS BIGINT)"
        return self.first_end(positions, s)

    def _bind(self, sql: str, fn) -> str:
        v = self.c.lambda_name()
        return f"list_transform([{sql}], lambda {v}: {fn(v)})[1]"

    def all(self) -> str:
        """The list of window structs of the sequence."""
        node, c = self.node, self.c
        positions = f"range(1, {self.n} + 1)"
        none = "CAST(NULL AS BIGINT)"
        if node.label is not None:
            lv, x = c.lambda_name(), c.lambda_name()
            labels = f"list_filter({positions}, lambda {lv}: " \
                     f"{self.condition('label', {'label': lv})})"
            if node.start.unbounded:
                return (f"list_transform({labels}, lambda {x}: "
                        f"{self.window(x, '1', 'TRUE', self._end_or_null({'label': x, 'start': '1'}, '1'))})")
            pv = c.lambda_name()
            found = lambda l: f"list_filter({positions}, lambda {pv}: " \
                              f"{self.condition('start', {'label': l, 'start': pv})})[1]"  # noqa
            y = c.lambda_name()
            starts = (f"list_transform({labels}, lambda {x}: struct_pack(l := {x}, "
                      f"s := coalesce({found(x)}, 1), opened := {found(x)} IS NOT NULL))")
            fields = {"l": f"({y}).l", "s": f"({y}).s", "opened": f"({y}).opened"}
            end = self._end_or_null({"label": fields["l"], "start": fields["s"],
                                     "opened": fields["opened"]}, fields["s"])
            return (f"list_transform({starts}, lambda {y}: "
                    f"{self.window(fields['l'], fields['s'], fields['opened'], end)})")
        if node.start.unbounded:
            return f"[{self.window(none, '1', 'TRUE', self._end_or_null({'start': '1'}, '1'))}]"
        if node.kind == "sliding":
            sv = c.lambda_name()
            starts = f"list_filter({positions}, lambda {sv}: " \
                     f"{self.condition('start', {'start': sv})})"
            x = c.lambda_name()
            return (f"list_transform({starts}, lambda {x}: "
                    f"{self.window(none, x, 'TRUE', self._end_or_null({'start': x}, x))})")
        # tumbling: a sequential scan; a window starts only after the previous one ended
        acc, i, w = c.lambda_name(), c.lambda_name(), c.lambda_name()
        init = (f"struct_pack(next := CAST(1 AS BIGINT), stop := FALSE, wins := "
                f"CAST([] AS {_WINDOW}[]))")
        take = f"(NOT ({acc}).stop AND {i} >= ({acc}).next AND " \
               f"{self.condition('start', {'start': i})})"
        window = self.window(none, i, "TRUE", self._end_or_null({"start": i}, i))
        extend = (f"list_transform([{window}], lambda {w}: struct_pack(next := ({w}).e + 1, "
                  f"stop := NOT ({w}).closed, wins := list_concat(({acc}).wins, [{w}])))[1]")
        return (f"list_reduce({positions}, lambda {acc}, {i}: CASE WHEN {take} THEN {extend} "
                f"ELSE {acc} END, {init}).wins")


def _sequence_order(node) -> list:
    """ORDER BY items: the order attributes, then the tuple (canonical tie-break)."""
    h = node.source.heading
    skip = set(node.partition) | set(node.order)
    return order_columns(h, node.order) + order_columns(h, [n for n in h.names if n not in skip])


def _row(heading) -> str:
    return struct_pack([(n, ident(n)) for n in heading.names])


def _result_aggregates(node, rows: str, c) -> list:
    scope = Heading.of({node.result: RelationType(node.source.heading)})
    return [f"{aggregated(e, rows, scope, c)} AS {ident(name)}" for name, e in node.aggregates]


@translates(WindowBy)
def _windowby(node, children, c):
    """Conditions and aggregates that may fail run on every partition and window, whatever
    the query does with the result (see ``sira.algebra.fallible``)."""
    return fenced_node(node, _windows_of(node, children, c))


def _windows_of(node, children, c):
    (child,) = children
    if _segmentation(node):
        return _segments(node, child, c)
    h = node.source.heading
    keys = [ident(n) for n in node.partition]
    seq, win = c.helper("seq"), c.helper("w")
    group = f" GROUP BY {', '.join(keys)}" if keys else ""
    ordered = f"list({_row(h)} ORDER BY {', '.join(_sequence_order(node))}) AS {seq}"
    seqs = c.define(f"SELECT {', '.join(keys + [ordered])} FROM {child}{group}",
                    "sequences")  # no row for an empty input
    windows = _Windows(node, c, seq)
    exploded = c.define(f"SELECT *, unnest({windows.all()}) AS {win} FROM {seqs}", "windows")
    cols = list(keys)
    for role, p in (("label", f"({win}).l"), ("start", f"({win}).s"), ("end", f"({win}).e")):
        for kind, name in node.variables(role):
            cols.append(f"{windows.value(kind, p, False)} AS {ident(name)}")
    cols.append(f"({win}).closed AS closed")
    if node.label is not None:
        cols.append(f"({win}).opened AS opened")
    rows = canonical_list(f"list_slice({seq}, ({win}).s, ({win}).e)")
    if node.aggregates:
        cols += _result_aggregates(node, rows, c)
    else:
        cols.append(f"{rows} AS {ident(node.result)}")
    where = f" WHERE ({win}).closed" if node.only else ""
    return f"SELECT {', '.join(cols)} FROM {exploded}{where}"


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
        aggs += _result_aggregates(node, rows, c)
    else:
        aggs.append(f"{rows} AS {ident(node.result)}")
    having = f" HAVING bool_or({f})" if node.only and not node.end.unbounded else ""
    return (f"SELECT {', '.join(aggs)} FROM {numbered} GROUP BY {', '.join(keys + [wid])}"
            f"{having}")
