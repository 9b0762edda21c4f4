"""Python evaluation of AGGREGATE and SUMMARIZEBY.

Exact folds (integers, booleans, max/min...) use a fast fold; inexact ones (FLOAT, AVERAGE,
IINTERSECT) fold in ascending order of the values from the identity, so the result does not
depend on iteration order and reproduces the seed's figures to the last bit.
"""

from __future__ import annotations

from operator import add

from ..algebra.aggregation import Aggregate, SummarizeBy, aggregations
from ..errors import ArithmeticFault
from ..expressions.library import NO_IDENTITY, fold
from ..types import IntegerType
from ..values import Relation
from . import evaluates, map_rows
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
    from .windows import summarize_window
    swept = summarize_window(node, ctx)  # a windowed sum, without the window relation
    if swept is not None:
        return swept
    h = node.source.heading
    aggs, fns = _spec_functions(node, ctx, h)
    if node.using:  # pointwise: aggregate over elementary segments, packed afterwards
        split_key = [n for n in node.by if n not in node.using]
        (rows,) = split_relations([ctx.eval(node.source)], node.using, split_key,
                                  Guard.of(node, ctx.options))
    else:
        rows = ctx.distinct_rows(node.source).rows
    key = key_getter([h.index(n) for n in node.by])
    if all(_running(agg) for agg in aggs):
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
