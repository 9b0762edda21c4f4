"""Python evaluation of GROUP and UNGROUP."""

from __future__ import annotations

from ..algebra.nesting import Group, Ungroup
from ..values import Relation
from . import evaluates
from .basic import row_getter


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
    where = {n: i for i, n in enumerate(key_names + tuple(rva for rva, _ in node.specs))}
    assemble = row_getter([where[n] for n in node.heading.names])
    out = frozenset(
        assemble(k + tuple(Relation(sub_heading, frozenset(s))
                           for s, (_, _, sub_heading) in zip(sets, parts)))
        for k, sets in groups.items())
    return Relation(node.heading, out)


@evaluates(Ungroup)
def _ungroup(node, ctx):
    src = ctx.eval(node.source)
    h = src.heading
    keep = [i for i, n in enumerate(h.names) if n not in node.names]
    current = [(tuple(row[i] for i in keep), row) for row in src.body]
    cur_names = [h.names[i] for i in keep]
    for rva in node.names:
        pos = h.index(rva)
        sub_names = h.type_of(rva).heading.names
        current = [(vals + sub, row) for vals, row in current for sub in row[pos].body]
        cur_names += list(sub_names)
    where = {n: i for i, n in enumerate(cur_names)}
    assemble = row_getter([where[n] for n in node.heading.names])
    return Relation(node.heading, frozenset(assemble(vals) for vals, _ in current))
