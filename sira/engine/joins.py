"""Python evaluation of JOIN, SEMIJOIN, SEMIMINUS, LEFTJOIN (hash joins) and DIVIDEBY.

A join counts its result before building it and refuses one larger than ``max_tuples``
(``guards.py``).
"""

from __future__ import annotations

from itertools import repeat

from ..algebra.derived import lower_divideby
from ..algebra.joins import DivideBy, Join, LeftJoin, SemiJoin, SemiMinus
from ..errors import TooManyTuples
from ..values import Heading, Relation
from . import evaluates, map_rows
from .basic import compiler, key_getter, row_getter
from .guards import Guard
from .packing import split_relations


def pointwise_pair(node, left: Relation, right: Relation, guard: Guard):
    """The two inputs, split together on the pointwise attributes they share."""
    shared = [n for n in node.pointwise if n in left.heading and n in right.heading]
    if not shared:
        return left, right
    key = [n for n in left.heading.names if n in right.heading and n not in shared]
    lbody, rbody = split_relations([left, right], shared, key, guard)
    return Relation(left.heading, frozenset(lbody)), Relation(right.heading, frozenset(rbody))


def key_functions(lh: Heading, rh: Heading):
    """(left key, right key) over the attributes the headings share."""
    common = [n for n in lh.names if n in rh]
    return (key_getter([lh.index(n) for n in common]),
            key_getter([rh.index(n) for n in common]), common)


def semijoin_body(lh, lbody, rh, rbody, keep: bool) -> frozenset:
    """The left tuples that match (keep=True) or do not match (keep=False) some right tuple."""
    lkey, rkey, _ = key_functions(lh, rh)
    keys = set(map(rkey, rbody))
    if keep:
        return frozenset(l for l in lbody if lkey(l) in keys)
    return frozenset(l for l in lbody if lkey(l) not in keys)


def join_bodies(lh: Heading, lbody, rh: Heading, rbody, out: Heading,
                guard: Guard) -> frozenset:
    """Natural hash join of two bodies; the index is built on the smaller side.

    The result's size is known before it is built (a product, or the sum over join keys of
    left count x right count), so a join larger than ``guard``'s limit is refused up front.
    """
    lkey, rkey, common = key_functions(lh, rh)
    if len(common) == rh.degree:  # the right side adds no attribute: a semijoin
        return semijoin_body(lh, lbody, rh, rbody, True)
    if len(common) == lh.degree:
        return semijoin_body(rh, rbody, lh, lbody, True)
    where = {}
    for i, n in enumerate(lh.names + rh.names):
        where.setdefault(n, i)
    assemble = row_getter([where[n] for n in out.names])
    if not common:
        guard.check(len(lbody) * len(rbody))
        return frozenset(assemble(l + r) for l in lbody for r in rbody)
    if len(lbody) <= len(rbody):
        index = build_index(lbody, lkey)
        check_join_size(index, len(lbody), rbody, rkey, guard)
        return frozenset(probe(rbody, rkey, index, lambda r, l: assemble(l + r)))
    index = build_index(rbody, rkey)
    check_join_size(index, len(rbody), lbody, lkey, guard)
    return frozenset(probe(lbody, lkey, index, lambda l, r: assemble(l + r)))


def check_join_size(index: dict, indexed: int, body, key, guard: Guard) -> None:
    """Refuse a join whose result would pass ``guard``'s limit, before building it.

    Probing ``body`` (n rows) against ``index`` (``indexed`` rows) gives at most n x indexed
    tuples, and at most n x (the most rows one key holds); only when both bounds pass the limit
    is the exact size counted: the sum over the probing rows of the indexed rows sharing their
    key (every such pair gives a distinct tuple).
    """
    n = len(body)
    if n * indexed <= guard.limit or n * _longest(index, indexed) <= guard.limit:
        return
    sizes = {k: len(v) if type(v) is list else 1 for k, v in index.items()}
    guard.check(sum(map(sizes.get, map(key, body), repeat(0))))


def _longest(index: dict, indexed: int) -> int:
    """The most rows one key of the index (holding ``indexed`` rows) holds."""
    if len(index) == indexed:  # unique keys: no lists
        return 1
    return max((len(v) for v in index.values() if type(v) is list), default=1)


def build_index(body, key) -> dict:
    """key -> the one row with that key, or a list of rows when several share it.

    Keeping single rows unwrapped saves a list per key (keys are mostly unique in joins).
    """
    index = {}
    for row in body:
        k = key(row)
        found = index.get(k)
        if found is None:
            index[k] = row
        elif type(found) is list:
            found.append(row)
        else:
            index[k] = [found, row]
    return index


def probe(body, key, index, combine):
    """combine(row, match) for every row of ``body`` and every indexed row with its key."""
    get = index.get
    for row in body:
        found = get(key(row))
        if found is None:
            continue
        if type(found) is list:
            for match in found:
                yield combine(row, match)
        else:
            yield combine(row, found)


@evaluates(Join)
def _join(node, ctx):
    guard = Guard.of(node, ctx.options)
    acc = ctx.eval(node.sources[0])
    h, body = acc.heading, acc.body
    for source in node.sources[1:]:
        acc, other = pointwise_pair(node, Relation(h, body), ctx.eval(source), guard)
        body = acc.body
        out = h.union(other.heading)
        body = join_bodies(h, body, other.heading, other.body, out, guard)
        h = out
    return Relation(node.heading, body)


@evaluates(SemiJoin)
def _semijoin(node, ctx):
    l, r = pointwise_pair(node, ctx.eval(node.left), ctx.eval(node.right),
                          Guard.of(node, ctx.options))
    return Relation(node.heading, semijoin_body(l.heading, l.body, r.heading, r.body, True))


@evaluates(SemiMinus)
def _semiminus(node, ctx):
    l, r = pointwise_pair(node, ctx.eval(node.left), ctx.eval(node.right),
                          Guard.of(node, ctx.options))
    return Relation(node.heading, semijoin_body(l.heading, l.body, r.heading, r.body, False))


@evaluates(LeftJoin)
def _leftjoin(node, ctx):
    guard = Guard.of(node, ctx.options)
    l, r = pointwise_pair(node, ctx.eval(node.left), ctx.eval(node.right), guard)
    joined = join_bodies(l.heading, l.body, r.heading, r.body, node.heading, guard)
    unmatched = list(semijoin_body(l.heading, l.body, r.heading, r.body, False))
    guard.check(len(joined) + len(unmatched))  # disjoint: they come from different left tuples
    fns = [compiler(ctx)(e, l.heading) for _, e in node.defaults]
    where = {n: i for i, n in enumerate(l.heading.names + tuple(n for n, _ in node.defaults))}
    assemble = row_getter([where[n] for n in node.heading.names])
    values = map_rows(unmatched, lambda row: tuple(f(row) for f in fns), l.heading)
    return Relation(node.heading,
                    joined | frozenset(assemble(row + v) for row, v in zip(unmatched, values)))


@evaluates(DivideBy)
def _divideby(node, ctx):
    for child in node.children:  # their own errors keep their own operator names
        ctx.eval(child)
    try:
        return ctx.eval(lower_divideby(node))
    except TooManyTuples as err:  # the cartesian product of SUBJECT and TARGET, usually
        raise Guard(node.operator_name, err.limit).error(f"its {err.operator}") from None
