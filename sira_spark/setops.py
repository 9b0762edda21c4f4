"""Spark translations of UNION, INTERSECT, MINUS, XMINUS (set semantics: unionByName + distinct,
intersect, subtract; never positional union/exceptAll)."""

from __future__ import annotations

from functools import reduce

from sira.algebra.setops import Intersect, Minus, Union, XMinus

from .compiler import translates
from .packing import split_dataframes


def pointwise(node, dfs):
    names = [n for n in node.pointwise if n in node.heading]
    if not names:
        return dfs
    key = [n for n in node.heading.names if n not in names]
    return split_dataframes(dfs, [node.heading] * len(dfs), names, key)


@translates(Union)
def _union(node, children, c):
    return reduce(lambda a, b: a.unionByName(b), children).distinct()


def _nilary(c, present: bool):
    """TABLE_DEE or TABLE_DUM (Spark's INTERSECT/EXCEPT on no columns aggregate globally and
    always give one row, so relations without attributes are decided here)."""
    return c.spark.range(1 if present else 0).select()


def _nonempty(df) -> bool:
    return bool(df.limit(1).count())


@translates(Intersect)
def _intersect(node, children, c):
    if node.heading.degree == 0:
        return _nilary(c, all(_nonempty(df) for df in children))
    return reduce(lambda a, b: a.intersect(b), pointwise(node, children))


@translates(Minus)
def _minus(node, children, c):
    if node.heading.degree == 0:
        return _nilary(c, _nonempty(children[0]) and not _nonempty(children[1]))
    left, right = pointwise(node, children)
    return left.subtract(right)


@translates(XMinus)
def _xminus(node, children, c):
    if node.heading.degree == 0:
        return _nilary(c, sum(_nonempty(df) for df in children) % 2 == 1)
    dfs = pointwise(node, children)
    return reduce(lambda a, b: a.subtract(b).unionByName(b.subtract(a)), dfs)
