"""Spark translations of JOIN, SEMIJOIN, SEMIMINUS, LEFTJOIN: natural equi-joins on the common
attributes, plain ``==`` on scalar attributes and null-safe equality only on attributes that can
hold a null inside (an interval's open end, nested tuple/relation values). A join of two sets is
a set, so no ``distinct`` follows.

A JOIN of two operands pointwise on one shared interval attribute is an overlap join
(``overlap_join``), as on the Python and DuckDB engines, never a split: both operands are packed on
the interval and numbered, then per key, in order over every begin and end of both sides
(``packing.running_rows``: per key and bucket of position), two running counts are kept (left
begins, right begins so far; at one point ends first, then left begins, then right begins). A left
tuple's partners are the right tuples numbered in (right count at its begin, right count at its
end]: the right begins inside it. A right tuple's are the left begins strictly inside it. So every
overlapping pair is found once, by whichever begin lies inside the other interval; ``sequence`` and
``explode`` spread each tuple over its partners' numbers and an equi-join on (key, number) meets
them. Its size, the sum of the ranges, is known before it runs, and ``max_tuples`` is checked on it.
SEMIJOIN and SEMIMINUS on such an attribute run as that JOIN with what the right operand covers
(``sira.algebra.derived.semi_as_overlap_join``; SEMIMINUS then as a swept MINUS). O(n log n +
output) however long the intervals: the split cut every interval at every boundary of its key inside
it.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import functions as F

from sira.algebra.derived import binary_joins, leftjoin_parts, overlap_attribute
from sira.algebra.fallible import fallible_attributes
from sira.algebra.joins import Join, LeftJoin, SemiJoin, SemiMinus
from sira.engine.guards import compiled_within, inner_join_is_counted

from .basic import computed_on_every_row, formula_column
from .compiler import Packed, ordered, translates
from .functions import column
from .guards import check_join, check_rows
from .packing import _c, split_dataframes
from .rowbound import sequence_join, stored
from .types import equal


def pointwise_pair(node, left, lh, right, rh):
    shared = [n for n in node.pointwise if n in lh and n in rh]
    if not shared:
        return left, right
    key = [n for n in lh.names if n in rh and n not in shared]
    return tuple(split_dataframes([left, right], [lh, rh], shared, key))


def natural_join(left, lh, right, rh, how="inner", sequence: bool = False):
    """``left`` joined with ``right`` on their common attributes (``lh``, ``rh``: their
    headings). Spark chooses how, from its size estimates, unless ``sequence``: both sides may
    be as long as a sequence, and it is a sort-merge join (:func:`rowbound.sequence_join`)."""
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
    joined = sequence_join(left, r, cond, how) if sequence else left.join(r, cond, how)
    if how in ("left_semi", "left_anti"):
        return joined
    return joined.drop(*[f"__r_{n}" for n in common])


def overlap_join(c, node, left, lh, right, rh, name):
    """JOIN of ``left`` and ``right`` pointwise on ``name``, their one shared pointwise
    attribute, packed on it (see the module docstring); ``max_tuples`` checked before it runs.

    Each packed side is numbered (``monotonically_increasing_id``) and stored
    (``localCheckpoint``), so the numbers the window sees are the ones the final join sees."""
    from .guards import check_size
    from .packing import SEQUENCE_BUCKET_ROWS, packed_source
    key = [n for n in lh.names if n in rh and n != name]
    sides = [stored(packed_source(df, source, name).withColumn(
        "__id", F.monotonically_increasing_id()))
        for df, source in zip((left, right), node.sources)]  # a window is packed already
    events = []
    for j, side in enumerate(sides):  # j: 0 left, 1 right
        iv = _c(name)
        for pos, o, isb in ((iv["begin"], j + 1, True), (iv["end"], 0, False)):
            events.append(side.select(*[_c(k) for k in key], pos.alias("__pos"),
                                      F.lit(o).alias("__o"), F.lit(j).alias("__side"), "__id",
                                      F.lit(isb).alias("__isb")))
    ev = reduce(lambda x, y: x.unionByName(y), events)
    begins = {"__cl": (F.col("__o") == 1).cast("long"), "__cr": (F.col("__o") == 2).cast("long")}
    from .packing import running_rows  # per key, counted over buckets of position
    counted = running_rows(ev, ["__pos", "__o"], begins, [(k, lh.type_of(k)) for k in key]) \
        .select("__side", "__id", "__isb", *begins)
    own = F.when(F.col("__side") == 0, F.col("__cl")).otherwise(F.col("__cr"))
    other = F.when(F.col("__side") == 0, F.col("__cr")).otherwise(F.col("__cl"))
    marks = counted.groupBy("__side", "__id").agg(
        F.max(F.when(F.col("__isb"), own)).alias("__rn"),
        F.max(F.when(F.col("__isb"), other)).alias("__lo"),
        F.max(F.when(~F.col("__isb"), other)).alias("__hi")).localCheckpoint()
    size = None
    if inner_join_is_counted(c.lowering):
        size = int(marks.select(F.sum(F.greatest(F.col("__hi") - F.col("__lo"), F.lit(0))
                                      ).cast("decimal(38,0)")).first()[0] or 0)
        check_size(c, node, size)
    marked = [sequence_join(side, marks.where(F.col("__side") == j).drop("__side"), "__id")
              for j, side in enumerate(sides)]
    out = []
    for j, (mine, theirs) in enumerate(((marked[0], marked[1]), (marked[1], marked[0]))):
        spread = mine.where(F.col("__hi") > F.col("__lo")).withColumn(
            "__m", F.explode(F.sequence(F.col("__lo") + 1, F.col("__hi"))))
        a = spread.select(*[_c(n).alias(f"__a_{n}") for n in (lh if j == 0 else rh).names],
                          "__m")
        b = theirs.select(*[_c(n).alias(f"__b_{n}") for n in (rh if j == 0 else lh).names],
                          "__rn")
        cond = [F.col("__rn") == F.col("__m")]
        h = lh if j == 0 else rh
        cond += [equal(F.col(f"`__a_{k}`"), F.col(f"`__b_{k}`"), h.type_of(k)) for k in key]
        joined = sequence_join(a, b, reduce(lambda x, y: x & y, cond))
        lp, rp = ("__a_", "__b_") if j == 0 else ("__b_", "__a_")
        lb, le = F.col(f"`{lp}{name}`")["begin"], F.col(f"`{lp}{name}`")["end"]
        rb, re_ = F.col(f"`{rp}{name}`")["begin"], F.col(f"`{rp}{name}`")["end"]
        end = F.when(le.isNull(), re_).when(re_.isNull(), le).otherwise(F.least(le, re_))
        picked = [F.col(f"`{lp}{n}`").alias(n) for n in lh.names if n != name] + \
            [F.col(f"`{rp}{n}`").alias(n) for n in rh.names if n not in lh] + \
            [F.struct(F.greatest(lb, rb).alias("begin"), end.alias("end")).alias(name)]
        out.append(joined.select(*picked))
    joined = out[0].unionByName(out[1])
    if size is not None and size <= SEQUENCE_BUCKET_ROWS:
        # its rows, exactly (each spread row meets one row of the other side), kept with it:
        # a short result then needs no count of its own where it is read as a sequence
        return stored(joined, eager=False, rows=size)
    return joined


@translates(Join)
def _join(node, children, c):
    swept = overlap_attribute(node)
    if swept is not None:
        lh, rh = node.sources[0].heading, node.sources[1].heading
        df = ordered(overlap_join(c, node, children[0], lh, children[1], rh, swept),
                     node.heading)
        # packed on that attribute only: the compiler packs it again when the result is to be
        # packed on another interval attribute as well (one operand's own)
        return Packed(df) if tuple(node.pack_list) == (swept,) else df
    chain = binary_joins(node)
    if chain is not None:  # each step an overlap join where it can be: no split of all
        df = c.compile(chain)
        return Packed(df) if chain.pack_list == node.pack_list else df
    df, h = children[0], node.sources[0].heading
    for source, other in zip(node.sources[1:], children[1:]):
        df, other = pointwise_pair(node, df, h, other, source.heading)
        out = h.union(source.heading)
        check_join(c, node, df, h, other, source.heading)  # max_tuples, before it runs
        df = ordered(natural_join(df, h, other, source.heading), out)
        h = out
    return df


def _by_overlap_join(node, c):
    """SEMIJOIN/SEMIMINUS pointwise on one shared interval attribute, as the overlap join with
    what the right operand covers (``semi_as_overlap_join``), packed; None otherwise. That join
    is not counted, and not reused for an equal JOIN written elsewhere (``kept_for_reuse``)."""
    from sira.algebra.derived import semi_as_overlap_join
    lowered = semi_as_overlap_join(node)
    if lowered is None:
        return None
    (df,) = compiled_within(c, node, [lowered])  # a guard inside names this operator
    check_rows(c, node, df)  # its result counts, as on the Python engine (the JOIN inside
    # does not: inner_join_is_counted); packed on the shared attribute: the compiler packs it
    # on the others the result keeps
    return Packed(df) if tuple(node.pack_list) == tuple(lowered.using) else df


@translates(SemiJoin)
def _semijoin(node, children, c):
    covered = _by_overlap_join(node, c)
    if covered is not None:
        return covered
    lh, rh = node.left.heading, node.right.heading
    left, right = pointwise_pair(node, children[0], lh, children[1], rh)
    return natural_join(left, lh, right, rh, "left_semi")


@translates(SemiMinus)
def _semiminus(node, children, c):
    covered = _by_overlap_join(node, c)
    if covered is not None:
        return covered
    lh, rh = node.left.heading, node.right.heading
    left, right = pointwise_pair(node, children[0], lh, children[1], rh)
    return natural_join(left, lh, right, rh, "left_anti")


@translates(LeftJoin)
def _leftjoin(node, children, c):
    lh, rh = node.left.heading, node.right.heading
    parts = leftjoin_parts(node)
    if parts is not None:  # an overlap join and a SEMIMINUS by it: nothing is split
        joined, unmatched = compiled_within(c, node, parts)  # a guard inside names it
        # (the SEMIMINUS's result is packed on the left's pointwise attributes already)
        joined, unmatched = ordered(joined, node.heading), ordered(unmatched, lh)
    else:
        left, right = pointwise_pair(node, children[0], lh, children[1], rh)
        joined = ordered(natural_join(left, lh, right, rh), node.heading)
        unmatched = natural_join(left, lh, right, rh, "left_anti")
        if node.repacked_for_defaults:  # a default reads a pointwise attribute: packed
            from .packing import pack_dataframe
            unmatched = ordered(pack_dataframe(unmatched, lh, node.repacked_for_defaults), lh)
    fallible = fallible_attributes(node)
    extended = computed_on_every_row(unmatched.select("*", *[
        formula_column(column(e, lh, c), n in fallible).alias(n) for n, e in node.defaults]),
        fallible)
    result = joined.unionByName(ordered(extended, node.heading))
    check_rows(c, node, result)  # max_tuples
    return result
