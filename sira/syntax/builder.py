"""From the concrete syntax tree to algebra and expression trees.

The builder gives SIRA_PRISE's notation its meaning: which calls are relational operators, how
their spec lists read, how literals are typed. Names resolve in this order: in a scalar
position an attribute of the heading at hand, then a relvar (``cardinality(Y)``), then a
nullary operator (``currentdate``); in a relational position a relvar, ``TABLE_DEE`` or
``TABLE_DUM``.

    >>> from sira.types import INT
    >>> from sira.values import Heading
    >>> build_text("restrict(R, gt(a, 1))", {"r": Heading.of({"a": INT})})
    restrict(r,gt(a,1))
"""

from __future__ import annotations

from ..algebra.aggregation import Aggregate, SummarizeBy
from ..algebra.basic import Extend, Project, RelationLiteral, RelvarRef, Rename, Restrict, Transform
from ..algebra.closure import GTClose, TClose, closure_scope
from ..algebra.joins import DivideBy, Join, LeftJoin, SemiJoin, SemiMinus
from ..algebra.nesting import Group as GroupNode, Ungroup
from ..algebra.node import Node
from ..algebra.packing import Pack, Unpack
from ..algebra.windows import (Changes, DStream, Duration, IStream, RStream, Window, WindowSpec,
                               WindowTable, unit_name)
from ..algebra.setops import Intersect, Minus, Union, XMinus
from ..algebra.windowby import IS_MISSING, Boundary, WindowBy, variable_type
from ..errors import (ParseError, SiraError, SiraTypeError, SiraValueError, UnknownOperator,
                      UnknownRelvar, closest_names, deep_recursion, did_you_mean)
from ..expressions.evaluate import compile_row, infer_type
from ..expressions.library import LIBRARY
from ..expressions.evaluate import RVA_AGGREGATES
from ..expressions.nodes import Aggregated, AttrRef, Call as CallExpr, FieldOf, Literal, RelationArg
from ..intervals import INTERVAL_TYPES, successor
from ..types import (BOOLEAN, DATE, FLOAT, STRING, TIMESTAMP, Average, IntegerType,
                     RelationType, TupleType, date_from_text, int_from_text,
                     timestamp_from_text, type_named, type_of_python)
from ..values import TABLE_DEE, TABLE_DUM, Heading, Relation, Tuple, check_row
from . import cst
from .parser import parse_expression

EMPTY = Heading()

_BINARY = {"+": "plus", "-": "minus", "*": "mult", "/": "div", "||": "concat", "=": "eq",
           "<>": "ne", "<": "lt", ">": "gt", "<=": "le", ">=": "ge", "and": "and", "or": "or"}

_NAMED_RELATIONS = {"table_dee": TABLE_DEE, "table_dum": TABLE_DUM}


def _where(node) -> str:
    line = getattr(node, "line", 0)
    return f" (line {line}, col {node.col})" if line else ""


def _error(node, message, expected="?"):
    return ParseError(message, line=getattr(node, "line", 0) or None,
                      col=getattr(node, "col", 0) or None, expected=expected)


def _lname(node) -> str:
    if isinstance(node, cst.Name):
        return node.text.lower()
    raise _error(node, f"expected a name, found {_show(node)}", "a name")


def _show(node) -> str:
    if isinstance(node, cst.Name):
        return f"'{node.text}'"
    if isinstance(node, cst.Call):
        return f"'{node.name}(...)'"
    if isinstance(node, cst.Number):
        return node.text
    return type(node).__name__.lower()


def _items(node) -> tuple:
    """The items of a parenthesised list; a lone item stands for a one-item list."""
    if isinstance(node, cst.Group):
        return node.items
    return (node,)


class Builder:
    """Builds trees from CST nodes against a catalog of relvar headings."""

    def __init__(self, catalog: dict | None = None, values: dict | None = None):
        self.catalog = {k.lower(): v.heading if isinstance(v, Relation) else Heading.of(v)
                        for k, v in (catalog or {}).items()}
        self.values = values or {}

    # ------------------------------------------------------------------ entry points
    def build(self, node):
        """A relational node when ``node`` is relational, else a scalar expression.

        At the top of an expression there is no heading, so a bare name that is not a relvar,
        ``TABLE_DEE``, ``TABLE_DUM``, ``true``/``false`` or a nullary operator is a misspelled
        relvar (:class:`UnknownRelvar`), never an unknown attribute.
        """
        if self.is_relational(node):
            return self.relation(node)
        if isinstance(node, cst.Name) and "." not in node.text and not self.is_scalar_name(
                node.text.lower(), EMPTY):
            raise self.unknown_relvar(node)
        return self.scalar(node, EMPTY)

    def is_scalar_name(self, name: str, heading) -> bool:
        """Whether a bare name means something in a scalar position."""
        op = LIBRARY.get(name)
        return (name in heading or name in ("true", "false") or name in self.catalog
                or name in _NAMED_RELATIONS or (op is not None and op.min_args == 0))

    def unknown_relvar(self, node) -> UnknownRelvar:
        """The error for a name in relation position that is not a relvar."""
        name = node.text.lower()
        known = tuple(sorted(self.catalog))
        return UnknownRelvar(relvar=name, available=known,
                             suggestions=closest_names(name, known + ("table_dee", "table_dum")))

    def unknown_operator(self, node) -> UnknownOperator:
        """The error for a name in operator position that is not an operator (relational or
        scalar), with the closest known operator names."""
        name = node.name.lower()
        suggestions = closest_names(name, known_operator_names())
        return UnknownOperator(f"unknown operator '{name}'{_where(node)}"
                               f"{did_you_mean(suggestions)}", operator=name,
                               suggestions=suggestions)

    def is_relational(self, node) -> bool:
        if isinstance(node, cst.Raw):
            return node.func in ("stream", "deltas")
        if isinstance(node, cst.Name):
            name = node.text.lower()
            return name in self.catalog or name in _NAMED_RELATIONS
        if isinstance(node, cst.Call):
            name = node.name.lower()
            if name in RELATIONAL and name in LIBRARY:  # minus: relational or arithmetic
                return bool(node.args) and self.is_relational(node.args[0])
            return name in RELATIONAL or name == "relation"
        if isinstance(node, cst.Group) and len(node.items) == 1:
            return self.is_relational(node.items[0])
        return False

    # ------------------------------------------------------------------ relational
    def relation(self, node) -> Node:
        if isinstance(node, cst.Raw) and node.func in ("stream", "deltas"):
            from .notation import parse_deltas, parse_stream
            return RelationLiteral((parse_stream if node.func == "stream" else parse_deltas)(
                node.text))
        if isinstance(node, cst.Name):
            name = node.text.lower()
            if name in _NAMED_RELATIONS:
                return RelationLiteral(_NAMED_RELATIONS[name])
            if name in self.catalog:
                return RelvarRef(name, self.catalog[name])
            raise self.unknown_relvar(node)
        if isinstance(node, cst.Group) and len(node.items) == 1:
            return self.relation(node.items[0])
        if isinstance(node, cst.Call):
            name = node.name.lower()
            if name == "relation":
                return RelationLiteral(self.relation_literal(node))
            if name in RELATIONAL:
                return RELATIONAL[name](self, node, node.args)
        raise _error(node, f"expected a relational expression, found {_show(node)}",
                     "a relational expression")

    def args(self, node, n_min, n_max=None):
        args = node.args
        if len(args) < n_min or (n_max is not None and len(args) > n_max):
            want = n_min if n_max == n_min else f"{n_min} or more" if n_max is None \
                else f"{n_min} to {n_max}"
            raise _error(node, f"{node.name.upper()} takes {want} arguments, got {len(args)}",
                         f"{want} arguments")
        return args

    def names(self, node) -> tuple:
        return tuple(_lname(i) for i in _items(node))

    def named_exprs(self, node, heading, allow_bare=False) -> tuple:
        """``(name(expr) name2(expr))`` specs; with allow_bare a bare name keeps the attribute."""
        out = []
        for item in _items(node):
            if allow_bare and isinstance(item, cst.Name):
                out.append((item.text.lower(), None))
                continue
            if not isinstance(item, cst.Call) or len(item.args) != 1:
                raise _error(item, f"expected name(expression), found {_show(item)}",
                             "name(expression)")
            out.append((item.name.lower(), self.scalar(item.args[0], heading)))
        return tuple(out)

    def agg_specs(self, node, heading) -> tuple:
        """``(name(op(expr)) ...)`` aggregation specs."""
        out = []
        for item in _items(node):
            if (not isinstance(item, cst.Call) or len(item.args) != 1
                    or not isinstance(item.args[0], cst.Call) or len(item.args[0].args) != 1):
                raise _error(item, f"expected name(operator(expression)), found {_show(item)}",
                             "name(operator(expression))")
            op_call = item.args[0]
            out.append((item.name.lower(), op_call.name.lower(),
                        self.scalar(op_call.args[0], heading)))
        return tuple(out)

    # ------------------------------------------------------------------ relation literals
    def relation_literal(self, node) -> Relation:
        heading = None
        body = None
        for part in node.args:
            if isinstance(part, cst.Call) and part.name.lower() == "heading" and heading is None:
                heading = self.heading_literal(part)
            elif isinstance(part, cst.Call) and part.name.lower() == "body" and body is None:
                body = part
            else:
                raise _error(part, f"expected heading(...) or body(...) in a relation literal, "
                             f"found {_show(part)}", "heading(...) or body(...)")
        rows = []
        if body is not None:
            for t in body.args:
                if not isinstance(t, cst.Call) or t.name.lower() != "tuple":
                    raise _error(t, f"expected tuple(...) in a body, found {_show(t)}",
                                 "tuple(...)")
                rows.append((t, self.tuple_values(t)))
        if heading is None:
            if not rows:
                raise _error(node, "an empty relation literal needs a heading(...)",
                             "heading(...)")
            heading = _infer_heading(rows)
        checked = set()
        add = checked.add
        names, types = heading.names, heading.types
        for t, typed in rows:
            row = _exact_row(typed, names, types)
            if row is not None:  # every value already of its attribute's type
                add(row)
                continue
            values = {k: v for k, (v, _) in typed.items()}
            try:
                add(check_row(heading, values, operator="RELATION"))
            except SiraError as err:
                raise type(err)(f"{err.message}{_where(t)}", **err.field_values()) from None
        return Relation(heading, frozenset(checked))

    def heading_literal(self, node) -> Heading:
        pairs = []
        for item in node.args:
            if not isinstance(item, cst.Call) or len(item.args) != 1:
                raise _error(item, f"expected name(type) in a heading, found {_show(item)}",
                             "name(type)")
            pairs.append((item.name.lower(), self.type_literal(item.args[0])))
        return Heading.of(pairs)

    def type_literal(self, node):
        if isinstance(node, cst.Name):
            try:
                return type_named(node.text)
            except SiraTypeError:
                raise _error(node, f"unknown type '{node.text}'", "a type name") from None
        if isinstance(node, cst.Call) and node.name.lower() in ("relation", "tuple") \
                and len(node.args) == 1 and isinstance(node.args[0], cst.Call) \
                and node.args[0].name.lower() == "heading":
            h = self.heading_literal(node.args[0])
            return RelationType(h) if node.name.lower() == "relation" else TupleType(h)
        raise _error(node, f"expected a type, found {_show(node)}", "a type")

    def tuple_values(self, node) -> dict:
        values = {}
        for item in node.args:
            if not isinstance(item, cst.Call) or len(item.args) != 1:
                raise _error(item, f"expected name(value) in a tuple, found {_show(item)}",
                             "name(value)")
            name = item.name.lower()
            if name in values:
                raise _error(item, f"attribute '{name}' appears twice in a tuple",
                             "distinct attribute names")
            arg = item.args[0]
            if type(arg) is cst.Number:  # the common case, without the general machinery
                lit = _number(arg.text)
                values[name] = lit.value, lit.type
            else:
                values[name] = self.constant(arg)
        return values

    def constant(self, node):
        """(value, type) of a literal-valued expression (selectors, nested literals, arithmetic)."""
        expr = self.scalar(node, EMPTY)
        if isinstance(expr, Literal):
            return expr.value, expr.type
        t = infer_type(expr, EMPTY)
        if isinstance(expr, RelationArg) and isinstance(expr.node, RelationLiteral):
            return expr.node.value, t
        from ..engine import Context
        return compile_row(expr, EMPTY, Context(self.values).eval)(()), t

    # ------------------------------------------------------------------ scalars
    def scalar(self, node, heading):
        if isinstance(node, cst.Number):
            return _number(node.text)
        if isinstance(node, cst.DateLit):
            return Literal(_date(node.text, node), DATE)
        if isinstance(node, cst.TimestampLit):
            return Literal(_timestamp(node.text, node), TIMESTAMP)
        if isinstance(node, cst.Raw):
            if node.func == "string":
                return Literal(node.text, STRING)
            if node.func == "date":
                return Literal(_date(node.text.strip(), node), DATE)
            return Literal(_timestamp(node.text.strip(), node), TIMESTAMP)
        if isinstance(node, cst.Name):
            return self.scalar_name(node, heading)
        if isinstance(node, cst.Group):
            if len(node.items) != 1:
                raise _error(node, "expected one expression in parentheses", "an expression")
            return self.scalar(node.items[0], heading)
        if isinstance(node, cst.UnaryOp):
            if node.op == "-" and isinstance(node.operand, cst.Number):
                lit = _number(node.operand.text)
                return Literal(lit.type.check(-lit.value) if lit.type == FLOAT
                               else -lit.value, lit.type if lit.type == FLOAT
                               else type_of_python(-lit.value))
            operand = self.scalar(node.operand, heading)
            if node.op == "+":
                return operand
            return CallExpr("neg" if node.op == "-" else "not", (operand,))
        if isinstance(node, cst.BinOp):
            return CallExpr(_BINARY[node.op], (self.scalar(node.left, heading),
                                                self.scalar(node.right, heading)))
        if isinstance(node, cst.Call):
            return self.scalar_call(node, heading)
        raise _error(node, f"expected an expression, found {_show(node)}", "an expression")

    def scalar_name(self, node, heading):
        name = node.text.lower()
        if "." in name:
            first, *fields = name.split(".")
            expr = self.scalar_name(cst.Name(first, line=node.line, col=node.col), heading)
            for f in fields:
                expr = FieldOf(expr, f)
            infer_type(expr, heading)
            return expr
        if name in heading:
            return AttrRef(name)
        if name in ("true", "false"):
            return Literal(name == "true", BOOLEAN)
        if name in self.catalog or name in _NAMED_RELATIONS:
            return RelationArg(self.relation(node))
        op = LIBRARY.get(name)
        if op is not None and op.min_args == 0:
            return CallExpr(name, ())
        from ..errors import UnknownAttribute
        suggestions = closest_names(name, heading.names + tuple(self.catalog))
        raise UnknownAttribute(f"unknown attribute '{name}'{_where(node)}"
                               f"{did_you_mean(suggestions)} (the heading has "
                               f"{', '.join(heading.names) or 'no attributes'})",
                               attribute=name, operator=None, available=heading.names,
                               suggestions=suggestions)

    def scalar_call(self, node, heading):
        name = node.name.lower()
        if self.is_relational(node):
            return RelationArg(self.relation(node))
        if name == IS_MISSING:
            return self.is_missing(node, heading)
        if name not in known_operator_names():  # before its arguments, which it gives no meaning
            raise self.unknown_operator(node)
        if name == "tuple":
            typed = self.tuple_values(node)
            h = Heading.of({k: t for k, (_, t) in typed.items()})
            values = {k: v for k, (v, _) in typed.items()}
            return Literal(Tuple(h, check_row(h, values)), TupleType(h))
        if name == "average":
            return self.average(node, heading)
        if name in RVA_AGGREGATES and node.args and len(node.args) <= 2:
            first = self.scalar(node.args[0], heading)
            if isinstance(infer_type(first, heading), RelationType):
                attr = _lname(node.args[1]) if len(node.args) == 2 else None
                expr = Aggregated(name, first, attr)
                infer_type(expr, heading)
                return expr
        if name == "equsing":
            if len(node.args) != 3:
                raise _error(node, "EQUSING takes two relations and a list of attributes",
                             "equsing(R1, R2, (attributes))")
            names = self.names(node.args[2])
            return CallExpr("eq", (RelationArg(Pack(self.relation(node.args[0]), names)),
                                   RelationArg(Pack(self.relation(node.args[1]), names))))
        if name in INTERVAL_TYPES:
            return self.interval(node, heading)
        args = tuple(self.scalar(a, heading) for a in node.args)
        if name in ("int", "long", "bigint", "float", "boolean") and len(args) == 1 \
                and isinstance(args[0], Literal):
            return _fold_selector(name, args[0], node)
        if name not in LIBRARY:
            raise self.unknown_operator(node)
        return CallExpr(name, args)

    #: True while a WINDOWBY condition is built, the only place ``is_missing`` may appear
    in_windowby_condition = False

    def is_missing(self, node, heading):
        """``is_missing(e)`` in a WINDOWBY condition (see sira.algebra.windowby)."""
        if not self.in_windowby_condition:
            raise SiraTypeError(f"is_missing is only allowed in a WINDOWBY condition (where a "
                                f"PREV/NEXT variable may not exist){_where(node)}",
                                operator=IS_MISSING, expected="a WINDOWBY condition",
                                got="a scalar expression elsewhere")
        return CallExpr(IS_MISSING, tuple(self.scalar(a, heading) for a in node.args))

    def keyword_args(self, node, allowed, may_be_empty=()) -> dict:
        """``name(k1(v1) k2(v2))`` -> {k1: v1, ...}; a keyword of ``may_be_empty`` written
        ``k()`` is left out (an interval's ``end()``: no end)."""
        out = {}
        for a in node.args:
            empty = isinstance(a, cst.Call) and not a.args and a.name.lower() in may_be_empty
            if not isinstance(a, cst.Call) or a.name.lower() not in allowed or \
                    (len(a.args) != 1 and not empty) or a.name.lower() in out:
                raise _error(a, f"{node.name.upper()} takes {' '.join(k + '(...)' for k in allowed)}"
                             f", found {_show(a)}", " ".join(k + "(...)" for k in allowed))
            out[a.name.lower()] = None if empty else a.args[0]
        return {k: v for k, v in out.items() if v is not None} if may_be_empty else out

    def average(self, node, heading):
        kw = self.keyword_args(node, ("count", "value"))
        if set(kw) != {"count", "value"}:
            raise _error(node, "AVERAGE takes count(...)value(...)", "count(...)value(...)")
        count, value = self.scalar(kw["count"], heading), self.scalar(kw["value"], heading)
        if isinstance(count, Literal) and isinstance(value, Literal) \
                and isinstance(count.type, IntegerType) and value.type == FLOAT:
            return Literal(Average(count.value, value.value), type_named("average"))
        return CallExpr("average", (count, value))

    def interval(self, node, heading):
        itype = INTERVAL_TYPES[node.name.lower()]
        written = {a.name.lower() for a in node.args if isinstance(a, cst.Call)}
        kw = self.keyword_args(node, ("from", "to", "begin", "end"), ("to", "end"))
        closed = "from" in written or "to" in written
        if closed and ("begin" in written or "end" in written) or ("from" not in kw and
                                                                    "begin" not in kw):
            raise _error(node, f"{itype.name} takes from(a)to(b) or begin(a)end(b) (the end may "
                         f"be left out, or written end(), for an interval unbounded above)",
                         "from(a)to(b) or begin(a)end(b)")
        first = self.scalar(kw["from" if closed else "begin"], heading)
        last_node = kw.get("to" if closed else "end")
        last = None if last_node is None else self.scalar(last_node, heading)
        if isinstance(first, Literal) and (last is None or isinstance(last, Literal)):
            try:
                value = (itype.select_closed if closed else itype.select)(
                    first.value, None if last is None else last.value)
            except SiraError as err:
                raise type(err)(f"{err.message}{_where(node)}", **err.field_values()) from None
            return Literal(value, itype)
        if closed and last is not None:
            last = CallExpr("next", (last,))
        return CallExpr(itype.name.lower(), (first,) if last is None else (first, last))


def _exact_row(typed: dict, names: tuple, types: tuple):
    """The body tuple of a literal tuple's ``{name: (value, type)}`` when it has exactly the
    heading's attributes, each value of exactly its attribute's type; else None (and
    :func:`check_row` checks, converts or words the error)."""
    if len(typed) != len(names):
        return None
    out = []
    for name, t in zip(names, types):
        pair = typed.get(name)
        if pair is None or pair[1] is not t:
            return None
        out.append(pair[0])
    return tuple(out)


def _infer_heading(rows) -> Heading:
    types = {}
    for t, values in rows:
        for name, (_, vt) in values.items():
            old = types.get(name)
            if old is None or (isinstance(old, IntegerType) and isinstance(vt, IntegerType)
                               and (old.bits or 10**9) < (vt.bits or 10**9)):
                types[name] = vt
        if rows and set(values) != set(rows[0][1]):
            raise _error(t, "the tuples of a relation literal must have the same attributes",
                         "the same attributes")
    return Heading.of(types)


def _number(text: str) -> Literal:
    if text.isdigit():
        value = int_from_text(text)
        return Literal(value, type_of_python(value))
    return Literal(FLOAT.check(float(text)), FLOAT)


def _date(text, node):
    try:
        return date_from_text(text)  # one reading of dates for text and files
    except ValueError:
        raise SiraValueError(f"'{text}' is not a date (YYYY-MM-DD){_where(node)}",
                             operator="DATE", value=text) from None


def _timestamp(text, node):
    # as every reader reads one: Python's own ISO parsing also took week dates, compact forms
    # and a seventh digit of a second, which it dropped (TIMESTAMP holds microseconds)
    try:
        return TIMESTAMP.check(timestamp_from_text(text)[0])
    except ValueError:
        raise SiraValueError(f"'{text}' is not a timestamp (YYYY-MM-DDTHH:MM:SS[.ffffff], "
                             f"at most six digits of a second){_where(node)}",
                             operator="TIMESTAMP", value=text) from None


def _fold_selector(name, lit: Literal, node) -> Literal:
    from ..expressions.library import resolve
    result_type, impl = resolve(name, (lit.type,))
    try:
        return Literal(impl(lit.value), result_type)
    except SiraError as err:
        raise type(err)(f"{err.message}{_where(node)}", **err.field_values()) from None


# ---------------------------------------------------------------------- relational operators

def _restrict(b, node, args):
    src, cond = b.args(node, 2, 2)
    r = b.relation(src)
    return Restrict(r, b.scalar(cond, r.heading))


def _project(b, node, args):
    src, names = b.args(node, 2, 2)
    return Project(b.relation(src), b.names(names))


def _extend(b, node, args):
    src, specs = b.args(node, 2, 2)
    r = b.relation(src)
    return Extend(r, b.named_exprs(specs, r.heading))


def _rename(b, node, args):
    src, names = b.args(node, 2, 2)
    flat = b.names(names)
    if len(flat) % 2:
        raise _error(names, "RENAME takes pairs of names (old,new,...)", "pairs of names")
    return Rename(b.relation(src), tuple(zip(flat[0::2], flat[1::2])))


def _transform(b, node, args):
    src, specs = b.args(node, 2, 2)
    r = b.relation(src)
    return Transform(r, b.named_exprs(specs, r.heading, allow_bare=True))


def _nary(cls, using=False):
    def build(b, node, args):
        if using:
            b.args(node, 3)
            return cls(tuple(b.relation(a) for a in args[:-1]), b.names(args[-1]))
        b.args(node, 2)
        return cls(tuple(b.relation(a) for a in args))
    return build


def _binary(cls, using=False):
    def build(b, node, args):
        if using:
            left, right, names = b.args(node, 3, 3)
            return cls(b.relation(left), b.relation(right), b.names(names))
        left, right = b.args(node, 2, 2)
        return cls(b.relation(left), b.relation(right))
    return build


def _leftjoin(b, node, args):
    left, right, defaults = b.args(node, 3, 3)
    lnode = b.relation(left)
    return LeftJoin(lnode, b.relation(right), b.named_exprs(defaults, lnode.heading))


def _leftjoinusing(b, node, args):
    left, right, defaults, names = b.args(node, 4, 4)
    lnode = b.relation(left)
    return LeftJoin(lnode, b.relation(right), b.named_exprs(defaults, lnode.heading),
                    b.names(names))


def _pack(cls):
    def build(b, node, args):
        src, names = b.args(node, 2, 2)
        return cls(b.relation(src), b.names(names))
    return build


def _divideby(b, node, args):
    s, i, t = b.args(node, 3, 3)
    return DivideBy(b.relation(s), b.relation(i), b.relation(t))


def _tclose(b, node, args):
    src, pairs = b.args(node, 2, 2)
    return TClose(b.relation(src), b.names(pairs))


def _gtclose(b, node, args):
    src, pairs, specs = b.args(node, 3, 3)
    r = b.relation(src)
    return GTClose(r, b.names(pairs), b.named_exprs(specs, closure_scope(r.heading)))


def _group(b, node, args):
    src, specs = b.args(node, 2, 2)
    out = []
    for item in _items(specs):
        if not isinstance(item, cst.Call):
            raise _error(item, f"expected rva(attribute, ...), found {_show(item)}",
                         "rva(attribute, ...)")
        out.append((item.name.lower(), tuple(_lname(a) for a in item.args)))
    return GroupNode(b.relation(src), tuple(out))


def _ungroup(b, node, args):
    src, names = b.args(node, 2, 2)
    return Ungroup(b.relation(src), b.names(names))


def _aggregate(b, node, args):
    src, specs = b.args(node, 2, 2)
    r = b.relation(src)
    return Aggregate(r, b.agg_specs(specs, r.heading))


def _summarizeby(b, node, args):
    src, by, specs = b.args(node, 3, 3)
    r = b.relation(src)
    return SummarizeBy(r, b.names(by), b.agg_specs(specs, r.heading))


def _summarizebyusing(b, node, args):
    src, by, specs, names = b.args(node, 4, 4)
    r = b.relation(src)
    return SummarizeBy(r, b.names(by), b.agg_specs(specs, r.heading), b.names(names))


def _duration(b, node, what) -> Duration:
    args = node.args
    if len(args) == 2 and isinstance(args[1], cst.Name):
        amount = b.scalar(args[0], EMPTY)
        unit = unit_name(args[1].text)
    elif len(args) == 1:
        amount, unit = b.scalar(args[0], EMPTY), None
    else:
        raise _error(node, f"{what} takes a number and an optional unit: {what}(10 second)",
                     f"{what}(number [unit])")
    if not isinstance(amount, Literal) or not isinstance(amount.type, IntegerType):
        raise _error(node, f"{what} takes an integer amount", "an integer")
    return Duration(amount.value, unit)


def _option_name(item, op: str) -> str:
    """The one name an option ``item`` of ``op`` holds (``unit(second)``, ``on(e)``...)."""
    if len(item.args) != 1:
        raise _error(item, f"{op}: {item.name.lower()}(...) takes one name, found "
                     f"{len(item.args)}", f"{item.name.lower()}(name)")
    return _lname(item.args[0])


def _option_names(item, op: str) -> tuple:
    """The names an option ``item`` of ``op`` lists: at least one (``partition(k)``)."""
    if not item.args:
        raise _error(item, f"{op}: {item.name.lower()}() names no attribute",
                     f"{item.name.lower()}(attribute, ...)")
    return tuple(_lname(a) for a in item.args)


def _window(b, node, args):
    b.args(node, 3)
    src = b.relation(args[0])
    ts = _lname(args[1])
    opts: dict = {}
    kind = None
    during = "during"
    for item in args[2:]:
        name = item.text.lower() if isinstance(item, cst.Name) else \
            item.name.lower() if isinstance(item, cst.Call) else None
        if name in opts or (name == "now" and kind is not None):
            raise _error(item, f"WINDOW: {name} appears twice", "each window option once")
        if name == "now" and isinstance(item, cst.Name):
            kind = "now"
        elif name == "range" and isinstance(item, cst.Call):
            if len(item.args) == 1 and isinstance(item.args[0], cst.Name) \
                    and item.args[0].text.lower() == "unbounded":
                opts["range"] = None
            else:
                opts["range"] = item
        elif name in ("slide", "rows", "on", "partition", "arrival", "unit", "as") \
                and isinstance(item, cst.Call):
            opts[name] = item
        else:
            raise _error(item, f"WINDOW: expected now, range(...), slide(...), rows(...), "
                         f"on(...), partition(...), arrival(...), unit(...) or as(...), found "
                         f"{_show(item)}", "a window option")
    spec = {}
    if "unit" in opts:
        spec["unit"] = unit_name(_option_name(opts["unit"], "WINDOW"))
    if "partition" in opts:
        spec["partition"] = _option_names(opts["partition"], "WINDOW")
    if "arrival" in opts:
        spec["arrival"] = _option_name(opts["arrival"], "WINDOW")
    if "as" in opts:
        during = _option_name(opts["as"], "WINDOW")
    if "rows" in opts:
        rows = _duration(b, opts["rows"], "rows")
        spec["rows"] = rows.amount
        kind = kind or "rows"
    if "on" in opts:
        kind = "range_on"
        spec["on"] = _option_name(opts["on"], "WINDOW")
        rng = opts.get("range")
        if rng is None:
            raise _error(opts["on"], "WINDOW: on(E) needs range(C)", "range(C) on(E)")
        if len(rng.args) != 1:
            spec["on_amount"] = _duration(b, rng, "range")
        else:
            value = b.scalar(rng.args[0], EMPTY)
            if not isinstance(value, Literal):
                raise _error(rng, "WINDOW: range(C) takes a constant", "a constant")
            spec["on_amount"] = value.value
    elif "range" in opts:
        kind = kind or "range"
        spec["range"] = None if opts["range"] is None else _duration(b, opts["range"], "range")
        if opts["range"] is None and kind != "range":
            raise _error(node, "WINDOW: range(unbounded) goes alone", "range(unbounded)")
    if "slide" in opts:
        if kind == "rows" and "range" not in opts:
            spec["slide_rows"] = _duration(b, opts["slide"], "slide").amount
        else:
            spec["slide"] = _duration(b, opts["slide"], "slide")
    if kind is None:
        raise _error(node, "WINDOW needs now, range(...) or rows(...)", "a window kind")
    return Window(src, ts, WindowSpec(kind, **spec), during)


#: the options each window table function takes (Flink's names: SESSION has a gap, CUMULATE a
#: step): anything else is refused, so that tumble(S, ts, gap(5)) never builds something else
_WINDOW_TABLE_OPTIONS = {
    "tumble": ("size", "offset", "unit"),
    "hop": ("size", "slide", "offset", "unit"),
    "cumulate": ("step", "size", "offset", "unit"),
    "session": ("gap", "partition", "unit"),
}


def _window_table(kind):
    def build(b, node, args):
        b.args(node, 3)
        src = b.relation(args[0])
        ts = _lname(args[1])
        opts: dict = {}
        allowed = _WINDOW_TABLE_OPTIONS[kind]
        for item in args[2:]:
            name = item.name.lower() if isinstance(item, cst.Call) else None
            if name not in allowed or name in opts:
                raise _error(item, f"{kind.upper()}: expected one of "
                             f"{', '.join(f'{a}(...)' for a in allowed)} (each once), found "
                             f"{_show(item)}", "a window option")
            opts[name] = item
        fields = {}
        if "unit" in opts:
            fields["unit"] = unit_name(_option_name(opts["unit"], kind.upper()))
        if "partition" in opts:
            fields["partition"] = _option_names(opts["partition"], kind.upper())
        for key, field in (("size", "size"), ("gap", "size"), ("slide", "slide"),
                           ("step", "slide"), ("offset", "offset")):
            if key in opts:
                fields[field] = _duration(b, opts[key], key)
        return WindowTable(src, ts, kind, **fields)
    return build


def _tostream(cls):
    def build(b, node, args):
        src, at = b.args(node, 2, 3)[:2]
        during = (_lname(args[2]),) if len(args) == 3 else ()
        return cls(b.relation(src), _lname(at), *during)
    return build


def _rstream(b, node, args):
    b.args(node, 3, 4)
    during = (_lname(args[3]),) if len(args) == 4 else ()
    return RStream(b.relation(args[0]), _lname(args[1]), b.relation(args[2]), *during)


def _boundary_parts(b, item, which):
    """(variables {kind: name}, condition CST or None, unbounded) of start/end/label(...)."""
    args = item.args
    if which != "label" and len(args) == 1 and isinstance(args[0], cst.Name) \
            and args[0].text.lower() == "unbounded":
        return {}, None, True
    names, cond = {}, None
    for a in args:
        key = a.name.lower() if isinstance(a, cst.Call) else None
        if key in ("as", "at", "prev", "next") and len(a.args) == 1 and key not in names:
            names[key] = _lname(a.args[0])
        elif key == "when" and len(a.args) == 1 and cond is None:
            cond = a.args[0]
        else:
            raise _error(a, f"WINDOWBY: {which}(...) takes as(v) at(v) prev(v) next(v) when(...)"
                         f"{'' if which == 'label' else ' or unbounded'}, found {_show(a)}",
                         "as(v) at(v) prev(v) next(v) when(...)")
    return names, cond, False


def _windowby_condition(b, cond, heading):
    """A WINDOWBY condition: a scalar expression in which ``is_missing`` may appear."""
    outer, b.in_windowby_condition = b.in_windowby_condition, True
    try:
        return b.scalar(cond, heading)
    finally:
        b.in_windowby_condition = outer


def _windowby(b, node, args):
    b.args(node, 2)
    src = b.relation(args[0])
    h = src.heading
    fields: dict = {}
    clauses: dict = {}
    aggregates = None
    for item in args[1:]:
        name = item.text.lower() if isinstance(item, cst.Name) else \
            item.name.lower() if isinstance(item, cst.Call) else None
        if isinstance(item, cst.Name) and name in ("sliding", "tumbling") \
                and "kind" not in fields:
            fields["kind"] = name
        elif isinstance(item, cst.Name) and name == "only" and "only" not in fields:
            fields["only"] = True
        elif isinstance(item, cst.Call) and name in ("partition", "order") \
                and name not in fields and item.args:
            fields[name] = tuple(_lname(a) for a in item.args)
        elif isinstance(item, cst.Call) and name == "result" and name not in fields \
                and len(item.args) == 1:
            fields["result"] = _lname(item.args[0])
        elif isinstance(item, cst.Call) and name in ("start", "end", "label") \
                and name not in clauses:
            clauses[name] = _boundary_parts(b, item, name)
        elif isinstance(item, cst.Call) and name == "aggregates" and aggregates is None:
            aggregates = item
        else:
            raise _error(item, f"WINDOWBY: expected partition(...), order(...), sliding, "
                         f"tumbling, start(...), end(...), label(...), only, result(...) or "
                         f"aggregates(...) (each once), found {_show(item)}",
                         "a WINDOWBY option")
    if "order" not in fields:
        raise _error(node, "WINDOWBY needs order(...)", "order(...)")
    # the conditions' scopes: LABEL sees label variables; START adds start's; END adds end's
    scope: list = []
    bounds: dict = {}
    for which in ("label", "start", "end"):
        if which not in clauses:
            continue
        names, cond, unbounded = clauses[which]
        scope += [(n, variable_type(k, h, True)) for k, n in names.items()]
        try:
            heading = Heading.of(scope)
        except SiraError:
            heading = Heading.of(dict(scope))  # a duplicate variable: WindowBy reports it
        when = None if cond is None else _windowby_condition(b, cond, heading)
        bounds[which] = Boundary(as_=names.get("as"), at=names.get("at"),
                                 prev=names.get("prev"), next=names.get("next"), when=when,
                                 unbounded=unbounded)
    if aggregates is not None:
        window = Heading.of({fields.get("result", "w"): RelationType(h)})
        fields["aggregates"] = tuple(spec for a in aggregates.args
                                     for spec in b.named_exprs(a, window))
    return WindowBy(src, fields.pop("order"), fields.pop("kind", "sliding"),
                    fields.pop("partition", ()), bounds.get("start", Boundary()),
                    bounds.get("end", Boundary()), bounds.get("label"), **fields)


def _spl_amount(b, node, args, what):
    """A number, or a number and a unit (a Duration), from a policy's arguments."""
    if len(args) == 2 and isinstance(args[1], cst.Name):
        amount = b.scalar(args[0], EMPTY)
        if not isinstance(amount, Literal) or not isinstance(amount.type, IntegerType):
            raise _error(node, f"{what} takes an integer amount with a unit", "an integer")
        return Duration(amount.value, unit_name(args[1].text))
    if len(args) != 1:
        raise _error(node, f"{what} takes a number and an optional unit", f"{what}(number [unit])")
    amount = b.scalar(args[0], EMPTY)
    if not isinstance(amount, Literal) or amount.type not in (FLOAT,) and not isinstance(
            amount.type, IntegerType):
        raise _error(node, f"{what} takes a constant number", "a number")
    return amount.value


def _spl_policy(b, item, allowed):
    from ..algebra.spl import SplPolicy
    name = item.name.lower() if isinstance(item, cst.Call) else None
    if name not in allowed:
        raise _error(item, f"SPLWINDOW: expected {' or '.join(a + '(...)' for a in allowed)}, "
                     f"found {_show(item)}", "a window policy")
    if name in ("delta", "punct"):
        if not item.args:
            raise _error(item, f"SPLWINDOW: {name} names an attribute", f"{name}(attribute, ...)")
        attr = _lname(item.args[0])
        if name == "punct":
            if len(item.args) != 1:
                raise _error(item, "SPLWINDOW: punct takes one attribute", "punct(attribute)")
            return SplPolicy("punct", None, attr)
        return SplPolicy("delta", _spl_amount(b, item, item.args[1:], "delta"), attr)
    if name in ("time", "partitionage"):
        return SplPolicy(name, _duration(b, item, name))
    return SplPolicy(name, _duration(b, item, name).amount)


def _splwindow(b, node, args):
    from ..algebra.spl import KINDS, SplWindow
    b.args(node, 3)
    src = b.relation(args[0])
    ts = _lname(args[1])
    kind = _lname(args[2]) if len(args) > 2 else None
    if kind not in KINDS:
        raise _error(args[2], f"SPLWINDOW: expected tumbling, sliding or timeinterval, found "
                     f"{_show(args[2])}", "tumbling, sliding or timeinterval")
    fields: dict = {}
    seen = set()
    durations = {"intervalduration": "duration", "creationperiod": "creation",
                 "discardage": "discard", "intervaloffset": "offset"}
    for item in args[3:]:
        name = item.name.lower() if isinstance(item, cst.Call) else None
        key = "eviction" if name in ("count", "time", "delta", "punct") else name
        if key in seen:
            raise _error(item, f"SPLWINDOW: {key} appears twice", "each window option once")
        seen.add(key)
        if key == "eviction":
            fields["eviction"] = _spl_policy(b, item, ("count", "time", "delta", "punct"))
        elif name == "trigger" and len(item.args) == 1:
            fields["trigger"] = _spl_policy(b, item.args[0], ("count", "time", "delta"))
        elif name in durations:
            fields[durations[name]] = _duration(b, item, name)
        elif name == "partitioned" and item.args:
            names = []
            for a in item.args:
                if isinstance(a, cst.Call) and "partition_eviction" not in fields:
                    fields["partition_eviction"] = _spl_policy(
                        b, a, ("partitionage", "partitioncount", "tuplecount"))
                elif "partition_eviction" in fields:
                    raise _error(a, "SPLWINDOW: the partition eviction comes last",
                                 "partitioned(attributes, eviction)")
                else:
                    names.append(_lname(a))
            fields["partition"] = tuple(names)
        elif name == "unit" and len(item.args) == 1:
            fields["unit"] = unit_name(_lname(item.args[0]))
        elif name == "arrival" and len(item.args) == 1:
            fields["arrival"] = _lname(item.args[0])
        else:
            raise _error(item, f"SPLWINDOW: expected count, time, delta, punct, trigger, "
                         f"intervalduration, creationperiod, discardage, intervaloffset, "
                         f"partitioned, unit or arrival, found {_show(item)}", "a window option")
    return SplWindow(src, ts, kind, **fields)


RELATIONAL = {
    "restrict": _restrict, "project": _project, "extend": _extend, "rename": _rename,
    "transform": _transform, "union": _nary(Union), "intersect": _nary(Intersect),
    "xminus": _nary(XMinus), "join": _nary(Join), "minus": _binary(Minus),
    "semijoin": _binary(SemiJoin), "semiminus": _binary(SemiMinus), "leftjoin": _leftjoin,
    "divideby": _divideby, "tclose": _tclose, "gtclose": _gtclose, "group": _group,
    "ungroup": _ungroup, "aggregate": _aggregate, "summarizeby": _summarizeby,
    "pack": _pack(Pack), "unpack": _pack(Unpack),
    "unionusing": _nary(Union, True), "intersectusing": _nary(Intersect, True),
    "xminususing": _nary(XMinus, True), "joinusing": _nary(Join, True),
    "minususing": _binary(Minus, True), "semijoinusing": _binary(SemiJoin, True),
    "semiminususing": _binary(SemiMinus, True), "leftjoinusing": _leftjoinusing,
    "summarizebyusing": _summarizebyusing,
    "window": _window, "istream": _tostream(IStream), "dstream": _tostream(DStream),
    "rstream": _rstream, "changes": _tostream(Changes),
    "tumble": _window_table("tumble"), "hop": _window_table("hop"),
    "cumulate": _window_table("cumulate"), "session": _window_table("session"),
    "windowby": _windowby,
    "splwindow": _splwindow,
}


#: names a call may have in a scalar position besides LIBRARY's operators
_SCALAR_FORMS = ("tuple", "average", "equsing", "relation", IS_MISSING) + RVA_AGGREGATES


def known_operator_names() -> frozenset:
    """Every name that may stand in operator position: relational operators, scalar operators
    and selectors (the candidates of "did you mean ...?")."""
    return frozenset(RELATIONAL) | frozenset(LIBRARY) | frozenset(INTERVAL_TYPES) | \
        frozenset(_SCALAR_FORMS)


def build_cst(node, catalog=None, values=None):
    """Build an algebra node or scalar expression from a CST node."""
    with deep_recursion():
        return Builder(catalog, values).build(node)


def build_text(text: str, catalog=None, values=None):
    """Parse and build: the tree of ``text`` against relvar headings ``catalog``."""
    return build_cst(parse_expression(text), catalog, values)


__all__ = ["Builder", "build_cst", "build_text", "deep_recursion", "RELATIONAL", "successor"]
