"""The base of algebra nodes, and the builder methods every node offers.

A node is a frozen attrs class; its result heading is computed (and the node type-checked) when
it is built, before anything runs. ``repr(node)`` is the text syntax; ``explain(node)`` an
indented tree.

    >>> from sira import INT, STRING, relvar, attr
    >>> r = relvar("dbmsfile", {"filename": STRING, "pagesize": INT})
    >>> q = r.restrict(attr("pagesize") > 16384).project("filename")
    >>> q
    project(restrict(dbmsfile,gt(pagesize,16384)),(filename))
    >>> q.heading
    Heading({filename: STRING})
"""

from __future__ import annotations

import attrs


def _names(names) -> tuple:
    if len(names) == 1 and not isinstance(names[0], str):
        names = tuple(names[0])
    return tuple(names)


class Node:
    """Base of every relational operator node."""

    operator_name = "?"
    packs = True  # False: the node keeps its input's pack state (RESTRICT, EXTEND, RENAME...)

    @property
    def pack_list(self) -> tuple:
        """The attributes the result is packed on, in order (() for none)."""
        if not self.packs:
            return ()
        from .packing import interval_names
        return interval_names(self.heading)

    def __attrs_post_init__(self):
        object.__setattr__(self, "heading", self.compute_heading())
        # hashed now, from the children's stored hashes: deep trees never hash recursively
        object.__setattr__(self, "_hash", hash((type(self).__name__,) + attrs.astuple(
            self, recurse=False)))

    def __hash__(self):
        return self._hash

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_hash", None)  # string hashes differ between processes: recomputed on load
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        object.__setattr__(self, "_hash", hash((type(self).__name__,) + attrs.astuple(
            self, recurse=False)))

    def compute_heading(self):
        raise TypeError(f"{type(self).__name__} must define compute_heading")

    @property
    def children(self) -> tuple:
        return ()

    def __repr__(self):
        from ..errors import deep_recursion
        from ..syntax.printer import print_node
        with deep_recursion():
            return print_node(self)

    # ------------------------------------------------------------------ builder methods
    def restrict(self, condition):
        """``restrict(self, condition)``; condition an expression tree."""
        from .basic import Restrict
        from ..expressions.nodes import as_expr
        return Restrict(self, as_expr(condition))

    def project(self, *names):
        """``project(self, (names...))``; ``project()`` projects onto no attributes."""
        from .basic import Project
        return Project(self, _names(names))

    def project_away(self, *names):
        """PROJECT onto every attribute except ``names`` (Tutorial D's ALL BUT)."""
        from .basic import Project
        drop = {n.lower() for n in _names(names)}
        self.heading.require(drop, "PROJECT")
        return Project(self, tuple(n for n in self.heading.names if n not in drop))

    def extend(self, **formulas):
        """``extend(self, (name(formula) ...))``: ``r.extend(namelength=call("length", attr("filename")))``."""
        from .basic import Extend
        from ..expressions.nodes import as_expr
        return Extend(self, tuple((k, as_expr(v)) for k, v in formulas.items()))

    def rename(self, mapping=None, **pairs):
        """Parallel RENAME: ``r.rename(filename="pagesize", pagesize="filename")``."""
        from .basic import Rename
        items = dict(mapping or {}, **pairs)
        return Rename(self, tuple(items.items()))

    def transform(self, *keep, **formulas):
        """TRANSFORM: keep the named attributes, add computed ones, drop the rest."""
        from .basic import Transform
        from ..expressions.nodes import as_expr
        specs = tuple((k, None) for k in keep) + tuple((k, as_expr(v))
                                                       for k, v in formulas.items())
        return Transform(self, specs)

    def union(self, *others):
        from .setops import Union
        return Union((self,) + _operands(others, "UNION"))

    def intersect(self, *others):
        from .setops import Intersect
        return Intersect((self,) + _operands(others, "INTERSECT"))

    def minus(self, other):
        from .setops import Minus
        return Minus(self, _operand(other, "MINUS"))

    def xminus(self, *others):
        from .setops import XMinus
        return XMinus((self,) + _operands(others, "XMINUS"))

    def join(self, *others):
        from .joins import Join
        return Join((self,) + _operands(others, "JOIN"))

    def semijoin(self, other):
        from .joins import SemiJoin
        return SemiJoin(self, _operand(other, "SEMIJOIN"))

    def semiminus(self, other):
        from .joins import SemiMinus
        return SemiMinus(self, _operand(other, "SEMIMINUS"))

    def leftjoin(self, other, **defaults):
        from .joins import LeftJoin
        from ..expressions.nodes import as_expr
        return LeftJoin(self, _operand(other, "LEFTJOIN"),
                        tuple((k, as_expr(v)) for k, v in defaults.items()))

    def divideby(self, intersection, target):
        from .joins import DivideBy
        return DivideBy(self, _operand(intersection, "DIVIDEBY"),
                        _operand(target, "DIVIDEBY"))

    def tclose(self, *pairs):
        """``tclose(self, (a, b))``: pairs of attribute names, an edge going from a to b."""
        from .closure import TClose
        return TClose(self, _pairs(pairs))

    def gtclose(self, pairs, **formulas):
        from .closure import GTClose
        from ..expressions.nodes import as_expr
        return GTClose(self, _pairs((pairs,)),
                       tuple((k, as_expr(v)) for k, v in formulas.items()))

    def group(self, **specs):
        """GROUP: ``r.group(attributenames=("attributename",))``."""
        from .nesting import Group
        return Group(self, tuple((k, tuple([v] if isinstance(v, str) else v))
                                 for k, v in specs.items()))

    def ungroup(self, *names):
        from .nesting import Ungroup
        return Ungroup(self, _names(names))

    def aggregate(self, **specs):
        """AGGREGATE: ``r.aggregate(total=("plus", attr("pagesize")))`` (or ``("plus",
        "pagesize")``: a bare string names an attribute)."""
        from .aggregation import Aggregate
        return Aggregate(self, _agg_specs(specs, self.heading))

    def pack(self, *names):
        """PACK on an ordered list of interval attributes."""
        from .packing import Pack
        return Pack(self, _names(names))

    def unpack(self, *names):
        """UNPACK on interval attributes (one tuple per combination of points)."""
        from .packing import Unpack
        return Unpack(self, _names(names))

    def summarizeby(self, by, **specs):
        """SUMMARIZEBY: ``r.summarizeby(("filename",), cnt=("plus", 1))``."""
        from .aggregation import SummarizeBy
        by = (by,) if isinstance(by, str) else tuple(by)
        return SummarizeBy(self, by, _agg_specs(specs, self.heading))


def _operand(value, operator: str) -> "Node":
    """A relational operand of a builder method: a tree, or a Relation (as its literal)."""
    if isinstance(value, Node):
        return value
    from ..values import Relation
    if isinstance(value, Relation):
        from .basic import RelationLiteral
        return RelationLiteral(value)
    from ..errors import SiraTypeError
    shown = repr(value)
    shown = f" {shown}" if len(shown) <= 40 and "\n" not in shown else ""
    raise SiraTypeError(f"{operator}: an operand is a {type(value).__name__}{shown}, not a "
                        f"relational expression (a tree, or a Relation; sira.relvar(name, "
                        f"heading) names a relvar)", operator=operator,
                        expected="a relational expression", got=type(value).__name__)


def _operands(values, operator: str) -> tuple:
    return tuple(_operand(v, operator) for v in values)


def _pairs(pairs) -> tuple:
    flat = []
    for p in pairs:
        if isinstance(p, str):
            flat.append(p)
        else:
            flat.extend(_pairs(p))
    return tuple(flat)


def _agg_specs(specs, heading) -> tuple:
    """``name=(operator, operand)`` specs as (name, operator, expression). A bare string operand
    names an attribute of ``heading`` (``total=("plus", "salary")`` is ``attr("salary")``, as a
    pandas user writes it); a string constant is ``lit("...")``.

    Raises:
        UnknownAttribute: a bare string that names no attribute (saying how to write a string
            constant).
    """
    from ..errors import SiraTypeError, UnknownAttribute
    from ..expressions.nodes import as_expr, attr
    out = []
    for name, spec in specs.items():
        if not isinstance(spec, (tuple, list)) or len(spec) != 2 or not isinstance(spec[0], str):
            raise SiraTypeError(f"aggregation '{name}': {spec!r} is not an (operator, "
                                f"expression) pair such as ('plus', 'salary')",
                                expected="(operator, expression)", got=repr(spec))
        op, expr = spec
        if isinstance(expr, str):
            if expr.lower() not in heading:
                raise UnknownAttribute(
                    f"{op.upper()}: {expr!r} names no attribute (the heading has "
                    f"{', '.join(heading.names) or 'none'}); a string constant is "
                    f"lit({expr!r})", attribute=expr, operator=op.upper(),
                    available=tuple(heading.names))
            expr = attr(expr)
        out.append((name, op, as_expr(expr)))
    return tuple(out)


def node_class(cls):
    """Decorator: a frozen attrs node with a cached hash and a computed ``heading``."""
    return attrs.frozen(unsafe_hash=False, repr=False, slots=False)(cls)
