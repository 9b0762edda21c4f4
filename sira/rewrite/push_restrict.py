"""Pushing restrictions towards the leaves, so fewer tuples flow through joins and unions.

A RESTRICT condition is split into its conjuncts; each goes as far down as it may:

* through RENAME (its names translated back) and PACK;
* through PROJECT and UNION, when it reads no interval attribute (these operators pack their
  results, and a condition on the other attributes selects whole groups of a packing, so it
  commutes with it; it is evaluated on the same combinations of values as before);
* through EXTEND when it reads none of the new attributes and every formula is total (fewer
  tuples reach the formulas);
* into the operands of JOIN, INTERSECT, and into the left operand of MINUS, SEMIJOIN and
  SEMIMINUS, when it reads no interval attribute, only attributes of that operand, and is
  total (those operands hold tuples that never reach the result).

A conjunct is evaluated below only where the original evaluated it, or when it is total: the
rewrite never turns a result into an error.

    >>> from sira import parse
    >>> from sira.values import Heading
    >>> h = {"r": Heading.of({"k": "int", "a": "int"}), "s": Heading.of({"k": "int", "b": "int"})}
    >>> push_restrict(parse("restrict(join(r, s), and(gt(a, 1), lt(b, 5)))", h))
    join(restrict(r,gt(a,1)),restrict(s,lt(b,5)))
    >>> push_restrict(parse("restrict(join(r, s), gt(div(a, k), 1))", h))  # may fail: stays
    restrict(join(r,s),gt(div(a,k),1))
"""

from __future__ import annotations

import attrs

from ..algebra.basic import Extend, Project, Rename, Restrict
from ..algebra.joins import Join, SemiJoin, SemiMinus
from ..algebra.packing import Pack
from ..algebra.setops import Intersect, Minus, Union
from ..expressions.nodes import attributes_used
from ..expressions.facts import conjoin, conjuncts, is_plain, is_total, renamed
from .facts import reads_intervals, reads_only


def push_restrict(node):
    """One step: a RESTRICT over one of the operators above moves (partly) below it."""
    if not isinstance(node, Restrict):
        return node
    src = node.source
    parts = conjuncts(node.condition)
    if isinstance(src, Rename):
        back = {new: old for old, new in src.pairs}
        return attrs.evolve(src, source=Restrict(src.source,
                                                 renamed(node.condition, back)))
    if isinstance(src, (Pack, Project, Union)):
        return _push_uniform(node, parts, src)
    if isinstance(src, Extend):
        return _push_extend(node, parts, src)
    if isinstance(src, (Join, Intersect)):
        return _push_into(node, parts, src, "sources", range(len(src.sources)))
    if isinstance(src, (Minus, SemiJoin, SemiMinus)):
        return _push_into(node, parts, src, "left", None)
    return node


def _split(parts, may_push, always_total: bool = False) -> tuple:
    """(pushed, kept) conjuncts. Pushed conjuncts run first, below; kept ones run after them,
    above, on fewer tuples. So a conjunct may be pushed past a kept one before it only when
    both are total (the pushed one now runs where the kept one may be false; the kept one no
    longer runs where the pushed one is false), and with ``always_total`` (the pushed
    conjuncts run on tuples that never reach the result) every pushed conjunct is total."""
    pushed, kept = [], []
    for part in parts:
        total = is_total(part)
        if may_push(part) and (total or not always_total) and \
                (not kept or (total and all(is_total(k) for k in kept))):
            pushed.append(part)
        else:
            kept.append(part)
    return pushed, kept


def _rebuild(kept, inner):
    return Restrict(inner, conjoin(kept)) if kept else inner


def _push_uniform(node, parts, src):
    """PACK, PROJECT, UNION: conjuncts reading no interval attribute go to every input."""
    pushed, kept = _split(parts, lambda c: is_plain(c) and not reads_intervals(c, src.heading))
    if not pushed:
        return node
    cond = conjoin(pushed)
    if isinstance(src, Union):
        inner = attrs.evolve(src, sources=tuple(Restrict(s, cond) for s in src.sources))
    else:
        inner = attrs.evolve(src, source=Restrict(src.source, cond))
    return _rebuild(kept, inner)


def _push_extend(node, parts, src):
    """EXTEND: conjuncts not reading the new attributes, when every formula is total."""
    if not all(is_total(e) for _, e in src.specs):
        return node
    added = {n for n, _ in src.specs}
    pushed, kept = _split(parts, lambda c: not (attributes_used(c) & added))
    if not pushed:
        return node
    return _rebuild(kept, attrs.evolve(src, source=Restrict(src.source, conjoin(pushed))))


def _push_into(node, parts, src, field, positions):
    """JOIN/INTERSECT (every operand that has the attributes) or the left operand of MINUS,
    SEMIJOIN, SEMIMINUS: total conjuncts reading no interval attribute."""
    operands = list(src.sources) if positions is not None else [src.left]

    def targets(c):
        return [i for i, op in enumerate(operands) if reads_only(c, op.heading)]

    pushed, kept = _split(parts, lambda c: not reads_intervals(c, src.heading) and targets(c),
                          always_total=True)
    if not pushed:
        return node
    for part in pushed:
        for i in targets(part):
            operands[i] = Restrict(operands[i], part)
    inner = attrs.evolve(src, **{field: tuple(operands) if positions is not None
                                 else operands[0]})
    return _rebuild(kept, inner)
