"""Merging adjacent nodes of one kind: RENAMEs, RESTRICTs, EXTENDs.

    >>> from sira import parse
    >>> from sira.values import Heading
    >>> r = {"r": Heading.of({"a": "int", "b": "int"})}
    >>> merge_restricts(parse("restrict(restrict(r, gt(a, 1)), lt(b, 5))", r))
    restrict(r,and(gt(a,1),lt(b,5)))
    >>> merge_renames(parse("rename(rename(r, (a, x)), (x, y))", r))
    rename(r,(a,y))
    >>> merge_extends(parse("extend(extend(r, (c(plus(a, 1)))), (d(b)))", r))
    extend(r,(c(plus(a,1)) d(b)))
"""

from __future__ import annotations

import attrs

from ..algebra.basic import Extend, Rename, Restrict
from ..expressions.nodes import attributes_used
from ..expressions.facts import conjoin, conjuncts, is_total


def merge_renames(node):
    """``rename(rename(R, p1), p2)`` -> one parallel RENAME (the composition); a RENAME that
    renames nothing -> its input."""
    if not isinstance(node, Rename):
        return node
    if isinstance(node.source, Rename):
        inner = node.source
        first, second = dict(inner.pairs), dict(node.pairs)
        composed = {}
        for name in inner.source.heading.names:
            middle = first.get(name, name)
            final = second.get(middle, middle)
            if final != name:
                composed[name] = final
        node = Rename(inner.source, tuple(composed.items()))
    if all(old == new for old, new in node.pairs):
        return node.source
    return node


def merge_restricts(node):
    """``restrict(restrict(R, c1), c2)`` -> ``restrict(R, and(c1, c2))``. ``and`` evaluates c2
    only where c1 holds, as the two restrictions do; c2 must still be total, because not every
    engine's ``and`` promises that order."""
    if isinstance(node, Restrict) and isinstance(node.source, Restrict) and \
            is_total(node.condition):
        inner = node.source
        return Restrict(inner.source, conjoin(conjuncts(inner.condition) +
                                              conjuncts(node.condition)))
    return node


def merge_extends(node):
    """``extend(extend(R, s1), s2)`` -> ``extend(R, s1 s2)`` when no formula of s2 reads an
    attribute s1 adds (both compute on every tuple of R)."""
    if isinstance(node, Extend) and isinstance(node.source, Extend):
        inner = node.source
        added = {n for n, _ in inner.specs}
        if not any(attributes_used(e) & added for _, e in node.specs):
            return attrs.evolve(inner, specs=inner.specs + node.specs)
    return node
