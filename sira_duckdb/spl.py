"""DuckDB translation of SPL windows (SPLWINDOW), matching ``sira/engine/spl.py`` (the
reference).

Time arithmetic is done on BIGINT (the timestamp itself, or microseconds since the epoch for a
TIMESTAMP); ``at`` and ``pane`` are turned back into the timestamp's type at the end.

Tumbling and sliding windows are sequential: each partition's stream is sorted, gathered into
one list of element structs ``(lp, t, a, p, ta)`` -- the position in the partition, the time,
the delta values and the punctuation flag -- and folded with ``list_reduce`` whose state is the
partition's window (the list of its current elements, the open time, trigger counter, next
trigger time, last triggering value, last arrival time) plus the list of emissions
``(ws, we, at)``. A window's content is always a run of consecutive positions ``ws..we`` of its
partition, so ``tuples`` is a slice of the partition's sorted rows, emitted with ``unnest``
(instance = its index). No Python function and no Python tuples.

* Without a partition eviction, or with ``partitionage(T)`` (which only looks at the
  partition's own tuples), the fold runs per partition key, in parallel across keys.
* ``partitioncount(N)`` and ``tuplecount(N)`` couple the partitions, so the fold runs once over
  the whole stream, its state holding a list of partition states (the least recently updated
  one is found by its last update position); emissions are then joined back to each key's rows.

Limits: a partition's whole sequence (the whole stream with ``partitioncount``/``tuplecount``)
is one list; the fold copies its state at every step, so a partition of n tuples costs
O(n * (window size + emissions)).

TimeInterval windows need no fold: over the whole stream in arrival order, ``max`` over the
preceding rows is each tuple's watermark (tuples below watermark - discardAge are dropped); each
tuple is copied into its panes (``range`` of pane starts); the position at which the running
watermark first reaches a pane's end is found with a "first following" window over the union of
pane ends and watermark advances; per pane, the tuples before that position form the on-time
emission and every later (late) tuple one more emission holding the pane's tuples up to it.
"""

from __future__ import annotations

from sira.algebra.spl import SplWindow
from sira.types import FLOAT

from .compiler import translates
from .functions import canonical_list
from .sql import and_all, field, ident, struct_pack
from .types import duckdb_type, struct_type
from .windows import from_time, order_columns, to_time

_END_OF_INPUT = 2 ** 62  # the emission position of panes emitted at the end of input


def _stream_order(node) -> list:
    h = node.source.heading
    canonical = order_columns(h, h.names)
    ts = f"{ident(node.ts)} ASC"
    if node.arrival is None:
        return [ts] + canonical
    arrival = f"{ident(node.arrival)} ASC"
    if node.kind == "timeinterval":
        return [arrival, ts] + canonical
    return [ts, arrival] + canonical


def _row_struct(heading) -> str:
    return struct_pack([(n, ident(n)) for n in heading.names])


@translates(SplWindow)
def _splwindow(node, children, c):
    (child,) = children
    if node.kind == "timeinterval":
        return _time_interval(node, child, c)
    pe = node.partition_eviction
    if pe is not None and pe.kind in ("partitioncount", "tuplecount"):
        return _sequential_global(node, child, c)
    return _sequential_per_key(node, child, c)


# ---------------------------------------------------------------------- tumbling and sliding

def _value_type(node, policy) -> str:
    h = node.source.heading
    if policy is None or policy.kind != "delta":
        return "BIGINT"
    return "DOUBLE" if h.type_of(policy.attr) == FLOAT else "BIGINT"


def _value(node, policy) -> str:
    h = node.source.heading
    if policy is None or policy.kind != "delta":
        return "CAST(0 AS BIGINT)"
    return to_time(ident(policy.attr), h.type_of(policy.attr))


def _amount(node, policy) -> str:
    """A delta threshold as a literal of the delta values' type."""
    amount = node.delta_amount(policy)
    if _value_type(node, policy) == "DOUBLE":
        return f"CAST({float(amount)!r} AS DOUBLE)"
    return f"CAST({int(amount)} AS BIGINT)"


def _element(node, position: str) -> str:
    """The element struct (lp, t, a, p, ta) of a row."""
    ev = node.eviction
    punct = ident(ev.attr) if ev.kind == "punct" else "FALSE"
    return struct_pack([("lp", f"CAST({position} AS INTEGER)"),
                        ("t", to_time(ident(node.ts), node.ts_type)),
                        ("a", _value(node, ev)), ("p", punct),
                        ("ta", _value(node, node.trigger))])


def _content_type(node) -> str:
    return f'STRUCT("lp" INTEGER, "t" BIGINT, "a" {_value_type(node, node.eviction)})[]'


def _fresh(node) -> dict:
    """The fields of an empty partition state (typed, so every fold step has the same type)."""
    return {"c": f"CAST([] AS {_content_type(node)})", "o": "CAST(NULL AS BIGINT)",
            "cnt": "CAST(0 AS INTEGER)", "nt": "CAST(NULL AS BIGINT)",
            "la": f"CAST(NULL AS {_value_type(node, node.trigger)})",
            "lt": "CAST(NULL AS BIGINT)"}


def _state(fields: dict) -> str:
    return struct_pack(list(fields.items()))


def _when(cond, a, b) -> str:
    return f"(CASE WHEN {cond} THEN {a} ELSE {b} END)"


def _step(node, s: str, x: str, c) -> tuple:
    """One element ``x`` into one partition state ``s``: the new state's fields and the
    emission (condition, first position, last position), all SQL over ``s`` and ``x``."""
    ev, tr = node.eviction, node.trigger
    pe = node.partition_eviction
    fields = {k: field(s, k) for k in _fresh(node)}
    xf = {k: field(x, k) for k in ("lp", "t", "a", "p", "ta")}
    if pe is not None and pe.kind == "partitionage":
        reset = f"({fields['lt']} IS NOT NULL AND {xf['t']} - {fields['lt']} >= " \
                f"{node.units(pe.amount)})"
        fresh = _fresh(node)
        fields = {k: _when(reset, fresh[k], v) for k, v in fields.items()}
    content = fields["c"]
    xe = f"[{struct_pack([('lp', xf['lp']), ('t', xf['t']), ('a', xf['a'])])}]"
    c1 = f"list_concat({content}, {xe})"
    empty = f"CAST([] AS {_content_type(node)})"
    nonempty = f"(len({content}) > 0)"
    first = f"({content})[1].lp"
    out = dict(fields, lt=xf["t"])
    if node.kind == "tumbling":
        if ev.kind in ("count", "punct"):
            emit = f"(len({c1}) = {ev.amount})" if ev.kind == "count" else xf["p"]
            out["c"] = _when(emit, empty, c1)
            return out, emit, f"({c1})[1].lp", xf["lp"]
        if ev.kind == "time":
            emit = f"({nonempty} AND {xf['t']} >= {fields['o']} + {node.units(ev.amount)})"
            out["o"] = _when(f"{emit} OR NOT {nonempty}", xf["t"], fields["o"])
        else:
            emit = f"({nonempty} AND {xf['a']} - ({content})[1].a > {_amount(node, ev)})"
        out["c"] = _when(emit, xe, c1)
        return out, emit, first, f"{xf['lp']} - 1"
    y = c.lambda_name()
    if ev.kind == "count":
        kept = f"list_slice({c1}, greatest(len({c1}) - {ev.amount} + 1, 1), len({c1}))"
    else:
        if ev.kind == "time":
            keep = f"({y}).t > {xf['t']} - {node.units(ev.amount)}"
        else:
            keep = f"{xf['a']} - ({y}).a <= {_amount(node, ev)}"
        start = f"list_position(list_transform({c1}, lambda {y}: {keep}), TRUE)"
        kept = f"list_slice({c1}, {start}, len({c1}))"
    out["c"] = kept
    if tr is None:
        emit = "TRUE"
    elif tr.kind == "count":
        cnt = f"({fields['cnt']} + 1)"
        emit = f"({cnt} = {tr.amount})"
        out["cnt"] = f"CAST({_when(emit, '0', cnt)} AS INTEGER)"
    elif tr.kind == "time":
        period = node.units(tr.amount)
        nt = fields["nt"]
        emit = f"({nt} IS NOT NULL AND {xf['t']} >= {nt})"
        gap = f"({xf['t']} - {nt})"  # the next multiple after t: nt + gap - gap mod T + T
        out["nt"] = (f"(CASE WHEN {nt} IS NULL THEN {xf['t']} + {period} WHEN {emit} THEN "
                     f"{nt} + {gap} - ((({gap}) % {period} + {period}) % {period}) + {period} "
                     f"ELSE {nt} END)")
    else:
        la = fields["la"]
        emit = f"({la} IS NOT NULL AND {xf['ta']} - {la} > {_amount(node, tr)})"
        out["la"] = _when(f"{la} IS NULL OR {emit}", xf["ta"], la)
    return out, emit, f"({kept})[1].lp", xf["lp"]


_EMISSION = 'STRUCT("ws" INTEGER, "we" INTEGER, "at" BIGINT)'


def _partition(keys) -> str:
    return f"PARTITION BY {', '.join(keys)} " if keys else ""


def _sequential_per_key(node, child, c) -> str:
    h = node.source.heading
    keys = [ident(k) for k in node.partition]
    lp, x, row, seq = c.helper("lp"), c.helper("x"), c.helper("row"), c.helper("seq")
    w = f"({_partition(keys)}ORDER BY {', '.join(_stream_order(node))})"
    elements = c.define(f"SELECT *, row_number() OVER {w} AS {lp} FROM {child}", "elements")
    items = struct_pack([("lp", lp), ("x", _element(node, lp)), ("row", _row_struct(h))])
    group = f" GROUP BY {', '.join(keys)}" if keys else ""
    seqs = c.define(f"SELECT {', '.join(keys + [f'list({items} ORDER BY {lp}) AS {seq}'])} "
                    f"FROM {elements}{group}", "sequences")
    init = struct_pack([("s", _state(_fresh(node))), ("out", f"CAST([] AS {_EMISSION}[])")])
    acc, e = c.lambda_name(), c.lambda_name()
    fields, emit, ws, we = _step(node, field(acc, "s"), field(e, "x"), c)
    emission = struct_pack([("ws", f"CAST({ws} AS INTEGER)"), ("we", f"CAST({we} AS INTEGER)"),
                            ("at", f"CAST({field(e, 'lp')} AS BIGINT)")])
    out = _when(emit, f"list_concat({field(acc, 'out')}, [{emission}])", field(acc, "out"))
    merge = struct_pack([("s", _state(fields)), ("out", out)])
    em, i = c.helper("em"), c.helper("i")
    folded = c.define(f"SELECT {', '.join(keys + [seq])}, list_reduce({seq}, lambda {acc}, {e}: "
                      f"{merge}, {init}).out AS {em} FROM {seqs}", "folded")
    emitted = c.define(f"SELECT {', '.join(keys + [seq])}, unnest({em}) AS {em}, "
                       f"generate_subscripts({em}, 1) AS {i} FROM {folded}", "emitted")
    y = c.lambda_name()
    rows = (f"list_transform(list_slice({seq}, ({em}).ws, ({em}).we), lambda {y}: ({y}).row)")
    at = f"({seq})[CAST(({em}).at AS INTEGER)].row.{ident(node.ts)}"
    return (f"SELECT {', '.join(keys)}{', ' if keys else ''}CAST({i} AS BIGINT) AS instance, "
            f"{at} AS {ident('at')}, {canonical_list(rows)} AS tuples FROM {emitted}")


def _sequential_global(node, child, c) -> str:
    """partitioncount / tuplecount: one fold over the whole stream, partition states in a
    list."""
    pe = node.partition_eviction
    h = node.source.heading
    keys = [ident(k) for k in node.partition]
    lp, g, k, x = c.helper("lp"), c.helper("g"), c.helper("k"), c.helper("x")
    order = ", ".join(_stream_order(node))
    key_struct = struct_pack([(n, ident(n)) for n in node.partition])
    elements = c.define(f"SELECT *, row_number() OVER ({_partition(keys)}ORDER BY {order}) "
                        f"AS {lp}, row_number() OVER (ORDER BY {order}) AS {g}, {key_struct} "
                        f"AS {k} FROM {child}", "elements")
    seq = c.helper("seq")
    items = struct_pack([("g", g), ("k", k), ("x", _element(node, lp)),
                         ("ts", ident(node.ts))])
    seqs = c.define(f"SELECT list({items} ORDER BY {g}) AS {seq} FROM {elements}", "sequence")
    key_type = struct_type(node.source.heading.project(node.partition))
    fresh = _fresh(node)
    part_fields = dict(k=f"CAST(NULL AS {key_type})", upd="CAST(0 AS INTEGER)", **fresh)
    part_type = (f'STRUCT("k" {key_type}, "upd" INTEGER, "c" {_content_type(node)}, '
                 f'"o" BIGINT, "cnt" INTEGER, "nt" BIGINT, '
                 f'"la" {_value_type(node, node.trigger)}, "lt" BIGINT)')
    emission = (f'STRUCT("k" {key_type}, "ws" INTEGER, "we" INTEGER, "at" '
                f'{duckdb_type(node.ts_type)})')
    init = struct_pack([("parts", f"CAST([] AS {part_type}[])"),
                        ("out", f"CAST([] AS {emission}[])")])
    acc, e = c.lambda_name(), c.lambda_name()
    p1, p2, p3 = c.lambda_name(), c.lambda_name(), c.lambda_name()
    ek, parts = field(e, "k"), field(acc, "parts")
    present = f"list_bool_or(list_transform({parts}, lambda {p1}: ({p1}).k = {ek}))"
    present = f"coalesce({present}, FALSE)"
    if pe.kind == "partitioncount":
        oldest = f"list_min(list_transform({parts}, lambda {p1}: ({p1}).upd))"
        full = f"(NOT {present} AND len({parts}) >= {pe.amount})"
        parts = _when(full, f"list_filter({parts}, lambda {p2}: ({p2}).upd <> {oldest})", parts)
    new_part = _state(dict(k=ek, upd=f"CAST({field(e, 'g')} AS INTEGER)", **fresh))
    parts = _when(present, parts, f"list_concat({parts}, [{new_part}])")
    step_parts = c.lambda_name()
    mine = f"list_filter({step_parts}, lambda {p3}: ({p3}).k = {ek})[1]"
    fields, emit, ws, we = _step(node, mine, field(e, "x"), c)
    updated = _state(dict(k=ek, upd=f"CAST({field(e, 'g')} AS INTEGER)", **fields))
    p4 = c.lambda_name()
    replaced = f"list_transform({step_parts}, lambda {p4}: {_when(f'({p4}).k = {ek}', updated, p4)})"
    if pe.kind == "tuplecount":
        replaced = _keep_recent(replaced, pe.amount, c)
    em = struct_pack([("k", ek), ("ws", f"CAST({ws} AS INTEGER)"),
                      ("we", f"CAST({we} AS INTEGER)"), ("at", field(e, "ts"))])
    out = _when(emit, f"list_concat({field(acc, 'out')}, [{em}])", field(acc, "out"))
    # the state after adding the partition is bound once (a one-element list_transform)
    body = (f"list_transform([{parts}], lambda {step_parts}: "
            f"{struct_pack([('parts', replaced), ('out', out)])})[1]")
    ems, i = c.helper("ems"), c.helper("i")
    folded = c.define(f"SELECT list_reduce({seq}, lambda {acc}, {e}: {body}, {init}).out AS "
                      f"{ems} FROM {seqs}", "folded")
    emitted = c.define(f"SELECT unnest({ems}) AS {ems}, generate_subscripts({ems}, 1) AS {i} "
                       f"FROM {folded}", "emitted")
    rows = c.helper("rows")
    items = struct_pack([("lp", lp), ("row", _row_struct(h))])
    group = f" GROUP BY {', '.join(keys)}" if keys else ""
    per_key = c.define(f"SELECT {', '.join(keys + [f'list({items} ORDER BY {lp}) AS {rows}'])} "
                       f"FROM {elements}{group}", "rows")
    same = and_all(f"({field(f'em.{ems}', 'k')}).{ident(n)} = r.{ident(n)}"
                   for n in node.partition)
    y = c.lambda_name()
    content = (f"list_transform(list_slice(r.{rows}, ({field(f'em.{ems}', 'ws')}), "
               f"({field(f'em.{ems}', 'we')})), lambda {y}: ({y}).row)")
    inst = f"row_number() OVER ({_partition([f'r.{q}' for q in keys])}ORDER BY em.{i})"
    key_cols = [f"r.{q}" for q in keys]
    return (f"SELECT {', '.join(key_cols + [f'CAST({inst} AS BIGINT) AS instance'])}, "
            f"{field(f'em.{ems}', 'at')} AS {ident('at')}, {canonical_list(content)} AS tuples "
            f"FROM {emitted} AS em JOIN {per_key} AS r ON {same}")


def _keep_recent(parts: str, limit: int, c) -> str:
    """tuplecount(N): keep the most recently updated partitions while their sizes sum to at
    most N (evicting from the least recently updated one)."""
    p, q, i, z = c.lambda_name(), c.lambda_name(), c.lambda_name(), c.lambda_name()
    recent = (f"list_transform(list_sort(list_transform({parts}, lambda {p}: "
              f"struct_pack(u := -({p}).upd, p := {p}))), lambda {q}: ({q}).p)")
    return once_bound(c, recent, lambda r: (
        f"list_transform(list_filter(list_transform({r}, lambda {p}, {i}: struct_pack(p := {p}, "
        f"n := list_sum(list_transform(list_slice({r}, 1, {i}), lambda {q}: len(({q}).c))))), "
        f"lambda {z}: ({z}).n <= {limit}), lambda {z}: ({z}).p)"))


def once_bound(c, sql: str, fn) -> str:
    v = c.lambda_name()
    return f"list_transform([{sql}], lambda {v}: {fn(v)})[1]"


# ---------------------------------------------------------------------- timeInterval

def _time_interval(node, child, c) -> str:
    h = node.source.heading
    t_type = node.ts_type
    duration, period, discard, offset = node.interval_units
    keys = [ident(k) for k in node.partition]
    t, g, wmb = c.helper("t"), c.helper("g"), c.helper("wmb")
    order = ", ".join(_stream_order(node))
    timed = c.define(f"SELECT *, {to_time(ident(node.ts), t_type)} AS {t}, row_number() OVER "
                     f"(ORDER BY {order}) AS {g} FROM {child}", "timed")
    watermarked = c.define(f"SELECT *, max({t}) OVER (ORDER BY {g} ROWS BETWEEN UNBOUNDED "
                           f"PRECEDING AND 1 PRECEDING) AS {wmb} FROM {timed}", "watermarks")
    v, flag, ag = c.helper("v"), c.helper("flag"), c.helper("ag")
    advances = (f"SELECT {t} AS {v}, 1 AS {flag}, {g} AS {ag} FROM {watermarked} "
                f"WHERE {wmb} IS NULL OR {t} > {wmb}")
    kept = c.define(f"SELECT * FROM {watermarked} WHERE {wmb} IS NULL OR {t} >= {wmb} - "
                    f"{discard}", "kept")
    last_start = f"(({t} - {offset}) - ((({t} - {offset}) % {period} + {period}) % {period}) " \
                 f"+ {offset})"
    low = f"({t} - {duration} - {offset})"
    first_start = f"({low} - (({low} % {period} + {period}) % {period}) + {offset} + {period})"
    start, row, arr, end = c.helper("start"), c.helper("row"), c.helper("arr"), c.helper("end")
    panes = c.define(f"SELECT *, unnest(CASE WHEN {first_start} <= {last_start} THEN "
                     f"range({first_start}, {last_start} + 1, {period}) ELSE "
                     f"CAST([] AS BIGINT[]) END) AS {start}, {_row_struct(h)} AS {row} "
                     f"FROM {kept}", "panes")
    items = struct_pack([("g", g), ("wmb", wmb), ("row", row)])
    by_pane = c.define(f"SELECT {', '.join(keys + [start])}, list({items} ORDER BY {g}) AS {arr}, "
                       f"{start} + {duration} AS {end} FROM {panes} "
                       f"GROUP BY {', '.join(keys + [start])}", "by_pane")
    # cpos: the position at which the watermark first reaches the pane's end (NULL: never)
    cpos = c.helper("c")
    marks = (f"SELECT {end} AS {v}, 0 AS {flag}, CAST(NULL AS BIGINT) AS {ag}, "
             f"{', '.join(keys + [start])} FROM {by_pane}")
    nulls = "".join(f", NULL AS {k}" for k in keys)
    advances_full = (f"SELECT {v}, {flag}, {ag}{nulls}, CAST(NULL AS BIGINT) AS {start} "
                     f"FROM ({advances}) AS a")
    follow = (f"(ORDER BY {v}, {flag} ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)")
    reached = c.define(f"SELECT * FROM (SELECT *, first_value({ag} IGNORE NULLS) OVER {follow} "
                       f"AS {cpos} FROM ({marks} UNION ALL BY NAME {advances_full}) AS u) AS r "
                       f"WHERE {flag} = 0", "reached")
    same = and_all([f"p.{k} IS NOT DISTINCT FROM r.{k}" for k in keys]
                   + [f"p.{start} = r.{start}"])
    joined = c.define(f"SELECT p.*, r.{cpos} FROM {by_pane} AS p JOIN {reached} AS r ON {same}",
                      "joined")
    y, z = c.lambda_name(), c.lambda_name()
    on_time = f"list_filter({arr}, lambda {y}: {cpos} IS NULL OR ({y}).g < {cpos})"
    late = f"list_filter({arr}, lambda {y}: {cpos} IS NOT NULL AND ({y}).g > {cpos})"
    content_type = f'STRUCT("g" BIGINT, "wmb" BIGINT, "row" {struct_type(h)})[]'
    em_type = f'STRUCT("e" BIGINT, "at" BIGINT, "content" {content_type})[]'
    first = (f"CASE WHEN len({on_time}) > 0 THEN [{struct_pack([('e', f'coalesce(CAST({cpos} AS BIGINT), CAST({_END_OF_INPUT} AS BIGINT))'), ('at', f'CAST({end} AS BIGINT)'), ('content', f'CAST({on_time} AS {content_type})')])}] "
             f"ELSE CAST([] AS {em_type}) END")
    again = (f"list_transform({late}, lambda {y}: "
             f"{struct_pack([('e', f'CAST(({y}).g AS BIGINT)'), ('at', f'CAST(({y}).wmb AS BIGINT)'), ('content', f'CAST(list_filter({arr}, lambda {z}: ({z}).g <= ({y}).g) AS {content_type})')])})")
    e = c.helper("e")
    emitted = c.define(f"SELECT {', '.join(keys + [start, end])}, unnest(list_concat("
                       f"CAST({first} AS {em_type}), CAST({again} AS {em_type}))) AS {e} "
                       f"FROM {joined}", "emitted")
    inst = f"row_number() OVER ({_partition(keys)}ORDER BY ({e}).e, {start})"
    pane = struct_pack([("begin", from_time(start, t_type)), ("end", from_time(end, t_type))])
    rows = f"list_transform(({e}).content, lambda {y}: ({y}).row)"
    return (f"SELECT {', '.join(keys + [f'CAST({inst} AS BIGINT) AS instance'])}, "
            f"{from_time(f'({e}).at', t_type)} AS {ident('at')}, {pane} AS pane, "
            f"{canonical_list(rows)} AS tuples FROM {emitted}")
