"""PACK, UNPACK and split-point normalisation, without ever unpacking to points.

* ``pack_body`` on one attribute: group by the other attributes, sort by begin, sweep and merge
  intervals that overlap or meet. On several attributes (A1..An): split every interval at the
  boundaries of its group, then pack on A1, then A2, ... (equal to the definition "unpack on
  all, then pack on each in order", because points inside one elementary segment are covered by
  exactly the same tuples).
* ``split_bodies`` normalises several bodies together: within each group (tuples agreeing on the
  key attributes), every interval is cut at every boundary of that group, so two resulting
  intervals are either equal or disjoint. Set operations on split bodies are then the pointwise
  ones. Cost depends on the number of tuples and boundaries, never on interval lengths.
* ``unpack_relation`` counts first and refuses results beyond the caller's limit; splits count
  their pieces row by row (``max_tuples``, see ``guards.py``).

    >>> from sira.intervals import Interval
    >>> rows = {(Interval(1, 4),), (Interval(3, 6),), (Interval(6, 7),), (Interval(9, 10),)}
    >>> sorted((r[0] for r in pack_rows(rows, [0])), key=lambda iv: iv.begin)
    [Interval(begin=1, end=7), Interval(begin=9, end=10)]
"""

from __future__ import annotations

import datetime
from bisect import bisect_left, bisect_right
from itertools import product
from math import prod

from ..algebra.packing import Pack, Unpack
from ..errors import IntervalError
from ..intervals import Interval, IntervalType
from ..types import DATE, TIMESTAMP, IntegerType
from ..values import Relation
from . import evaluates
from .basic import row_getter
from .guards import DEFAULT_MAX_TUPLES, SPLITTING, Guard, max_tuples

#: The limit UNPACK had before ``max_tuples`` covered every operator; kept as an alias.
DEFAULT_UNPACK_LIMIT = DEFAULT_MAX_TUPLES


def _others(width, positions):
    skip = set(positions)
    return [i for i in range(width) if i not in skip]


def pack_one(rows, pos: int) -> list:
    """Pack on the interval at ``pos``: merge intervals that overlap or meet, per group."""
    rows = list(rows)
    if not rows:
        return []
    width = len(rows[0])
    rest = _others(width, [pos])
    key = row_getter(rest)
    groups: dict = {}
    for row in rows:
        iv = row[pos]
        if iv.end is not None and not iv.begin < iv.end:
            continue  # an empty interval covers no point: its tuple unpacks to nothing
        k = key(row)
        lst = groups.get(k)
        if lst is None:
            groups[k] = [iv]
        else:
            lst.append(iv)
    out = []
    # place the interval back at pos: row = k[:pos] + (iv,) + k[pos:]
    for k, ivs in groups.items():
        head, tail = k[:pos], k[pos:]
        if len(ivs) == 1:
            out.append(head + (ivs[0],) + tail)
            continue
        ivs.sort(key=_begin)
        cur_b, cur_e = ivs[0].begin, ivs[0].end
        for iv in ivs[1:]:
            if cur_e is None:
                break
            if iv.begin <= cur_e:
                if iv.end is None or iv.end > cur_e:
                    cur_e = iv.end
            else:
                out.append(head + (Interval(cur_b, cur_e),) + tail)
                cur_b, cur_e = iv.begin, iv.end
        out.append(head + (Interval(cur_b, cur_e),) + tail)
    return out


def _begin(iv):
    return iv.begin


def _cuts(iv: Interval, bounds: list) -> list:
    """``iv`` cut at every boundary strictly inside it."""
    i = bisect_right(bounds, iv.begin)
    j = len(bounds) if iv.end is None else bisect_left(bounds, iv.end)
    if i >= j:
        return [iv]
    points = [iv.begin, *bounds[i:j], iv.end]
    return [Interval(points[k], points[k + 1]) for k in range(len(points) - 1)]


def split_bodies(bodies, positions_list, key_functions, guard: Guard | None = None) -> list:
    """Split several bodies together on their interval positions.

    Args:
        bodies: iterables of rows.
        positions_list: for each body, the positions of the pointwise attributes (same order).
        key_functions: for each body, a function giving the group key (the values that must be
            equal for two tuples to share points).
        guard: the limit on the split rows of each body (the default limit when None).
    Returns:
        one set of split rows per body.
    Raises:
        TooManyTuples: a body would be split into more rows than the guard's limit.
    """
    guard = guard or Guard("SPLIT")
    bounds = _group_bounds(bodies, positions_list, key_functions)
    return [_split_body(body, positions, key, bounds, guard)
            for body, positions, key in zip(bodies, positions_list, key_functions)]


def _group_bounds(bodies, positions_list, key_functions) -> dict:
    """group key -> for each pointwise dimension, the sorted boundaries of the group."""
    n_dims = len(positions_list[0])
    bounds: dict = {}
    for body, positions, key in zip(bodies, positions_list, key_functions):
        for row in body:
            k = key(row)
            per_dim = bounds.get(k)
            if per_dim is None:
                per_dim = bounds[k] = [set() for _ in range(n_dims)]
            for d, p in enumerate(positions):
                iv = row[p]
                per_dim[d].add(iv.begin)
                if iv.end is not None:
                    per_dim[d].add(iv.end)
    return {k: [sorted(s) for s in per_dim] for k, per_dim in bounds.items()}


def _split_body(body, positions, key, bounds: dict, guard: Guard) -> set:
    """One body's rows cut at their group's boundaries; counted after every row cut in pieces
    (a row's pieces are distinct, so one row over the limit is refused before it is cut)."""
    result = set()
    limit = guard.limit
    for row in body:
        if any(row[p].empty for p in positions):
            continue
        per_dim = bounds[key(row)]
        pieces = [_cuts(row[p], per_dim[d]) for d, p in enumerate(positions)]
        if all(len(ps) == 1 for ps in pieces):
            result.add(row)
            continue
        if prod(map(len, pieces)) > limit:
            raise guard.error(SPLITTING)
        base = list(row)
        for combo in product(*pieces):
            for p, iv in zip(positions, combo):
                base[p] = iv
            result.add(tuple(base))
        if len(result) > limit:
            raise guard.error(SPLITTING)
    if len(result) > limit:  # rows left whole count too
        raise guard.error(SPLITTING)
    return result


def pack_rows(rows, positions, guard: Guard | None = None) -> frozenset:
    """PACK on the interval attributes at ``positions``, in that order.

    On several attributes the rows are split first, within ``guard``'s limit.
    """
    positions = list(positions)
    if not positions:
        return frozenset(rows)
    rows = list(rows)
    if not rows:
        return frozenset()
    if len(positions) > 1:
        width = len(rows[0])
        key = row_getter(_others(width, positions))
        (rows,) = split_bodies([rows], [positions], [key], guard or Guard("PACK"))
    for p in positions:
        rows = pack_one(rows, p)
    return frozenset(rows)


def pack_relation(relation: Relation, names, guard: Guard | None = None) -> Relation:
    """``relation`` packed on ``names`` in order (see :func:`pack_rows`)."""
    h = relation.heading
    return Relation(h, pack_rows(relation.body, [h.index(n) for n in names], guard))


def split_relations(relations, names, key_names, guard: Guard | None = None) -> list:
    """Split relations (of possibly different headings) together on ``names``."""
    positions = [[r.heading.index(n) for n in names] for r in relations]
    keys = [row_getter([r.heading.index(n) for n in key_names]) for r in relations]
    return split_bodies([r.body for r in relations], positions, keys, guard)


def point_count(t: IntervalType, iv: Interval) -> int:
    """How many points an interval of an ordinal type holds."""
    if iv.end is None:
        raise IntervalError(f"UNPACK: {t.format(iv)} is unbounded, so it holds no finite set of "
                            f"points", operator="UNPACK", value=iv)
    if isinstance(t.point, IntegerType):
        return max(iv.end - iv.begin, 0)  # an empty interval (IINTERSECT) holds no point
    if t.point == DATE:
        return max((iv.end - iv.begin).days, 0)
    if t.point == TIMESTAMP:
        return max((iv.end - iv.begin) // datetime.timedelta(microseconds=1), 0)
    raise IntervalError(f"UNPACK: {t} is not ordinal", operator="UNPACK", value=iv)


def unit_intervals(t: IntervalType, iv: Interval):
    from ..intervals import successor
    p = iv.begin
    while p < iv.end:
        nxt = successor(t.point, p)
        yield Interval(p, nxt)
        p = nxt


def unpack_relation(relation: Relation, names, limit: int = DEFAULT_MAX_TUPLES) -> Relation:
    """UNPACK on ``names``: one tuple per combination of points.

    The points are counted before anything is unpacked; when the count (which counts a point
    covered by overlapping tuples once per tuple) passes ``limit``, the relation is packed
    first, which leaves every point in exactly one tuple, and counted again: the result is
    refused only when it would really hold more than ``limit`` tuples.

    Raises:
        TooManyTuples: the result would hold more than ``limit`` tuples.
        IntervalError: an interval is unbounded, or its point type is not ordinal.
    """
    h = relation.heading
    positions = [h.index(n) for n in names]
    types = [h.type_of(n) for n in names]
    body = relation.body
    if _point_total(body, positions, types) > limit:
        body = pack_rows(body, positions, Guard("UNPACK", limit))
        if _point_total(body, positions, types) > limit:
            raise Guard("UNPACK", limit).error()
    out = set()
    for row in body:
        base = list(row)
        for combo in product(*[unit_intervals(t, row[p]) for p, t in zip(positions, types)]):
            for p, iv in zip(positions, combo):
                base[p] = iv
            out.add(tuple(base))
    return Relation(h, frozenset(out))


def _point_total(body, positions, types) -> int:
    """The combinations of points the rows hold, one count per row (an unbounded interval
    anywhere raises IntervalError, whatever the count)."""
    total = 0
    for row in body:
        size = 1
        for p, t in zip(positions, types):
            size *= point_count(t, row[p])
        total += size
    return total


@evaluates(Pack)
def _pack(node, ctx):
    return ctx.eval(node.source)  # Context.eval packs every result on its node's pack_list


@evaluates(Unpack)
def _unpack(node, ctx):
    return unpack_relation(ctx.eval(node.source), node.on, max_tuples(ctx.options))
