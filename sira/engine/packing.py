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
from itertools import groupby, product
from math import prod
from operator import itemgetter

from ..algebra.packing import Pack, Unpack
from ..errors import IntervalError
from ..intervals import Interval, IntervalType, make_interval
from ..types import (DATE, TIMESTAMP, BooleanType, DateType, FloatType, IntegerType, StringType,
                     TimestampType)
from ..values import Relation
from . import Packed, evaluates
from .guards import DEFAULT_MAX_TUPLES, SPLITTING, Guard, max_tuples
from .rows import key_getter, row_getter

#: The limit UNPACK had before ``max_tuples`` covered every operator; kept as an alias.
DEFAULT_UNPACK_LIMIT = DEFAULT_MAX_TUPLES


def _others(width, positions):
    skip = set(positions)
    return [i for i in range(width) if i not in skip]


def pack_one(rows, pos: int, ordered: bool = False) -> list:
    """Pack on the interval at ``pos``: merge intervals that overlap or meet, per group of rows
    agreeing on every other attribute.

    Rows alone in their group come back as they are; the others are swept in order of begin
    on plain (begin, end) pairs, and only merged results make new intervals. Empty intervals
    (IINTERSECT's) cover no point, so a tuple holding one vanishes. ``ordered`` says the other
    attributes' values can be sorted (numbers, strings, dates...): the groups are then found
    by sorting the rows, which on large bodies beats a dict of groups (it reads memory in
    order instead of at random).
    """
    rows = rows if isinstance(rows, (list, tuple, set, frozenset)) else list(rows)
    if not rows:
        return []
    width = len(next(iter(rows)))
    place = _placer(width, pos)
    groups = (_runs_by_rest(rows, pos, width) if ordered
              else _group_by_rest(rows, pos, width).items())
    out = []
    append = out.append
    for k, found in groups:
        if type(found) is not list:  # the group's one row
            if not found[pos].empty:
                append(found)
            continue
        for iv in _swept(found):
            append(place(k, iv))
    return out


def _runs_by_rest(rows, pos: int, width: int):
    """Like :func:`_group_by_rest`, as (key, row or intervals) pairs, from the rows sorted on
    every attribute but ``pos``."""
    key = key_getter(_others(width, [pos]))
    interval_of = itemgetter(pos)
    for k, run in groupby(sorted(rows, key=key), key):
        first = next(run)
        second = next(run, None)
        if second is None:
            yield k, first
        else:
            intervals = [first[pos], second[pos]]
            intervals.extend(map(interval_of, run))
            yield k, intervals


def _group_by_rest(rows, pos: int, width: int) -> dict:
    """The rows grouped on every attribute but ``pos``: key -> the one row with that key, or
    the list of the intervals at ``pos`` of its rows (a list only where a key repeats)."""
    key = key_getter(_others(width, [pos]))
    groups: dict = {}
    get = groups.get
    for row in rows:
        k = key(row)
        found = get(k)
        if found is None:
            groups[k] = row
        elif type(found) is list:
            found.append(row[pos])
        else:
            groups[k] = [found[pos], row[pos]]
    return groups


def _swept(intervals: list):
    """The intervals of one group merged where they overlap or meet, in order of begin."""
    intervals.sort(key=_BEGIN)
    cur_b, cur_e = intervals[0]
    for b, e in intervals:
        if cur_e is None:
            break  # unbounded: it holds everything after it
        if b <= cur_e:
            if e is None or e > cur_e:
                cur_e = e
        else:
            if cur_b < cur_e:  # a run of empty intervals alone covers nothing
                yield make_interval((cur_b, cur_e))
            cur_b, cur_e = b, e
    if cur_e is None or cur_b < cur_e:
        yield make_interval((cur_b, cur_e))


def _placer(width: int, pos: int):
    """A function (group key, interval) -> body row with the interval back at ``pos``; the key
    is the one other value when there is one, else the tuple of the others (see key_getter)."""
    if width == 1:
        return lambda k, iv: (iv,)
    if width == 2:
        return (lambda k, iv: (iv, k)) if pos == 0 else (lambda k, iv: (k, iv))
    return lambda k, iv: k[:pos] + (iv,) + k[pos:]


_BEGIN = itemgetter(0)


def _cuts(iv: Interval, bounds: list) -> list:
    """``iv`` cut at every boundary strictly inside it."""
    i = bisect_right(bounds, iv.begin)
    j = len(bounds) if iv.end is None else bisect_left(bounds, iv.end)
    if i >= j:
        return [iv]
    points = [iv.begin, *bounds[i:j], iv.end]
    return list(map(make_interval, zip(points, points[1:])))


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


def pack_rows(rows, positions, guard: Guard | None = None, types=None) -> frozenset:
    """PACK on the interval attributes at ``positions``, in that order.

    On several attributes the rows are split first, within ``guard``'s limit. ``types`` (the
    heading's, in body order) lets the groups be found by sorting where they allow it.
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
        rows = pack_one(rows, p, types is not None and _sortable_besides(types, p))
    return frozenset(rows)


def _sortable_besides(types, pos: int) -> bool:
    """Whether the values of every attribute but the one at ``pos`` can be sorted."""
    return all(isinstance(t, _SORTABLE) for i, t in enumerate(types) if i != pos)


_SORTABLE = (IntegerType, FloatType, StringType, BooleanType, DateType, TimestampType)


def pack_relation(relation: Relation, names, guard: Guard | None = None) -> Relation:
    """``relation`` packed on ``names`` in order (see :func:`pack_rows`)."""
    h = relation.heading
    return Relation(h, pack_rows(relation.body, [h.index(n) for n in names], guard, h.types))


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
    rows = ctx.rows(node.source).narrowed(node.heading)  # the input's rows, maybe repeated
    if not node.on:
        return rows
    h = node.heading
    guard = Guard.of(node, ctx.options)
    return Packed(Relation(h, pack_rows(rows.rows, [h.index(n) for n in node.on], guard,
                                        h.types)))


@evaluates(Unpack)
def _unpack(node, ctx):
    return unpack_relation(ctx.eval(node.source), node.on, max_tuples(ctx.options))
