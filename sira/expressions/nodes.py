"""Scalar expression trees: attribute references, literals and operator calls.

Conditions (RESTRICT), formulas (EXTEND, TRANSFORM, GTCLOSE) and aggregation specs are these
trees, never Python lambdas, so every engine can translate them. Python operators build calls::

    >>> e = (attr("pagesize") + 1 > 256) & ~attr("flag")
    >>> e
    and(gt(plus(pagesize,1),256),not(flag))
    >>> attr("a").eq("x")
    eq(a,string(x))

``==`` is kept for comparing trees (so ``eq``/``ne`` are methods). Python's own ``and``,
``or``, ``not`` and chained comparisons (``1 < a < 5``) cannot build trees, so an expression has
no truth value (``bool(e)`` raises), and a Python boolean is never taken as a constant where an
expression is expected (``a == 1`` is one: the trees differ); ``lit(True)`` is the constant::

    >>> (attr("a") > 1) and (attr("b") < 2)
    Traceback (most recent call last):
    ...
    sira.errors.SiraTypeError: an expression has no Python truth value: write & | ~ instead of and, or, not, and (1 < a) & (a < 5) for 1 < a < 5
"""

from __future__ import annotations

import attrs

from ..types import type_of_python
from ..values import normalize_name


class Expr:
    """Base of expression nodes; Python operators build :class:`Call` nodes."""

    def _call(self, op, *others):
        return Call(op, (self,) + tuple(as_expr(o) for o in others))

    def __add__(self, other):
        return self._call("plus", other)

    def __radd__(self, other):
        return as_expr(other)._call("plus", self)

    def __sub__(self, other):
        return self._call("minus", other)

    def __rsub__(self, other):
        return as_expr(other)._call("minus", self)

    def __mul__(self, other):
        return self._call("mult", other)

    def __rmul__(self, other):
        return as_expr(other)._call("mult", self)

    def __truediv__(self, other):
        return self._call("div", other)

    def __neg__(self):
        return self._call("neg")

    def __gt__(self, other):
        return self._call("gt", other)

    def __ge__(self, other):
        return self._call("ge", other)

    def __lt__(self, other):
        return self._call("lt", other)

    def __le__(self, other):
        return self._call("le", other)

    def __and__(self, other):
        return self._call("and", other)

    def __or__(self, other):
        return self._call("or", other)

    def __invert__(self):
        return self._call("not")

    def eq(self, other):
        return self._call("eq", other)

    def ne(self, other):
        return self._call("ne", other)

    def concat(self, other):
        return self._call("concat", other)

    def __bool__(self):
        from ..errors import SiraTypeError
        raise SiraTypeError("an expression has no Python truth value: write & | ~ instead of "
                            "and, or, not, and (1 < a) & (a < 5) for 1 < a < 5",
                            expected="&, | or ~", got="and, or, not or a chained comparison")

    def __repr__(self):
        from ..errors import deep_recursion
        from ..syntax.printer import print_expression
        with deep_recursion():
            return print_expression(self)


@attrs.frozen(cache_hash=True, repr=False)
class AttrRef(Expr):
    """A reference to an attribute of the tuple at hand (names are case-insensitive)."""

    name: str = attrs.field(converter=normalize_name)


@attrs.frozen(cache_hash=True, repr=False)
class Literal(Expr):
    """A constant with its type."""

    value: object
    type: object


@attrs.frozen(unsafe_hash=False, repr=False, slots=False)
class Call(Expr):
    """An invocation of a library operator (``gt``, ``plus``, ``concat``...) on argument trees."""

    op: str = attrs.field(converter=str.lower)
    args: tuple = attrs.field(converter=tuple, default=())

    def __attrs_post_init__(self):
        # hashed bottom-up from the arguments' stored hashes: deep trees never recurse here
        object.__setattr__(self, "_hash", hash(("call", self.op, self.args)))

    def __hash__(self):
        return self._hash

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_hash", None)  # string hashes differ between processes: recomputed on load
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        object.__setattr__(self, "_hash", hash(("call", self.op, self.args)))


@attrs.frozen(cache_hash=True, repr=False)
class FieldOf(Expr):
    """A field of a tuple-valued expression: ``s.val`` (``s`` a tuple-valued attribute)."""

    source: Expr
    name: str = attrs.field(converter=normalize_name)


@attrs.frozen(cache_hash=True, repr=False)
class Aggregated(Expr):
    """An aggregate over one attribute of a relation-valued expression: ``sum(w, val)``,
    ``avg(w, val)``, ``min(w, val)``, ``max(w, val)``, ``count(w)`` (Tutorial D's SUM(w, val))."""

    op: str = attrs.field(converter=str.lower)
    source: Expr
    name: str | None = attrs.field(default=None, converter=lambda n: n and normalize_name(n))


@attrs.frozen(cache_hash=True, repr=False)
class RelationArg(Expr):
    """A relational expression used as an operand (``cardinality(Y)``, ``eq(R1, R2)``)."""

    node: object


def attr(name: str) -> AttrRef:
    """An attribute reference: ``attr("pagesize") > 256``."""
    return AttrRef(name)


def lit(value, type=None) -> Literal:
    """A literal; the type is taken from the value when not given (ints: INT when they fit)."""
    t = type if type is not None else type_of_python(value)
    return Literal(t.check(value), t)


def call(op: str, *args) -> Call:
    """An operator call: ``call("length", attr("filename"))``."""
    return Call(op, tuple(as_expr(a) for a in args))


def as_expr(value) -> Expr:
    """Expressions stay as they are; algebra nodes become RelationArg; Python values literals,
    except a Python boolean (``attr("a") == 1`` is False: it compares trees), which is refused;
    ``lit(True)`` is the constant."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool):
        from ..errors import SiraTypeError
        raise SiraTypeError(f"the Python value {value} where an expression is expected: == and "
                            f"!= compare expression trees (write attr('a').eq(1) or "
                            f".ne(1)); a constant is lit({value})",
                            expected="an expression", got=f"the Python value {value}")
    from ..algebra.node import Node
    if isinstance(value, Node):
        return RelationArg(value)
    from ..values import Relation
    if isinstance(value, Relation):
        from ..algebra.basic import RelationLiteral
        return RelationArg(RelationLiteral(value))
    return lit(value)


def attributes_used(expr: Expr) -> set:
    """The attribute names an expression reads."""
    out = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, AttrRef):
            out.add(e.name)
        elif isinstance(e, Call):
            stack.extend(e.args)
        elif isinstance(e, (FieldOf, Aggregated)):
            stack.append(e.source)
    return out
