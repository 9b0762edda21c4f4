"""Python evaluation of GROUP and UNGROUP, both counted against ``max_tuples``: UNGROUP the
tuples it unnests (several RVAs at once multiply), GROUP the tuples it nests."""

from __future__ import annotations

from itertools import product
from math import prod

from ..algebra.nesting import Group, Ungroup
from ..values import Relation
from . import evaluates
from .basic import row_getter
from .guards import Guard


@evaluates(Group)
def _group(node, ctx):
    src = ctx.eval(node.source)
    h = src.heading
    key_names = node.key_names
    key = row_getter([h.index(n) for n in key_names])
    parts = [(rva, row_getter([h.index(n) for n in sorted(names)]),
              node.heading.type_of(rva).heading) for rva, names in node.specs]
    groups: dict = {}
    for row in src.body:
        k = key(row)
        sets = groups.get(k)
        if sets is None:
            sets = groups[k] = [set() for _ in parts]
        for s, (_, get, _) in zip(sets, parts):
            s.add(get(row))
    Guard.of(node, ctx.options).check(nested_count(groups.values()))
    where = {n: i for i, n in enumerate(key_names + tuple(rva for rva, _ in node.specs))}
    assemble = row_getter([where[n] for n in node.heading.names])
    out = frozenset(
        assemble(k + tuple(Relation(sub_heading, frozenset(s))
                           for s, (_, _, sub_heading) in zip(sets, parts)))
        for k, sets in groups.items())
    return Relation(node.heading, out)


def nested_count(groups) -> int:
    """The tuples GROUP nests: every tuple of every RVA of every group (one per input tuple and
    RVA at most, so only GROUP with several RVAs can pass its input's size)."""
    return sum(sum(map(len, sets)) for sets in groups)


@evaluates(Ungroup)
def _ungroup(node, ctx):
    src = ctx.eval(node.source)
    h = src.heading
    guard = Guard.of(node, ctx.options)
    keep = [i for i, n in enumerate(h.names) if n not in node.names]
    rvas = [h.index(rva) for rva in node.names]
    cur_names = [h.names[i] for i in keep]
    for rva in node.names:
        cur_names += list(h.type_of(rva).heading.names)
    where = {n: i for i, n in enumerate(cur_names)}
    assemble = row_getter([where[n] for n in node.heading.names])
    flat = row_getter(keep)
    out = set()
    for row in src.body:
        count = prod(len(row[p]) for p in rvas)
        if count > 1:
            guard.check(count)  # one tuple's combinations are distinct: refused before made
        base = flat(row)
        if len(rvas) == 1:
            out.update(assemble(base + sub) for sub in row[rvas[0]].body)
        else:
            out.update(assemble(base + sum(subs, ()))
                       for subs in product(*(row[p].body for p in rvas)))
        if count > 1 and len(out) > guard.limit:
            raise guard.error()
    guard.check(len(out))
    return Relation(node.heading, frozenset(out))
