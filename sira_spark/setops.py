"""Spark translations of UNION, INTERSECT, MINUS, XMINUS (set semantics: unionByName + distinct;
INTERSECT and MINUS as left-semi / left-anti equi-joins on every attribute; never positional
union/exceptAll).

A set operator pointwise on exactly one interval attribute (``minususing(R, S, (during))``, or
any of them on a relation with one interval attribute) runs as a sweep line
(``packing.sweep``) whose result is already packed; with several pointwise attributes the inputs
are split together first.
"""

from __future__ import annotations

from functools import reduce

from sira.algebra.setops import Intersect, Minus, Union, XMinus

from .compiler import Packed, translates
from .joins import natural_join
from .packing import split_dataframes, sweep


def pointwise(node, dfs):
    names = [n for n in node.pointwise if n in node.heading]
    if not names:
        return dfs
    key = [n for n in node.heading.names if n not in names]
    return split_dataframes(dfs, [node.heading] * len(dfs), names, key)


def _sweepable(node) -> str | None:
    """The one pointwise attribute when the result is to be packed on exactly it."""
    names = [n for n in node.pointwise if n in node.heading]
    if len(names) == 1 and node.packs and tuple(node.pack_list) == tuple(names):
        return names[0]
    return None


def _odd(covs):
    """XMINUS folds left to right: a point is kept when an odd number of inputs cover it."""
    return reduce(lambda a, b: a != b, [c > 0 for c in covs])


def _swept(node, children, keep):
    name = _sweepable(node)
    if name is None:
        return None
    return Packed(sweep(children, node.heading, name, keep))


@translates(Union)
def _union(node, children, c):
    swept = _swept(node, children, lambda covs: reduce(lambda a, b: a | b,
                                                       [x > 0 for x in covs]))
    if swept is not None:
        return swept
    return reduce(lambda a, b: a.unionByName(b), children).distinct()


def _nilary(c, present: bool):
    """TABLE_DEE or TABLE_DUM (Spark's INTERSECT/EXCEPT on no columns aggregate globally and
    always give one row, so relations without attributes are decided here)."""
    return c.spark.range(1 if present else 0).select()


def _nonempty(df) -> bool:
    return bool(df.limit(1).count())


def _semi(node, a, b, how):
    """Rows of set ``a`` with (semi) / without (anti) an equal row in ``b``: a set again."""
    return natural_join(a, node.heading, b, node.heading, how)


@translates(Intersect)
def _intersect(node, children, c):
    if node.heading.degree == 0:
        return _nilary(c, all(_nonempty(df) for df in children))
    swept = _swept(node, children, lambda covs: reduce(lambda a, b: a & b,
                                                       [x > 0 for x in covs]))
    if swept is not None:
        return swept
    return reduce(lambda a, b: _semi(node, a, b, "left_semi"), pointwise(node, children))


@translates(Minus)
def _minus(node, children, c):
    if node.heading.degree == 0:
        return _nilary(c, _nonempty(children[0]) and not _nonempty(children[1]))
    swept = _swept(node, children, lambda covs: (covs[0] > 0) & (covs[1] == 0))
    if swept is not None:
        return swept
    left, right = pointwise(node, children)
    return _semi(node, left, right, "left_anti")


@translates(XMinus)
def _xminus(node, children, c):
    if node.heading.degree == 0:
        return _nilary(c, sum(_nonempty(df) for df in children) % 2 == 1)
    swept = _swept(node, children, _odd)
    if swept is not None:
        return swept
    dfs = pointwise(node, children)
    return reduce(lambda a, b: _semi(node, a, b, "left_anti").unionByName(
        _semi(node, b, a, "left_anti")), dfs)
