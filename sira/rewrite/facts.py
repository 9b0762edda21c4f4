"""What the rules need to know about trees and expressions: which expressions cannot fail,
which attributes are interval-typed, how a node's result is packed.

A rule may make an expression run on more tuples than before (a restriction pushed below a
join sees tuples that join nothing). That must never turn a result into an error, so it only
does so with *total* expressions: ones that cannot raise on any tuple (comparisons, boolean
connectives, attribute references, literals, string predicates, interval comparisons).

    >>> from sira import attr, call
    >>> is_total(attr("a") > 3)
    True
    >>> is_total(call("div", 10, attr("a")) > 1)
    False
"""

from __future__ import annotations

from ..algebra.basic import Extend, Rename, Restrict
from ..algebra.packing import interval_names
from ..expressions.nodes import AttrRef, Call, FieldOf, Literal, attributes_used

#: scalar operators that return a value for every argument of the right types
TOTAL_OPERATORS = frozenset({
    "eq", "ne", "lt", "gt", "le", "ge", "and", "or", "not", "xor",
    "length", "lowercase", "uppercase", "trim", "concat", "contains_string", "matches_substring",
    "before", "after", "meets", "met_by", "allen_overlaps", "overlapped_by", "starts",
    "started_by", "during", "allen_contains", "finishes", "finished_by", "iequals", "overlaps",
    "adjacent", "merges", "includes", "included_in", "the_begin", "the_from", "startpointof",
})


def is_total(expr) -> bool:
    """Whether evaluating ``expr`` can never raise, whatever the tuple."""
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, (AttrRef, Literal)):
            continue
        if isinstance(e, FieldOf):
            stack.append(e.source)
            continue
        if isinstance(e, Call) and e.op in TOTAL_OPERATORS:
            stack.extend(e.args)
            continue
        return False  # relational operands, aggregates, arithmetic...
    return True


def conjuncts(expr) -> list:
    """The operands of nested ``and`` calls, in evaluation order: ``and(a, and(b, c))`` ->
    ``[a, b, c]``."""
    if isinstance(expr, Call) and expr.op == "and":
        out = []
        for a in expr.args:
            out.extend(conjuncts(a))
        return out
    return [expr]


def conjoin(parts):
    """The conjunction of expressions (one of them alone when there is one)."""
    parts = list(parts)
    if len(parts) == 1:
        return parts[0]
    return Call("and", tuple(parts))


def renamed(expr, mapping: dict):
    """``expr`` with attribute references renamed by ``mapping`` (old -> new)."""
    if isinstance(expr, AttrRef):
        return AttrRef(mapping.get(expr.name, expr.name))
    if isinstance(expr, Call):
        return Call(expr.op, tuple(renamed(a, mapping) for a in expr.args))
    if isinstance(expr, FieldOf):
        return FieldOf(renamed(expr.source, mapping), expr.name)
    return expr


def reads_intervals(expr, heading) -> bool:
    """Whether ``expr`` reads an interval-typed attribute of ``heading``."""
    return bool(attributes_used(expr) & set(interval_names(heading)))


def reads_only(expr, heading) -> bool:
    """Whether every attribute ``expr`` reads is in ``heading`` (and it reads no relation)."""
    return attributes_used(expr) <= set(heading.names) and is_plain(expr)


def is_plain(expr) -> bool:
    """Whether ``expr`` is made of attribute references, literals, calls and fields only (no
    relational operand, no aggregate over a relation-valued expression)."""
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, (AttrRef, Literal)):
            continue
        if isinstance(e, FieldOf):
            stack.append(e.source)
        elif isinstance(e, Call):
            stack.extend(e.args)
        else:
            return False
    return True


def packed_on(node):
    """The list a node's result is guaranteed to be packed on (in that order), or None when
    nothing is known. A relation without interval attributes is packed on ``()``.

    Operators that pack give their ``pack_list``; RESTRICT and EXTEND keep their input's pack
    state (a restriction removes whole tuples; a new attribute computed from a tuple can only
    tell tuples further apart), and RENAME keeps it under the new names.
    """
    if not interval_names(node.heading):
        return ()
    if node.packs:
        return tuple(node.pack_list)
    if isinstance(node, (Restrict, Extend)):
        return packed_on(node.source)
    if isinstance(node, Rename):
        inner = packed_on(node.source)
        if inner is None:
            return None
        mapping = dict(node.pairs)
        return tuple(mapping.get(n, n) for n in inner)
    return None
