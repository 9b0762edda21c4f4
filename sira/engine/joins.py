"""Python evaluation of JOIN, SEMIJOIN, SEMIMINUS, LEFTJOIN (hash joins) and DIVIDEBY."""

from __future__ import annotations

from ..algebra.derived import lower_divideby
from ..algebra.joins import DivideBy, Join, LeftJoin, SemiJoin, SemiMinus
from ..values import Heading, Relation
from . import evaluates, map_rows
from .basic import compiler, key_getter, row_getter
from .packing import split_relations


def pointwise_pair(node, left: Relation, right: Relation):
    """The two inputs, split together on the pointwise attributes they share."""
    shared = [n for n in node.pointwise if n in left.heading and n in right.heading]
    if not shared:
        return left, right
    key = [n for n in left.heading.names if n in right.heading and n not in shared]
    lbody, rbody = split_relations([left, right], shared, key)
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


def join_bodies(lh: Heading, lbody, rh: Heading, rbody, out: Heading) -> frozenset:
    """Natural hash join of two bodies; the index is built on the smaller side."""
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
        return frozenset(assemble(l + r) for l in lbody for r in rbody)
    if len(lbody) <= len(rbody):
        index = build_index(lbody, lkey)
        return frozenset(probe(rbody, rkey, index, lambda r, l: assemble(l + r)))
    index = build_index(rbody, rkey)
    return frozenset(probe(lbody, lkey, index, lambda l, r: assemble(l + r)))


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
    acc = ctx.eval(node.sources[0])
    h, body = acc.heading, acc.body
    for source in node.sources[1:]:
        acc, other = pointwise_pair(node, Relation(h, body), ctx.eval(source))
        body = acc.body
        out = h.union(other.heading)
        body = join_bodies(h, body, other.heading, other.body, out)
        h = out
    return Relation(node.heading, body)


@evaluates(SemiJoin)
def _semijoin(node, ctx):
    l, r = pointwise_pair(node, ctx.eval(node.left), ctx.eval(node.right))
    return Relation(node.heading, semijoin_body(l.heading, l.body, r.heading, r.body, True))


@evaluates(SemiMinus)
def _semiminus(node, ctx):
    l, r = pointwise_pair(node, ctx.eval(node.left), ctx.eval(node.right))
    return Relation(node.heading, semijoin_body(l.heading, l.body, r.heading, r.body, False))


@evaluates(LeftJoin)
def _leftjoin(node, ctx):
    l, r = pointwise_pair(node, ctx.eval(node.left), ctx.eval(node.right))
    joined = join_bodies(l.heading, l.body, r.heading, r.body, node.heading)
    unmatched = list(semijoin_body(l.heading, l.body, r.heading, r.body, False))
    fns = [compiler(ctx)(e, l.heading) for _, e in node.defaults]
    where = {n: i for i, n in enumerate(l.heading.names + tuple(n for n, _ in node.defaults))}
    assemble = row_getter([where[n] for n in node.heading.names])
    values = map_rows(unmatched, lambda row: tuple(f(row) for f in fns), l.heading)
    return Relation(node.heading,
                    joined | frozenset(assemble(row + v) for row, v in zip(unmatched, values)))


@evaluates(DivideBy)
def _divideby(node, ctx):
    return ctx.eval(lower_divideby(node))
