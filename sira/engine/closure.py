"""Python evaluation of TCLOSE and GTCLOSE by semi-naive iteration.

Each round joins only the tuples found in the previous round (the delta) with the input
relation, so a chain of n nodes costs O(size of the closure), not O(n) full joins.
"""

from __future__ import annotations

from ..algebra.closure import GTClose, TClose, closure_scope
from ..errors import ArithmeticFault, TooManyTuples, UnboundedClosure
from ..values import Relation
from . import evaluates, row_error
from .basic import compiler, row_getter

#: GTCLOSE rounds allowed after the reachable node pairs stopped growing, beyond the number of
#: nodes; only a cycle can keep producing new tuples that long.
EXTRA_ROUNDS = 16


def _edge_functions(node, heading):
    froms = [a for a, _ in node.pair_list]
    tos = [b for _, b in node.pair_list]
    return (row_getter([heading.index(a) for a in froms]),
            row_getter([heading.index(b) for b in tos]), froms, tos)


def closure_pairs(edges: set) -> set:
    """The transitive closure of a set of (from, to) pairs, semi-naively."""
    successors: dict = {}
    for a, b in edges:
        successors.setdefault(a, []).append(b)
    closure = set(edges)
    delta = edges
    while delta:
        fresh = set()
        add = fresh.add
        for a, b in delta:
            for c in successors.get(b, ()):
                if (a, c) not in closure:
                    add((a, c))
        closure |= fresh
        delta = fresh
    return closure


@evaluates(TClose)
def _tclose(node, ctx):
    src = ctx.eval(node.source)
    h = src.heading
    if len(node.pair_list) == 1:  # the binary relation of the seed: nodes are plain values
        ((a, b),) = node.pair_list
        if h.index(a) == 0:
            return Relation(node.heading, frozenset(closure_pairs(set(src.body))))
        flipped = closure_pairs({(y, x) for x, y in src.body})
        return Relation(node.heading, frozenset((y, x) for x, y in flipped))
    source_of, target_of, froms, tos = _edge_functions(node, h)
    closure = closure_pairs({(source_of(r), target_of(r)) for r in src.body})
    where = {n: i for i, n in enumerate(froms + tos)}
    assemble = row_getter([where[n] for n in h.names])
    return Relation(node.heading, frozenset(assemble(a + b) for a, b in closure))


@evaluates(GTClose)
def _gtclose(node, ctx):
    src = ctx.eval(node.source)
    h = src.heading
    source_of, target_of, froms, tos = _edge_functions(node, h)
    scope = closure_scope(h)
    formulas = [(h.index(name), compiler(ctx)(expr, scope)) for name, expr in node.specs]
    keep_right = [h.index(b) for b in tos]
    limit = ctx.options.get("max_tuples", 10_000_000)

    def combine(left, right):
        out = list(left)
        for i in keep_right:
            out[i] = right[i]
        pair = left + right
        try:
            for i, f in formulas:
                out[i] = f(pair)
        except ArithmeticFault as err:
            raise row_error(err, scope, pair) from None
        return tuple(out)

    base = list(src.body)
    by_source: dict = {}
    for r in base:
        by_source.setdefault(source_of(r), []).append(r)
    nodes = {source_of(r) for r in base} | {target_of(r) for r in base}
    result = set(base)
    pairs = {(source_of(r), target_of(r)) for r in base}
    delta = list(result)
    quiet_rounds = 0
    while delta:
        fresh = set()
        for left in delta:
            for right in by_source.get(target_of(left), ()):
                t = combine(left, right)
                if t not in result:
                    fresh.add(t)
        new_pairs = {(source_of(t), target_of(t)) for t in fresh} - pairs
        pairs |= new_pairs
        quiet_rounds = 0 if new_pairs else quiet_rounds + 1
        result |= fresh
        if quiet_rounds > len(nodes) + EXTRA_ROUNDS or len(result) > limit:
            if len(result) > limit and quiet_rounds == 0:
                raise TooManyTuples(f"GTCLOSE: more than {limit} tuples", operator="GTCLOSE",
                                    limit=limit)
            looping = sorted(a for a, b in pairs if a == b)
            raise UnboundedClosure(operator="GTCLOSE",
                                   node=", ".join(map(str, looping[0])) if looping else "?")
        delta = list(fresh)
    return Relation(node.heading, frozenset(result))
