"""Spark translations of GROUP (collect_set of structs, sorted: an RVA's canonical form) and
UNGROUP (explode: a tuple whose RVA is empty disappears)."""

from __future__ import annotations

from pyspark.sql import functions as F

from sira.algebra.nesting import Group, Ungroup

from .compiler import ordered, translates
from .guards import check_rows


def _c(name):
    return F.col(f"`{name}`")


@translates(Group)
def _group(node, children, c):
    (df,) = children
    key = node.key_names
    aggs = [F.array_sort(F.collect_set(F.struct(*[_c(n) for n in sorted(names)]))).alias(rva)
            for rva, names in node.specs]
    nested = None  # max_tuples counts the tuples it nests
    for _, names in node.specs:
        part = df.select(*[_c(n) for n in list(key) + sorted(names)]).distinct().select(F.lit(1))
        nested = part if nested is None else nested.unionAll(part)
    check_rows(c, node, nested)
    out = df.groupBy(*[_c(k) for k in key]).agg(*aggs)
    if not key:  # a global aggregation yields one row even for an empty input
        out = out.where(F.size(_c(node.specs[0][0])) > 0)
    return out


@translates(Ungroup)
def _ungroup(node, children, c):
    (df,) = children
    h = node.source.heading
    for rva in node.names:
        sub = h.type_of(rva).heading
        df = df.withColumn("__row", F.explode(_c(rva))).drop(rva)
        df = df.select(*[col for col in df.columns if col != "__row"],
                       *[F.col("__row")[n].alias(n) for n in sub.names])
    result = ordered(df, node.heading).distinct()
    check_rows(c, node, result)  # max_tuples
    return result
