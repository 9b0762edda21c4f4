"""``explain(node)``: an indented plan tree, one operator per line with its result heading.

    >>> from sira import parse
    >>> print(explain(parse("project(restrict(TABLE_DEE, true), ())")))
    PROJECT () -> {}
      RESTRICT true -> {}
        RELATION TABLE_DEE -> {}
"""

from __future__ import annotations


def spec_text(node) -> str:
    """The node's own arguments in the text syntax, without its relational operands."""
    from .syntax.printer import print_node
    text = print_node(node)
    prefix = node.operator_name.lower() + "("
    if not node.children or not text.startswith(prefix):
        return text
    rest = text[len(prefix):-1]
    for child in node.children:
        child_text = print_node(child)
        if rest.startswith(child_text):
            rest = rest[len(child_text):].lstrip(",")
    return rest


def explain(node) -> str:
    """The plan of an algebra tree as indented text (plan tests compare this text)."""
    from .syntax.builder import deep_recursion
    with deep_recursion():
        return _explain(node)


def _explain(node) -> str:
    lines = []
    stack = [(node, 0)]
    while stack:
        current, depth = stack.pop()
        spec = spec_text(current)
        lines.append(f"{'  ' * depth}{current.operator_name}{' ' + spec if spec else ''}"
                     f" -> {current.heading}")
        stack.extend((child, depth + 1) for child in reversed(current.children))
    return "\n".join(lines)
