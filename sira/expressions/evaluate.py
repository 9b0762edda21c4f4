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

from ..errors import SiraTypeError, SiraValueError
from ..types import article, FLOAT, INT, Average, IntegerType, RelationType, TupleType
from .library import aggregation, fold, resolve
from .nodes import Aggregated, AttrRef, Call, FieldOf, Literal, RelationArg

RVA_AGGREGATES = ("count", "sum", "avg", "min", "max")


def aggregated_type(expr, heading, operator=None):
    """(relation heading, attribute type or None, result type) of an Aggregated node."""
    t = infer_type(expr.source, heading, operator)
    if not isinstance(t, RelationType):
        raise SiraTypeError(f"{expr.op}: expected a relation-valued operand (got {t})",
                            operator=expr.op, expected="a relation", got=str(t))
    if expr.op not in RVA_AGGREGATES:
        raise SiraTypeError(f"{expr.op} is not an aggregate of a relation-valued operand",
                            operator=expr.op, expected=", ".join(RVA_AGGREGATES), got=expr.op)
    if expr.op == "count":
        return t.heading, None, INT
    if expr.name is None:
        raise SiraTypeError(f"{expr.op}(r, attribute) needs the attribute to aggregate",
                            operator=expr.op, expected="an attribute", got="none")
    at = t.heading.type_of(expr.name, expr.op)
    if expr.op == "avg":
        if not (isinstance(at, IntegerType) or at == FLOAT):
            raise SiraTypeError(f"avg needs a numeric attribute ('{expr.name}' is {at})",
                                operator="avg", expected="a number", got=str(at))
        return t.heading, at, FLOAT
    agg = aggregation({"sum": "plus"}.get(expr.op, expr.op), at)
    return t.heading, at, agg.result_type

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
    if isinstance(expr, FieldOf):
        t = infer_type(expr.source, heading, operator)
        if not isinstance(t, TupleType):
            raise SiraTypeError(f"'{expr.name}' is a field of a tuple, but the operand is {t}",
                                operator=operator, expected="a tuple", got=str(t))
        return t.heading.type_of(expr.name, operator)
    if isinstance(expr, Aggregated):
        return aggregated_type(expr, heading, operator)[2]
    if isinstance(expr, Call):
        arg_types = tuple(infer_type(a, heading, operator) for a in expr.args)
        return resolve(expr.op, arg_types)[0]
    raise SiraTypeError(f"{expr!r} is not an expression", operator=operator,
                        expected="an expression", got=type(expr).__name__)


def require_type(expr, heading, expected, operator, what):
    """Check ``expr`` has type ``expected`` (e.g. a RESTRICT condition must be BOOLEAN)."""
    t = infer_type(expr, heading, operator)
    if t != expected:
        raise SiraTypeError(f"{operator}: {what} must be {expected} (got {expr!r}, {article(str(t))})",
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
    if isinstance(expr, FieldOf):
        t = infer_type(expr.source, heading)
        i = t.heading.index(expr.name)
        f = compile_row(expr.source, heading, relation_of)
        return lambda row: f(row).values[i]
    if isinstance(expr, Aggregated):
        return _compile_aggregated(expr, heading, relation_of)
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


def rows_aggregate(expr, rel_heading, at):
    """A function from an iterable of body tuples of ``rel_heading`` to the aggregate
    ``expr.op`` of attribute ``expr.name`` (avg folds the sorted values as AVERAGE does)."""
    if expr.op == "count":
        return lambda rows: len(rows)
    i = rel_heading.index(expr.name)
    if expr.op == "avg":
        from .library import average_plus, float_conversion
        to_float = float_conversion("avg")

        def avg(rows):
            values = sorted(to_float(r[i]) for r in rows)
            if not values:
                raise SiraValueError(f"avg({expr.name}) of an empty relation has no value",
                                     operator="avg", value=None)
            acc = Average(0, 0.0)
            for v in values:
                acc = average_plus(acc, Average(1, v), "avg")
            return acc.value
        return avg
    agg = aggregation({"sum": "plus"}.get(expr.op, expr.op), at)
    return lambda rows: fold(agg, [r[i] for r in rows])


def _compile_aggregated(expr, heading, relation_of):
    rel_heading, at, _ = aggregated_type(expr, heading)
    f = compile_row(expr.source, heading, relation_of)
    over = rows_aggregate(expr, rel_heading, at)
    return lambda row: over(f(row).body)
