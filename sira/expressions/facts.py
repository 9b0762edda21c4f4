"""Facts about scalar expressions: which cannot fail on any tuple, how conjunctions split and
join, how attribute references are renamed. The rewrite pass (``sira.rewrite``) and the rule for
formulas that may fail (``sira.algebra.fallible``) both use them, so they live here, below both.

An expression is *total* when it cannot raise on any tuple of the right types (comparisons,
boolean connectives, attribute references, literals, string predicates, the interval
comparisons that hold of the empty interval too).

    >>> from sira import attr, call
    >>> is_total(attr("a") > 3)
    True
    >>> is_total(call("div", 10, attr("a")) > 1)
    False
    >>> conjuncts((attr("a") > 1) & (attr("b") > 2))
    [gt(a,1), gt(b,2)]
"""

from __future__ import annotations

from .nodes import AttrRef, Call, FieldOf, Literal

#: scalar operators that return a value for every argument of the right types
TOTAL_OPERATORS = frozenset({
    "eq", "ne", "lt", "gt", "le", "ge", "and", "or", "not", "xor",
    "length", "lowercase", "uppercase", "trim", "concat", "contains_string", "matches_substring",
    "iequals", "overlaps", "merges", "includes", "included_in",
})  # not the_begin nor Allen's relations: they raise on the empty interval (it has no ends)


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
