"""Python evaluation of TCLOSE and GTCLOSE by semi-naive iteration.

Each round joins only the tuples found in the previous round (the delta) with the input
relation, so a chain of n nodes costs O(size of the closure), not O(n) full joins. The closure
is counted every CHECK_EVERY or so new tuples and refused once past ``max_tuples``.
"""

from __future__ import annotations

from itertools import islice

from ..algebra.closure import GTClose, TClose, closure_scope
from ..errors import ArithmeticFault, UnboundedClosure
from ..values import Relation
from . import evaluates, row_error
from .basic import compiler, row_getter
from .guards import Guard

#: GTCLOSE rounds allowed after the reachable node pairs stopped growing, beyond the number of
#: nodes; only a cycle can keep producing new tuples that long.
EXTRA_ROUNDS = 16

#: About how many new tuples a closure makes between two counts against ``max_tuples``.
CHECK_EVERY = 1 << 14


def _edge_functions(node, heading):
    froms = [a for a, _ in node.pair_list]
    tos = [b for _, b in node.pair_list]
    return (row_getter([heading.index(a) for a in froms]),
            row_getter([heading.index(b) for b in tos]), froms, tos)


def closure_pairs(edges: set, guard: Guard | None = None) -> set:
    """The transitive closure of a set of (from, to) pairs, semi-naively.

    The closure is counted every few thousand new pairs and refused as soon as it passes
    ``guard``'s limit (the default limit when None).
    """
    guard = guard or Guard("TCLOSE")
    successors: dict = {}
    for a, b in edges:
        successors.setdefault(a, []).append(b)
    closure = set(edges)
    guard.check(len(closure))
    delta = edges
    chunk = _chunk_size(successors)
    while delta:
        fresh = set()
        add = fresh.add
        for part in _parts(delta, chunk):
            for a, b in part:
                for c in successors.get(b, ()):
                    if (a, c) not in closure:
                        add((a, c))
            guard.check(len(closure) + len(fresh))
        closure |= fresh
        delta = fresh
    return closure


def _chunk_size(successors: dict) -> int:
    """How many tuples of a round's delta to extend between two counts: at most about
    CHECK_EVERY new tuples (or one tuple's successors when it has more) between counts."""
    widest = max(map(len, successors.values()), default=1)
    return max(CHECK_EVERY // widest, 1)


def _parts(items, size: int):
    """``items`` in lists of ``size`` (the last one shorter)."""
    if len(items) <= size:
        yield items
        return
    it = iter(items)
    while part := list(islice(it, size)):
        yield part


@evaluates(TClose)
def _tclose(node, ctx):
    src = ctx.eval(node.source)
    h = src.heading
    guard = Guard.of(node, ctx.options)
    if len(node.pair_list) == 1:  # the binary relation of the seed: nodes are plain values
        ((a, b),) = node.pair_list
        if h.index(a) == 0:
            return Relation(node.heading, frozenset(closure_pairs(set(src.body), guard)))
        flipped = closure_pairs({(y, x) for x, y in src.body}, guard)
        return Relation(node.heading, frozenset((y, x) for x, y in flipped))
    source_of, target_of, froms, tos = _edge_functions(node, h)
    closure = closure_pairs({(source_of(r), target_of(r)) for r in src.body}, guard)
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
    guard = Guard.of(node, ctx.options)

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
    guard.check(len(result))
    pairs = {(source_of(t), target_of(t)) for t in base}
    delta = list(result)
    chunk = _chunk_size(by_source)
    quiet_rounds = 0
    while delta:
        fresh = set()
        for part in _parts(delta, chunk):
            for left in part:
                for right in by_source.get(target_of(left), ()):
                    t = combine(left, right)
                    if t not in result:
                        fresh.add(t)
            if len(result) + len(fresh) > guard.limit:
                raise guard.error(hint=_cycle_hint(pairs, quiet_rounds))
        new_pairs = {(source_of(t), target_of(t)) for t in fresh} - pairs
        pairs |= new_pairs
        quiet_rounds = 0 if new_pairs else quiet_rounds + 1
        result |= fresh
        if quiet_rounds > len(nodes) + EXTRA_ROUNDS:
            raise UnboundedClosure(operator="GTCLOSE", node=_cycle_node(pairs) or "?")
        delta = list(fresh)
    return Relation(node.heading, frozenset(result))


def _cycle_node(pairs) -> str | None:
    """The first node (in order) that reaches itself, as text, or None."""
    looping = sorted(a for a, b in pairs if a == b)
    return ", ".join(map(str, looping[0])) if looping else None


def _cycle_hint(pairs, quiet_rounds: int) -> str:
    """For a GTCLOSE over the limit while its node pairs no longer grow: the cycle around which
    its computed attributes may be growing without end."""
    node = _cycle_node(pairs) if quiet_rounds else None
    if node is None:
        return ""
    return (f"; its node pairs stopped growing {quiet_rounds} rounds ago, so its computed "
            f"attributes may grow without end around the cycle through {node}")
