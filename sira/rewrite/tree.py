"""Walking and rebuilding algebra trees for the rewrite rules.

Nodes are frozen; a rule returns a new node (``attrs.evolve``) or the same one. The walk is
bottom-up and visits a node shared by several parents once.

    >>> from sira import parse
    >>> tree = parse("project(restrict(relation(body(tuple(a(1)))), gt(a, 0)), (a))")
    >>> [type(n).__name__ for n in walk(tree)]
    ['RelationLiteral', 'Restrict', 'Project']
"""

from __future__ import annotations

import attrs

from ..algebra.node import Node


def _child_fields(node) -> list:
    """(field name, is a tuple of nodes) for the fields of ``node`` holding its children, in
    the order of ``node.children``; None when the fields do not line up with the children (a
    node the rules then leave alone)."""
    fields = []
    found = []
    for f in attrs.fields(type(node)):
        value = getattr(node, f.name)
        if isinstance(value, Node):
            fields.append((f.name, False))
            found.append(value)
        elif isinstance(value, tuple) and value and all(isinstance(v, Node) for v in value):
            fields.append((f.name, True))
            found.extend(value)
    if tuple(found) != tuple(node.children):
        return None
    return fields


def with_children(node, children) -> Node:
    """``node`` with its children replaced (in ``node.children`` order); the same node when
    nothing changed."""
    children = tuple(children)
    old = tuple(node.children)
    if len(children) != len(old) or all(a is b for a, b in zip(children, old)):
        return node
    fields = _child_fields(node)
    if fields is None:
        return node
    changes = {}
    i = 0
    for name, many in fields:
        if many:
            n = len(getattr(node, name))
            changes[name] = tuple(children[i:i + n])
            i += n
        else:
            changes[name] = children[i]
            i += 1
    return attrs.evolve(node, **changes)


def transform(node, rule, memo: dict | None = None) -> Node:
    """Apply ``rule`` (node -> node) to every node bottom-up; a shared subtree is rewritten
    once."""
    memo = {} if memo is None else memo
    key = id(node)
    done = memo.get(key)
    if done is not None:
        return done[1]
    children = [transform(c, rule, memo) for c in node.children]
    out = rule(with_children(node, children))
    memo[key] = (node, out)  # keeps ``node`` alive so its id is not reused
    return out


def walk(node):
    """Every node of a tree, children before parents, each once."""
    seen = set()
    out = []

    def visit(n):
        if id(n) in seen:
            return
        seen.add(id(n))
        for c in n.children:
            visit(c)
        out.append(n)
    visit(node)
    return out
