"""The embedded Python engine: evaluates an algebra tree to a Relation.

One evaluation function per node class, registered with :func:`evaluates` in the family modules
(``basic``, ``setops``, ``joins``, ``closure``, ``nesting``, ``aggregation``). A node that appears
twice in a tree is evaluated once.

    >>> from sira import parse
    >>> print(evaluate_node(parse("project(relation(body(tuple(a(1)) tuple(a(2)))), ())")))
    TABLE_DEE (no attributes, one tuple: the empty tuple)
"""

from __future__ import annotations

import gc

from ..errors import ArithmeticFault, SiraError, UnknownRelvar
from ..values import Relation, tuple_literal

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
    """One evaluation: the relvars' values and the results computed so far."""

    def __init__(self, relvars: dict | None = None, options: dict | None = None):
        self.relvars = {k.lower(): v for k, v in (relvars or {}).items()}
        self.options = options or {}
        self._memo: dict = {}

    def relvar(self, name: str) -> Relation:
        try:
            return self.relvars[name]
        except KeyError:
            raise UnknownRelvar(relvar=name, available=tuple(sorted(self.relvars))) from None

    def eval(self, node) -> Relation:
        try:
            return self._memo[node]
        except KeyError:
            pass
        fn = _EVALUATORS.get(type(node))
        if fn is None:
            raise SiraError(f"the Python engine cannot evaluate {type(node).__name__}")
        result = fn(node, self)
        if isinstance(result, Packed):
            result = result.relation
        elif node.packs:
            pack_list = node.pack_list
            if pack_list:
                from .guards import Guard
                from .packing import pack_relation
                result = pack_relation(result, pack_list, Guard.of(node, self.options))
        self._memo[node] = result
        return result


def evaluate_node(node, relvars: dict | None = None, **options) -> Relation:
    """Evaluate an algebra tree on the Python engine.

    The cyclic garbage collector is paused while it runs: bodies are millions of tuples that
    form no reference cycles, and collections scanning them would dominate the run time.
    """
    _load_families()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return Context(relvars, options).eval(node)
    finally:
        if was_enabled:
            gc.enable()


def row_error(err: ArithmeticFault, heading, row) -> ArithmeticFault:
    """The same error, naming the tuple it happened on."""
    fields = err.field_values()
    fields["tuple"] = tuple_literal(heading, row)
    return type(err)(**fields)


def map_rows(rows, fn, heading):
    """``[fn(row) for row in rows]``, with arithmetic errors naming the failing tuple."""
    try:
        return [fn(row) for row in rows]
    except ArithmeticFault as err:
        for row in rows:
            try:
                fn(row)
            except ArithmeticFault as found:
                raise row_error(found, heading, row) from None
        raise err


_LOADED = []


def _load_families():
    if _LOADED:
        return
    _LOADED.append(True)
    from . import (aggregation, basic, closure, joins, nesting, packing, setops,  # noqa: F401
                   spl, windowby, windows)

