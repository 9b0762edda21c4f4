"""Spark translations of TCLOSE and GTCLOSE: iterative semi-naive joins that stop at the fixpoint
and cut the lineage every round (``localCheckpoint``), never collect().

TCLOSE doubles path lengths each round (delta joined with the closure on both sides), so a chain
of n nodes takes about log2(n) rounds. GTCLOSE extends paths by one input tuple per round, as
the Python engine and the seed's description do, and stops on cycles with UnboundedClosure.

Both count the closure after every round (the fresh tuples are checkpointed, so counting them
reruns nothing) and raise TooManyTuples once it passes ``max_tuples``. A round is computed whole
before it is counted, so the last round may go past the limit (a TCLOSE round can about square
the closure): the guard bounds the rounds, not the inside of one.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import functions as F

from sira.algebra.closure import GTClose, TClose, closure_scope
from sira.engine.guards import Guard
from sira.errors import UnboundedClosure

from .compiler import ordered, translates
from .functions import Scope, column
from .joins import natural_join
from .rowbound import partitions_for, sequence_join
from .types import equal

from sira.engine.closure import EXTRA_ROUNDS  # the same stopping rule as Python


def _c(name):
    return F.col(f"`{name}`")


def _eq(left, right, heading, name):
    """Equality of two closure columns; null-safe when the type is unknown or may hold nulls."""
    if heading is None:
        return left.eqNullSafe(right)
    return equal(left, right, heading.type_of(name))


def _compose(left, right, pairs, froms, tos, heading=None, parts=None):
    """Pairs (l.from, r.to) where l.to = r.from (plain equi-join on scalar attributes), over
    ``parts`` partitions of the join key (None: Spark's choice)."""
    l_ = left.select(*[_c(a).alias(f"__lf_{a}") for a in froms],
                     *[_c(b).alias(f"__lt_{b}") for b in tos])
    r_ = right.select(*[_c(a).alias(f"__rf_{a}") for a in froms],
                      *[_c(b).alias(f"__rt_{b}") for b in tos])
    if parts is not None:
        l_ = l_.repartition(parts, *[F.col(f"__lt_{b}") for _, b in pairs])
        r_ = r_.repartition(parts, *[F.col(f"__rf_{a}") for a, _ in pairs])
    cond = reduce(lambda x, y: x & y, [_eq(F.col(f"__lt_{b}"), F.col(f"__rf_{a}"), heading, a)
                                       for a, b in pairs])
    return sequence_join(l_, r_, cond).select(*[F.col(f"__lf_{a}").alias(a) for a in froms],
                                    *[F.col(f"__rt_{b}").alias(b) for b in tos])


@translates(TClose)
def _tclose(node, children, c):
    (edges,) = children
    pairs = node.pair_list
    froms = [a for a, _ in pairs]
    tos = [b for _, b in pairs]
    h = node.heading
    guard = Guard.of(node, c.options)
    closure = edges.localCheckpoint()
    size = closure.count()
    guard.check(size)
    delta = closure
    while True:
        # the joins, the distinct once and the left-anti join (subtract would add a second
        # distinct) over partitions of about ROWS_PER_CHUNK of the closure's tuples each (a
        # round makes about as many as the closure holds): in the shuffle partitions alone,
        # the sorts of a closure of 45M tuples ran the heap out
        parts = partitions_for(closure, size)
        grown = _compose(delta, closure, pairs, froms, tos, h, parts).unionByName(
            _compose(closure, delta, pairs, froms, tos, h, parts))
        grown = ordered(grown, h)
        fresh = natural_join(grown.repartition(parts, *[_c(n) for n in h.names]).distinct(),
                             h, closure, h, "left_anti", sequence=True).localCheckpoint()
        fresh_count = fresh.count()  # of the checkpointed rows: no recomputation
        if fresh_count == 0:
            return closure
        size += fresh_count
        guard.check(size)
        closure = closure.unionByName(fresh).localCheckpoint()
        delta = fresh


@translates(GTClose)
def _gtclose(node, children, c):
    (base,) = children
    h = node.heading
    pairs = node.pair_list
    froms = [a for a, _ in pairs]
    tos = [b for _, b in pairs]
    scope_heading = closure_scope(h)
    guard = Guard.of(node, c.options)
    left_cols = {f"__l__{n}": F.col(f"`__L_{n}`") for n in h.names}
    right_cols = {f"__r__{n}": F.col(f"`__R_{n}`") for n in h.names}
    scope = Scope(scope_heading, {**left_cols, **right_cols}, c)
    formulas = {n: column(e, scope_heading, c, scope) for n, e in node.specs}
    r_ = base.select(*[_c(n).alias(f"__R_{n}") for n in h.names])
    nodes = base.select(*[_c(a) for a in froms]).unionByName(
        base.select(*[_c(b).alias(a) for a, b in pairs])).distinct().count()
    result = base.localCheckpoint()
    size = result.count()
    guard.check(size)
    ends = h.project(froms + tos)
    key_pairs = base.select(*[_c(n) for n in froms + tos]).distinct().localCheckpoint()
    delta = result
    quiet = 0
    while True:
        # the join, the distinct and the left-anti join over partitions of about
        # ROWS_PER_CHUNK of the closure's tuples each, as TCLOSE's (a round may make as many
        # as the closure holds; the shuffle partitions alone would not grow with it)
        parts = partitions_for(result, size)
        l_ = delta.select(*[_c(n).alias(f"__L_{n}") for n in h.names]) \
            .repartition(parts, *[F.col(f"`__L_{b}`") for _, b in pairs])
        cond = reduce(lambda x, y: x & y, [_eq(F.col(f"`__L_{b}`"), F.col(f"`__R_{a}`"), h, a)
                                           for a, b in pairs])
        joined = sequence_join(l_, r_.repartition(parts, *[F.col(f"`__R_{a}`") for a, _ in pairs]),
                               cond)
        out = []
        for n in h.names:
            if n in froms:
                out.append(F.col(f"`__L_{n}`").alias(n))
            elif n in tos:
                out.append(F.col(f"`__R_{n}`").alias(n))
            else:
                out.append(formulas[n].alias(n))
        made = joined.select(*out).repartition(parts, *[_c(n) for n in h.names]).distinct()
        fresh = natural_join(made, h, result, h, "left_anti", sequence=True).localCheckpoint()
        fresh_count = fresh.count()
        if fresh_count == 0:
            return result
        new_pairs = natural_join(
            fresh.select(*[_c(n) for n in froms + tos])
            .repartition(parts, *[_c(n) for n in froms + tos]).distinct(),
            ends, key_pairs, ends, "left_anti", sequence=True).localCheckpoint()
        if new_pairs.isEmpty():
            quiet += 1
        else:
            quiet = 0
            key_pairs = key_pairs.unionByName(new_pairs).localCheckpoint()
        size += fresh_count
        if size > guard.limit:
            raise guard.error(hint=_cycle_hint(key_pairs, pairs, froms, quiet))
        result = result.unionByName(fresh).localCheckpoint()
        if quiet > nodes + EXTRA_ROUNDS:
            raise UnboundedClosure(operator="GTCLOSE",
                                   node=_cycle_node(key_pairs, pairs, froms) or "?")
        delta = fresh


def _cycle_node(key_pairs, pairs, froms) -> str | None:
    """The first node (in order) that reaches itself, as text, or None (one small action)."""
    loops = key_pairs.where(reduce(lambda x, y: x & y,
                                   [_c(a).eqNullSafe(_c(b)) for a, b in pairs]))
    first = loops.orderBy(*[_c(a) for a in froms]).first()
    return ", ".join(str(first[a]) for a in froms) if first else None


def _cycle_hint(key_pairs, pairs, froms, quiet: int) -> str:
    """As the Python engine's: the cycle a GTCLOSE over the limit may be growing around."""
    node = _cycle_node(key_pairs, pairs, froms) if quiet else None
    if node is None:
        return ""
    return (f"; its node pairs stopped growing {quiet} rounds ago, so its computed "
            f"attributes may grow without end around the cycle through {node}")
