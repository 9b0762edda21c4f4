"""DuckDB translation of SPL windows (SPLWINDOW), matching ``sira/engine/spl.py`` (the
reference).

Time arithmetic is done on BIGINT (the timestamp itself, or microseconds since the epoch for a
TIMESTAMP); ``at`` and ``pane`` are turned back into the timestamp's type at the end.

Tumbling and sliding windows without a delta policy, without partition eviction or with
``partitionage`` -- tumbling ``count``, ``punct`` and ``time``; sliding ``count`` or ``time``
eviction with a ``count`` or ``time`` trigger -- are plain SQL (:func:`_windows_sql`, the
formulation of ``sira_spark.spl._split`` on one machine): one sort of the stream numbers each
tuple's position in its key (``row_number``; ``lead`` and the punctuation's running sum read the
same sort); each policy says which windows hold each tuple -- one window number, or a range of
window numbers or timer ticks, unnested -- and one hash GROUP BY per (key, window) gathers
``tuples`` (a list sorted into the canonical order; the stream is a set, so no window holds a tuple
twice). A sliding ``time(T)`` eviction needs the last position of the key whose time is at most t +
T: an ASOF join with each time's last position. O(n log n + output) time, memory the input plus the
windows' content, whatever the keys (one stream, a few long keys, many short ones, one holding most
tuples); DuckDB runs every step on all its threads.

``partitionage(T)`` does not couple the keys: a key's partition is evicted before its next
tuple exactly when that tuple comes more than T after the key's previous one, so each key's
tuples fall into epochs (a running count of those breaks, :func:`_epochs`), each epoch a key of
its own, ``instance`` numbered per key over the epochs; a tick ages a partition too (a tumbling
time window whose last tuple is more than T before its tick is dropped; a time trigger stops T
after the epoch's last tuple).

``partitioncount(N)`` on a sliding window with a count or delta eviction and no ticks is split
into epochs too (:func:`_lru_epochs`): such a partition never ends on its own, so the partitions
that exist are always the N keys updated last, and a tuple starts a new epoch of its key exactly
when its key is not among them -- one pass in Python over the partitions' numbers, an ordered
dict of N keys.

A sliding ``delta(a, D)`` eviction (with a count or time trigger) is SQL too: a tuple stays in
its key's windows until the first later tuple of the key with a > a_i + D arrives, whatever else
the window holds, so each tuple's windows are again a range, ending before that tuple. It is
found for every tuple at once by vectorised binary lifting over the run maxima of ``a`` in Arrow
(:func:`sira_duckdb.lifting.first_beyond`), not by a scan. Over FLOAT the reference subtracts,
``a - a_i > D`` rounded, which is not ``a > a_i + D`` rounded: the bound searched for is the
largest FLOAT a with ``a - a_i <= D`` (:func:`sira_duckdb.lifting.float_reaches`).

A ``delta(a, D)`` trigger follows a chain of trigger references, each the first later tuple of
the key exceeding the one before by more than D: every tuple's successor is found at once by the
same lifting, and only the chain itself is followed in Python, one step per member
(:func:`_chain_members`); the members fire with the window before their own tuple. A tumbling
``delta(a, D)`` window without partition eviction over an ``a`` that never goes down within a key
(a time, a sequence number) is a chain of window starts found the same way, by an ASOF join
(:func:`_delta_chain`).

The others go through a scan of the whole stream in order: a tumbling delta window over an ``a``
that goes down or over FLOAT (the lifting chain measured the same as the scan there), and
the rest of ``partitioncount``/``tuplecount``, which couple the keys (whether a key's window
survives depends on the other keys' windows at that moment, and they on their own flushes,
expiries and contents). DuckDB sorts the stream once into a temporary
table, numbering each tuple's position ``g`` and its partition ``kid``; only the columns the
policies read (partition number, time, delta values, punctuation flag) come out, as Arrow, to
:class:`sira.engine.spl.SplScanner` -- the reference's own state machine, so both engines follow
the same rules by construction -- which returns each window as its partition number, ``at`` and the
positions of its tuples. Those go back to DuckDB as two Arrow tables (windows, and window/position
pairs), and one join and GROUP BY assembles each window's ``tuples`` from the sorted stream. Time
and memory are linear in the input plus the size of the windows (the scan itself O(log n) a tuple),
whatever the partitions look like; no partition is gathered into one list, no state is copied per
tuple, and no Python tuple of the data is made.

TimeInterval windows need no fold: over the whole stream in arrival order, one sort gives each
tuple's position and, as ``max`` over the preceding rows, its watermark (tuples below watermark
- discardAge are dropped); each tuple is copied into its panes (``range`` of pane starts); the
position at which the running watermark first reaches a pane's end is the advance of least time
at or after that end (an ASOF join of the panes with the watermark advances, whose times only
grow); each pane tuple meets its pane's position by a hash join; the tuples before it form the
on-time emission (a GROUP BY per pane) and every later (late) tuple one more emission holding
the pane's tuples up to it (a join of the late tuples with their pane's tuples: the size of
those emissions). Instances are a ``row_number`` per key over the emissions.
O(n log n + output).
"""

from __future__ import annotations

from sira.algebra.spl import SplWindow
from sira.engine.spl import (FEW_WINDOWS, RecentKeys, SplScanner, by_recency,
                              never_evicted, pane_arithmetic, time_triggered)
from sira.types import FLOAT

from .compiler import translates
from .functions import canonical_list
from .guards import guard_of, held, held_over, held_within
from .lifting import chain_members, first_beyond, float_reaches, partition_ends
from .sql import and_all, ident, struct_pack
from .windows import TIME_MAX, from_time, order_columns, time_fits, time_plus, to_time

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
        windows = _time_interval(node, child, c)
    else:
        evicting = _unless_evicting(node, child, c)
        if _in_sql(evicting) and time_triggered(evicting):
            # its windows' tuples are counted before they are made, exactly: no second count
            return _windows_sql(evicting, child, c)
        windows = _sequential(evicting, child, c)
    return f"SELECT * FROM {held(c, node, windows)}"  # max_tuples: the tuples windows hold


# ---------------------------------------------------------------------- tumbling and sliding

def _sequential(node, child, c) -> str:
    if _in_sql(node):
        return _windows_sql(node, child, c)
    if _a_delta_chain(node):
        chained = _delta_chain(node, child, c)
        if chained is not None:
            return chained
    return _scanned(node, child, c)


def _unless_evicting(node, child: str, c):
    """``node`` without its ``partitioncount``/``tuplecount`` policy when the stream's size
    and number of partitions show it can never evict (``sira.engine.spl.never_evicted``; one
    aggregation), so that the windows are computed in SQL instead of a scan."""
    import attrs

    pe = node.partition_eviction
    if pe is None or pe.kind not in ("partitioncount", "tuplecount"):
        return node
    keys = ", ".join(ident(k) for k in node.partition)
    tuples, partitions = c.con.sql(
        f"{c.with_clause()}SELECT (SELECT count(*) FROM {child}), "
        f"(SELECT count(*) FROM (SELECT DISTINCT {keys} FROM {child}))").fetchall()[0]
    if never_evicted(node, tuples, partitions):
        return attrs.evolve(node, partition_eviction=None)
    return node


def _in_sql(node) -> bool:
    """Whether the windows are computed by :func:`_windows_sql` (window functions, no scan): every
    tumbling and sliding window without a delta policy, without partition eviction or with
    ``partitionage`` (per epoch, :func:`_epochs`), or with ``partitioncount`` on a sliding
    window with a count or delta eviction and no ticks (per epoch, :func:`_lru_epochs`) -- as
    ``sira_spark.spl._splittable`` decides, with sliding ``delta`` evictions and ``delta``
    triggers (over FLOAT too: :func:`_reaches`), less tumbling ``delta`` windows (a chain of
    window starts: :func:`_delta_chain`). The timestamp is INT, LONG or TIMESTAMP, so ticks and
    bounds are exact integers."""
    ev = node.eviction
    pe = node.partition_eviction
    if pe is not None and pe.kind != "partitionage" and not by_recency(node):
        return False
    return ev.kind != "delta" or node.kind == "sliding"


def _floating(node, policy) -> bool:
    """Whether a ``delta(a, D)`` policy reads a FLOAT ``a`` (else an integer or TIMESTAMP one,
    and D is an integer too)."""
    return node.source.heading.type_of(policy.attr) == FLOAT


def _reaches(node, policy, values):
    """For each value a of a ``delta(a, D)`` ``policy``, the largest value a later tuple may
    have without passing a by more than D (``b - a > D`` moves it on): a + D over integers
    (capped at BIGINT's largest value, which no value exceeds); over FLOAT
    ``sira_duckdb.lifting.float_reaches``, as the reference's subtraction rounds."""
    import pyarrow.compute as pc
    amount = node.delta_amount(policy)
    if _floating(node, policy):
        return float_reaches(values, amount)
    return pc.add(pc.min_element_wise(values, TIME_MAX - amount), amount)


def _windows_sql(node, child, c) -> str:
    """Tumbling and sliding windows in SQL (the formulation of ``sira_spark.spl._split``, on one
    machine): each tuple's position ``j`` in its key is its ``row_number`` in stream order; each
    policy says which windows hold the tuple -- one window number, or a range of them
    (``range``, unnested: the output's size) -- and one GROUP BY per (key, window) gathers
    ``tuples``:

    * tumbling ``count(N)``: window (j - 1) div N, emitted when it holds N tuples, at its last;
    * tumbling ``punct(p)``: window = the punctuated tuples of its key before it (a running
      sum); emitted when it holds one (it ends with it);
    * tumbling ``time(T)``: window (t - o) div T (o: the stream's first time), emitted at
      o + (w + 1)T when that tick happens (it is not after the stream's last time);
    * sliding, ``count(M)`` trigger (default 1): emissions at the positions w, multiples of M,
      with j <= w <= last(j): j + N - 1 for ``count(N)`` eviction; for ``time(T)`` the number
      of the key's tuples whose time is at most t + T (:func:`_with_reach`);
    * sliding, ``time(P)`` trigger: ticks o + mP with t < tick <= end(j) and tick <= the
      stream's last time: end(j) is the time of the key's position j + N (``lead``) for
      ``count(N)`` eviction, t + T for ``time(T)``.
    * a sliding ``delta(a, D)`` eviction ends a tuple's windows at the tuple evicting it, the
      first later one of its key with a > a_j + D (:func:`_evictions`): last(j) is the
      position before it, end(j) its time; a tuple never evicted stays to its key's end.

    ``instance`` is the window's rank in its key. Sorts, window functions and one GROUP BY:
    O(n log n + output) time, memory the input plus the windows' content."""
    h = node.source.heading
    ev, tr = node.eviction, node.trigger
    scanner = SplScanner(node)
    keys = outer = [ident(k) for k in node.partition]
    order = ", ".join(_stream_order(node))
    t, j, row, w = (c.helper(n) for n in ("t", "j", "row", "w"))
    timed_sql = f"SELECT *, {to_time(ident(node.ts), node.ts_type)} AS {t} FROM {child}"
    pe = node.partition_eviction  # a window state per epoch of each key
    aged = pe is not None and pe.kind == "partitionage"
    if pe is not None:
        ep = c.helper("ep")
        timed_sql = (_epochs if aged else _lru_epochs)(node, timed_sql, keys, t, ep, c)
        keys = [*outer, ep]
    over_key = _partition(keys)
    o, last, at, inst = (c.helper(n) for n in ("o", "last", "at", "inst"))
    bounds = (node.kind == "tumbling" and ev.kind == "time") or (tr is not None
                                                                 and tr.kind == "time")
    extra = ""
    if ev.kind == "punct":
        extra = (f", CAST({ident(ev.attr)} AS INTEGER) AS {c.helper('p')}, "
                 f"sum(CAST({ident(ev.attr)} AS INTEGER)) OVER ({over_key}ORDER BY {order} "
                 f"ROWS UNBOUNDED PRECEDING) AS {c.helper('cp')}")
    if node.kind == "sliding" and ev.kind == "time":  # the key's last tuple of each time
        extra += (f", lead({t}) OVER ({over_key}ORDER BY {order}) IS DISTINCT FROM {t} "
                  f"AS {c.helper('lastof')}")
    long_counts = (node.kind == "sliding" and ev.kind == "count" and (tr is None or tr.kind ==
                   "count") and -(-scanner.ev_amount // scanner.tr_amount) > FEW_WINDOWS)
    if long_counts:  # no window past the key's last tuple
        extra += f", count(*) OVER ({over_key}) AS {c.helper('n')}"
    if node.kind == "sliding" and ev.kind == "count" and tr is not None and tr.kind == "time":
        extra += (f", lead({t}, {scanner.ev_amount}) OVER ({over_key}ORDER BY {order}) "
                  f"AS {c.helper('tn')}")
    if aged and tr is not None and tr.kind == "time":  # the epoch's last time
        extra += f", max({t}) OVER ({over_key}) AS {c.helper('le')}"
    delta = ev.kind == "delta"  # a sliding delta eviction
    chained = tr is not None and tr.kind == "delta"  # a delta trigger
    row_sql = f"{_row_struct(h)} AS {row}"
    n, tid = c.helper("n"), c.helper("id")
    if delta or chained:  # a table, read as Arrow: a, ta, the key's size, an id
        extra += "".join(f", CAST({_delta(node, pol)} AS "
                         f"{'DOUBLE' if _floating(node, pol) else 'BIGINT'}) AS {c.helper(name)}"
                         for pol, name in ((ev, "a"), (tr, "ta")) if pol and pol.kind == "delta")
        extra += f", count(*) OVER ({over_key}) AS {n}, row_number() OVER () AS {tid}"
        base = c.materialize(f"SELECT *, row_number() OVER ({over_key}ORDER BY {order}) AS {j}"
                             f"{extra} FROM ({timed_sql}) AS s", "spl_base", node)
        cols, joins = "", ""
        if delta:  # the position and time of the tuple evicting each one
            found = _evictions(node, base, keys, t, j, c)
            cols += f", e.je AS {c.helper('je')}, e.te AS {c.helper('te')}"
            joins += f" JOIN {found} AS e ON e.id = b.{tid}"
        if chained:  # 1 for the trigger chain's members
            members = _chain_members(node, base, keys, j, tr, c.helper("ta"), c)
            cols += f", CAST(m.id IS NOT NULL AS INTEGER) AS {c.helper('mem')}"
            joins += f" LEFT JOIN {members} AS m ON m.id = b.{tid}"
        base = src = c.define(f"SELECT b.*, {row_sql}{cols} FROM {base} AS b{joins}",
                              "spl_read")  # the tuples' structs made after the table
    else:
        base = src = c.define(f"SELECT *, row_number() OVER ({over_key}ORDER BY {order}) AS {j}, "
                              f"{row_sql}{extra} FROM ({timed_sql}) AS s", "spl_base",
                              materialized=bounds or ev.kind == "time")
    if node.kind == "sliding" and ev.kind == "time":
        src = _with_reach(base, keys, t, j, scanner.ev_amount, c)
    if bounds:  # o and last: the stream's first and last times
        src = (f"{src} CROSS JOIN (SELECT min({t}) AS {o}, max({t}) AS {last} "
               f"FROM {base}) AS b")
    # the stream is a set (SPL windows count tuples: their operand is read distinct), and a
    # window holds each tuple once, so sorting is all the canonical form needs
    tuples = f"list_sort(list({row}), 'ASC', 'NULLS FIRST')"
    group = ", ".join(keys + [w])
    if node.kind == "tumbling" and ev.kind == "time":
        period = scanner.ev_amount
        windows = (f"SELECT {', '.join(keys)}{', ' if keys else ''}{w}, "
                   f"{_tick(o, f'{w} + 1', period)} AS {at}, {tuples} AS tuples FROM "
                   f"(SELECT *, {_ticks_to(t, o, period)} AS {w} FROM {src}) AS x "
                   f"WHERE {w} < {_ticks_to(last, o, period)} GROUP BY {group}, {o}")
        if aged:  # the tick ages a window whose last tuple is more than T before it
            windows += (f" HAVING {time_plus(f'max({t})', scanner.pe_amount)} "
                        f">= {_tick(o, f'{w} + 1', period)}")
        instance = f"row_number() OVER ({over_key}ORDER BY {w})"
    elif node.kind == "tumbling":
        if ev.kind == "count":
            number, full = f"({j} - 1) // {scanner.ev_amount}", f"count(*) = {ev.amount}"
        else:  # punct: the punctuated tuple closes its window
            p, cp = c.helper("p"), c.helper("cp")
            number, full = f"{cp} - {p}", f"max({p}) = 1"
        windows = (f"SELECT {', '.join(keys)}{', ' if keys else ''}{w}, max({t}) AS {at}, "
                   f"{tuples} AS tuples FROM (SELECT *, {number} AS {w} FROM {src}) AS x "
                   f"GROUP BY {group} HAVING {full}")
        instance = f"{w} + 1"
    elif tr is None or tr.kind == "count":
        every = scanner.tr_amount
        if ev.kind == "count":  # a window past the key's last tuple never fires
            end = f"{j} + {scanner.ev_amount - 1}"
            if long_counts:  # not made
                end = f"least({end}, {c.helper('n')})"
        elif delta:  # up to the tuple before the one evicting it, else the key's last
            end = f"coalesce({c.helper('je')} - 1, {c.helper('n')})"
        else:
            end = c.helper("reach")
        start = f"(({j} + {every - 1}) // {every}) * {every}"
        # each (tuple, window) is one tuple an emission holds (every window up to the key's
        # last tuple fires): counted before they are made, unless a tuple is in a few at most
        if ev.kind != "count" or long_counts:
            ok, many = c.helper("ok"), (f"CASE WHEN {end} >= {start} THEN "
                                        f"({end} - {start}) // {every} + 1 ELSE 0 END")
            src = f"(SELECT * FROM (SELECT *, {held_over(c, node, many)} AS {ok} FROM {src}) " \
                f"AS g WHERE {ok})"
        windows = (f"SELECT {', '.join(keys)}{', ' if keys else ''}{w}, max({t}) AS {at}, "
                   f"{tuples} AS tuples FROM (SELECT *, unnest(range({start}, {end} + 1, "
                   f"{every})) AS {w} FROM {src} AS s) AS x GROUP BY {group} "
                   f"HAVING max({j}) = {w}")
        instance = f"{w} // {every}"
    elif chained:  # fired by the chain's members after the first, each before its own tuple
        if ev.kind == "count":
            end = f"least({j} + {scanner.ev_amount}, {n})"
        elif delta:  # the trigger of the tuple evicting it still finds it
            end = f"coalesce({c.helper('je')}, {n})"
        else:
            end = c.helper("reach")
        wc, jend, we = c.helper("wc"), c.helper("jend"), c.helper("we")
        mem = c.helper("mem")
        x = c.define(f"SELECT *, CAST(sum({mem}) OVER ({over_key}ORDER BY {j} ROWS UNBOUNDED "
                     f"PRECEDING) AS BIGINT) AS {wc}, {end} AS {jend} FROM {src}", "spl_fired",
                     materialized=True)
        same = [f"a.{k} = b.{k}" for k in keys]
        # tuple j is in the emissions of the members numbered wc + 1 to the count at its end
        spans = (f"SELECT a.*, b.{wc} AS {we} FROM {x} AS a JOIN {x} AS b "
                 f"ON {and_all(same + [f'b.{j} = a.{jend}'])}")
        fired = (f"SELECT {''.join(f'{k}, ' for k in keys)}{wc} AS {w}, {t} AS {at} FROM {x} "
                 f"WHERE {mem} = 1 AND {wc} > 1")
        spans = c.define(spans, "spl_spans")
        within = held_within(c, node, spans, f"greatest({we} - {wc}, 0)")  # before they are made
        emitted = (f"SELECT {', '.join(keys)}{', ' if keys else ''}{w}, {tuples} AS tuples "
                   f"FROM (SELECT *, unnest(range({wc} + 1, {we} + 1)) AS {w} FROM {spans} "
                   f"WHERE {within}) AS s GROUP BY {group}")
        windows = (f"SELECT {''.join(f'em.{k} AS {k}, ' for k in keys)}em.{w} AS {w}, "
                   f"f.{at} AS {at}, em.tuples AS tuples FROM ({emitted}) AS em JOIN ({fired}) "
                   f"AS f ON {and_all([f'em.{k} = f.{k}' for k in keys] + [f'em.{w} = f.{w}'])}")
        instance = f"row_number() OVER ({over_key}ORDER BY {w})"
    else:  # a time trigger: the ticks o + mP with t < tick <= end, not after the last time
        period = scanner.tr_amount
        if ev.kind == "count":
            end = f"least(coalesce({c.helper('tn')}, {last}), {last})"
        elif delta:  # up to the time of the tuple evicting it
            end = f"least(coalesce({c.helper('te')}, {last}), {last})"
        else:
            end = f"least({time_plus(t, scanner.ev_amount)}, {last})"
        if aged:  # the first tick more than T after the epoch's last tuple ages it
            end = f"least({end}, {time_plus(c.helper('le'), scanner.pe_amount)})"
        # the ticks o + mP with t < tick <= end: m from ticks_to(t) + 1 to ticks_to(end), in
        # HUGEINT; their number is what the tuple's windows hold, so it fits BIGINT
        first = f"({_ticks_to(t, o, period)} + 1)"
        ticks = f"({_ticks_to(end, o, period)} - {first} + 1)"
        # each (tuple, tick) is one tuple a window holds: a quiet stretch may hold a tuple for
        # more ticks than max_tuples, refused before they are made
        within = held_within(c, node, src, f"greatest({ticks}, 0)")
        windows = (f"SELECT {', '.join(keys)}{', ' if keys else ''}{w}, "
                   f"{_tick(o, w, period)} AS {at}, {tuples} AS tuples FROM "
                   f"(SELECT *, {first} + unnest(range(0, CAST({ticks} AS BIGINT))) AS {w} "
                   f"FROM {src} WHERE {within}) AS x GROUP BY {group}, {o}")
        instance = f"row_number() OVER ({over_key}ORDER BY {w})"
    if pe is not None:  # instance keeps counting across a partition eviction
        instance = f"row_number() OVER ({_partition(outer)}ORDER BY {ep}, {w})"
    out = [f"{k}" for k in outer]
    out += [f"CAST({instance} AS BIGINT) AS instance",
            f"{from_time(at, node.ts_type)} AS {ident('at')}", "tuples"]
    return f"SELECT {', '.join(out)} FROM ({windows}) AS win"


def _ticks_to(t: str, o: str, period: int) -> str:
    """(t - o) div period, the number of whole timer periods from the first time o to t, in
    HUGEINT: t - o of two BIGINT times may pass BIGINT's range, and so may the count when the
    period is short (``time(1)`` over times from LONG's smallest to its largest)."""
    return f"((CAST({t} AS HUGEINT) - {o}) // {period})"


def _tick(o: str, m: str, period: int) -> str:
    """o + m * period, the m-th tick after the first time o, in HUGEINT (o may be far below
    zero and m * period past BIGINT's range; a tick is never after the stream's last time)."""
    return f"(CAST({o} AS HUGEINT) + CAST({m} AS HUGEINT) * {period})"


def _epochs(node, timed_sql: str, keys: list, t: str, ep: str, c) -> str:
    """``timed_sql`` with ``ep``, each tuple's epoch in its key under ``partitionage(T)``: a
    running count of the breaks, a tuple whose key's previous one (``lag``), at p, is more than
    T before it (p + T < t): the partition is evicted at the first tuple or tick after p + T,
    and nothing reads it in between. Under a sliding ``time(T2)`` eviction with a count
    trigger (no ticks), expiry may empty the partition first and keep the trigger's count:
    the break then needs the first tuple after p + T to come before the first after p + T2
    (at the same tuple expiry goes first), each found by an ASOF join with the stream's times.
    (A time trigger keeps no state: there every gap breaks.) As ``sira_spark.spl._epochs``."""
    scanner = SplScanner(node)
    age = scanner.pe_amount
    over_key = _partition(keys)
    order = ", ".join(_stream_order(node))
    pt, brk = c.helper("pt"), c.helper("brk")
    gapped = c.define(f"SELECT *, lag({t}) OVER ({over_key}ORDER BY {order}) AS {pt} "
                      f"FROM ({timed_sql}) AS s", "spl_gap", materialized=True)
    gap = f"{time_plus(pt, age)} < {t}"
    tr = node.trigger
    source = gapped
    if node.kind == "sliding" and node.eviction.kind == "time" \
            and (tr is None or tr.kind != "time"):
        tt, na, nx = c.helper("tt"), c.helper("na"), c.helper("nx")
        times = f"(SELECT DISTINCT {t} AS {tt} FROM {gapped})"
        source = (f"(SELECT s.*, a.{tt} AS {na}, x.{tt} AS {nx} FROM {gapped} AS s "
                  f"ASOF LEFT JOIN {times} AS a ON a.{tt} > {time_plus(f's.{pt}', age)} "
                  f"ASOF LEFT JOIN {times} AS x "
                  f"ON x.{tt} > {time_plus(f's.{pt}', scanner.ev_amount)})")
        gap += f" AND ({nx} IS NULL OR {na} < {nx})"
    flag = f"CAST(coalesce({gap}, FALSE) AS INTEGER)"
    return (f"SELECT *, sum({brk}) OVER ({over_key}ORDER BY {order} ROWS UNBOUNDED PRECEDING) "
            f"AS {ep} FROM (SELECT *, {flag} AS {brk} FROM {source} AS g) AS b")


def _lru_epochs(node, timed_sql: str, keys: list, t: str, ep: str, c) -> str:
    """``timed_sql`` with ``ep``, each tuple's epoch in its key under ``partitioncount(N)`` on a
    sliding window with a count or delta eviction and no ticks: such a partition never ends on
    its own, so the partitions that exist are always the N keys updated last, and a tuple
    starts a new epoch exactly when its key is not among them. DuckDB sorts the stream once
    (``g``: the position in stream order, ``kid``: the partition's number); the partition
    numbers, in order, go through one pass in Python keeping the N keys updated last (an
    ordered dict, O(1) a tuple), which gives the positions where a partition starts; the
    epoch is a running count of those. As ``sira_spark.spl._lru_epochs``, on one machine."""
    import pyarrow as pa

    h = node.source.heading
    g, kid, brk = c.helper("g"), c.helper("kid"), c.helper("brk")
    order = ", ".join(_stream_order(node))
    number = f"dense_rank() OVER (ORDER BY {', '.join(order_columns(h, node.partition))})"
    seq = c.materialize(f"SELECT *, row_number() OVER (ORDER BY {order}) - 1 AS {g}, "
                        f"{number} AS {kid} FROM ({timed_sql}) AS s", "spl_lru", node)
    kids = c.fetch_arrow(f"SELECT {kid} FROM {seq} ORDER BY {g}", node).column(0).to_pylist()
    starts = RecentKeys(node.partition_eviction.amount).starts(range(len(kids)), kids)
    started = c.register(pa.table({"g": pa.array(starts, pa.int64())}), "spl_starts")
    return (f"SELECT *, sum({brk}) OVER ({_partition(keys)}ORDER BY {order} ROWS UNBOUNDED "
            f"PRECEDING) AS {ep} FROM (SELECT s.*, CAST(x.g IS NOT NULL AS INTEGER) AS {brk} "
            f"FROM {seq} AS s LEFT JOIN {started} AS x ON x.g = s.{g}) AS b")


def _with_reach(base: str, keys: list, t: str, j: str, span, c) -> str:
    """``base`` with ``reach``: for each tuple, the number of its key's tuples whose time is at
    most t + span (the last position whose window still holds it) -- an ASOF join with the
    last position of each of the key's times (``lastof``: ``lead`` in the positions' sort),
    the greatest time at most t + span. (A ``count(*)`` over a RANGE frame reaching span
    FOLLOWING gives the same number, several times slower in DuckDB 2.0: 2.4 s against 0.3 s
    at 1M tuples.)"""
    tt, mj, reach = c.helper("tt"), c.helper("mj"), c.helper("reach")
    cols = "".join(f"{k}, " for k in keys)
    last = (f"SELECT {cols}{t} AS {tt}, {j} AS {mj} FROM {base} "
            f"WHERE {c.helper('lastof')}")
    same = and_all([f"b.{k} = m.{k}" for k in keys] + [f"m.{tt} <= {time_plus(f'b.{t}', span)}"])
    return c.define(f"SELECT b.*, m.{mj} AS {reach} FROM {base} AS b ASOF JOIN ({last}) AS m "
                    f"ON {same}", "spl_reach")


def _evictions(node, base: str, keys: list, t: str, j: str, c) -> str:
    """A registered Arrow table (``id``, ``je``, ``te``): for each tuple of ``base`` (a table),
    the position and time of the tuple whose arrival evicts it from its sliding ``delta(a, D)``
    window -- the first later tuple of its key with a > a_j + D (the reference's heap pops every
    tuple more than D below the new one) -- null when none does. The tuples come out as
    Arrow sorted by (key, position), :func:`sira_duckdb.lifting.first_beyond` finds every
    evicting tuple at once. O(n log n), memory linear."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ids, js, ends, values, times = _key_ordered(node, base, keys, j, [c.helper("a"), t], c)
    evictor = first_beyond(values, _reaches(node, node.eviction, values), ends)
    return c.register(pa.table({"id": ids, "je": pc.take(js, evictor),
                                "te": pc.take(times, evictor)}), "spl_evictions")


def _chain_members(node, base: str, keys: list, j: str, policy, value: str, c) -> str:
    """A registered Arrow table (``id``) of the members of each key's chain of the
    ``delta(a, D)`` ``policy`` (a tumbling window's starts, a delta trigger's references; ``a``
    in ``base``'s column ``value``): the key's first tuple, then each time the first later tuple
    with a > a_m + D over the member m before it. Every tuple's successor is found at once by
    :func:`sira_duckdb.lifting.first_beyond`, for ``a`` in any order, and the chains followed
    from every key's first tuple at once by :func:`sira_duckdb.lifting.chain_members`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ids, js, ends, values = _key_ordered(node, base, keys, j, [value], c)
    successor = first_beyond(values, _reaches(node, policy, values), ends)
    members = chain_members(successor, pc.indices_nonzero(pc.equal(js, 1)))
    return c.register(pa.table({"id": pc.take(ids, members)}),
                      "spl_members")


def _key_ordered(node, base: str, keys: list, j: str, columns: list, c) -> tuple:
    """Arrow arrays of ``base``'s tuples sorted by (key, position): id, position, the index
    after the key's last tuple (:func:`sira_duckdb.lifting.partition_ends`), then ``columns``."""
    table = c.fetch_arrow(f"SELECT {c.helper('id')}, {j}, {c.helper('n')}, {', '.join(columns)} "
                          f"FROM {base} ORDER BY {', '.join([*keys, j])}", node)
    ids, js, sizes, *rest = (column.combine_chunks() for column in table.columns)
    return (ids, js, partition_ends(js, sizes), *rest)


def _a_delta_chain(node) -> bool:
    """Whether the windows are a tumbling ``delta(a, D)`` chain without partition eviction over
    an integer (or TIMESTAMP) ``a``, which :func:`_delta_chain` computes."""
    ev = node.eviction
    return (node.kind == "tumbling" and ev.kind == "delta" and node.partition_eviction is None
            and not _floating(node, ev))


def _delta_chain(node, child, c) -> str | None:
    """Tumbling ``delta(a, D)`` windows when ``a`` never goes down within a key in stream order
    (a time, a sequence number: the usual case); None otherwise (one aggregation finds out), and
    :func:`_scanned` runs the reference's state machine instead. (The chain of
    :func:`_chain_members`, by binary lifting, would serve any order, but measured the same as
    the scan there: 1.35 s against 1.10-1.44 s at 1,000,000 tuples of one sequence.)

    A key's windows start at its first tuple and then, each, at the first later tuple whose
    ``a`` exceeds the previous start's by more than D (:func:`_rising_chain`; only the chain is
    followed in Python, one step per window). Each tuple's window is its key's last start at or
    before it (an ASOF join), and a window is emitted, ``at`` its successor's time, when it has
    one (the last is never emitted). O(n log n + output), no scan of the tuples in Python.

        >>> import sira
        >>> s = sira.Relation.from_rows({"ts": sira.LONG, "k": sira.INT},
        ...                             [(t, t % 2) for t in range(8)])
        >>> q = "splwindow(S, ts, tumbling, delta(ts, 2) partitioned(k))"
        >>> sira.evaluate(q, {"S": s}, engine="duckdb") == sira.evaluate(q, {"S": s})
        True
    """
    h = node.source.heading
    ev = node.eviction
    keys = [ident(k) for k in node.partition]
    g, t, a = (c.helper(n) for n in ("g", "t", "a"))
    order = ", ".join(_stream_order(node))
    seq = c.materialize(
        f"SELECT *, row_number() OVER (ORDER BY {order}) - 1 AS {g}, "
        f"{to_time(ident(node.ts), node.ts_type)} AS {t}, CAST({_delta(node, ev)} AS BIGINT) "
        f"AS {a} FROM {child}", "spl_seq", node)
    over_key = _partition(keys)
    falls = c.fetch(f"SELECT count(*) FROM (SELECT {a} < lag({a}) OVER ({over_key}ORDER BY {g}) "
                    f"AS down FROM {seq}) AS f WHERE down", node)[0][0]
    if falls:  # the scan (the chain by lifting measured the same here)
        return None
    chain = _rising_chain(node, seq, keys, g, a, c)
    w, at, sg = c.helper("w"), c.helper("at"), c.helper("sg")
    in_key = f"({_partition([f'b.{k}' for k in keys])}ORDER BY b.{g})"
    numbered = c.define(
        f"SELECT {''.join(f'b.{k}, ' for k in keys)}b.{g} AS {sg}, row_number() OVER {in_key} "
        f"AS {w}, lead(b.{t}) OVER {in_key} AS {at} FROM {chain} AS c JOIN {seq} AS b "
        f"ON b.{g} = c.id", "spl_chain")
    held = and_all([f"s.{k} = n.{k}" for k in keys] + [f"n.{sg} <= s.{g}"])
    row = struct_pack([(n, f"s.{ident(n)}") for n in h.names])
    group = ", ".join([f"s.{k}" for k in keys] + [f"n.{w}", f"n.{at}"])
    select = [f"s.{k} AS {k}" for k in keys]
    select += [f"CAST(n.{w} AS BIGINT) AS instance",
               f"{from_time(f'n.{at}', node.ts_type)} AS {ident('at')}",
               f"{canonical_list(f'list({row})')} AS tuples"]
    return (f"SELECT {', '.join(select)} FROM {seq} AS s ASOF JOIN {numbered} AS n ON {held} "
            f"WHERE n.{at} IS NOT NULL GROUP BY {group}")


def _rising_chain(node, seq: str, keys: list, g: str, a: str, c) -> str:
    """A registered Arrow table (``id``: positions ``g`` in stream order) of the window starts of
    a tumbling ``delta(a, D)`` chain over an ``a`` that never goes down within a key: each
    tuple's successor, the first tuple of its key with a > a_i + D, is the first position of the
    least such value, found for every tuple at once by one ASOF join (the sum capped where it
    would leave BIGINT); the chain is hopped in Python, one step per window."""
    import pyarrow as pa

    amount = node.delta_amount(node.eviction)
    key_list = "".join(f"{k}, " for k in keys)
    firsts = [r[0] for r in c.fetch(
        f"SELECT min({g}) FROM {seq}{' GROUP BY ' + ', '.join(keys) if keys else ''}", node)]
    nx, v = c.helper("nx"), c.helper("v")
    values = f"SELECT {key_list}{a} AS {v}, min({g}) AS {nx} FROM {seq} GROUP BY {key_list}{a}"
    same = and_all([f"b.{k} = m.{k}" for k in keys] + [f"m.{v} > {time_plus(f'b.{a}', amount)}"])
    successor = c.fetch_arrow(f"SELECT m.{nx} FROM {seq} AS b ASOF LEFT JOIN ({values}) AS m "
                              f"ON {same} ORDER BY b.{g}", node).column(0).to_pylist()
    starts = []
    for first in firsts:
        position = first
        while position is not None:
            starts.append(position)
            position = successor[position]
    return c.register(pa.table({"id": pa.array(starts, pa.int64())}), "spl_starts")


def _scanned(node, child, c) -> str:
    """Tumbling and sliding windows: DuckDB sorts the stream once (``g``: the position in
    stream order, ``kid``: the partition's number); the five narrow columns the policies read go
    to :class:`sira.engine.spl.SplScanner`, the reference's own state machine, which returns
    each window as (partition number, instance, at, positions); DuckDB assembles the windows'
    tuples from those positions. Linear in the input plus the windows' size, whatever the
    partitions (one stream, a few long partitions, many short ones)."""
    import pyarrow as pa

    h = node.source.heading
    g, kid, t, a, p, ta = (c.helper(n) for n in ("g", "kid", "t", "a", "p", "ta"))
    keys = [ident(k) for k in node.partition]
    order = ", ".join(_stream_order(node))
    number = (f"dense_rank() OVER (ORDER BY {', '.join(order_columns(h, node.partition))})"
              if keys else "1")
    ev, tr = node.eviction, node.trigger
    seq = c.materialize(
        f"SELECT *, row_number() OVER (ORDER BY {order}) - 1 AS {g}, {number} AS {kid}, "
        f"{to_time(ident(node.ts), node.ts_type)} AS {t}, {_delta(node, ev)} AS {a}, "
        f"{ident(ev.attr) if ev.kind == 'punct' else 'FALSE'} AS {p}, "
        f"{_delta(node, tr)} AS {ta} FROM {child}", "spl_seq", node)
    columns = c.con.sql(f"SELECT {kid}, {t}, {a}, {p}, {ta} FROM {seq} ORDER BY {g}")
    table = columns.to_arrow_table()
    kids, times, avals, puncts, tavals = (table.column(i).to_pylist() for i in range(5))
    scan = SplScanner.guarded(node, guard_of(c, node)[0])  # a quiet stretch's ticks counted
    push = scan.push
    emissions = []
    for i, key in enumerate(kids):
        emissions.extend(push(key, times[i], i, avals[i], puncts[i], tavals[i]))
    emissions.extend(scan.finish())
    counters: dict = {}
    w_e, w_kid, w_inst, w_at, m_e, m_g = [], [], [], [], [], []
    for e, (key, at, ids) in enumerate(emissions):
        counters[key] = counters.get(key, 0) + 1
        w_e.append(e)
        w_kid.append(key)
        w_inst.append(counters[key])
        w_at.append(at)
        m_e.extend([e] * len(ids))
        m_g.extend(ids)
    at_type = pa.float64() if node.ts_type == FLOAT else pa.int64()
    windows = c.register(pa.table({"e": pa.array(w_e, pa.int64()),
                                   "instance": pa.array(w_inst, pa.int64()),
                                   "at": pa.array(w_at, at_type)}), "spl_windows")
    members = c.register(pa.table({"e": pa.array(m_e, pa.int64()),
                                   "g": pa.array(m_g, pa.int64())}), "spl_members")
    row = struct_pack([(n, f"s.{ident(n)}") for n in h.names])
    key_cols = [f"s.{k}" for k in keys]
    group = ", ".join(["w.e", "w.instance", "w.at"] + key_cols)
    select = [f"{k} AS {k2}" for k, k2 in zip(key_cols, keys)]
    select += ["CAST(w.instance AS BIGINT) AS instance",
               f"{from_time('w.at', node.ts_type)} AS {ident('at')}",
               f"{canonical_list(f'list({row})')} AS tuples"]
    return (f"SELECT {', '.join(select)} FROM {members} AS m JOIN {windows} AS w ON w.e = m.e "
            f"JOIN {seq} AS s ON s.{g} = m.g GROUP BY {group}")


def _partition(keys) -> str:
    return f"PARTITION BY {', '.join(keys)} " if keys else ""


def _delta(node, policy) -> str:
    """The value a delta policy reads, as BIGINT (microseconds for TIMESTAMP) or DOUBLE."""
    if policy is None or policy.kind != "delta":
        return "CAST(NULL AS BIGINT)"
    return to_time(ident(policy.attr), node.source.heading.type_of(policy.attr))


def _time_interval(node, child, c) -> str:
    h = node.source.heading
    t_type = node.ts_type
    duration, period, discard, offset = node.interval_units
    keys = [ident(k) for k in node.partition]
    t, g, wmb = c.helper("t"), c.helper("g"), c.helper("wmb")
    order = ", ".join(_stream_order(node))
    # one sort: both window functions read the same order
    timed = (f"SELECT *, {to_time(ident(node.ts), t_type)} AS {t} FROM {child}")
    watermarked = c.define(f"SELECT *, row_number() OVER (ORDER BY {order}) AS {g}, max({t}) "
                           f"OVER (ORDER BY {order} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 "
                           f"PRECEDING) AS {wmb} FROM ({timed}) AS s", "watermarks",
                           materialized=True)
    v, ag = c.helper("v"), c.helper("ag")
    advances = (f"SELECT {t} AS {v}, {g} AS {ag} FROM {watermarked} "
                f"WHERE {wmb} IS NULL OR {t} > {wmb}")
    low = f"(greatest({wmb}, CAST({-2 ** 63 + discard} AS BIGINT)) - {discard})"  # floored
    kept = c.define(f"SELECT * FROM {watermarked} WHERE {wmb} IS NULL OR {t} >= {low}", "kept")
    # the pane starts holding t, without overflow (pane_arithmetic): t - d - jP, j = 0 .. top
    r, q, cut = pane_arithmetic(duration, period, offset)
    d = f"((({t} % {period}) - {r} + {2 * period}) % {period})"
    top = f"{q} - CAST({d} > {cut} AS BIGINT)"
    start, row, arr, end = c.helper("start"), c.helper("row"), c.helper("arr"), c.helper("end")
    # every pane a tuple enters is emitted holding it: a short creation period puts one tuple
    # in billions of panes, refused before they are made
    within = "TRUE" if q == 0 else held_within(
        c, node, kept, f"CASE WHEN {d} < {duration} THEN {top} + 1 ELSE 0 END")
    panes = c.define(f"SELECT *, unnest(CASE WHEN {d} < {duration} THEN "
                     f"generate_series({t} - {d} - ({top}) * {period}, {t} - {d}, {period}) ELSE "
                     f"CAST([] AS BIGINT[]) END) AS {start}, {_row_struct(h)} AS {row} "
                     f"FROM {kept} WHERE {within}", "panes")
    pane_key = keys + [start]
    by_pane = c.define(f"SELECT {', '.join(pane_key)}, {start} + {duration} AS {end} "
                       f"FROM {panes} GROUP BY {', '.join(pane_key)}", "by_pane")
    # cpos: the position at which the watermark first reaches the pane's end (NULL: never):
    # the watermark advances have increasing times, so it is the advance of least time at or
    # after the end -- an ASOF join (one sort of each side; a "first following non-NULL"
    # window over the advances and ends sorted together costs DuckDB the length of each run
    # of ends between two advances, for every end in it)
    cpos = c.helper("c")
    reached = c.define(f"SELECT b.*, a.{ag} AS {cpos} FROM {by_pane} AS b ASOF LEFT JOIN "
                       f"({advances}) AS a ON a.{v} >= b.{end}", "reached", materialized=True)
    same = and_all([f"p.{k} = r.{k}" for k in pane_key])
    # each pane tuple with its pane's c (a hash join on the panes: one row each)
    held = c.define(f"SELECT p.*, r.{end}, r.{cpos} FROM {panes} AS p JOIN {reached} AS r "
                    f"ON {same}", "held")
    e, at = c.helper("e"), c.helper("at")
    # the on-time emission: the tuples before c (all of them when the watermark never gets
    # there: emitted at the end of input)
    on_time = (f"SELECT {', '.join(pane_key)}, coalesce(any_value({cpos}), "
               f"CAST({_END_OF_INPUT} AS BIGINT)) AS {e}, any_value({end}) AS {at}, "
               f"any_value({end}) AS {end}, list({row}) AS {arr} FROM {held} "
               f"WHERE {cpos} IS NULL OR {g} < {cpos} GROUP BY {', '.join(pane_key)}")
    # each late tuple (after c) emits the pane again with every tuple of it up to itself
    lg, lw = c.helper("lg"), c.helper("lw")
    late = (f"SELECT {', '.join(pane_key)}, {g} AS {lg}, {wmb} AS {lw} FROM {held} "
            f"WHERE {cpos} IS NOT NULL AND {g} > {cpos}")
    same = and_all([f"p.{k} = l.{k}" for k in pane_key] + [f"p.{g} <= l.{lg}"])
    again = (f"SELECT {', '.join(f'p.{k}' for k in pane_key)}, l.{lg} AS {e}, "
             f"any_value(l.{lw}) AS {at}, any_value(p.{end}) AS {end}, list(p.{row}) AS {arr} "
             f"FROM {held} AS p JOIN ({late}) AS l ON {same} "
             f"GROUP BY {', '.join(f'p.{k}' for k in pane_key)}, l.{lg}")
    emitted = c.define(f"{on_time} UNION ALL {again}", "emitted")
    inst = f"row_number() OVER ({_partition(keys)}ORDER BY {e}, {start})"
    pane = struct_pack([("begin", from_time(start, t_type)), ("end", from_time(end, t_type))])
    return (f"SELECT {', '.join(keys + [f'CAST({inst} AS BIGINT) AS instance'])}, "
            f"{from_time(at, t_type)} AS {ident('at')}, {pane} AS pane, "
            f"list_sort({arr}, 'ASC', 'NULLS FIRST') AS tuples FROM {emitted} "
            f"WHERE {and_all([time_fits(x, t_type, 'SPLWINDOW') for x in (start, end, at)])}")
