"""Typing and Python evaluation of expression trees.

``infer_type`` checks a tree against a heading when an algebra node is built; ``compile_row``
turns it into a Python function of a body tuple for the Python engine.

    >>> from sira.types import INT
    >>> from sira.values import Heading
    >>> from sira.expressions.nodes import attr
    >>> h = Heading.of({"a": INT})
    >>> infer_type(attr("a") + 1 > 2, h)
    BOOLEAN
    >>> compile_row(attr("a") * 10, h, None)((4,))
    40
"""

from __future__ import annotations

from operator import itemgetter

from ..errors import SiraTypeError
from ..types import RelationType
from .library import resolve
from .nodes import AttrRef, Call, Literal, RelationArg

_SHORT_CIRCUIT = {"and", "or"}


def infer_type(expr, heading, operator=None):
    """The type of ``expr`` evaluated on tuples of ``heading``.

    Raises:
        UnknownAttribute: the expression names an attribute the heading lacks.
        SiraTypeError / UnknownOperator: an operator does not take its arguments' types.
    """
    if isinstance(expr, AttrRef):
        return heading.type_of(expr.name, operator)
    if isinstance(expr, Literal):
        return expr.type
    if isinstance(expr, RelationArg):
        return RelationType(expr.node.heading)
    if isinstance(expr, Call):
        arg_types = tuple(infer_type(a, heading, operator) for a in expr.args)
        return resolve(expr.op, arg_types)[0]
    raise SiraTypeError(f"{expr!r} is not an expression", operator=operator,
                        expected="an expression", got=type(expr).__name__)


def require_type(expr, heading, expected, operator, what):
    """Check ``expr`` has type ``expected`` (e.g. a RESTRICT condition must be BOOLEAN)."""
    t = infer_type(expr, heading, operator)
    if t != expected:
        raise SiraTypeError(f"{operator}: {what} must be {expected} (got {expr!r}, a {t})",
                            operator=operator, expected=str(expected), got=str(t))
    return t


def compile_row(expr, heading, relation_of):
    """A Python function computing ``expr`` from a body tuple of ``heading``.

    ``relation_of(node)`` evaluates a relational operand (once: operands are uncorrelated).
    """
    if isinstance(expr, AttrRef):
        return itemgetter(heading.index(expr.name))
    if isinstance(expr, Literal):
        value = expr.value
        return lambda row: value
    if isinstance(expr, RelationArg):
        cache = []

        def relation(row):
            if not cache:
                cache.append(relation_of(expr.node))
            return cache[0]
        return relation
    arg_types = tuple(infer_type(a, heading) for a in expr.args)
    _, impl = resolve(expr.op, arg_types)
    fns = [compile_row(a, heading, relation_of) for a in expr.args]
    if expr.op in _SHORT_CIRCUIT:
        if expr.op == "and":
            return lambda row: all(f(row) for f in fns)
        return lambda row: any(f(row) for f in fns)
    if not fns:
        once = []

        def nullary(row):
            if not once:
                once.append(impl())
            return once[0]
        return nullary
    if len(fns) == 1:
        (f,) = fns
        return lambda row: impl(f(row))
    if len(fns) == 2:
        f, g = fns
        return lambda row: impl(f(row), g(row))
    return lambda row: impl(*[f(row) for f in fns])
