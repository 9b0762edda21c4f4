"""The concrete syntax tree (CST) of sira's text syntax.

The parser knows nothing of operator meanings; it produces these shapes only. Every node has
``line`` and ``col`` (1-based, keyword-only, default 0) which take no part in equality, so trees
compare by shape::

    >>> Call("gt", (Name("a"), Number("256"))) == Call("gt", (Name("a", line=3, col=9), Number("256")))
    True
"""

from __future__ import annotations

from typing import Union

import attrs


def _position():
    return attrs.field(default=0, eq=False, repr=False, kw_only=True)


def _shape_fields(cls) -> tuple[str, ...]:
    names = cls.__dict__.get("_shape_names")
    if names is None:
        names = tuple(f.name for f in attrs.fields(cls) if f.eq)
        cls._shape_names = names
    return names


def _flatten(root) -> tuple:
    """A flat, unambiguous pre-order serialisation of a tree (without positions), built
    iteratively so that deep trees never exhaust Python's stack."""
    out = []
    stack = [root]
    while stack:
        value = stack.pop()
        if isinstance(value, _Node):
            cls = type(value)
            out.append(cls)
            stack.extend(reversed([getattr(value, n) for n in _shape_fields(cls)]))
        elif isinstance(value, tuple):
            out.append(tuple)
            out.append(len(value))
            stack.extend(reversed(value))
        else:
            out.append(value)
    return tuple(out)


class _Node:
    """Shape equality, hashing and repr, all iterative (the attrs-generated ones recurse, and
    a tree 256 levels deep would exhaust the stack)."""

    __slots__ = ()

    def __eq__(self, other):
        if not isinstance(other, _Node):
            return NotImplemented
        return type(self) is type(other) and _flatten(self) == _flatten(other)

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self):
        return hash(_flatten(self))

    def __repr__(self):
        parts = []
        stack = [(False, self)]
        while stack:
            is_text, value = stack.pop()
            if is_text:
                parts.append(value)
            elif isinstance(value, _Node):
                cls = type(value)
                names = _shape_fields(cls)
                todo = [(True, f"{cls.__name__}(")]
                for i, name in enumerate(names):
                    todo.append((True, f"{', ' if i else ''}{name}="))
                    todo.append((False, getattr(value, name)))
                todo.append((True, ")"))
                stack.extend(reversed(todo))
            elif isinstance(value, tuple):
                todo = [(True, "(")]
                for i, item in enumerate(value):
                    if i:
                        todo.append((True, ", "))
                    todo.append((False, item))
                todo.append((True, ",)" if len(value) == 1 else ")"))
                stack.extend(reversed(todo))
            else:
                parts.append(repr(value))
        return "".join(parts)


def _node(cls):
    """``attrs.frozen`` with our iterative __eq__/__hash__/__repr__ (from ``_Node``)."""
    return attrs.frozen(eq=False, repr=False)(cls)


@_node
class Name(_Node):
    """An identifier as written (case preserved; consumers lowercase)."""

    text: str
    line: int = _position()
    col: int = _position()


@_node
class Number(_Node):
    """An unsigned numeric literal as written: ``124``, ``1.5``, ``1.4E22``, ``1e-3``."""

    text: str
    line: int = _position()
    col: int = _position()


@_node
class DateLit(_Node):
    """``2015-07-30``."""

    text: str
    line: int = _position()
    col: int = _position()


@_node
class TimestampLit(_Node):
    """``2015-07-30T10:00:00.5``."""

    text: str
    line: int = _position()
    col: int = _position()


@_node
class Raw(_Node):
    """A raw selector: ``string(any text)``, ``date(...)``, ``timestamp(...)``.

    ``func`` is lowercased; ``text`` is everything up to the balancing parenthesis, exactly.
    """

    func: str
    text: str
    line: int = _position()
    col: int = _position()


@_node
class Call(_Node):
    """``name(args...)``; ``name`` as written."""

    name: str
    args: tuple = attrs.field(converter=tuple)
    line: int = _position()
    col: int = _position()


@_node
class Group(_Node):
    """A parenthesised list not preceded by a name: ``(a, b)``, ``()``, ``(a(x) b(y))``, ``(a + 1)``."""

    items: tuple = attrs.field(converter=tuple)
    line: int = _position()
    col: int = _position()


@_node
class BinOp(_Node):
    """Infix operator; ``op`` is one of ``+ - * / || = <> < > <= >= and or``."""

    op: str
    left: object
    right: object
    line: int = _position()
    col: int = _position()


@_node
class UnaryOp(_Node):
    """Prefix operator; ``op`` is one of ``- + not``."""

    op: str
    operand: object
    line: int = _position()
    col: int = _position()


Node = Union[Name, Number, DateLit, TimestampLit, Raw, Call, Group, BinOp, UnaryOp]


# ---------------------------------------------------------------------------------------------
# Statements of a case file


@_node
class Bind(_Node):
    """``NAME := expr``; ``name`` as written."""

    name: str
    value: object
    line: int = _position()
    col: int = _position()


@_node
class Query(_Node):
    value: object
    line: int = _position()
    col: int = _position()


@_node
class Expect(_Node):
    """``expect expr``."""

    value: object
    line: int = _position()
    col: int = _position()


@_node
class ExpectError(_Node):
    """``error ClassName`` or ``error ClassName(key=value, ...)``.

    ``fields`` is a tuple of ``(key, value_text)`` pairs, values stripped raw text.
    """

    cls: str
    fields: tuple = attrs.field(default=(), converter=tuple)
    line: int = _position()
    col: int = _position()


Statement = Union[Bind, Query, Expect, ExpectError]
