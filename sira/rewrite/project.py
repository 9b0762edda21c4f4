"""Projections: pruning what is never read, and narrowing the operands of joins and unions.

* ``project(project(R, A), B)`` -> ``project(R, B)``;
* ``project(R, every attribute)`` -> ``R`` when R's result is already packed as the PROJECT
  would pack it (always, without interval attributes);
* ``project(extend(R, specs), N)``: the specs whose attribute N drops are not computed (when
  their formulas are total: a formula that may fail must still run);
* ``project(join(R1, R2, ...), N)``: each operand is first projected on the attributes of N
  and the join attributes (a JOIN followed by a PROJECT computes only the attributes asked
  for);
* ``project(union(R1, R2, ...), N)`` -> ``union(project(R1, N), project(R2, N), ...)``.

These are exact under sira's interval semantics: every one of these operators is "unpack,
compute, pack", and the outermost PROJECT packs the same point set on the same list. The one
exception is an interval attribute a JOIN compares by equality (``joinusing(R1, R2, ())``, or a
USING list without it): an operand keeping it is not narrowed, since the narrowing PROJECT
would pack it and change the values compared.

    >>> from sira import parse
    >>> from sira.values import Heading
    >>> h = {"r": Heading.of({"k": "int", "s": "int", "e": "int"}),
    ...      "s": Heading.of({"k": "int", "c": "int"})}
    >>> push_project(parse("project(join(r, s), (c, s))", h))
    project(join(project(r,(k,s)),s),(c,s))
    >>> prune_project(parse("project(project(r, (k, s)), (k))", h))
    project(r,(k))
"""

from __future__ import annotations

import attrs

from ..algebra.basic import Extend, Project
from ..algebra.joins import Join
from ..algebra.packing import interval_names
from ..algebra.setops import Union
from ..expressions.facts import is_total
from .facts import packed_on


def prune_project(node):
    """The pruning rules above (nested PROJECTs, identity PROJECTs, unused EXTEND specs)."""
    if not isinstance(node, Project):
        return node
    src = node.source
    if isinstance(src, Project):
        return Project(src.source, node.names)
    if set(node.names) == set(src.heading.names) and \
            packed_on(src) == interval_names(node.heading):
        return src
    if isinstance(src, Extend):
        keep = tuple((n, e) for n, e in src.specs if n in node.names or not is_total(e))
        if len(keep) < len(src.specs):
            inner = attrs.evolve(src, specs=keep) if keep else src.source
            return Project(inner, node.names)
    return node


def push_project(node):
    """Narrow the operands of a JOIN or UNION under a PROJECT."""
    if not isinstance(node, Project):
        return node
    src = node.source
    wanted = set(node.names)
    if isinstance(src, Join):
        counts: dict = {}
        for s in src.sources:
            for n in s.heading.names:
                counts[n] = counts.get(n, 0) + 1
        shared = {n for n, c in counts.items() if c > 1}
        keep = wanted | shared | set(src.using or ())
        pointwise = set(interval_names(src.heading) if src.using is None else src.using)
        narrowed = []
        for s in src.sources:
            names = tuple(n for n in s.heading.names if n in keep)
            # the narrowing PROJECT packs the interval attributes it keeps: harmless for one
            # the JOIN takes pointwise or one only this operand has (the outer PROJECT packs
            # the same points), wrong for one the JOIN compares by equality
            equal = [n for n in interval_names(s.heading) if n in shared and n not in pointwise]
            narrowed.append(Project(s, names) if len(names) < s.heading.degree and not equal
                            else s)
        if any(a is not b for a, b in zip(narrowed, src.sources)):
            return Project(attrs.evolve(src, sources=tuple(narrowed)), node.names)
        return node
    if isinstance(src, Union) and len(wanted) < src.heading.degree and src.using is None:
        return attrs.evolve(src, sources=tuple(Project(s, node.names) for s in src.sources))
    return node
