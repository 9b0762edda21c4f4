"""DuckDB translations of UNION, INTERSECT, MINUS, XMINUS: SQL's own UNION, INTERSECT and
EXCEPT, which are set operations (duplicates removed, NULLs inside an interval or a nested
value equal to NULLs), each side selecting the heading's columns in the same order (SQL matches
them by position). A relation without attributes is its dummy column, so TABLE_DEE and
TABLE_DUM need no special case.

A set operator pointwise on exactly one interval attribute whose result is packed on it runs
as a sweep line (``packing.sweep``), already packed, except UNION, which is the PACK of the
operands one after the other (``packing.pack_one``: one sort, no coverage counts); with
several pointwise attributes the inputs are split together first.
"""

from __future__ import annotations

from sira.algebra.setops import Intersect, Minus, Union, XMinus

from .compiler import Packed, translates
from .packing import pack_one, split, sweep
from .sql import column_list


def pointwise(node, c, names):
    """The inputs, split together on the node's pointwise attributes when it has any."""
    attrs = [n for n in node.pointwise if n in node.heading]
    if not attrs:
        return list(names)
    key = [n for n in node.heading.names if n not in attrs]
    split_sql = split(c, names, [node.heading] * len(names), attrs, key, node=node)
    return [c.define(s, "split") for s in split_sql]


def _sweepable(node):
    """The one pointwise attribute when the result is to be packed on exactly it."""
    names = [n for n in node.pointwise if n in node.heading]
    if len(names) == 1 and node.packs and tuple(node.pack_list) == tuple(names):
        return names[0]
    return None


def _swept(node, children, c, keep):
    name = _sweepable(node)
    if name is None:
        return None
    return Packed(sweep(c, children, node.heading, name, keep))


def _set(node, names, op: str) -> str:
    cols = column_list(node.heading)
    return f" {op} ".join(f"SELECT {cols} FROM {n}" for n in names)


def _odd(covers):
    """XMINUS folds left to right: a point is kept when an odd number of inputs cover it."""
    return "((" + " + ".join(f"CASE WHEN {x} > 0 THEN 1 ELSE 0 END" for x in covers) + ") % 2 = 1)"


@translates(Union)
def _union(node, children, c):
    """UNION pointwise on one interval attribute, packed on it: the PACK of the operands one
    after the other (one sort of them all, no coverage counts to keep, and no DISTINCT, which a
    PACK does not need)."""
    name = _sweepable(node)
    if name is not None:
        union = c.define(_set(node, children, "UNION ALL"), "union")
        return Packed(pack_one(c, union, node.heading, name))
    return _set(node, children, "UNION")


@translates(Intersect)
def _intersect(node, children, c):
    swept = _swept(node, children, c, lambda cov: " AND ".join(f"{x} > 0" for x in cov))
    if swept is not None:
        return swept
    return _set(node, pointwise(node, c, children), "INTERSECT")


@translates(Minus)
def _minus(node, children, c):
    swept = _swept(node, children, c, lambda cov: f"{cov[0]} > 0 AND {cov[1]} = 0")
    if swept is not None:
        return swept
    return _set(node, pointwise(node, c, children), "EXCEPT")


@translates(XMinus)
def _xminus(node, children, c):
    swept = _swept(node, children, c, _odd)
    if swept is not None:
        return swept
    names = pointwise(node, c, children)
    acc = names[0]
    cols = column_list(node.heading)
    for other in names[1:]:
        acc = c.define(f"(SELECT {cols} FROM {acc} EXCEPT SELECT {cols} FROM {other}) UNION "
                       f"(SELECT {cols} FROM {other} EXCEPT SELECT {cols} FROM {acc})", "xminus")
    return f"SELECT * FROM {acc}"
