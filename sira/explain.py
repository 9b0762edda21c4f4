"""``explain(node)``: an indented plan tree, one operator per line with its result heading.

    >>> from sira import parse
    >>> print(explain(parse("project(restrict(TABLE_DEE, true), ())")))
    PROJECT () -> {}
      RESTRICT true -> {}
        RELATION TABLE_DEE -> {}
"""

from __future__ import annotations


def _detail(node) -> str:
    from .syntax.printer import print_expression, print_node
    text = print_node(node)
    name = node.operator_name.lower()
    if text.startswith(name + "("):
        inner = text[len(name) + 1:-1]
        for child in node.children:
            child_text = print_node(child)
            if inner.startswith(child_text + ","):
                inner = inner[len(child_text) + 1:]
            elif inner == child_text:
                inner = ""
        return inner
    del print_expression
    return text


def explain_lines(node, depth=0) -> list:
    lines = [f"{'  ' * depth}{node.operator_name} {_detail(node)} -> {node.heading}".replace("  ->", " ->")]
    for child in node.children:
        lines.extend(explain_lines(child, depth + 1))
    return lines


def explain(node) -> str:
    """The plan of an algebra tree as indented text (plan tests compare this text)."""
    return "\n".join(explain_lines(node))
