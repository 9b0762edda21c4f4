"""The embedded Python engine: evaluates an algebra tree to a Relation.

One evaluation function per node class, registered with :func:`evaluates` in the family modules
(``basic``, ``setops``, ``joins``, ``closure``, ``nesting``, ``aggregation``). A node that appears
twice in a tree is evaluated once.

An evaluation function returns the node's :class:`Relation`, a :class:`Packed` relation, or
:class:`Rows`: rows not yet made a set. Operators that stream (RESTRICT, EXTEND, RENAME,
PROJECT, the probe side of JOIN, SEMIJOIN and SEMIMINUS) take their input as rows
(``Context.rows``) and hand rows on, so a chain of them builds no frozenset per node: a body
becomes a frozenset only where set semantics demand it (the result, the inputs of the other
operators, a node several parents share). A PROJECT hands on its input's rows untouched and
tells a JOIN below it which attributes it needs, so the join makes only the projected tuples.

    >>> from sira import parse
    >>> print(evaluate_node(parse("project(relation(body(tuple(a(1)) tuple(a(2)))), ())")))
    TABLE_DEE (no attributes, one tuple: the empty tuple)
"""

from __future__ import annotations

from collections import Counter

from ..collector import collector_paused
from ..errors import ArithmeticFault, SiraError, UnknownRelvar
from ..values import Relation, tuple_literal
from .rows import Rows

_EVALUATORS: dict = {}


class Packed:
    """What an evaluation returns when its result is already packed on the node's pack_list
    (a sweep that packs as it goes), so ``Context.eval`` does not pack it again."""

    __slots__ = ("relation",)

    def __init__(self, relation: Relation):
        self.relation = relation


def evaluates(node_class):
    """Register the Python evaluation of one node class."""
    def register(fn):
        _EVALUATORS[node_class] = fn
        return fn
    return register


class Context:
    """One evaluation: the relvars' values and the results computed so far.

    Given the ``root`` of the tree, it counts how many parents each node has: a node with one
    parent may hand its rows to that parent (``rows``) instead of building its result as a set;
    a node with several is evaluated once and kept.
    """

    def __init__(self, relvars: dict | None = None, options: dict | None = None, root=None):
        from .guards import check_relvar_names
        check_relvar_names(relvars)
        self.relvars = {k.lower(): v for k, v in (relvars or {}).items()}
        self.options = options or {}
        self._memo: dict = {}
        self._parents = parent_counts(root) if root is not None else Counter()
        self._wanted: dict = {}

    def relvar(self, name: str) -> Relation:
        try:
            return self.relvars[name]
        except KeyError:
            raise UnknownRelvar(relvar=name, available=tuple(sorted(self.relvars))) from None

    def eval(self, node) -> Relation:
        """The node's result as a relation (evaluated once, then kept)."""
        try:
            return self._memo[node]
        except KeyError:
            pass
        if self._parents and node not in self._parents:
            # a tree made while evaluating (a derived operator lowered to core ones): its
            # operands gain a parent, so one the tree shares with the query is kept
            self._parents.update(parent_counts(node))
        result = self._run(node)
        if isinstance(result, Packed):
            result = result.relation
        else:
            if isinstance(result, Rows):
                result = Relation(node.heading, result.body(node.heading))
            if node.packs:
                pack_list = node.pack_list
                if pack_list:
                    from .guards import Guard
                    from .packing import pack_relation
                    result = pack_relation(result, pack_list, Guard.of(node, self.options))
        self._memo[node] = result
        return result

    def rows(self, node, wanted=None) -> Rows:
        """The node's result as rows, for a parent that needs no set (see :class:`Rows`).

        ``wanted`` names the only attributes the parent will read (None: all of them); the
        rows may then hold just those.
        """
        found = self._memo.get(node)
        if found is not None:
            return Rows.of(found)
        if not self._may_stream(node):
            return Rows.of(self.eval(node))
        if wanted is not None:
            self._wanted[node] = tuple(wanted)
        result = self._run(node)
        if isinstance(result, Packed):
            return Rows.of(result.relation)
        if isinstance(result, Relation):
            return Rows.of(result)
        return result

    def distinct_rows(self, node) -> Rows:
        """The node's result as rows each present once (for a parent that counts them)."""
        return self.rows(node).distinct_on(node.heading)

    def wanted(self, node) -> tuple | None:
        """The attributes the parent of ``node`` will read from its rows (None: all)."""
        return self._wanted.get(node)

    def _may_stream(self, node) -> bool:
        """One parent, and a result that need not be packed."""
        return self._parents[node] == 1 and (not node.packs or not node.pack_list)

    def _run(self, node):
        fn = _EVALUATORS.get(type(node))
        if fn is None:
            raise SiraError(f"the Python engine cannot evaluate {type(node).__name__}")
        return fn(node, self)


def parent_counts(root) -> Counter:
    """How many times each node of the tree is an operand: as a child, or as a relation inside
    an expression (equal nodes count together, as ``Context`` keeps one result for them). The
    root counts one more, for the caller that wants its result as a relation."""
    counts = Counter({root: 1})
    seen = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for child in (*node.children, *_operands_in_expressions(node)):
            counts[child] += 1
            stack.append(child)
    return counts


def _operands_in_expressions(node):
    """The relational operands inside a node's expressions (``RelationArg``)."""
    from ..algebra.node import Node
    from ..expressions.nodes import Expr, RelationArg
    found = []
    stack = _field_values(node)
    while stack:
        value = stack.pop()
        if isinstance(value, RelationArg):
            found.append(value.node)
        elif isinstance(value, Expr):
            stack.extend(_field_values(value))
        elif isinstance(value, (tuple, list)) and not isinstance(value, Node):
            stack.extend(value)
    return found


def _field_values(obj) -> list:
    return [getattr(obj, a.name) for a in getattr(type(obj), "__attrs_attrs__", ())]


def evaluate_node(node, relvars: dict | None = None, **options) -> Relation:
    """Evaluate an algebra tree on the Python engine.

    The cyclic garbage collector is paused while it runs: bodies are millions of tuples that
    form no reference cycles, and collections scanning them would dominate the run time.
    """
    _load_families()
    with collector_paused():
        return Context(relvars, options, node).eval(node)


def row_error(err: ArithmeticFault, heading, row) -> ArithmeticFault:
    """The same error, naming the tuple it happened on."""
    fields = err.field_values()
    fields["tuple"] = tuple_literal(heading, row)
    return type(err)(**fields)


def map_rows(rows, fn, heading, shown=None) -> list:
    """``list(map(fn, rows))``, with arithmetic errors naming the failing tuple.

    ``rows`` is a collection of tuples of ``heading``; when ``shown`` (a heading whose names
    ``heading`` holds) is given, the failing tuple is named by its values of ``shown`` only (the
    tuple of the operator's input, when its rows carry more attributes).
    """
    try:
        return list(map(fn, rows))
    except ArithmeticFault as err:
        for row in rows:
            try:
                fn(row)
            except ArithmeticFault as found:
                if shown is not None and shown != heading:
                    index = heading.index
                    row = tuple(row[index(n)] for n in shown.names)
                    heading = shown
                raise row_error(found, heading, row) from None
        raise err


_LOADED = []


def _load_families():
    if _LOADED:
        return
    _LOADED.append(True)
    from . import (aggregation, basic, closure, joins, nesting, packing, setops,  # noqa: F401
                   spl, windowby, windows)

