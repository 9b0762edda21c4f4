"""Python evaluation of AGGREGATE and SUMMARIZEBY.

Exact folds (integers, booleans, max/min...) use a fast fold; inexact ones (FLOAT, AVERAGE,
IINTERSECT) fold in ascending order of the values from the identity, so the result does not
depend on iteration order and reproduces the seed's figures to the last bit.
"""

from __future__ import annotations

from ..algebra.aggregation import Aggregate, SummarizeBy, aggregations
from ..errors import SiraValueError
from ..expressions.library import NO_IDENTITY
from ..values import Relation
from . import evaluates, map_rows
from .basic import compiler, key_getter, row_getter
from .guards import Guard
from .packing import split_relations


def fold(agg, values: list):
    """Aggregate a list of values with one Aggregation."""
    if not values:
        if agg.identity is NO_IDENTITY:
            raise SiraValueError(f"{agg.name} has no identity value for {agg.result_type}, so "
                                 f"it cannot aggregate an empty relation", operator=agg.name,
                                 value=None)
        return agg.identity
    if agg.fold is not None:
        return agg.fold(values)
    acc = agg.identity
    if not agg.exact:
        values = sorted(values, key=agg.result_type.sort_key)
    start = 0
    if acc is NO_IDENTITY:
        acc, start = values[0], 1
    combine = agg.combine
    for v in values[start:]:
        acc = combine(acc, v)
    return acc


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
    src = ctx.eval(node.source)
    h = src.heading
    aggs, fns = _spec_functions(node, ctx, h)
    if node.using:  # pointwise: aggregate over elementary segments, packed afterwards
        split_key = [n for n in node.by if n not in node.using]
        (body,) = split_relations([src], node.using, split_key, Guard.of(node, ctx.options))
        rows = list(body)
    else:
        rows = list(src.body)
    by_positions = [h.index(n) for n in node.by]
    if len(fns) == 1:  # the common case, without per-row tuples
        (f,) = fns
        key = key_getter(by_positions)
        groups: dict = {}
        for row, v in zip(rows, map_rows(rows, f, h)):
            k = key(row)
            lst = groups.get(k)
            if lst is None:
                groups[k] = [v]
            else:
                lst.append(v)
        (agg,) = aggs
        single = len(by_positions) == 1
        results = (((k,) if single else k, (fold(agg, lst),)) for k, lst in groups.items())
    else:
        key = row_getter(by_positions)
        values = map_rows(rows, lambda r: tuple(f(r) for f in fns), h)
        groups = {}
        for row, vals in zip(rows, values):
            k = key(row)
            lists = groups.get(k)
            if lists is None:
                lists = groups[k] = [[] for _ in fns]
            for lst, v in zip(lists, vals):
                lst.append(v)
        results = ((k, tuple(fold(a, lst) for a, lst in zip(aggs, lists)))
                   for k, lists in groups.items())
    where = {n: i for i, n in enumerate(tuple(node.by) + tuple(n for n, _, _ in node.specs))}
    assemble = row_getter([where[n] for n in node.heading.names])
    out = frozenset(assemble(k + v) for k, v in results)
    return Relation(node.heading, out)
