"""Where a duplicate can change a result: the one rule every engine uses to decide which relvars
from outside sira (DataFrames, Arrow tables, files, tables) must be made distinct.

Under set semantics most operators give the same set whether their operands hold duplicate
rows or not: a duplicate row of an operand only makes duplicate rows of the result. Such an
operator is *transparent*: RESTRICT, PROJECT, EXTEND, TRANSFORM, RENAME, JOIN, SEMIJOIN,
SEMIMINUS, LEFTJOIN, DIVIDEBY, UNION, INTERSECT, MINUS, XMINUS, PACK, UNPACK, TCLOSE, RSTREAM,
the window tables (TUMBLE, HOP, CUMULATE, SESSION) and the CQL windows that give each element
its own period (``now``, ``range``, ``range ... slide``, ``unbounded``, ``range C on E``).
Every other operator counts or sequences tuples -- SUMMARIZEBY and AGGREGATE (unless every
aggregation is idempotent: max, min, and, or, union, intersect), ``rows`` windows, SPL windows,
WINDOWBY, GROUP, ISTREAM/DSTREAM/CHANGES (they count per value), GTCLOSE -- and so does a
relational operand inside an expression (``cardinality(R)``); an operator this module does not
know is treated as counting.

A relvar must be made distinct where it is read when some path from the root to it passes a
counting operator before reaching it through transparent ones only; elsewhere its duplicates
reach the result as duplicate rows, which the one DISTINCT of the final result removes (an
engine that skips a relvar's DISTINCT must make its final result distinct).

    >>> from sira import parse, INT
    >>> h = {"r": {"k": INT, "v": INT}, "s": {"k": INT, "w": INT}}
    >>> sorted(relvars_needing_distinct(parse("project(join(r, s), (k))", h)))
    []
    >>> sorted(relvars_needing_distinct(parse("summarizeby(join(r, s), (k), (n(plus(1))))", h)))
    ['r', 's']
    >>> sorted(relvars_needing_distinct(parse("summarizeby(r, (k), (m(max(v))))", h)))
    []
    >>> sorted(relvars_needing_distinct(parse("restrict(r, gt(count(s), 1))", h)))
    ['s']
"""

from __future__ import annotations

from .aggregation import Aggregate, SummarizeBy, aggregations
from .basic import Extend, Project, RelationLiteral, RelvarRef, Rename, Restrict, Transform
from .closure import TClose
from .joins import DivideBy, Join, LeftJoin, SemiJoin, SemiMinus
from .packing import Pack, Unpack
from .setops import Intersect, Minus, Union, XMinus
from .windows import RStream, Window, WindowTable

#: operators whose result, as a set, does not depend on duplicate rows of their operands
TRANSPARENT = (Restrict, Project, Extend, Transform, Rename, Join, SemiJoin, SemiMinus, LeftJoin,
               DivideBy, Union, Intersect, Minus, XMinus, Pack, Unpack, TClose, RStream,
               WindowTable, RelationLiteral)

#: aggregations that give the same value however often a value occurs
IDEMPOTENT = frozenset({"max", "min", "and", "or", "union", "intersect"})


def transparent(node) -> bool:
    """Whether ``node``'s result, as a set, is the same when its operands hold duplicates."""
    if isinstance(node, Window):
        return node.spec.kind != "rows"
    if isinstance(node, (SummarizeBy, Aggregate)):
        aggs = aggregations(node.specs, node.source.heading, node.operator_name)
        return all(a.name in IDEMPOTENT for a in aggs)
    return isinstance(node, TRANSPARENT)


def relvars_needing_distinct(root) -> frozenset:
    """The (lower-case) names of the relvars of ``root`` whose duplicate rows could change its
    result: each must be made distinct where it is read."""
    out = set()
    seen = set()
    stack = [(root, False)]
    while stack:
        node, counted = stack.pop()
        if (id(node), counted) in seen:
            continue
        seen.add((id(node), counted))
        if isinstance(node, RelvarRef):
            if counted:
                out.add(node.name.lower())
            continue
        inner = counted or not transparent(node)
        stack.extend((child, inner) for child in node.children)
        for operand in _relational_operands(node):
            stack.append((operand, True))  # cardinality(R), eq(R1, R2): counted
    return frozenset(out)


def _relational_operands(node):
    """The relational operands inside a node's expressions (``RelationArg``)."""
    from ..expressions.nodes import Call, FieldOf, RelationArg
    from ..expressions.nodes import Expr
    # attrs fields, never vars(): a slotted class (Aggregated, ``count(R)``) has an empty
    # __dict__, and an operand missed here is a relvar whose duplicates are counted
    stack = [getattr(node, a.name) for a in node.__attrs_attrs__]
    while stack:
        value = stack.pop()
        if isinstance(value, RelationArg):
            yield value.node
        elif isinstance(value, Call):
            stack.extend(value.args)
        elif isinstance(value, FieldOf):
            stack.append(value.source)
        elif isinstance(value, Expr):
            stack.extend(getattr(value, a.name) for a in value.__attrs_attrs__)
        elif isinstance(value, tuple):
            stack.extend(value)
        elif hasattr(value, "__attrs_attrs__") and not hasattr(value, "heading"):
            stack.extend(getattr(value, a.name) for a in value.__attrs_attrs__)


__all__ = ["IDEMPOTENT", "TRANSPARENT", "relvars_needing_distinct", "transparent"]
