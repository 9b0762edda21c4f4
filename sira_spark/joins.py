"""Spark translations of JOIN, SEMIJOIN, SEMIMINUS, LEFTJOIN: natural equi-joins on the common
attributes, plain ``==`` on scalar attributes and null-safe equality only on attributes that can
hold a null inside (an interval's open end, nested tuple/relation values). A join of two sets is
a set, so no ``distinct`` follows."""

from __future__ import annotations

from functools import reduce

from pyspark.sql import functions as F

from sira.algebra.fallible import fallible_attributes
from sira.algebra.joins import Join, LeftJoin, SemiJoin, SemiMinus

from .basic import computed_on_every_row, formula_column
from .compiler import ordered, translates
from .functions import column
from .guards import check_join, check_rows
from .packing import split_dataframes
from .types import equal


def pointwise_pair(node, left, lh, right, rh):
    shared = [n for n in node.pointwise if n in lh and n in rh]
    if not shared:
        return left, right
    key = [n for n in lh.names if n in rh and n not in shared]
    return tuple(split_dataframes([left, right], [lh, rh], shared, key))


def natural_join(left, lh, right, rh, how="inner"):
    common = [n for n in lh.names if n in rh]
    if not common:
        if how == "left_semi":
            return left if right.limit(1).count() else left.limit(0)
        if how == "left_anti":
            return left.limit(0) if right.limit(1).count() else left
        return left.crossJoin(right)
    r = right.select(*[F.col(f"`{n}`").alias(f"__r_{n}" if n in common else n)
                       for n in rh.names])
    cond = reduce(lambda a, b: a & b,
                  [equal(F.col(f"`{n}`"), F.col(f"`__r_{n}`"), lh.type_of(n)) for n in common])
    joined = left.join(r, cond, how)
    if how in ("left_semi", "left_anti"):
        return joined
    return joined.drop(*[f"__r_{n}" for n in common])


@translates(Join)
def _join(node, children, c):
    df, h = children[0], node.sources[0].heading
    for source, other in zip(node.sources[1:], children[1:]):
        df, other = pointwise_pair(node, df, h, other, source.heading)
        out = h.union(source.heading)
        check_join(c, node, df, h, other, source.heading)  # max_tuples, before it runs
        df = ordered(natural_join(df, h, other, source.heading), out)
        h = out
    return df


@translates(SemiJoin)
def _semijoin(node, children, c):
    lh, rh = node.left.heading, node.right.heading
    left, right = pointwise_pair(node, children[0], lh, children[1], rh)
    return natural_join(left, lh, right, rh, "left_semi")


@translates(SemiMinus)
def _semiminus(node, children, c):
    lh, rh = node.left.heading, node.right.heading
    left, right = pointwise_pair(node, children[0], lh, children[1], rh)
    return natural_join(left, lh, right, rh, "left_anti")


@translates(LeftJoin)
def _leftjoin(node, children, c):
    lh, rh = node.left.heading, node.right.heading
    left, right = pointwise_pair(node, children[0], lh, children[1], rh)
    joined = ordered(natural_join(left, lh, right, rh), node.heading)
    unmatched = natural_join(left, lh, right, rh, "left_anti")
    if node.repacked_for_defaults:  # a default reads a pointwise attribute: the packed pieces
        from .packing import pack_dataframe
        unmatched = ordered(pack_dataframe(unmatched, lh, node.repacked_for_defaults), lh)
    fallible = fallible_attributes(node)
    extended = computed_on_every_row(unmatched.select("*", *[
        formula_column(column(e, lh, c), n in fallible).alias(n) for n, e in node.defaults]),
        fallible)
    result = joined.unionByName(ordered(extended, node.heading))
    check_rows(c, node, result)  # max_tuples
    return result
