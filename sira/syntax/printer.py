"""Trees back to text: ``parse(print_node(n)) == n``.

    >>> from sira import parse
    >>> print_node(parse("RENAME(TABLE_DEE, ())"))
    'rename(TABLE_DEE,())'
"""

from __future__ import annotations

from ..algebra.aggregation import Aggregate, SummarizeBy
from ..algebra.basic import Extend, Project, RelationLiteral, RelvarRef, Rename, Restrict, Transform
from ..algebra.closure import GTClose, TClose
from ..algebra.joins import DivideBy, Join, LeftJoin, SemiJoin, SemiMinus
from ..algebra.nesting import Group, Ungroup
from ..algebra.packing import Pack, Unpack
from ..algebra.windows import Changes, DStream, IStream, RStream, Window, WindowTable
from ..algebra.setops import Intersect, Minus, Union, XMinus
from ..algebra.spl import SplWindow
from ..algebra.windowby import WindowBy
from ..expressions.nodes import Aggregated, AttrRef, Call, FieldOf, Literal, RelationArg
from ..intervals import INTERVAL_TYPES
from ..values import TABLE_DEE, TABLE_DUM


def print_expression(expr) -> str:
    """A scalar expression in the text syntax."""
    if isinstance(expr, AttrRef):
        return expr.name
    if isinstance(expr, Literal):
        return expr.type.literal(expr.value)
    if isinstance(expr, RelationArg):
        return print_node(expr.node)
    if isinstance(expr, FieldOf):
        return f"{print_expression(expr.source)}.{expr.name}"
    if isinstance(expr, Aggregated):
        name = "" if expr.name is None else f",{expr.name}"
        return f"{expr.op}({print_expression(expr.source)}{name})"
    if isinstance(expr, Call):
        args = [print_expression(a) for a in expr.args]
        if expr.op == "average" and len(args) == 2:
            return f"average(count({args[0]})value({args[1]}))"
        if expr.op in INTERVAL_TYPES:
            return f"{expr.op}(begin({args[0]})" + (f"end({args[1]})" if len(args) > 1 else "") + ")"
        return f"{expr.op}(" + ",".join(args) + ")"
    return repr(expr)


def _specs(specs) -> str:
    return "(" + " ".join(f"{n}({print_expression(e)})" for n, e in specs) + ")"


def _names(names) -> str:
    return "(" + ",".join(names) + ")"


def _agg(specs) -> str:
    return "(" + " ".join(f"{n}({op}({print_expression(e)}))" for n, op, e in specs) + ")"


def print_node(node) -> str:
    """An algebra tree in the text syntax."""
    text = _print_node(node)
    if getattr(node, "using", None) is not None:
        name = node.operator_name.lower()
        text = f"{name}using{text[len(name):-1]},{_names(node.using)})"
    return text


def _print_node(node) -> str:
    p = print_node
    if isinstance(node, RelvarRef):
        return node.name
    if isinstance(node, RelationLiteral):
        if node.value == TABLE_DEE:
            return "TABLE_DEE"
        if node.value == TABLE_DUM:
            return "TABLE_DUM"
        return node.value.literal()
    if isinstance(node, Restrict):
        return f"restrict({p(node.source)},{print_expression(node.condition)})"
    if isinstance(node, Project):
        return f"project({p(node.source)},{_names(node.names)})"
    if isinstance(node, Extend):
        return f"extend({p(node.source)},{_specs(node.specs)})"
    if isinstance(node, Rename):
        return f"rename({p(node.source)},{_names([n for pair in node.pairs for n in pair])})"
    if isinstance(node, Transform):
        inner = " ".join(n if e is None else f"{n}({print_expression(e)})"
                         for n, e in node.specs)
        return f"transform({p(node.source)},({inner}))"
    if isinstance(node, (Union, Intersect, XMinus, Join)):
        return f"{node.operator_name.lower()}(" + ",".join(p(s) for s in node.sources) + ")"
    if isinstance(node, (Minus, SemiJoin, SemiMinus)):
        return f"{node.operator_name.lower()}({p(node.left)},{p(node.right)})"
    if isinstance(node, LeftJoin):
        return f"leftjoin({p(node.left)},{p(node.right)},{_specs(node.defaults)})"
    if isinstance(node, DivideBy):
        return f"divideby({p(node.subject)},{p(node.intersection)},{p(node.target)})"
    if isinstance(node, TClose):
        return f"tclose({p(node.source)},{_names(node.pairs)})"
    if isinstance(node, GTClose):
        return f"gtclose({p(node.source)},{_names(node.pairs)},{_specs(node.specs)})"
    if isinstance(node, Group):
        inner = " ".join(f"{rva}({','.join(names)})" for rva, names in node.specs)
        return f"group({p(node.source)},({inner}))"
    if isinstance(node, Ungroup):
        return f"ungroup({p(node.source)},{_names(node.names)})"
    if isinstance(node, Aggregate):
        return f"aggregate({p(node.source)},{_agg(node.specs)})"
    if isinstance(node, Window):
        alias = "" if node.during == "during" else f" as({node.during})"
        return f"window({p(node.source)},{node.ts},{node.spec.text()}{alias})"
    if isinstance(node, WindowTable):
        names = {"tumble": ("size", None), "hop": ("size", "slide"),
                 "cumulate": ("size", "step"), "session": ("gap", None)}[node.kind]
        parts = [f"{names[0]}({node.size})"] if node.size is not None else []
        if node.slide is not None:
            parts.append(f"{names[1]}({node.slide})")
        if node.offset is not None:
            parts.append(f"offset({node.offset})")
        if node.partition:
            parts.append(f"partition({','.join(node.partition)})")
        if node.unit:
            parts.insert(0, f"unit({node.unit})")
        return f"{node.kind}({p(node.source)},{node.ts},{' '.join(parts)})"
    if isinstance(node, WindowBy):
        return f"windowby({p(node.source)},{node.options_text()})"
    if isinstance(node, (IStream, DStream, Changes)):
        extra = "" if node.during == "during" else f",{node.during}"
        return f"{node.operator_name.lower()}({p(node.source)},{node.at}{extra})"
    if isinstance(node, RStream):
        extra = "" if node.during == "during" else f",{node.during}"
        return f"rstream({p(node.source)},{node.at},{p(node.ticks)}{extra})"
    if isinstance(node, SplWindow):
        return f"splwindow({p(node.source)},{node.ts},{node.kind},{node.options_text()})"
    if isinstance(node, (Pack, Unpack)):
        return f"{node.operator_name.lower()}({p(node.source)},{_names(node.on)})"
    if isinstance(node, SummarizeBy):
        return f"summarizeby({p(node.source)},{_names(node.by)},{_agg(node.specs)})"
    return f"<{type(node).__name__}>"
