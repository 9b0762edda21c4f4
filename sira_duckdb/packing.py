"""PACK, UNPACK and split-point normalisation in SQL, never materialising UNPACK.

* PACK on one attribute is gaps-and-islands with window functions, sorted once: per group of
  the other attributes, ordered by (begin, end), a tuple starts a new island when its begin
  lies after every end before it (an open end counts as the point type's greatest value, after
  which no begin lies: one running max); each island ends at the greatest end before the next
  start (a ``lead`` over the starts alone), the last at its group's greatest end.
* A set operator pointwise on one interval attribute is a sweep line (``sweep``): begin/end
  events per input, running coverage counts per point, gaps-and-islands; its result comes out
  packed.
* Splitting (``split``) cuts each interval at every boundary of its group strictly inside it:
  the group's distinct boundaries are numbered, each interval's begin and end are looked up by
  equality joins, and the pieces between them are generated from the group's sorted boundary
  list; the cost follows the number of tuples and pieces, never the interval lengths, and no
  tuple is compared with the boundaries of its group one by one.
* PACK on several attributes splits first, then packs on each in order (as the Python engine).
* UNPACK counts first and refuses unbounded intervals and results beyond the limit.
"""

from __future__ import annotations

from sira.algebra.packing import Pack, Unpack
from sira.engine.guards import Guard, max_tuples
from sira.errors import IntervalError
from sira.types import DATE, FLOAT, IntegerType

from .compiler import translates
from .functions import cast, interval
from .sql import and_all, field, ident, string
from .types import duckdb_type, equal


def nonempty(name: str) -> str:
    """True for a non-empty interval (IINTERSECT can make empty ones; they hold no points)."""
    b, e = begin_of(name), end_of(name)
    return f"({e} IS NULL OR {e} > {b})"


def begin_of(name: str) -> str:
    """The begin of the interval attribute ``name``."""
    return field(ident(name), "begin")


def end_of(name: str) -> str:
    return field(ident(name), "end")


def select(items, source: str, rest: str = "") -> str:
    return f"SELECT {', '.join(items)} FROM {source}{rest}"


def _partition(names) -> str:
    return f"PARTITION BY {', '.join(ident(n) for n in names)} " if names else ""


def pack_one(c, source: str, heading, name: str) -> str:
    """PACK on one interval attribute: the SQL of a SELECT over ``source`` (a set or not:
    duplicates change nothing). One window, per group of the other attributes ordered by
    (begin, end), gives each tuple the greatest end before it (an open end counts as the point
    type's greatest value, after which no begin lies); a tuple whose begin lies after that end
    starts an island, and only starts are kept. An island ends where the next one starts, at
    the greatest end before that start (``lead`` over the starts alone); the last island of a
    group ends at the group's greatest end, or is open when any of its ends is. A copy of a
    start, sorted after it, finds the start's own end at least its begin, so each island has
    one start: no GROUP BY, no DISTINCT, and no second window over every row."""
    others = [n for n in heading.names if n != name]
    b, e, pe, last = c.helper("b"), c.helper("e"), c.helper("pe"), c.helper("last")
    keep = [ident(n) for n in others]
    flat = select(keep + [f"{begin_of(name)} AS {b}", f"{end_of(name)} AS {e}"], source,
                  f" WHERE {nonempty(name)}")
    order = f"{_partition(others)}ORDER BY {b}, {e} NULLS LAST"
    # an open end counts as the point type's greatest value: no begin lies after it
    top = greatest_point(heading.type_of(name).point)
    whole = f"OVER ({order} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)"
    marked = select(keep + [b, f"max(coalesce({e}, {top})) OVER ({order} ROWS BETWEEN "
                               f"UNBOUNDED PRECEDING AND 1 PRECEDING) AS {pe}",
                            f"CASE WHEN bool_or({e} IS NULL) {whole} THEN NULL "
                            f"ELSE max({e}) {whole} END AS {last}"], f"({flat}) AS f")
    ends = f"coalesce(lead({pe}) OVER ({_partition(others)}ORDER BY {b}), {last})"
    return select(keep + [f"{interval(b, ends)} AS {ident(name)}"], f"({marked}) AS m",
                  f" WHERE {pe} IS NULL OR {b} > {pe}")


def packed_source(c, source: str, node, name: str, materialized: bool = False) -> str:
    """The name of a common table expression holding ``source`` (the name of the translation
    of ``node``, a set) packed on ``name``: PACK (:func:`pack_one`), or ``source`` as it is
    where ``node`` is packed on ``name`` by construction
    (:func:`sira.algebra.packing.packed_on`: a CQL window, whose every element keeps its own
    period, need not be grouped by all its attributes again). One query asking twice for one
    source packed on one attribute (LEFTJOIN's overlap join and its SEMIMINUS both pack the
    left operand) gets the same name, computed once.

        >>> import sira
        >>> from sira.intervals import INTINTERVAL
        >>> from sira_duckdb import DuckDBEngine
        >>> from sira_duckdb.compiler import Compiler
        >>> r = sira.Relation.from_rows({"k": sira.INT, "during": INTINTERVAL}, [])
        >>> node, c = sira.parse("r", {"r": r}), Compiler(DuckDBEngine(), {})
        >>> first = packed_source(c, '"r"', node, "during")
        >>> first == packed_source(c, '"r"', node, "during") and first in c.materialized
        True
    """
    from sira.algebra.packing import packed_on
    known = _known_pack(c, source, name)
    if known is not None:
        return known
    sql = (f"SELECT * FROM {source}" if packed_on(node, name)
           else pack_one(c, source, node.heading, name))
    c.packs[(source, name)] = c.define(sql, "packed", materialized=materialized)
    return c.packs[(source, name)]


def greatest_point(point) -> str:
    """The greatest value of a point type, as SQL (an end at it covers every begin after)."""
    if isinstance(point, IntegerType):
        top = point.max if point.bits is not None else 2 ** 127 - 1
        return f"CAST({string(str(top))} AS {duckdb_type(point)})"
    if point == FLOAT:
        return "CAST('inf' AS DOUBLE)"
    return f"CAST('infinity' AS {duckdb_type(point)})"


def pack_sql(c, source: str, heading, names, node=None) -> str:
    """PACK on ``names`` in order (split first when there are several: the split relation is
    made distinct, as ``max_tuples`` counts its tuples, not the pieces cut from overlapping
    tuples that coincide, as on the Python engine)."""
    names = list(names)
    if len(names) > 1:
        key = [n for n in heading.names if n not in names]
        (split_sql,) = split(c, [source], [heading], names, key, node=node)
        source = c.define(split_sql, "split")
    for n in names:
        source = c.define(pack_one(c, source, heading, n), "pack")
    return f"SELECT * FROM {source}"


def _key_join(left: str, right: str, key, heading) -> str:
    return and_all(equal(f"{left}.{ident(k)}", f"{right}.{ident(k)}", heading.type_of(k))
                   for k in key)


SPLITTING = "splitting the intervals at their boundaries"

#: a sweep over two inputs counts the second's intervals in the same HUGEINT as the first's,
#: times this (each count is at most its input's rows, below 2**63)
_SECOND_COUNT = "(CAST(1 AS HUGEINT) << 63)"


def split(c, sources, headings, names, key, node=None) -> list:
    """Split several relations together on interval attributes ``names`` within groups
    ``key``: every interval is cut at every boundary of its group (begins and ends of that
    attribute in every input) strictly inside it. Returns one SELECT per input, each a set
    (pieces cut from overlapping tuples coincide: with ``node``, ``max_tuples`` counts the
    distinct ones).

    The boundaries of each group are numbered in order (``i``), each with the next one
    (``q``); an interval from the boundary numbered ``i_b`` to the one numbered ``i_e`` (the
    group's last, when it is unbounded above) is one row per piece number in
    ``[i_b, i_e)``, and each piece takes its bounds ``[p, q)`` from the numbered boundaries by
    an equi-join on (group, number). Hash joins and one sort per group only: linear in the
    input plus the pieces made, however many boundaries a group has."""
    out = list(sources)
    key_heading = headings[0]
    p, i, q, n, g = (c.helper(x) for x in ("p", "i", "q", "n", "g"))
    keys = [ident(k) for k in key]
    for name in names:
        iv = ident(name)
        points = []
        for src in out:
            points.append(select(keys + [f"{begin_of(name)} AS {p}"], src))
            points.append(select(keys + [f"{end_of(name)} AS {p}"], src,
                                 f" WHERE {end_of(name)} IS NOT NULL"))
        distinct_points = c.define(
            f"SELECT DISTINCT * FROM ({' UNION ALL '.join(points)}) AS pts", "points")
        w = f"({_partition(key)}ORDER BY {p})"
        index = c.define(f"SELECT *, row_number() OVER {w} AS {i}, lead({p}) OVER {w} AS {q}, "
                         f"count(*) OVER ({_partition(key)}) AS {n} FROM {distinct_points}",
                         "bounds")
        split_out = []
        for src, heading in zip(out, headings):
            rest = [ident(x) for x in heading.names if x != name]
            begin_at = _key_join("r", "ib", key, key_heading) + \
                f" AND ib.{p} = {field('r.' + iv, 'begin')}"
            end_at = _key_join("r", "ie", key, key_heading) + \
                f" AND ie.{p} = {field('r.' + iv, 'end')}"
            numbered = c.define(
                f"SELECT r.*, unnest(range(ib.{i}, coalesce(ie.{i}, ib.{n} + 1))) AS {g} "
                f"FROM {src} AS r JOIN {index} AS ib ON {begin_at} "
                f"LEFT JOIN {index} AS ie ON {end_at}", "pieces")
            piece = interval(f"bd.{p}", f"bd.{q}")
            picked = [f"pc.{x}" for x in rest] + [f"{piece} AS {iv}"]
            on = _key_join("pc", "bd", key, key_heading)
            on = f"{on} AND bd.{i} = pc.{g}" if on else f"bd.{i} = pc.{g}"
            split_out.append(c.define(
                f"SELECT {', '.join(picked)} FROM {numbered} AS pc JOIN {index} AS bd ON {on}",
                "split"))
        out = split_out
    selects = [f"SELECT DISTINCT * FROM {name}" for name in out]
    if node is not None:  # max_tuples counts the pieces (sira.engine.guards)
        from .guards import limited
        selects = [f"SELECT * FROM {limited(c, node, sql, 'split', SPLITTING)}"
                   for sql in selects]
    return selects


def _known_pack(c, source: str, name: str) -> str | None:
    """The packed CTE of ``source`` on ``name`` when this query has one already
    (:func:`packed_source`), then read by more than one consumer and so computed once; else
    None."""
    known = c.packs.get((source, name))
    if known is not None:
        c.materialized.add(known)
    return known


def sweep(c, sources, heading, name: str, keep) -> str:
    """A pointwise set operation on one interval attribute, packed, by a sweep line.

    ``keep`` maps the SQL coverage counts (one per input, at a point) to whether the point is in
    the result: MINUS keeps ``c0 > 0 AND c1 = 0``, UNION any positive, and so on (no input
    covering a point keeps none). Every interval is a begin event (+1 on its input's counter)
    and an end event (-1; none for an open end), summed per (key, point); two inputs keep both
    counters in one HUGEINT (the second's times 2**63), one running sum instead of two, and
    three or more one column each. One window per key ordered by point gives the running
    coverage after each point and, less that point's own events, the coverage just before it; a
    point where ``keep`` changes is a boundary, opening an island or closing one. Boundaries
    alternate, so the next boundary after an opening one closes its island (none: unbounded
    above): a second window runs over the boundaries alone, and each opening boundary is one
    tuple. Coverage ignores duplicate tuples, so the inputs need no DISTINCT. (An input could be
    read before its own PACK too, the coverage being the same; measured at 1M, that wins where
    the intervals of a key do not overlap and loses more where they do, the PACK of time-ordered
    rows being cheap and shrinking what is swept.)
    """
    key = [n for n in heading.names if n != name]
    keys = [ident(k) for k in key]
    m = len(sources)
    iv = ident(name)
    # an input this query packs on ``name`` anyway is read packed: the same coverage, from
    # as few rows as its islands (LEFTJOIN's SEMIMINUS: its left operand, packed for the join)
    sources = [_known_pack(c, src, name) or src for src in sources]
    p, q, inside, before = (c.helper(x) for x in ("p", "q", "in", "before"))
    if m <= 2:  # both counts in one HUGEINT, the second's times 2**63 (each below 2**63)
        d = [c.helper("d")]
        units = [["CAST(1 AS HUGEINT)"], [_SECOND_COUNT]]

        def counts(totals):
            (t,) = totals
            return [f"({t} & ({_SECOND_COUNT} - 1))", f"({t} >> 63)"][:m]
    else:
        d = [c.helper(f"d{j}") for j in range(m)]
        units = [["1" if k == j else "0" for k in range(m)] for j in range(m)]

        def counts(totals):
            return totals
    events = []
    for j, src in enumerate(sources):
        ups = [f"{u} AS {x}" for u, x in zip(units[j], d)]
        downs = [f"-{u} AS {x}" for u, x in zip(units[j], d)]
        events.append(select(keys + [f"{begin_of(name)} AS {p}"] + ups, src,
                             f" WHERE {nonempty(name)}"))
        events.append(select(keys + [f"{end_of(name)} AS {p}"] + downs, src,
                             f" WHERE {end_of(name)} IS NOT NULL AND {nonempty(name)}"))
    sums = ", ".join(f"sum({x}) AS {x}" for x in d)
    points = (f"SELECT {', '.join(keys + [p, sums])} FROM ({' UNION ALL '.join(events)}) AS ev "
              f"GROUP BY {', '.join(keys + [p])}")
    w = f"({_partition(key)}ORDER BY {p}"
    after = [c.helper(f"a{j}") for j in range(len(d))]
    running = ", ".join(f"sum({x}) OVER {w} ROWS UNBOUNDED PRECEDING) AS {a}"
                        for x, a in zip(d, after))
    run = f"SELECT *, {running} FROM ({points}) AS pt"
    covered = (f"SELECT {', '.join(keys + [p])}, ({keep(counts(after))}) AS {inside}, "
               f"({keep(counts([f'({a} - {x})' for a, x in zip(after, d)]))}) AS {before}"
               f" FROM ({run}) AS rn")
    bounds = (f"SELECT {', '.join(keys + [p, inside])}, lead({p}) OVER {w}) AS {q} "
              f"FROM ({covered}) AS cv WHERE {inside} <> {before}")
    return select(keys + [f"{interval(p, q)} AS {iv}"], f"({bounds}) AS bd", f" WHERE {inside}")


@translates(Pack)
def _pack(node, children, c):
    return f"SELECT * FROM {children[0]}"  # the compiler packs every result on its pack_list


def _points(t, iv: str) -> str:
    """How many points an interval holds (as HUGEINT)."""
    b, e = field(iv, "begin"), field(iv, "end")
    if isinstance(t.point, IntegerType):
        return f"(CAST({e} AS HUGEINT) - CAST({b} AS HUGEINT))"
    if t.point == DATE:
        return f"CAST({e} - {b} AS HUGEINT)"
    return f"CAST(epoch_us({e}) - epoch_us({b}) AS HUGEINT)"


def _unit_points(t, iv: str) -> str:
    """The list of an interval's points."""
    b, e = field(iv, "begin"), field(iv, "end")
    if isinstance(t.point, IntegerType):
        return f"range(CAST({b} AS BIGINT), CAST({e} AS BIGINT))"
    if t.point == DATE:
        return f"range(CAST({b} AS TIMESTAMP), CAST({e} AS TIMESTAMP), INTERVAL 1 DAY)"
    return f"range({b}, {e}, INTERVAL 1 MICROSECOND)"


@translates(Unpack)
def _unpack(node, children, c):
    (child,) = children
    h = node.heading
    if not node.on:
        return f"SELECT * FROM {child}"
    limit = max_tuples(c.options)
    unbounded = " OR ".join(f"{end_of(n)} IS NULL" for n in node.on)
    size = " * ".join(_points(h.type_of(n), ident(n)) for n in node.on)
    (found, total), = c.fetch(f"SELECT count(*) FILTER (WHERE {unbounded}), "
                              f"sum(CASE WHEN {unbounded} THEN 0 ELSE {size} END) FROM {child}",
                              node)
    if found:
        raise IntervalError("UNPACK: an interval is unbounded, so it holds no finite set of "
                            "points", operator="UNPACK")
    if (total or 0) > limit:  # overlapping tuples count their common points once
        packed = c.define(pack_sql(c, child, h, node.on), "unpack_count")
        (total,), = c.fetch(f"SELECT sum({size}) FROM {packed}", node)
    if (total or 0) > limit:
        raise Guard("UNPACK", limit).error()
    source = child
    pt = c.helper("pt")
    for n in node.on:
        t = h.type_of(n)
        point = cast(pt, t.point)
        from .functions import next_point
        unit = interval(point, next_point(t.point, point))
        exploded = f"SELECT *, unnest({_unit_points(t, ident(n))}) AS {pt} FROM {source}"
        source = c.define(f"SELECT * EXCLUDE ({ident(n)}, {pt}), {unit} AS {ident(n)} "
                          f"FROM ({exploded}) AS u", "unpack")
    return f"SELECT DISTINCT * FROM {source}"


__all__ = ["pack_sql", "pack_one", "split", "sweep", "nonempty", "duckdb_type"]
