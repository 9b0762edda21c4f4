"""The SQL++ WindowBy clause (seed 003, sections 3.3-3.4 and 4) as one algebra operator.

``windowby(R, options...)`` partitions R, orders each partition into a sequence, and makes
one tuple per window, predicate-based as in XQuery::

    windowby(GHCN, partition(station) order(date) sliding,
             start(as(s) at(sp) when(s.val < 25)), end(at(ep) when(ep - sp = 2)))

Options, juxtaposed in any order after R:

* ``partition(a, ...)`` (optional), ``order(a, ...)`` (required; ties are broken by the
  tuples' canonical order), ``sliding`` or ``tumbling``;
* ``start(as(s) at(sp) prev(ps) next(ns) when(COND))`` or ``start(unbounded)``; the same for
  ``end``; ``label(as(l) at(lp) when(COND))`` (optional); every variable and ``when`` is
  optional (no ``when``: always true);
* ``only`` (drop the windows whose END never matched), ``result(w)`` (the name of the window's
  relation-valued attribute, default ``w``), ``aggregates(x(avg(w, val)) ...)`` (see
  :func:`push_down_aggregates`).

Variables in conditions: AS/PREV/NEXT are tuples of R's heading (``s.val``), AT is the LONG
position from 1 in the partition's sequence. START sees the label and start variables, END
the label, start and end variables, LABEL the label variables.

A PREV variable of the first tuple and a NEXT variable of the last do not exist. As in SQL++
(and XQuery's comparisons with an empty sequence), an operator reading one is MISSING, and
``and``/``or``/``not`` combine TRUE, FALSE and MISSING by three-valued logic (``MISSING or
TRUE`` is TRUE, ``MISSING and FALSE`` is FALSE, ``not MISSING`` is MISSING); a clause fires
only where its condition is TRUE. ``is_missing(e)`` (SQL++'s ``e IS MISSING``) is TRUE when
``e`` is MISSING and FALSE otherwise, never MISSING: ``is_missing(ps)`` names the whole
variable, ``is_missing(ps.val)`` is the same test (a field of a tuple that exists always
exists). So ``start(as(s) prev(ps) when(is_missing(ps) or ps.val > s.val))`` also starts a
window at each sequence's first tuple. With LABEL, the start variables of a window whose START
never held do not exist in its END condition either (see ``opened`` below). MISSING lives only
inside conditions: ``is_missing`` anywhere else is an error, and results hold no MISSING and
no null.

The result has one tuple per window: the partition attributes, one attribute per variable
(AS: the TUPLE; AT: LONG; PREV/NEXT: a relation of R's heading with 0 or 1 tuple, so there are
no nulls), the window's tuples as the relation ``w``, and ``closed`` (false when the END never
matched before the sequence ended: the paper's MISSING; the end variables are then bound to the
sequence's last tuple). With LABEL, ``opened`` is false when no position satisfied START (the
window then starts at the sequence's first tuple, and the start variables are bound to it in
the result; in the END condition they do not exist, as in the seed's Fig. 18, so a comparison
with one is MISSING).

Windows (the reference is ``sira/engine/windowby.py``):

* without LABEL, SLIDING makes a window at every position satisfying START; TUMBLING scans left
  to right and starts a new window only after the previous one ended (an unclosed window ends
  the scan); the end is the first position >= the start whose END holds;
* with LABEL (sliding only), each position satisfying LABEL gets a window whose start is the
  first position whose START holds and whose end is the first position >= it whose END holds;
* ``start(unbounded)``: the window starts at position 1 (one window per partition without
  LABEL); ``end(unbounded)``: it runs to the end of the sequence and is closed.

    >>> from sira import parse
    >>> q = parse("windowby(relation(heading(k(int) t(int) v(int)) body()), partition(k) "
    ...           "order(t) sliding, start(as(s) at(sp) when(s.v < 25)), end(at(ep) when(ep - sp = 2)))")
    >>> q.heading
    Heading({closed: BOOLEAN, ep: LONG, k: INT, s: TUPLE{k: INT, t: INT, v: INT}, sp: LONG, w: RELATION{k: INT, t: INT, v: INT}})
"""

from __future__ import annotations

import attrs

from ..errors import DuplicateAttribute, SiraTypeError, SiraValueError
from ..expressions.evaluate import aggregated_type, infer_type
from ..expressions.nodes import Aggregated, AttrRef, Call, FieldOf, Literal, as_expr, \
    attributes_used
from ..types import article, BOOLEAN, LONG, RelationType, TupleType
from ..values import Heading, normalize_name
from .basic import _lower_names
from .node import Node, node_class

#: the variable kinds of a boundary, in the order they print
VARIABLE_KINDS = ("as", "at", "prev", "next")


def _opt_name(value):
    return None if value is None else normalize_name(value)


@attrs.frozen
class Boundary:
    """A LABEL, START or END clause: its variables and its condition (None: always true).

    ``Boundary(as_="s", at="sp", when=attr("sp") > 1)``; ``Boundary(unbounded=True)``.
    """

    as_: str | None = attrs.field(default=None, converter=_opt_name)
    at: str | None = attrs.field(default=None, converter=_opt_name)
    prev: str | None = attrs.field(default=None, converter=_opt_name)
    next: str | None = attrs.field(default=None, converter=_opt_name)
    when: object = None
    unbounded: bool = False

    def variables(self) -> tuple:
        """((kind, name), ...) of the declared variables, kinds among as/at/prev/next."""
        return tuple((k, getattr(self, "as_" if k == "as" else k)) for k in VARIABLE_KINDS
                     if getattr(self, "as_" if k == "as" else k) is not None)

    def text(self) -> str:
        from ..syntax.printer import print_expression
        if self.unbounded:
            return "unbounded"
        parts = [f"{k}({n})" for k, n in self.variables()]
        if self.when is not None:
            parts.append(f"when({print_expression(self.when)})")
        return " ".join(parts)


def variable_type(kind: str, heading: Heading, in_condition: bool):
    """The type of a variable: in conditions AS/PREV/NEXT are tuples; in the result PREV/NEXT
    are relations of 0 or 1 tuple (absence without nulls)."""
    if kind == "at":
        return LONG
    if kind == "as" or in_condition:
        return TupleType(heading)
    return RelationType(heading)


@node_class
class WindowBy(Node):
    """The SQL++ WindowBy clause (seed 003, "3.3 WindowBy Clause semantics"):
    ``windowby(R, partition(station) order(date) sliding, start(as(s) when(s.val < 25)),
    end(next(en) when(en.val >= 25)))``."""

    source: Node
    order: tuple = attrs.field(converter=_lower_names)
    kind: str = attrs.field(default="sliding", converter=str.lower)
    partition: tuple = attrs.field(default=(), converter=_lower_names)
    start: Boundary = Boundary()
    end: Boundary = Boundary()
    label: Boundary | None = None
    only: bool = False
    result: str = attrs.field(default="w", converter=normalize_name)
    aggregates: tuple = attrs.field(default=(), converter=lambda specs: tuple(
        (normalize_name(n), e) for n, e in specs))
    operator_name = "WINDOWBY"
    packs = False  # every window is its own tuple

    # ------------------------------------------------------------------ checking
    def compute_heading(self):
        op = "WINDOWBY"
        h = self.source.heading
        h.require(self.partition, op)
        h.require(self.order, op)
        if not self.order:
            raise SiraValueError("WINDOWBY needs order(...)", operator=op, value="order")
        if self.kind not in ("sliding", "tumbling"):
            raise SiraValueError(f"WINDOWBY: the window type is sliding or tumbling (got "
                                 f"{self.kind})", operator=op, value=self.kind)
        if self.label is not None and self.kind != "sliding":
            raise SiraValueError("WINDOWBY: LABEL windows are sliding (one window per label "
                                 "tuple)", operator=op, value=self.kind)
        if self.label is not None and self.label.unbounded:
            raise SiraValueError("WINDOWBY: LABEL cannot be unbounded", operator=op,
                                 value="label(unbounded)")
        for b in self.boundaries():
            if b.unbounded and (b.variables() or b.when is not None):
                raise SiraValueError("WINDOWBY: an unbounded boundary has no variables and no "
                                     "condition", operator=op, value=b.text())
        seen: set = set()
        for _, name in self.variables():
            if name in seen:
                raise DuplicateAttribute(attribute=name, operator=op)
            seen.add(name)
        for which in ("label", "start", "end"):
            b = self.boundary(which)
            if b is not None and b.when is not None:
                check_condition(b.when, self.scope(which), f"the {which.upper()} condition")
        out = [(n, h.type_of(n)) for n in self.partition]
        out += [(n, variable_type(k, h, False)) for k, n in self.variables()]
        out.append(("closed", BOOLEAN))
        if self.label is not None:
            out.append(("opened", BOOLEAN))
        rva = RelationType(h)
        if self.aggregates:
            window = Heading.of({self.result: rva})
            for name, expr in self.aggregates:
                if not (isinstance(expr, Aggregated) and expr.source == AttrRef(self.result)):
                    raise SiraTypeError(f"WINDOWBY: aggregates are op({self.result}, attribute)"
                                        f" (got {expr!r})", operator=op,
                                        expected=f"an aggregate of {self.result}",
                                        got=repr(expr))
                out.append((name, aggregated_type(expr, window, op)[2]))
        else:
            out.append((self.result, rva))
        return Heading().extend(out, op)

    # ------------------------------------------------------------------ helpers
    @property
    def children(self):
        return (self.source,)

    def boundary(self, which: str) -> Boundary | None:
        return getattr(self, which)

    def boundaries(self) -> tuple:
        return tuple(b for b in (self.label, self.start, self.end) if b is not None)

    def variables(self, which: str | None = None) -> tuple:
        """((kind, name), ...) declared by one clause, or by all (label, start, end)."""
        if which is not None:
            b = self.boundary(which)
            return () if b is None else b.variables()
        return self.variables("label") + self.variables("start") + self.variables("end")

    def scope(self, which: str) -> Heading:
        """The variables a clause's condition sees, with their condition types."""
        visible = {"label": ("label",), "start": ("label", "start"),
                   "end": ("label", "start", "end")}[which]
        h = self.source.heading
        return Heading.of([(n, variable_type(k, h, True)) for w in visible
                           for k, n in self.variables(w)])

    def absent_variables(self, which: str) -> frozenset:
        """The variables a clause's condition sees that may not exist: the PREV and NEXT
        variables, and in END with LABEL every start variable (a LABEL window whose START
        never holds has no start: the seed reports its start variables MISSING)."""
        visible = {"label": ("label",), "start": ("label", "start"),
                   "end": ("label", "start", "end")}[which]
        unopened = which == "end" and self.label is not None
        return frozenset(n for w in visible for k, n in self.variables(w)
                         if k in ("prev", "next") or (unopened and w == "start"))

    def condition(self, which: str):
        """A clause's condition split for three-valued evaluation (:func:`three_valued`), or
        None when the clause has no condition (always true)."""
        b = self.boundary(which)
        if b is None or b.when is None:
            return None
        return three_valued(b.when, self.absent_variables(which), self.scope(which))

    def options_text(self) -> str:
        """Everything after R in the text syntax."""
        from ..syntax.printer import print_expression
        props = []
        if self.partition:
            props.append(f"partition({','.join(self.partition)})")
        props.append(f"order({','.join(self.order)})")
        props.append(self.kind)
        parts = [" ".join(props)]
        if self.label is not None:
            parts.append(f"label({self.label.text()})")
        parts.append(f"start({self.start.text()})")
        parts.append(f"end({self.end.text()})")
        if self.only:
            parts.append("only")
        if self.result != "w":
            parts.append(f"result({self.result})")
        if self.aggregates:
            parts.append("aggregates(" + " ".join(
                f"{n}({print_expression(e)})" for n, e in self.aggregates) + ")")
        return ",".join(parts)


def windowby(source: Node, order, *, kind="sliding", partition=(), start=None, end=None,
             label=None, only=False, result="w") -> WindowBy:
    """Build a WINDOWBY node: ``windowby(r, "date", partition="station", start=Boundary(...))``.

    Args:
        source: the relation to window.
        order: the ordering attribute name(s).
        kind: ``"sliding"`` or ``"tumbling"``.
        partition: the partitioning attribute name(s).
        start, end, label: Boundary values (start/end default to "always true", no variables).
        only: drop the windows whose END never matched.
        result: the name of the window's relation-valued attribute.
    Returns:
        the node (its heading checked).
    Raises:
        UnknownAttribute: an unknown partition/order attribute or an undeclared variable.
        SiraTypeError: a condition is not BOOLEAN.
        DuplicateAttribute: a variable is declared twice or clashes with another attribute.
    """
    as_tuple = (lambda v: (v,) if isinstance(v, str) else tuple(v))
    return WindowBy(source, as_tuple(order), kind, as_tuple(partition),
                    start or Boundary(), end or Boundary(), label, only, result)


# ---------------------------------------------------------------------- three-valued conditions

#: SQL++'s ``e IS MISSING``, allowed in WINDOWBY conditions only
IS_MISSING = "is_missing"

#: the operators combining TRUE, FALSE and MISSING by three-valued logic
CONNECTIVES = frozenset({"and", "or", "not"})


def is_missing(expr) -> Call:
    """``is_missing(e)``: TRUE when ``e`` reads a PREV/NEXT variable that does not exist.

    Only a WINDOWBY condition may use it (nothing is MISSING anywhere else)::

        >>> from sira.expressions.nodes import attr
        >>> is_missing(attr("ps")) | (FieldOf(attr("ps"), "val") > 24)
        or(is_missing(ps),gt(ps.val,24))
    """
    return Call(IS_MISSING, (as_expr(expr),))


@attrs.frozen
class Strict:
    """A part of a condition evaluated as usual once every variable it reads exists, and
    MISSING otherwise (SQL++: an operator with a MISSING argument is MISSING).

    ``needs`` are the PREV/NEXT variables ``expr`` reads. ``holes`` are the BOOLEAN arguments
    that are themselves three-valued (an ``and``/``or``/``not``/``is_missing`` reading such a
    variable): ``(name, part)`` pairs, each computed first and read by ``expr`` as the
    attribute ``name``; a MISSING hole makes the whole part MISSING.
    """

    expr: object
    needs: frozenset = frozenset()
    holes: tuple = ()

    def heading(self, scope: Heading) -> Heading:
        """The heading ``expr`` is evaluated on: the clause's scope and the holes."""
        return scope.extend([(name, BOOLEAN) for name, _ in self.holes], "WINDOWBY")


@attrs.frozen
class Connective:
    """``and``/``or``/``not`` of parts, by three-valued logic."""

    op: str
    parts: tuple


@attrs.frozen
class Absence:
    """``is_missing(part)``: TRUE when the part is MISSING, FALSE otherwise."""

    part: object


def conjuncts(expr):
    """The top-level conjuncts of ``expr`` (``and`` flattened), left to right."""
    if isinstance(expr, Call) and expr.op == "and":
        for a in expr.args:
            yield from conjuncts(a)
    else:
        yield expr


def pinned_offset(expr, target: str, others) -> tuple | None:
    """``(other, k)`` when ``expr`` holds only where the AT variable ``target`` equals the AT
    variable ``other`` plus the integer ``k``, by one of its top-level conjuncts
    (``lp - sp = 4``, ``ep = sp + 2``, ``sp = lp``...); None when no conjunct says so. A
    clause's position is then found by arithmetic instead of a scan (the seed's LABEL
    windows, Fig. 17-19).

        >>> from sira import attr
        >>> pinned_offset((attr("lp") - attr("sp")).eq(4) & (attr("x") > 1), "sp", {"lp"})
        ('lp', -4)
    """
    def linear(e):
        """(name, sign, constant) of ``e`` = sign * name + constant, or None."""
        if isinstance(e, AttrRef):
            return e.name, 1, 0
        if isinstance(e, Call) and e.op in ("plus", "minus") and len(e.args) == 2:
            a, b = e.args
            sign = 1 if e.op == "plus" else -1
            la = linear(a)
            if la is not None and _integer(b) is not None:
                return la[0], la[1], la[2] + sign * _integer(b)
            lb = linear(b)
            if lb is not None and _integer(a) is not None and e.op == "plus":
                return lb[0], lb[1], lb[2] + _integer(a)
        return None

    def difference(e):
        """(x, y, c) of ``e`` = x - y + c with x, y AT variables, or None."""
        if isinstance(e, Call) and e.op == "minus" and len(e.args) == 2:
            la, lb = linear(e.args[0]), linear(e.args[1])
            if la and lb and la[1] == 1 and lb[1] == 1:
                return la[0], lb[0], la[2] - lb[2]
        return None

    for c in conjuncts(expr):
        if not (isinstance(c, Call) and c.op == "eq" and len(c.args) == 2):
            continue
        for left, right in (c.args, c.args[::-1]):
            k = _integer(right)
            d = difference(left)
            if k is not None and d is not None:  # x - y + c = k
                x, y, const = d
                if x == target and y in others:
                    return y, k - const
                if y == target and x in others:
                    return x, const - k
            lx, ly = linear(left), linear(right)
            if lx and ly and lx[1] == 1 and ly[1] == 1:  # x + a = y + b
                if lx[0] == target and ly[0] in others:
                    return ly[0], ly[2] - lx[2]
    return None


def _integer(e):
    if isinstance(e, Literal) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    return None


def three_valued(expr, absent: frozenset, scope: Heading):
    """Split a WINDOWBY condition for three-valued evaluation.

    Args:
        expr: the condition (type-checked by :func:`check_condition`).
        absent: the variables that may not exist (the clause's PREV/NEXT variables).
        scope: the clause's variables and their types.
    Returns:
        a :class:`Strict`, :class:`Connective` or :class:`Absence` tree. A condition that reads
        no such variable and has no ``is_missing`` is one ``Strict`` part with nothing to wait
        for: the two-valued condition as it is.

        >>> from sira.expressions.nodes import attr
        >>> from sira.types import INT
        >>> h = Heading.of({"ps": TupleType(Heading.of({"val": INT}))})
        >>> three_valued(is_missing(attr("ps")) | (FieldOf(attr("ps"), "val") > 24),
        ...              frozenset({"ps"}), h)     # doctest: +NORMALIZE_WHITESPACE
        Connective(op='or', parts=(Absence(part=Strict(expr=ps, needs=frozenset({'ps'}),
        holes=())), Strict(expr=gt(ps.val,24), needs=frozenset({'ps'}), holes=())))
    """
    names = iter(_fresh_names(scope))

    def split(e):
        if not _three_valued(e, absent):
            return Strict(e)
        if isinstance(e, Call) and e.op in CONNECTIVES:
            return Connective(e.op, tuple(split(a) for a in e.args))
        if isinstance(e, Call) and e.op == IS_MISSING:
            return Absence(split(e.args[0]))
        holes = []

        def hollow(sub):
            if sub is not e and isinstance(sub, Call) and _three_valued(sub, absent) \
                    and (sub.op in CONNECTIVES or sub.op == IS_MISSING):
                name = next(names)
                holes.append((name, split(sub)))
                return AttrRef(name)
            return _map_children(sub, hollow)
        body = hollow(e)
        return Strict(body, frozenset(attributes_used(body) & absent), tuple(holes))
    return split(expr)


def _three_valued(expr, absent) -> bool:
    """Whether ``expr`` may be MISSING or tests for it: it reads a variable of ``absent`` or
    uses ``is_missing``."""
    return bool(attributes_used(expr) & absent) or _uses_is_missing(expr)


def _uses_is_missing(expr) -> bool:
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Call) and e.op == IS_MISSING:
            return True
        stack.extend(_children(e))
    return False


def _children(expr) -> tuple:
    if isinstance(expr, Call):
        return expr.args
    if isinstance(expr, (FieldOf, Aggregated)):
        return (expr.source,)
    return ()


def _fresh_names(scope: Heading):
    """Names for holes that no variable has (the text syntax cannot spell them)."""
    i = 0
    while True:
        name = f"#{i}"
        if name not in scope:
            yield name
        i += 1


def _map_children(expr, fn):
    """``expr`` with ``fn`` applied to each of its sub-expressions (the same object when none
    changes)."""
    if isinstance(expr, Call):
        args = tuple(fn(a) for a in expr.args)
        return expr if all(a is b for a, b in zip(args, expr.args)) else Call(expr.op, args)
    if isinstance(expr, FieldOf):
        source = fn(expr.source)
        return expr if source is expr.source else FieldOf(source, expr.name)
    if isinstance(expr, Aggregated):
        source = fn(expr.source)
        return expr if source is expr.source else Aggregated(expr.op, source, expr.name)
    return expr


def check_condition(expr, scope: Heading, what: str) -> None:
    """Check a WINDOWBY condition is BOOLEAN on the clause's variables.

    ``is_missing`` takes one argument of any type (itself checked) and is BOOLEAN.

    Raises:
        UnknownAttribute: the condition reads a variable the clause does not see.
        SiraTypeError: the condition is not BOOLEAN, an operator does not take its arguments,
            or ``is_missing`` does not have exactly one argument.
    """
    op = "WINDOWBY"

    def typed(e):
        if isinstance(e, Call) and e.op == IS_MISSING:
            if len(e.args) != 1:
                raise SiraTypeError(f"{op}: is_missing takes 1 argument (got {len(e.args)}: "
                                    f"{e!r})", operator=IS_MISSING, expected="1 argument",
                                    got=f"{len(e.args)} arguments")
            infer_type(typed(e.args[0]), scope, op)
            return Literal(False, BOOLEAN)  # stands for the test: any BOOLEAN
        return _map_children(e, typed)
    t = infer_type(typed(expr), scope, op)
    if t != BOOLEAN:
        raise SiraTypeError(f"{op}: {what} must be BOOLEAN (got {expr!r}, {article(str(t))})",
                            operator=op, expected=str(BOOLEAN), got=str(t))


# ---------------------------------------------------------------------- aggregate push-down

def _push_down(node):
    from .basic import Extend, Project
    if not (isinstance(node, Project) and isinstance(node.source, Extend)
            and isinstance(node.source.source, WindowBy)):
        return None
    ext = node.source
    wb = ext.source
    if wb.aggregates or wb.result in node.names:
        return None
    pushed, rest = [], []
    for name, expr in ext.specs:
        if wb.result in attributes_used(expr):
            if not (isinstance(expr, Aggregated) and expr.source == AttrRef(wb.result)):
                return None  # the window is used otherwise: keep the relation-valued attribute
            pushed.append((name, expr))
        else:
            rest.append((name, expr))
    if not pushed:
        return None
    out = attrs.evolve(wb, aggregates=tuple(pushed))
    if rest:
        out = Extend(out, tuple(rest))
    if out.heading.names != node.heading.names:
        out = Project(out, node.names)
    return out


def push_down_aggregates(node):
    """The paper's optimisation (end of seed 003, section 3.4): aggregates computed while the
    windows are scanned, without building the window's relation-valued attribute.

    ``project(extend(windowby(...), (x(avg(w, val)) ...)), names without w)`` becomes
    ``windowby(..., aggregates(x(avg(w, val)) ...))`` (with the EXTEND of the other formulas and
    the PROJECT kept when needed); every other node is rebuilt with its children rewritten.

    Args:
        node: an algebra tree.
    Returns:
        an equivalent tree (the same relation on every engine).
    """
    from ..errors import deep_recursion
    with deep_recursion():
        return _rewrite(node)


def _rewrite(node):
    if not isinstance(node, Node):
        return node
    changes = {}
    for field in attrs.fields(type(node)):
        value = getattr(node, field.name)
        if isinstance(value, Node):
            new = _rewrite(value)
            if new is not value:
                changes[field.name] = new
        elif isinstance(value, tuple) and value and all(isinstance(v, Node) for v in value):
            new = tuple(_rewrite(v) for v in value)
            if any(a is not b for a, b in zip(new, value)):
                changes[field.name] = new
    if changes:
        node = attrs.evolve(node, **changes)
    pushed = _push_down(node)
    return node if pushed is None else pushed


__all__ = ["Boundary", "WindowBy", "windowby", "push_down_aggregates", "variable_type",
           "is_missing", "three_valued", "check_condition", "Strict", "Connective", "Absence",
           "IS_MISSING", "CONNECTIVES"]
