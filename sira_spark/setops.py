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


@translates(Intersect)
def _intersect(node, children, c):
    return reduce(lambda a, b: a.intersect(b), pointwise(node, children))


@translates(Minus)
def _minus(node, children, c):
    left, right = pointwise(node, children)
    return left.subtract(right)


@translates(XMinus)
def _xminus(node, children, c):
    dfs = pointwise(node, children)
    return reduce(lambda a, b: a.subtract(b).unionByName(b.subtract(a)), dfs)
