"""Python evaluation of AGGREGATE and SUMMARIZEBY.

Exact folds (integers, booleans, max/min...) use a fast fold; FLOAT sums are the exact sum of
the values rounded once (``float_sum``); the other inexact ones (FLOAT products, AVERAGE,
IINTERSECT) fold in ascending order of the values from the identity, so no result depends on
iteration order, and the seed's figures are reproduced to the last bit.
"""

from __future__ import annotations

import math
from operator import add

from ..algebra.aggregation import Aggregate, SummarizeBy, aggregations, bounded_product
from ..errors import ArithmeticFault
from ..expressions.library import NO_IDENTITY, float_total, fold, scaled_float
from ..types import FLOAT, IntegerType
from ..values import Relation
from . import Packed, evaluates, map_rows
from .basic import compiler, key_getter, row_getter
from .guards import Guard
from .packing import split_relations


def _spec_functions(node, ctx, heading):
    aggs = aggregations(node.specs, heading, node.operator_name)
    fns = [compiler(ctx)(expr, heading) for _, _, expr in node.specs]
    return aggs, fns


@evaluates(Aggregate)
def _aggregate(node, ctx):
    src = ctx.eval(node.source)
    aggs, fns = _spec_functions(node, ctx, src.heading)
    rows = list(src.body)
    values = [fold(a, map_rows(rows, f, src.heading)) for a, f in zip(aggs, fns)]
    where = {name: i for i, (name, _, _) in enumerate(node.specs)}
    return Relation(node.heading, frozenset({tuple(values[where[n]] for n in node.heading.names)}))


@evaluates(SummarizeBy)
def _summarizeby(node, ctx):
    from ..algebra.derived import summarize_by_points
    by_points = summarize_by_points(node)  # a formula reads a USING attribute: the definition
    if by_points is not None:
        return Packed(ctx.eval(by_points))
    from .windows import summarize_window
    swept = summarize_window(node, ctx)  # a windowed sum, without the window relation
    if swept is not None:
        return swept
    h = node.source.heading
    aggs, fns = _spec_functions(node, ctx, h)
    if node.using:
        swept = sweep_summary(node, ctx, aggs, fns)
        if swept is not None:
            return swept
    if node.using:  # pointwise: aggregate over elementary segments, packed afterwards
        split_key = [n for n in node.by if n not in node.using]
        (rows,) = split_relations([ctx.eval(node.source)], node.using, split_key,
                                  Guard.of(node, ctx.options))
    else:
        rows = ctx.distinct_rows(node.source).rows
    key = key_getter([h.index(n) for n in node.by])
    if aggs and all(_running(agg) for agg in aggs):  # (no spec: the groups alone)
        columns = [running_fold(rows, key, f, agg, h) for agg, f in zip(aggs, fns)]
        results = ((k, tuple(column[k] for column in columns)) for k in columns[0])
    else:
        results = _list_folds(rows, key, aggs, fns, h)
    by = tuple(node.by)
    where = {n: i for i, n in enumerate(by + tuple(n for n, _, _ in node.specs))}
    assemble = row_getter([where[n] for n in node.heading.names])
    if len(by) == 1:  # the key is the value itself (see key_getter)
        return Relation(node.heading, frozenset(assemble((k,) + v) for k, v in results))
    return Relation(node.heading, frozenset(assemble(k + v) for k, v in results))


#: the aggregations a sweep keeps as running state (the integer sums and products, extremes,
#: logic and intersections)
_SWEPT = ("plus", "mult", "max", "min", "and", "or", "iintersect")


def sweep_summary(node, ctx, aggs, fns):
    """SUMMARIZEBYUSING on one interval attribute by a sweep line, or None when it does not
    apply (several USING attributes, an aggregate read from the interval, one that is not an
    integer or FLOAT sum, a product of INT or LONG, max, min, and, or, iintersect; or an
    integer sum or product leaving its type, which the reference evaluation reports naming the
    tuple).

    Pointwise, the aggregate at a point is over the distinct tuples of the unpacked relation
    there: each group's interval ends are visited in order, each distinct rest of a tuple (its
    attributes besides the interval) counted by how many of its intervals cover the point, and
    the aggregates kept running over the rests present (a sum; for FLOAT the exact sum of the
    finite values as an integer and counts of infinities, rounded once per segment as
    :func:`sira.expressions.library.float_sum` rounds; a sorted multiset for max and min,
    counts of TRUE and FALSE for and and or, for iintersect the sorted multisets of begins and
    of bounded ends and a count of empty intervals: :class:`_Intersection`; for a product the
    counts of zeros and negative values and the product of the other magnitudes while it can
    still fit its type: :class:`_Product`); adjacent
    segments with equal aggregates merge as PACK would merge them. O(n log n + output),
    however long the intervals: the elementary-segment split it replaces costs the intervals'
    overlaps.
    """
    from sortedcontainers import SortedList

    from ..expressions.nodes import attributes_used
    from ..intervals import Interval
    from ..types import IntegerType
    if len(node.using) != 1 or any(a.name not in _SWEPT for a in aggs):
        return None
    (during,) = node.using
    if any(a.name == "plus" and not isinstance(a.result_type, IntegerType)
           and a.result_type != FLOAT for a in aggs) or \
            any(a.name == "mult" and not bounded_product(a) for a in aggs) or \
            any(during in attributes_used(e) for _, _, e in node.specs):
        return None
    src = ctx.eval(node.source)
    h = src.heading
    d = h.index(during)
    group = key_getter([h.index(n) for n in node.by if n != during])
    rest = row_getter([i for i in range(h.degree) if i != d])
    groups: dict = {}
    for row in src.body:
        iv = row[d]
        events = groups.get(g := group(row))
        if events is None:
            events = groups[g] = {}
        r = rest(row)
        events.setdefault(iv.begin, []).append((1, r, row))
        if iv.end is not None:
            events.setdefault(iv.end, []).append((-1, r, row))
    m = len(aggs)
    kinds = ["fplus" if a.name == "plus" and a.result_type == FLOAT else a.name for a in aggs]
    by_rest = [n for n in node.by if n != during]
    names = by_rest + [during] + [n for n, _, _ in node.specs]
    where = {n: i for i, n in enumerate(names)}
    assemble = row_getter([where[n] for n in node.heading.names])
    single = len(by_rest) == 1
    out = []
    for g, events in groups.items():
        counts: dict = {}
        sums = [0] * m
        multisets = [SortedList() if k in ("max", "min") else _Intersection()
                     if k == "iintersect" else _Product() if k == "mult" else None
                     for k in kinds]
        truths = [[0, 0] for _ in kinds]  # [TRUE count, FALSE count]; FLOAT sums: infinities
        points = sorted(events)
        run = None  # [begin, end, values]
        key = (g,) if single else g
        for i, p in enumerate(points):
            for delta, r, row in events[p]:
                c = counts.get(r, 0)
                if delta > 0:
                    counts[r] = c + 1
                    if c:
                        continue
                else:
                    if c > 1:
                        counts[r] = c - 1
                        continue
                    del counts[r]
                for j, (kind, f) in enumerate(zip(kinds, fns)):
                    v = f(row)
                    if kind == "plus":
                        sums[j] += v if delta > 0 else -v
                    elif kind == "fplus":  # exactly, as an integer (float_sum: rounded once)
                        if v - v == 0.0:
                            sums[j] += scaled_float(v) if delta > 0 else -scaled_float(v)
                        else:
                            truths[j][0 if v > 0 else 1] += delta
                    elif multisets[j] is not None:
                        (multisets[j].add if delta > 0 else multisets[j].remove)(v)
                    else:
                        truths[j][0 if v else 1] += delta
            if not counts:
                if run is not None:
                    out.append(assemble(key + (Interval(run[0], run[1]),) + run[2]))
                    run = None
                continue
            values = tuple(sums[j] if kind == "plus" else
                           float_total(sums[j], *truths[j]) if kind == "fplus" else
                           multisets[j].value() if kind in ("iintersect", "mult") else
                           (multisets[j][-1] if kind == "max" else multisets[j][0])
                           if multisets[j] is not None else
                           (truths[j][1] == 0 if kind == "and" else truths[j][0] > 0)
                           for j, kind in enumerate(kinds))
            nxt = points[i + 1] if i + 1 < len(points) else None
            if run is not None and run[1] == p and run[2] == values:
                run[1] = nxt
                continue
            if run is not None:
                out.append(assemble(key + (Interval(run[0], run[1]),) + run[2]))
            run = [p, nxt, values]
        if run is not None:
            out.append(assemble(key + (Interval(run[0], run[1]),) + run[2]))
    # a sum or product leaving its type: the reference evaluation reports it, naming the tuple
    for j, (name, _, _) in enumerate(node.specs):
        t = aggs[j].result_type
        if kinds[j] in ("plus", "mult") and isinstance(t, IntegerType) and t.min is not None:
            pos = node.heading.index(name)
            if any(not t.min <= r[pos] <= t.max for r in out):
                return None
    interval_type = h.type_of(during)
    for r in out:  # an interval the type cannot hold is the reference's error to give
        interval_type.check(r[node.heading.index(during)])
    return Packed(Relation(node.heading, frozenset(out)))


class _Intersection:
    """The intersection of a changing multiset of intervals: [largest begin, least end), or
    the empty interval when that is empty or when an empty interval is among them (IINTERSECT
    of the multiset whatever its order; an empty one is shown at the largest begin, as
    ``Interval.intersect`` shows it at a begin of its operands).

        >>> from sira.intervals import Interval
        >>> x = _Intersection()
        >>> x.add(Interval(1, 9)); x.add(Interval(4)); x.value()
        Interval(begin=4, end=9)
        >>> x.add(Interval(9, 12)); x.value().empty
        True
        >>> x.remove(Interval(1, 9)); x.value()
        Interval(begin=9, end=12)
    """

    __slots__ = ("begins", "ends", "empties", "an_empty")

    def __init__(self):
        from sortedcontainers import SortedList
        self.begins, self.ends, self.empties, self.an_empty = SortedList(), SortedList(), 0, None

    def add(self, iv) -> None:
        if iv.empty:
            self.empties += 1
            self.an_empty = iv
            return
        self.begins.add(iv.begin)
        if iv.end is not None:
            self.ends.add(iv.end)

    def remove(self, iv) -> None:
        if iv.empty:
            self.empties -= 1
            return
        self.begins.remove(iv.begin)
        if iv.end is not None:
            self.ends.remove(iv.end)

    def value(self):
        from ..intervals import Interval
        if not self.begins:  # empty intervals alone
            return self.an_empty
        begin = self.begins[-1]
        end = self.ends[0] if self.ends else None
        if self.empties or (end is not None and end <= begin):
            return Interval(begin, begin)
        return Interval(begin, end)


class _Product:
    """The product of a changing multiset of integers, exact while it can fit a bounded integer
    type: the counts of zeros and of negative values, and the magnitudes of at least 2 with
    their product. More than ``LIMIT`` such magnitudes multiply to at least 2**64, outside
    every bounded type, and were the product no longer kept it would grow with the values
    present: there ``value`` is 2**64 (unless a zero is present), and the product is made
    again from the magnitudes when their count falls back to ``LIMIT``. So adding or removing
    a value costs O(1), or O(``LIMIT``) when the product is made again.

        >>> p = _Product()
        >>> for v in (3, -2, 5, 1): p.add(v)
        >>> p.value()
        -30
        >>> p.add(0); p.value()
        0
        >>> p.remove(0); p.remove(-2); p.value()
        15
    """

    LIMIT = 63
    __slots__ = ("zeros", "negatives", "magnitudes", "large", "product")

    def __init__(self):
        self.zeros = self.negatives = self.large = 0
        self.magnitudes: dict = {}  # magnitude (at least 2) -> how many times it is present
        self.product = 1  # of those magnitudes; None while there are more than LIMIT

    def add(self, v: int) -> None:
        if v == 0:
            self.zeros += 1
            return
        self.negatives += v < 0
        m = abs(v)
        if m < 2:
            return
        self.magnitudes[m] = self.magnitudes.get(m, 0) + 1
        self.large += 1
        if self.product is not None:
            self.product = self.product * m if self.large <= self.LIMIT else None

    def remove(self, v: int) -> None:
        if v == 0:
            self.zeros -= 1
            return
        self.negatives -= v < 0
        m = abs(v)
        if m < 2:
            return
        if self.magnitudes[m] == 1:
            del self.magnitudes[m]
        else:
            self.magnitudes[m] -= 1
        self.large -= 1
        if self.product is not None:
            self.product //= m
        elif self.large <= self.LIMIT:
            self.product = math.prod(m ** c for m, c in self.magnitudes.items())

    def value(self) -> int:
        if self.zeros:
            return 0
        if self.product is None:
            return 1 << 64
        return -self.product if self.negatives % 2 else self.product


def _running(agg) -> bool:
    """Whether ``agg`` may be folded as the tuples come (exact: the order does not matter)."""
    return agg.exact


def running_fold(rows, key, value, agg, heading) -> dict:
    """group key -> the aggregate of ``value`` over the rows of that group, folded as the
    rows come (for an exact aggregation, whose result does not depend on the order).

    Every group's result is checked as a fold of its whole list would be (a sum of INTs must
    fit INT, whatever the partial sums did): see :func:`_checked`.
    """
    try:
        acc = _fold_pairs(zip(map(key, rows), map(value, rows)), agg)
    except ArithmeticFault:
        map_rows(rows, value, heading)  # raises the error naming the failing tuple
        raise
    return _checked(acc, agg)


def _fold_pairs(pairs, agg) -> dict:
    """key -> the fold of the values paired with it, from (key, value) pairs."""
    acc: dict = {}
    get = acc.get
    combine = agg.combine
    if combine is add and agg.identity is not NO_IDENTITY:  # sums: the commonest, inlined
        identity = agg.identity
        for k, v in pairs:
            acc[k] = get(k, identity) + v
    elif agg.identity is not NO_IDENTITY:
        identity = agg.identity
        for k, v in pairs:
            acc[k] = combine(get(k, identity), v)
    else:
        for k, v in pairs:
            found = get(k, _MISSING)
            acc[k] = v if found is _MISSING else combine(found, v)
    return acc


def _checked(acc: dict, agg) -> dict:
    """The running folds put through ``agg.fold`` as one-value lists: what a fold of the whole
    list would check and return. Over an integer type a fold returns its one value and at
    most checks that it fits the type, so checking the least and the greatest checks all."""
    finish = agg.fold
    if finish is None or not acc:
        return acc
    if isinstance(agg.result_type, IntegerType):
        finish([max(acc.values())])
        finish([min(acc.values())])
        return acc
    return {k: finish([v]) for k, v in acc.items()}


_MISSING = object()


def _list_folds(rows, key, aggs, fns, heading):
    """(group key, aggregates) for every group, each aggregate folded over the list of the
    group's values (in ascending order where the aggregation is inexact: see fold)."""
    rows = rows if isinstance(rows, (list, set, frozenset)) else list(rows)
    keys = map(key, rows)
    values = map_rows(rows, lambda r: tuple(f(r) for f in fns), heading)
    groups: dict = {}
    for k, vals in zip(keys, values):
        lists = groups.get(k)
        if lists is None:
            lists = groups[k] = [[] for _ in fns]
        for lst, v in zip(lists, vals):
            lst.append(v)
    return ((k, tuple(fold(a, lst) for a, lst in zip(aggs, lists)))
            for k, lists in groups.items())
