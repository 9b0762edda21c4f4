"""DuckDB translations of the CQL windows (WINDOW) and ISTREAM, DSTREAM, RSTREAM.

WINDOW gives every stream element the interval ``during`` of ``sira/engine/windows.py``
(``element_intervals``, the reference), computed with window functions over each partition
ordered by (timestamp, arrival attribute, or else every attribute in the canonical order):

* all time arithmetic is done on a BIGINT "time" (the timestamp itself, or microseconds since
  the epoch for a TIMESTAMP) and turned back into the timestamp's type at the end;
  ``ceil(t/L)*L`` is ``t + pmod(-t, L)``;
* ``rows(N)`` ends at ``lead(time, N)``; with ``range(T)`` at the earlier of that and t+T
  (``least`` skips the NULL of "no N-th later element"); a time slide rounds both ends up;
* ``rows(N) slide(M)`` uses each element's position p: the times at positions ceil(p/M)*M and
  ceil((p+N)/M)*M are leads by an offset that varies with p (a CASE over the M offsets) when M
  is small, and otherwise a join with the table of full batches (last time) on (partition,
  batch);
* ``range(C) on(E)``: when E is non-decreasing along the order (checked once per stream in an
  evaluation) the exit is a "next greater or equal" search: a threshold row E+C per element is
  unioned with the elements, ordered by E, and ``last_value(time IGNORE NULLS)`` over the rows
  before it in reverse order finds the first element reaching it; otherwise (E going up and
  down) the first later element reaching E+C is found for every element at once by binary
  lifting over run maxima in Arrow (:func:`_bounds_by_lifting`,
  :func:`sira_duckdb.lifting.first_beyond`): O(n log n).

Elements never visible (begin >= end) are dropped; WINDOW does not pack its result. With
``arrival(A)`` the stream must be in order: one query (once per stream in an evaluation) looks
for an element whose timestamp is after that of an element arriving later, and raises the
Python engine's SiraValueError with the same ``value`` (the first such arrival).

ISTREAM/DSTREAM pack on ``during`` and take its begin / (bounded) end; RSTREAM joins the ticks
on ``begin <= at < end``.
"""

from __future__ import annotations

from sira.algebra.windows import DStream, IStream, RStream, Window
from sira.errors import SiraTypeError, SiraValueError
from sira.intervals import IntervalType
from sira.types import BIGINT, FLOAT, INT, TIMESTAMP, RelationType, TupleType

from .compiler import translates
from .functions import cast, interval
from .lifting import first_beyond, partition_ends
from .packing import pack_sql
from .sql import and_all, field, ident, sira_error_expr, struct_pack
from .types import duckdb_type

#: rows(N) slide(M) with M up to this uses leads; larger slides join with the batch table
MAX_SLIDE_LEADS = 16


def to_time(sql: str, t) -> str:
    """A timestamp (or delta attribute) as BIGINT time (microseconds since the epoch for
    TIMESTAMP; a FLOAT stays a DOUBLE)."""
    if t == TIMESTAMP:
        return f"epoch_us({sql})"
    if t == FLOAT:
        return f"CAST({sql} AS DOUBLE)"
    return f"CAST({sql} AS BIGINT)"


def from_time(sql: str, t) -> str:
    """BIGINT time back to the timestamp attribute's type."""
    if t == TIMESTAMP:
        return f"make_timestamp(CAST({sql} AS BIGINT))"
    return cast(sql, t)


#: the BIGINT times of each timestamp type's least and greatest values (microseconds since the
#: epoch of 0001-01-01 and 9999-12-31T23:59:59.999999 for TIMESTAMP); a LONG time always fits
TIME_RANGE = {INT: (-2 ** 31, 2 ** 31 - 1),
              TIMESTAMP: (-62135596800000000, 253402300799999999)}


def time_fits(sql: str, t, operator: str) -> str:
    """A condition TRUE where the BIGINT time ``sql`` (NULL: no bound) is a value of the
    timestamp type ``t``, failing the query with IntOverflow (naming ``operator``) where it is
    not. Put in a WHERE, it makes DuckDB compute the bound on every row, as the Python engine
    does: a bound computed only for a column that is projected away, or only compared, would
    otherwise never be checked (DuckDB's own TIMESTAMP goes on past year 9999, and it prunes
    what nothing reads).

        >>> from sira import INT
        >>> time_fits('"e"', INT, "TUMBLE")[:80]
        '(CASE WHEN "e" IS NULL OR "e" BETWEEN -2147483648 AND 2147483647 THEN TRUE ELSE '
    """
    if t not in TIME_RANGE:  # a LONG (or FLOAT delta) time is its own value: only computed
        return f"(vector_type({sql}) IS NOT NULL)"
    low, high = TIME_RANGE[t]
    shown = f"CAST({sql} AS VARCHAR)" if t == INT else \
        f"CAST(make_timestamp(CAST({sql} AS BIGINT)) AS VARCHAR)"
    fail = sira_error_expr("IntOverflow", operator,
                           f"'{operator}: a window bound at ' || {shown} || ' does not fit "
                           f"{t.name}'")
    return f"(CASE WHEN {sql} IS NULL OR {sql} BETWEEN {low} AND {high} THEN TRUE ELSE {fail} END)"


def ceil_to(sql: str, step: int) -> str:
    """ceil(x / step) * step for any sign of x (no negation: x may be BIGINT's least value)."""
    return f"({sql} + (({step} - ({sql}) % {step}) % {step}))"


#: BIGINT's largest value: every time (a BIGINT) is at most this
TIME_MAX = 2 ** 63 - 1


def time_plus(sql: str, amount: int) -> str:
    """``t + amount`` for a BIGINT time and a constant ``amount >= 0``, capped at BIGINT's
    largest value instead of overflowing: a time x compares with it as with the exact sum in
    ``x <= t + T``, ``x > t + T``, ``t + T < x`` and ``t + T >= x`` (x is at most the cap), which
    is how the windows use it; a bound that lands in a result is added exactly instead (it must
    fit its type: IntOverflow otherwise, as in the Python engine).

        >>> time_plus('"t"', 10)
        '(least("t", 9223372036854775797) + 10)'
    """
    return f"(least({sql}, {TIME_MAX - amount}) + {amount})"


def floor_aligned(sql: str, step: int, offset: int) -> str:
    """The greatest s <= x with s = offset (mod step) -- floor((x - offset) / step) * step +
    offset -- without computing x - offset, which leaves BIGINT near its least value.

        >>> floor_aligned('"u"', 10, 3)
        '("u" - (((("u") % 10) - 3 + 20) % 10))'
    """
    return f"({sql} - (((({sql}) % {step}) - {offset % step} + {2 * step}) % {step}))"


def order_columns(heading, names) -> list:
    """ORDER BY items ordering tuples as the Python engine's canonical sort key does."""
    out = []
    for n in names:
        t = heading.type_of(n)
        if isinstance(t, IntervalType):
            out += [f"{field(ident(n), 'begin')} ASC",
                    f"{field(ident(n), 'end')} ASC NULLS LAST"]
        else:
            out.append(f"{canonical_key(ident(n), t)} ASC")
    return out


def canonical_key(sql: str, t, depth: int = 0) -> str:
    """A value ordering values of type ``t`` as their Python sort key (``Type.sort_key``) does:
    an interval by (begin, unbounded, end); a relation by its cardinality first, then its
    tuples' keys sorted (DuckDB's own list order compares the elements first: {5} would come
    after {1, 2}); a tuple by its attributes' keys in heading order; any other value as is.

        >>> from sira import INT
        >>> from sira.types import RelationType
        >>> from sira.values import Heading
        >>> canonical_key('"r"', RelationType(Heading.of({"x": INT})))
        'struct_pack(n := len("r"), v := list_sort(list_transform("r", lambda __sira_key0: struct_pack("x" := (__sira_key0)."x"))))'
    """
    if isinstance(t, IntervalType):
        begin, end = field(sql, "begin"), field(sql, "end")
        return f"struct_pack(b := {begin}, u := {end} IS NULL, e := coalesce({end}, {begin}))"
    if isinstance(t, RelationType):
        if not t.heading.attributes:
            return f"len({sql})"
        x = f"__sira_key{depth}"
        keys = struct_pack([(n, canonical_key(field(x, n), tt, depth + 1))
                            for n, tt in t.heading.attributes])
        return f"struct_pack(n := len({sql}), v := list_sort(list_transform({sql}, lambda {x}: " \
               f"{keys})))"
    if isinstance(t, TupleType):
        return struct_pack([(n, canonical_key(field(sql, n), tt, depth))
                            for n, tt in t.heading.attributes])
    return sql


def _partition(names) -> str:
    return f"PARTITION BY {', '.join(ident(n) for n in names)} " if names else ""


def check_arrival_order(c, source: str, node) -> None:
    """SiraValueError when, within a partition, an element arrived before a later timestamp
    (the first such arrival, as the Python engine names it)."""
    s = node.spec
    h = node.source.heading
    t = to_time(ident(node.ts), h.type_of(node.ts))
    later = (f"({_partition(s.partition)}ORDER BY {ident(s.arrival)} DESC, {ident(node.ts)} "
             f"DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)")
    lm, lt = c.helper("later_min"), c.helper("later_t")
    rows = c.fetch(f"SELECT {ident(s.arrival)}, {ident(node.ts)}, {lt} FROM (SELECT *, "
                   f"min({t}) OVER {later} AS {lm}, arg_min({ident(node.ts)}, {t}) OVER {later} "
                   f"AS {lt} FROM {source}) AS a WHERE {t} > {lm} ORDER BY {ident(s.arrival)} "
                   f"LIMIT 1", node)
    if rows:
        arrival, ts, earlier = rows[0]
        raise SiraValueError(f"WINDOW: the stream is out of order on '{node.ts}': the element "
                             f"with {s.arrival} {arrival} ({node.ts} {ts}) arrived before an "
                             f"element with an earlier {node.ts} ({earlier})",
                             operator="WINDOW", value=arrival)


def checked_once(c, key) -> bool:
    """True when this compilation already ran the check ``key``."""
    if key in c.checks:
        return True
    c.checks[key] = True
    return False


def element_order(c, source: str, node) -> tuple:
    """(PARTITION BY text, ORDER BY items) of a window's elements: by timestamp, then arrival
    (checked to agree with the timestamps, once per stream) or the canonical tuple order."""
    s = node.spec
    if s.arrival is not None:
        if not checked_once(c, ("arrival", node.source, node.ts, s.partition, s.arrival)):
            check_arrival_order(c, source, node)
        return _partition(s.partition), [f"{ident(node.ts)} ASC", f"{ident(s.arrival)} ASC"]
    h = node.source.heading
    return _partition(s.partition), [f"{ident(node.ts)} ASC"] + order_columns(h, h.names)


@translates(Window)
def _window(node, children, c):
    (child,) = children
    h = node.source.heading
    s = node.spec
    ts_t = h.type_of(node.ts)
    part, order = element_order(c, child, node)
    w = f"({part}ORDER BY {', '.join(order)})"
    t, b, e = c.helper("t"), c.helper("b"), c.helper("e")
    timed = c.define(f"SELECT *, {to_time(ident(node.ts), ts_t)} AS {t} FROM {child}", "timed")
    if s.kind == "range_on":
        bounded = _range_on(c, timed, node, w)
    elif s.slide_rows is not None:
        bounded = _rows_slide(c, timed, node, w)
    else:
        rng, slide = node.range_units, node.slide_units
        if s.kind == "now":
            begin, end = t, f"{t} + 1"
        elif s.kind == "range" and s.rows is None:
            if rng is None:
                begin, end = t, "CAST(NULL AS BIGINT)"
            elif slide is None:
                begin, end = t, f"{t} + {rng}"
            else:
                begin, end = ceil_to(t, slide), ceil_to(f"{t} + {rng}", slide)
        else:  # rows N, optionally with a range and a time slide
            end = f"lead({t}, {s.rows}) OVER {w}"
            begin = t
            if rng is not None:
                end = f"least({end}, {t} + {rng})"  # least skips the NULL of no N-th later one
            if slide is not None:
                begin, end = ceil_to(t, slide), ceil_to(end, slide)
        bounded = c.define(f"SELECT *, {begin} AS {b}, {end} AS {e} FROM {timed}", "bounds")
    during = interval(from_time(b, ts_t), from_time(e, ts_t))
    cols = ", ".join(ident(n) for n in h.names)
    # the bounds of an element that is ever in the window must fit (as the Python engine
    # checks them): one CASE, so that no reordering checks an element that never enters
    visible = f"{b} IS NOT NULL AND ({e} IS NULL OR {b} < {e})"
    return (f"SELECT {cols}, {during} AS {ident(node.during)} FROM {bounded} "
            f"WHERE CASE WHEN {visible} THEN {time_fits(b, ts_t, 'WINDOW')} AND "
            f"{time_fits(e, ts_t, 'WINDOW')} ELSE FALSE END")


def _rows_slide(c, timed: str, node, w: str) -> str:
    """rows(N) slide(M): columns b (NULL: never enters) and e by positions."""
    s = node.spec
    n, m = s.rows, s.slide_rows
    t, p, b, e = c.helper("t"), c.helper("p"), c.helper("b"), c.helper("e")
    positioned = c.define(f"SELECT *, row_number() OVER {w} AS {p} FROM {timed}", "positions")
    batch = f"(({p} + {m - 1}) // {m})"  # ceil(p/M)
    leave_batch = f"(({p} + {n + m - 1}) // {m})"  # ceil((p+N)/M)
    if m <= MAX_SLIDE_LEADS:
        enter_off = f"({batch} * {m} - {p})"  # 0 .. M-1
        leave_off = f"({leave_batch} * {m} - {p})"  # N .. N+M-1
        begin = "CASE " + " ".join(
            f"WHEN {enter_off} = {k} THEN {t if k == 0 else f'lead({t}, {k}) OVER {w}'}"
            for k in range(m)) + " END"
        end = "CASE " + " ".join(f"WHEN {leave_off} = {n + k} THEN lead({t}, {n + k}) OVER {w}"
                                 for k in range(m)) + " END"
        return c.define(f"SELECT *, {begin} AS {b}, {end} AS {e} FROM {positioned}", "bounds")
    keys = list(s.partition)
    bn, ln, last, size = c.helper("batch"), c.helper("leave"), c.helper("last"), c.helper("n")
    batched = c.define(f"SELECT *, {batch} AS {bn}, {leave_batch} AS {ln} FROM {positioned}",
                       "batched")
    group = ", ".join([ident(k) for k in keys] + [bn])
    batches = c.define(f"SELECT {group}, max({t}) AS {last}, count(*) AS {size} FROM {batched} "
                       f"GROUP BY {group} HAVING count(*) = {m}", "batches")  # full batches only
    same = and_all(f"x.{ident(k)} IS NOT DISTINCT FROM be.{ident(k)}" for k in keys)
    same_l = and_all(f"x.{ident(k)} IS NOT DISTINCT FROM bl.{ident(k)}" for k in keys)
    return c.define(f"SELECT x.*, be.{last} AS {b}, bl.{last} AS {e} FROM {batched} AS x "
                    f"JOIN {batches} AS be ON {same} AND x.{bn} = be.{bn} "
                    f"LEFT JOIN {batches} AS bl ON {same_l} AND x.{ln} = bl.{bn}", "bounds")


def _on_values(node):
    """E as a comparable SQL value, and its threshold E + C."""
    s = node.spec
    h = node.source.heading
    et = h.type_of(s.on)
    e = ident(s.on)
    amount = s.on_amount
    if et == TIMESTAMP:
        if not hasattr(amount, "in_units"):
            raise SiraTypeError(f"WINDOW: range({amount}) on({s.on}) over a TIMESTAMP needs a "
                                f"duration with a unit (range({amount} second))",
                                operator="WINDOW", expected="a duration with a unit",
                                got=str(amount))
        micros = amount.in_units(None, TIMESTAMP)
        return f"epoch_us({e})", f"(epoch_us({e}) + CAST({micros} AS BIGINT))"
    if et == FLOAT:
        return f"CAST({e} AS DOUBLE)", f"(CAST({e} AS DOUBLE) + CAST({float(amount)!r} AS DOUBLE))"
    value = e if et == BIGINT else f"CAST({e} AS BIGINT)"
    if isinstance(amount, float):
        # an integer E and a FLOAT C: as in the Python engine, E + C is a double (E rounded to
        # one, then C added), which an integer E' reaches exactly when E' >= its ceiling --
        # compared as integers, never with E' rounded to a double
        return value, f"CAST(ceil(CAST({e} AS DOUBLE) + CAST({amount!r} AS DOUBLE)) AS HUGEINT)"
    if et == BIGINT:
        return e, f"({e} + CAST({amount} AS HUGEINT))"
    # E + C in HUGEINT: near the end of LONG it passes BIGINT, and then no E reaches it
    return value, f"(CAST({e} AS HUGEINT) + {amount})"


def _range_on(c, timed: str, node, w: str) -> str:
    """range(C) on(E): the element leaves when the first later element has E >= its E + C."""
    s = node.spec
    keys = [ident(k) for k in s.partition]
    t, p, ev, thr = c.helper("t"), c.helper("p"), c.helper("ev"), c.helper("thr")
    b, e, x = c.helper("b"), c.helper("e"), c.helper("exit")
    value, threshold = _on_values(node)
    elements = c.define(f"SELECT *, row_number() OVER {w} AS {p}, {value} AS {ev}, {threshold} "
                        f"AS {thr} FROM {timed}", "elements")
    key = ("monotone", node.source, node.ts, s.partition, s.arrival, s.on, s.on_amount)
    if key not in c.checks:
        order = f"({_partition(s.partition)}ORDER BY {p})"
        (bad,), = c.fetch(
            f"SELECT count(*) FILTER (WHERE bad) FROM (SELECT lag({ev}) OVER {order} > {ev} "
            f"OR {thr} <= {ev} AS bad FROM {elements}) AS m", node)
        # a float E + C rounding back to E also breaks the monotone search
        c.checks[key] = bad == 0
    monotone = c.checks[key]
    k, flag, pos, tx = c.helper("k"), c.helper("flag"), c.helper("pos"), c.helper("x")
    if monotone:
        # next greater or equal: markers sort after the elements of the same E in reverse
        data = (f"SELECT {', '.join(keys + [f'{ev} AS {k}', f'1 AS {flag}', f'{p} AS {pos}', f'{t} AS {tx}'])} "
                f"FROM {elements}")
        marks = (f"SELECT {', '.join(keys + [f'{thr} AS {k}', f'0 AS {flag}', f'{p} AS {pos}', f'CAST(NULL AS BIGINT) AS {tx}'])} "
                 f"FROM {elements}")
        follow = (f"({_partition(s.partition)}ORDER BY {k} DESC, {flag} DESC, {pos} DESC "
                  f"ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)")
        exits = c.define(f"SELECT * FROM (SELECT *, last_value({tx} IGNORE NULLS) OVER {follow} "
                         f"AS {x} FROM ({data} UNION ALL {marks}) AS u) AS f WHERE {flag} = 0",
                         "exits")
    else:
        return _bounds_by_lifting(c, elements, node, keys, p, ev, thr, t, b, e)
    same = and_all(f"el.{ident(n)} IS NOT DISTINCT FROM ex.{ident(n)}" for n in s.partition)
    return c.define(f"SELECT el.*, el.{t} AS {b}, ex.{x} AS {e} FROM {elements} AS el "
                    f"LEFT JOIN {exits} AS ex ON {same} AND el.{p} = ex.{pos}", "bounds")


def _bounds_by_lifting(c, elements: str, node, keys: list, p: str, ev: str, thr: str, t: str,
                       b: str, e: str) -> str:
    """``range(C) on(E)`` bounds for an E in any order: each element's window ends at the first
    later element of its partition with E >= its threshold E + C (``thr``). The elements become
    a table (an id each); E and the limit come out as Arrow in partition order, where
    :func:`sira_duckdb.lifting.first_beyond` finds every element's exit at once (binary lifting
    over run maxima, O(n log n), memory linear); the (element, exit) id pairs go back as one
    Arrow table, joined on the ids. Compared exactly, as in the Python engine:

    * INT, LONG or TIMESTAMP (microseconds) E with an integer C: E > E_i + C - 1, the sum
      capped at LONG's end (no E reaches a limit past it);
    * FLOAT E: E >= E_i + C in DOUBLE, as the SQL threshold;
    * BIGINT E (past LONG), or an integer E with a FLOAT C (a threshold that is the ceiling of a
      double, in HUGEINT): E and the thresholds are replaced by their ranks among both (one
      sort), which compare as they do."""
    import pyarrow as pa
    import pyarrow.compute as pc

    s = node.spec
    tid, n = c.helper("id"), c.helper("n")
    table = c.materialize(f"SELECT *, row_number() OVER () AS {tid} FROM {elements}",
                          "elements", node)
    et, amount = node.source.heading.type_of(s.on), s.on_amount
    inclusive, source = True, f"{table} AS el"
    if et == FLOAT:
        value, limit = f"el.{ev}", f"el.{thr}"
    elif et == BIGINT or isinstance(amount, float):
        x, r = c.helper("x"), c.helper("r")
        ranks = c.define(f"SELECT {x}, dense_rank() OVER (ORDER BY {x}) AS {r} FROM (SELECT {ev} "
                         f"AS {x} FROM {table} UNION SELECT {thr} FROM {table}) AS u", "ranks",
                         materialized=True)
        value, limit = f"rv.{r}", f"rt.{r}"
        source += (f" JOIN {ranks} AS rv ON rv.{x} = el.{ev} "
                   f"JOIN {ranks} AS rt ON rt.{x} = el.{thr}")
    else:
        units = amount.in_units(None, TIMESTAMP) if hasattr(amount, "in_units") else amount
        inclusive, value, limit = False, f"el.{ev}", time_plus(f"el.{ev}", units - 1)
    part = f"PARTITION BY {', '.join(f'el.{k}' for k in keys)}" if keys else ""
    fetched = c.fetch_arrow(
        f"SELECT el.{tid}, el.{p}, count(*) OVER ({part}) AS {n}, {value}, {limit} "
        f"FROM {source} ORDER BY {', '.join([f'el.{k}' for k in keys] + [f'el.{p}'])}", node)
    ids, ps, sizes, values, limits = (col.combine_chunks() for col in fetched.columns)
    exits = first_beyond(values, limits, partition_ends(ps, sizes), inclusive)
    pairs = c.register(pa.table({"id": ids, "xid": pc.take(ids, exits)}), "exits")
    return c.define(f"SELECT el.*, el.{t} AS {b}, ex.{t} AS {e} FROM {table} AS el "
                    f"LEFT JOIN {pairs} AS m ON m.id = el.{tid} "
                    f"LEFT JOIN {table} AS ex ON ex.{tid} = m.xid", "bounds")


def _stream_of(node, children, c, pick_end: bool):
    (child,) = children
    h = node.source.heading
    packed = c.define(pack_sql(c, child, h, [node.during]), "packed")
    iv = ident(node.during)
    point = h.type_of(node.during).point
    at = cast(field(iv, "end" if pick_end else "begin"), point)
    where = f" WHERE {field(iv, 'end')} IS NOT NULL" if pick_end else ""
    return f"SELECT *, {at} AS {ident(node.at)} FROM {packed}{where}"


@translates(IStream)
def _istream(node, children, c):
    return _stream_of(node, children, c, pick_end=False)


@translates(DStream)
def _dstream(node, children, c):
    return _stream_of(node, children, c, pick_end=True)


@translates(RStream)
def _rstream(node, children, c):
    child, ticks = children
    point = node.source.heading.type_of(node.during).point
    tick = c.helper("tick")
    iv = ident(node.during)
    ticked = c.define(f"SELECT DISTINCT CAST({ident(node.at)} AS {duckdb_type(point)}) AS {tick} "
                      f"FROM {ticks}", "ticks")
    cols = ", ".join([f"r.{ident(n)}" for n in node.source.heading.names if n != node.during])
    result = (f"SELECT DISTINCT {cols}, k.{tick} AS {ident(node.at)} FROM {child} AS r JOIN "
              f"{ticked} AS k ON k.{tick} >= {field('r.' + iv, 'begin')} AND "
              f"({field('r.' + iv, 'end')} IS NULL OR k.{tick} < {field('r.' + iv, 'end')})")
    from .guards import limited
    return f"SELECT * FROM {limited(c, node, result, 'rstream')}"  # max_tuples


def summarize_window(node, c):
    """A direct plan for a windowed SUMMARIZEBY (see ``windowtables.summarize_hop``); None:
    the family's own translation."""
    from .windowtables import fused_hop, summarize_hop
    win = fused_hop(node)
    if win is not None:
        return summarize_hop(node, win, c)
    return None


__all__ = ["to_time", "from_time", "time_fits", "ceil_to", "floor_aligned", "order_columns"]
