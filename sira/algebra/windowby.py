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
the label, start and end variables, LABEL the label variables. A condition that refers to a
PREV/NEXT variable that does not exist (before the first / after the last tuple) is false.

The result has one tuple per window: the partition attributes, one attribute per variable
(AS: the TUPLE; AT: LONG; PREV/NEXT: a relation of R's heading with 0 or 1 tuple, so there are
no nulls), the window's tuples as the relation ``w``, and ``closed`` (false when the END never
matched before the sequence ended: the paper's MISSING; the end variables are then bound to the
sequence's last tuple). With LABEL, ``opened`` is false when no position satisfied START (the
window then starts at the sequence's first tuple, and the start variables are bound to it).

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
from ..expressions.evaluate import aggregated_type, require_type
from ..expressions.nodes import Aggregated, AttrRef, attributes_used
from ..types import BOOLEAN, LONG, RelationType, TupleType
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
                require_type(b.when, self.scope(which), BOOLEAN, op,
                             f"the {which.upper()} condition")
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

    def optional_variables(self, which: str) -> frozenset:
        """The PREV/NEXT variables a clause's condition refers to (absent: condition false)."""
        b = self.boundary(which)
        if b is None or b.when is None:
            return frozenset()
        used = attributes_used(b.when)
        visible = {"label": ("label",), "start": ("label", "start"),
                   "end": ("label", "start", "end")}[which]
        return frozenset(n for w in visible for k, n in self.variables(w)
                         if k in ("prev", "next") and n in used)

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
    from ..syntax.builder import deep_recursion
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


__all__ = ["Boundary", "WindowBy", "windowby", "push_down_aggregates", "variable_type"]
