"""Spark translations of relvars, literals, RESTRICT, PROJECT, EXTEND, RENAME, TRANSFORM.

A formula that may fail (a division, an INT sum...) is evaluated exactly where the algebra
evaluates it (the rule: :mod:`sira.algebra.fallible`). Catalyst would otherwise push a condition
below a join, infer it for the other operand of a join or an intersection, push a restriction
on other attributes below a projection, or prune an attribute nothing reads, evaluating the
formula on tuples the Python engine never evaluates it on, or on too few.

The fence is :func:`opaque`: the formula's value behind a condition that is always true but
nondeterministic (``spark_partition_id() >= 0``, a read of the task's partition number).
Catalyst pushes, infers, combines and reorders no nondeterministic expression, and pushes no
filter below a projection or aggregate that computes one. A condition that may fail is one
opaque filter (:func:`fenced_where`). An attribute computed by a formula that may fail is
opaque, and an opaque filter that reads it and is true for every value keeps it from being
pruned (:func:`computed_on_every_row`). Total formulas get no fence: Catalyst optimises them as
it likes.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from sira.algebra.basic import Extend, Project, RelationLiteral, RelvarRef, Rename, Restrict, Transform
from sira.algebra.fallible import fallible_attributes, fallible_conditions, split_condition
from sira.errors import SiraTypeError
from sira.expressions.nodes import AttrRef

from .compiler import translates
from .convert import heading_of_dataframe, to_dataframe
from .functions import column


def opaque(value: Column) -> Column:
    """``value`` itself, as a nondeterministic expression Catalyst leaves where it is."""
    return F.when(F.spark_partition_id() >= 0, value)


def fenced_where(df: DataFrame, condition: Column) -> DataFrame:
    """The rows of ``df`` satisfying ``condition`` (which may fail), evaluated on every row of
    ``df`` and on no other, whatever the plan around it."""
    return df.where(opaque(condition))


def formula_column(value: Column, may_fail: bool) -> Column:
    """The column of one formula: opaque when it may fail."""
    return opaque(value) if may_fail else value


def computed_on_every_row(df: DataFrame, names) -> DataFrame:
    """``df``, whose columns ``names`` are computed by formulas that may fail (made opaque by
    the caller when a projection computes them), with those columns computed on every row even
    when nothing above reads them, and no filter from above going below them.

    The filter reads each column through :func:`opaque`, whose value may be NULL as far as
    Catalyst knows, so ``IS NOT NULL`` is never folded to TRUE (which would free the column to
    be pruned); sira values are never NULL, so every row passes.
    """
    if not names:
        return df
    return df.where(reduce(lambda a, b: a & b,
                           [opaque(F.col(f"`{n}`")).isNotNull() for n in names]))


def fenced_node(node, df: DataFrame) -> DataFrame:
    """The DataFrame of ``node`` (an operator with a plan of its own, whose conditions or
    aggregates may fail) with no filter from above going into it and its attributes computed
    by formulas that may fail never pruned."""
    names = fallible_attributes(node)
    if names:
        return computed_on_every_row(df, names)
    if fallible_conditions(node):
        return df.where(opaque(F.lit(True)))
    return df


@translates(RelvarRef)
def _relvar(node, children, c):
    try:
        value = c.relvars[node.name] if node.name in c.relvars else \
            {k.lower(): v for k, v in c.relvars.items()}[node.name]
    except KeyError:
        from sira.errors import UnknownRelvar
        raise UnknownRelvar(relvar=node.name, available=tuple(sorted(c.relvars))) from None
    value = c.engine.intake(value, node.name, c.options.get("nulls"))
    df = c.engine.load(value, relvar=node.name)
    from sira.values import Relation

    from .session import Unique
    if isinstance(value, Unique):
        value = value.value if isinstance(value.value, Relation) else value
    if not isinstance(value, Relation):
        df = df.toDF(*[n.lower() for n in df.columns])
        got = heading_of_dataframe(df, node.name)
        if got != node.heading:
            raise SiraTypeError(f"relvar '{node.name}' has columns {got}, but the expression was "
                                f"built for {node.heading}", operator="RELVAR",
                                expected=str(node.heading), got=str(got))
        df = c.engine.admit(node.name, value, df, node.heading, c.options)  # no NULL, NaN
        if not c.engine.is_unique(value):
            if c.need_distinct is None or node.name.lower() in c.need_distinct:
                df = df.distinct()  # a DataFrame may hold duplicates; a relation does not
            else:
                c.undeduped = True  # its duplicates cannot change the result (distinct at the end)
    elif value.heading != node.heading:
        raise SiraTypeError(f"relvar '{node.name}' holds a relation with heading "
                            f"{value.heading}, but the expression was built for {node.heading}",
                            operator="RELVAR", expected=str(node.heading), got=str(value.heading))
    return df


@translates(RelationLiteral)
def _literal(node, children, c):
    return to_dataframe(c.spark, node.value)


def restricted(df: DataFrame, condition, heading, c) -> DataFrame:
    """The rows of ``df`` (tuples of ``heading``) where ``condition`` holds: its leading total
    part free for Catalyst, the rest (which may fail) fenced. Live plans use it too."""
    total, rest = split_condition(condition)
    if total is not None:  # cannot fail: Catalyst may push it anywhere
        df = df.where(column(total, heading, c))
    if rest is None:
        return df
    return fenced_where(df, column(rest, heading, c))


def extended(df: DataFrame, node, c) -> DataFrame:
    """``df`` with the attributes an EXTEND ``node`` computes, those whose formula may fail
    computed on every row. Live plans use it too."""
    h = node.source.heading
    fallible = fallible_attributes(node)
    out = df.select("*", *[formula_column(column(e, h, c), n in fallible).alias(n)
                           for n, e in node.specs])
    return computed_on_every_row(out, fallible)


@translates(Restrict)
def _restrict(node, children, c):
    (df,) = children
    return restricted(df, node.condition, node.source.heading, c)


@translates(Project)
def _project(node, children, c):
    (df,) = children
    out = df.select(*[f"`{n}`" for n in node.heading.names])
    if node.heading.degree == node.source.heading.degree:
        return out  # keeping every attribute cannot create duplicates
    return out.distinct()


@translates(Extend)
def _extend(node, children, c):
    (df,) = children
    return extended(df, node, c)


@translates(Rename)
def _rename(node, children, c):
    (df,) = children
    mapping = dict(node.pairs)
    return df.select(*[F.col(f"`{n}`").alias(mapping.get(n, n)) for n in node.source.heading.names])


@translates(Transform)
def _transform(node, children, c):
    (df,) = children
    h = node.source.heading
    fallible = fallible_attributes(node)
    cols = [formula_column(column(AttrRef(n) if e is None else e, h, c), n in fallible).alias(n)
            for n, e in node.specs]
    kept = {n for n, e in node.specs if e is None}
    out = computed_on_every_row(df.select(*cols), fallible)
    return out if kept == set(h.names) else out.distinct()
