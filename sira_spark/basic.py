"""Spark translations of relvars, literals, RESTRICT, PROJECT, EXTEND, RENAME, TRANSFORM."""

from __future__ import annotations

from pyspark.sql import functions as F

from sira.algebra.basic import Extend, Project, RelationLiteral, RelvarRef, Rename, Restrict, Transform
from sira.errors import SiraTypeError
from sira.expressions.nodes import AttrRef

from .compiler import translates
from .convert import heading_of_dataframe, to_dataframe
from .functions import column


@translates(RelvarRef)
def _relvar(node, children, c):
    try:
        value = c.relvars[node.name] if node.name in c.relvars else \
            {k.lower(): v for k, v in c.relvars.items()}[node.name]
    except KeyError:
        from sira.errors import UnknownRelvar
        raise UnknownRelvar(relvar=node.name, available=tuple(sorted(c.relvars))) from None
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
            df = df.distinct()  # a DataFrame may hold duplicates; a relation does not
    elif value.heading != node.heading:
        raise SiraTypeError(f"relvar '{node.name}' holds a relation with heading "
                            f"{value.heading}, but the expression was built for {node.heading}",
                            operator="RELVAR", expected=str(node.heading), got=str(value.heading))
    return df


@translates(RelationLiteral)
def _literal(node, children, c):
    return to_dataframe(c.spark, node.value)


@translates(Restrict)
def _restrict(node, children, c):
    (df,) = children
    return df.where(column(node.condition, node.source.heading, c))


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
    h = node.source.heading
    return df.select("*", *[column(e, h, c).alias(n) for n, e in node.specs])


@translates(Rename)
def _rename(node, children, c):
    (df,) = children
    mapping = dict(node.pairs)
    return df.select(*[F.col(f"`{n}`").alias(mapping.get(n, n)) for n in node.source.heading.names])


@translates(Transform)
def _transform(node, children, c):
    (df,) = children
    h = node.source.heading
    cols = [column(AttrRef(n) if e is None else e, h, c).alias(n) for n, e in node.specs]
    kept = {n for n, e in node.specs if e is None}
    out = df.select(*cols)
    return out if kept == set(h.names) else out.distinct()
