"""DuckDB translations of the window table functions TUMBLE, HOP, CUMULATE and SESSION.

Each element gets its window as the plain columns window_start, window_end and window_time (end
minus one unit), computed on BIGINT time (microseconds for a TIMESTAMP) and cast back to the
timestamp's type (an INT window ending past 2**31-1 is an IntOverflow, as in Python). Tumbling,
hopping and cumulating windows are arithmetic on the timestamp (``unnest`` of the window starts
holding it); a session is gaps-and-islands with window functions: per partition, ordered by
time, a new session starts where an element comes later than the previous one plus the gap, and
the session is [first time, last time + gap).

A SUMMARIZEBY per HOP window (sums of INT or LONG, max and min of plain scalars) is aggregated by
*panes* first (``summarize_hop``): the stream is aggregated per key and pane -- the intervals of
width gcd(size, slide) between consecutive window boundaries, each wholly inside or outside
every window -- and only the pane aggregates are copied into their windows and combined there,
instead of copying every element into each of its size/slide windows.
"""

from __future__ import annotations

from math import gcd

from sira.algebra.windows import WINDOW_ATTRIBUTES, WindowTable

from .compiler import translates
from .guards import limited, sized_within
from .sql import ident
from .windows import floor_aligned, from_time, time_fits, to_time

#: hop windows with at most this many windows per element use a literal list of offsets (a
#: condition drops the ones not holding t); longer ones a ``range`` of their starts
MAX_HOP_OFFSETS = 64


def _window_values(node, start: str, end: str, names=WINDOW_ATTRIBUTES) -> list:
    """SELECT items for window_start, window_end and window_time (end minus one unit)."""
    t = node.ts_type
    values = {"window_start": start, "window_end": end, "window_time": f"({end}) - 1"}
    return [f"{from_time(values[n], t)} AS {ident(n)}" for n in names]


def _fits(node, start: str, end: str) -> str:
    """A condition computing a window's start and end and failing with IntOverflow where one
    does not fit the timestamp's type (as the Python engine does, also when the window columns
    are projected away): true otherwise."""
    op = node.kind.upper()
    return f"({time_fits(start, node.ts_type, op)} AND {time_fits(end, node.ts_type, op)})"


def _fitting(node, start: str, end: str) -> str:
    """:func:`_fits` as a WHERE clause, for operators whose every row is in the window it
    computes (TUMBLE, CUMULATE, SESSION)."""
    return f"WHERE {_fits(node, start, end)}"


def _offsets(size: int, slide: int) -> str:
    count = -(-size // slide)  # ceil(T / L): how many windows may hold t
    return "[" + ", ".join(f"CAST({j * slide} AS BIGINT)" for j in range(count)) + "]"


def _holding(source: str, offsets: str, k: str, base: str, u: str, size: int, s: str,
             node) -> str:
    """The rows of ``source`` once per HOP window holding their time u: the window starting at
    base - k for each offset k with base - k + size > u, tested as k < size - (u - base) so
    that no start of a window not holding u is computed (near BIGINT's least value it would not
    fit). The start and end of each window holding u must fit the timestamp's type (IntOverflow
    otherwise, :func:`_fits`); one CASE tests both, so that no reordering of the conditions
    computes the bounds of a window not holding u."""
    start = f"({base} - {k})"
    return (f"SELECT *, {start} AS {s} FROM (SELECT *, unnest({offsets}) AS {k} "
            f"FROM {source}) AS x WHERE CASE WHEN {k} < {size} - ({u} - {base}) "
            f"THEN {_fits(node, start, f'{start} + {size}')} ELSE FALSE END")


@translates(WindowTable)
def _window_table(node, children, c):
    (child,) = children
    size, slide, offset = node.units("size"), node.units("slide"), node.units("offset")
    u, k, s = c.helper("u"), c.helper("k"), c.helper("start")
    cols = ", ".join(ident(n) for n in node.source.heading.names)
    timed = c.define(f"SELECT *, {to_time(ident(node.ts), node.ts_type)} AS {u} FROM {child}",
                     "timed")
    if node.kind == "tumble":
        start = floor_aligned(u, size, offset)
        end = f"{start} + {size}"
        return (f"SELECT {cols}, {', '.join(_window_values(node, start, end))} "
                f"FROM {timed} {_fitting(node, start, end)}")
    if node.kind == "hop":
        # the windows holding t start at base, base - L, ..., down to more than t - T
        base = floor_aligned(u, slide, offset)
        if -(-size // slide) <= MAX_HOP_OFFSETS:
            offsets = _offsets(size, slide)
        else:  # offsets 0, L, ..., j*L with j*L < base + T - t, counted before they are made
            offsets = f"range(0, {size} - ({u} - {base}), {slide})"
            many = f"(CAST({size} AS HUGEINT) - ({u} - {base}) + {slide - 1}) // {slide}"
            timed = c.define(f"SELECT * FROM {timed} WHERE "
                             f"{sized_within(c, node, timed, many)}", "timed")
        starts = c.define(_holding(timed, offsets, k, base, u, size, s, node), "hop")
        values = _window_values(node, s, f"{s} + {size}")
        result = f"SELECT {cols}, {', '.join(values)} FROM {starts}"
        return f"SELECT * FROM {limited(c, node, result, 'hop')}"  # max_tuples
    if node.kind == "cumulate":
        period = floor_aligned(u, size, offset)
        first = f"(({u} - {period}) // {slide} + 1)"
        if size // slide > MAX_HOP_OFFSETS:  # the steps, counted before they are made
            many = f"{size // slide} + 1 - {first}"
            timed = c.define(f"SELECT * FROM {timed} WHERE "
                             f"{sized_within(c, node, timed, many)}", "timed")
        steps = c.define(f"SELECT *, {period} AS {s}, unnest(range({first}, {size // slide + 1}))"
                         f" AS {k} FROM {timed}", "cumulate")
        values = _window_values(node, s, f"{s} + {k} * {slide}")
        result = f"SELECT {cols}, {', '.join(values)} FROM {steps} " \
            f"{_fitting(node, s, f'{s} + {k} * {slide}')}"
        return f"SELECT * FROM {limited(c, node, result, 'cumulate')}"  # max_tuples
    gap = size
    part = f"PARTITION BY {', '.join(ident(p) for p in node.partition)} " \
        if node.partition else ""
    new, sess = c.helper("new"), c.helper("session")
    w = f"({part}ORDER BY {u}"
    starts = (f"SELECT *, CASE WHEN lag({u}) OVER {w}) IS NULL OR {u} > lag({u}) OVER {w}) + "
              f"{gap} THEN 1 ELSE 0 END AS {new} FROM {timed}")
    # the running count takes every element at one time together (RANGE, the default frame):
    # lag and this sum may order equal times differently, and only the first of them in lag's
    # order can start a session, so a ROWS frame could number a later one of them before it
    numbered = c.define(f"SELECT *, sum({new}) OVER {w}) AS {sess} "
                        f"FROM ({starts}) AS st", "sessions")
    per = f"(PARTITION BY {', '.join([ident(q) for q in node.partition] + [sess])})"
    values = _window_values(node, f"min({u}) OVER {per}", f"max({u}) OVER {per} + {gap}")
    # a session ends at its last time + gap: checked on every time (each is at most the last)
    return f"SELECT {cols}, {', '.join(values)} FROM {numbered} {_fitting(node, u, f'{u} + {gap}')}"


def fused_hop(node):
    """The HOP window table under a SUMMARIZEBY that :func:`summarize_hop` compiles, else
    None."""
    from sira.algebra.aggregation import SummarizeBy
    from sira.expressions.evaluate import infer_type
    from sira.expressions.nodes import attributes_used
    from sira.types import BOOLEAN, DATE, INT, LONG, STRING
    if not isinstance(node, SummarizeBy):
        return None
    win = node.source
    if not isinstance(win, WindowTable) or win.kind != "hop":
        return None
    if node.pack_list:  # packed or pointwise on an interval key: not a plain grouping
        return None
    stream = win.source.heading
    key = [n for n in node.by if n not in WINDOW_ATTRIBUTES]
    if len(key) == len(node.by) or any(n not in stream for n in key):
        return None  # not per window, or grouping by something the window table made
    for _, op, expr in node.specs:
        if set(WINDOW_ATTRIBUTES) & set(attributes_used(expr)):
            return None
        t = infer_type(expr, stream)
        if op == "plus" and t in (INT, LONG):
            continue
        if op in ("max", "min") and (t in (INT, LONG, STRING, DATE, BOOLEAN)):
            continue
        return None
    return win


def summarize_hop(node, win, c):
    """SUMMARIZEBY per HOP window, by panes (see the module docstring)."""
    from sira.algebra.aggregation import aggregations

    from .basic import guarded
    from .functions import expression
    from .types import duckdb_type
    child = c.compile(win.source)
    h = win.source.heading
    size, slide, offset = win.units("size"), win.units("slide"), win.units("offset")
    pane = gcd(size, slide)
    key = [ident(n) for n in node.by if n not in WINDOW_ATTRIBUTES]
    aggs = aggregations(node.specs, win.heading, node.operator_name)
    p, s = c.helper("pane"), c.helper("start")
    part = [c.helper(f"a{i}") for i in range(len(node.specs))]
    first = {"plus": "sum", "max": "max", "min": "min"}
    time = to_time(ident(win.ts), win.ts_type)
    source = guarded(child, win.source, [e for _, _, e in node.specs])
    values = [f"{first[op]}({expression(e, h, c)}) AS {a}"
              for (_, op, e), a in zip(node.specs, part)]
    pane_of = floor_aligned(time, pane, offset)
    panes = c.define(f"SELECT {', '.join(key + [f'{pane_of} AS {p}'] + values)} FROM {source} "
                     f"GROUP BY {', '.join(key + [pane_of])}", "panes")
    base = floor_aligned(p, slide, offset)
    k = c.helper("k")
    copied = c.define(_holding(panes, _offsets(size, slide), k, base, p, size, s, win),
                      "pane_windows")
    combined = [f"CAST({first[op]}({a}) AS {duckdb_type(agg.result_type)}) AS {ident(n)}"
                for (n, op, _), a, agg in zip(node.specs, part, aggs)]
    result = c.define(f"SELECT {', '.join(key + [s] + combined)} FROM {copied} "
                      f"GROUP BY {', '.join(key + [s])}", "hop_sums")
    kept = [n for n in WINDOW_ATTRIBUTES if n in node.by]
    names = [ident(n) for n in node.heading.names if n not in WINDOW_ATTRIBUTES]
    return (f"SELECT {', '.join(names + _window_values(win, s, f'{s} + {size}', kept))} "
            f"FROM {result}")
