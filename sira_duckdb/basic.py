"""DuckDB translations of relvars, literals, RESTRICT, PROJECT, EXTEND, RENAME, TRANSFORM.

A formula that may fail (a division, a checked sum...) is evaluated exactly where the algebra
evaluates it (the rule: :mod:`sira.algebra.fallible`). DuckDB would otherwise push a condition
below a join, push a restriction on other attributes below a projection or an aggregation, or
drop an attribute nothing reads, evaluating the formula on tuples the Python engine never
evaluates it on, or on too few.

The fence is a LIMIT no relation reaches (:data:`BARRIER`): DuckDB moves no filter across a
LIMIT, in either direction (it stays in the plan as a streaming limit that only counts rows).
A condition that may fail runs between two of them (:func:`fenced_where`). An attribute
computed by a formula that may fail is computed between two of them and read by a filter that
is true for every value (:func:`computed_on_every_row`): ``vector_type`` is volatile, so DuckDB
neither folds that filter away nor moves it, and the column it reads is never pruned. Total
formulas get no fence: DuckDB optimises them as it likes.
"""

from __future__ import annotations

from sira.algebra.basic import Extend, Project, RelationLiteral, RelvarRef, Rename, Restrict, Transform
from sira.algebra.fallible import (fallible_attributes, fallible_conditions, may_fail,
                                   split_condition)
from sira.errors import SiraTypeError
from sira.expressions.nodes import AttrRef

from .compiler import translates
from .functions import expression
from .sql import DEE, column_list, ident

#: a LIMIT no relation reaches: DuckDB pushes no condition through it
BARRIER = 9223372036854775807


def guarded(name: str, child, exprs) -> str:
    """The FROM source for evaluating ``exprs`` over the child named ``name``: behind a
    barrier when one of them may fail and the child is more than a scan (so no condition of
    the node goes down into the child, and none of the child's comes up past the node)."""
    if any(may_fail(e) for e in exprs if e is not None) and \
            not isinstance(child, (RelvarRef, RelationLiteral)):
        return f"(SELECT * FROM {name} LIMIT {BARRIER}) AS {ident('barrier')}"
    return name


def fenced(sql: str) -> str:
    """``sql`` (a SELECT) behind a barrier: no condition from above goes into it."""
    return f"SELECT * FROM ({sql}) AS {ident('fenced')} LIMIT {BARRIER}"


def fenced_where(source: str, condition: str) -> str:
    """The rows of ``source`` (a FROM source already behind a barrier, or a scan) satisfying
    ``condition``, a condition that may fail: evaluated on every row of ``source`` and on no
    other, whatever the query around it."""
    return f"SELECT * FROM {source} WHERE {condition} LIMIT {BARRIER}"


def computed_on_every_row(sql: str, names) -> str:
    """``sql`` (a SELECT computing attributes ``names`` with formulas that may fail) made to
    compute them on every row it produces, even when nothing above reads them, and behind a
    barrier.

        >>> print(computed_on_every_row('SELECT *, 6 // "a" AS "x" FROM t', ["x"]))
        SELECT * FROM (SELECT * FROM (SELECT *, 6 // "a" AS "x" FROM t) AS "computed" LIMIT \
9223372036854775807) AS "kept" WHERE vector_type("x") IS NOT NULL LIMIT 9223372036854775807
    """
    if not names:
        return sql
    computed = f"SELECT * FROM ({sql}) AS {ident('computed')} LIMIT {BARRIER}"
    read = " AND ".join(f"vector_type({ident(n)}) IS NOT NULL" for n in names)
    return f"SELECT * FROM ({computed}) AS {ident('kept')} WHERE {read} LIMIT {BARRIER}"


def fenced_node(node, sql: str) -> str:
    """The SELECT of ``node`` (an operator with a plan of its own, whose conditions or
    aggregates may fail) with no filter from above going into it and its attributes computed
    by formulas that may fail never pruned."""
    names = fallible_attributes(node)
    if names:
        return computed_on_every_row(sql, names)
    return fenced(sql) if fallible_conditions(node) else sql


@translates(RelvarRef)
def _relvar(node, children, c):
    s = c.relvar_scan(node.name)
    if s.heading != node.heading:
        raise SiraTypeError(f"relvar '{node.name}' holds a relation with heading {s.heading}, "
                            f"but the expression was built for {node.heading}",
                            operator="RELVAR", expected=str(node.heading), got=str(s.heading))
    if s.distinct and c.need_distinct is not None and node.name.lower() not in c.need_distinct:
        c.undeduped = True  # its duplicates cannot change the result: the final DISTINCT goes
        return s.sql(distinct=False)
    return s.sql()


@translates(RelationLiteral)
def _literal(node, children, c):
    from .relvars import _relation_scan
    return _relation_scan(c, "literal", node.value).sql()


@translates(Restrict)
def _restrict(node, children, c):
    (child,) = children
    h = node.source.heading
    total, rest = split_condition(node.condition)
    if rest is None:  # cannot fail: DuckDB may push it anywhere
        return f"SELECT * FROM {child} WHERE {expression(total, h, c)}"
    if total is None:
        source = guarded(child, node.source, [rest])
    else:  # the total part first, free to go down; the rest on the tuples it keeps
        source = (f"(SELECT * FROM (SELECT * FROM {child} WHERE {expression(total, h, c)}) "
                  f"AS {ident('total')} LIMIT {BARRIER}) AS {ident('barrier')}")
    return fenced_where(source, expression(rest, h, c))


@translates(Project)
def _project(node, children, c):
    (child,) = children
    if node.heading.degree == 0:
        return f"SELECT DISTINCT TRUE AS {DEE} FROM {child}"
    # the compiler packs a result to be packed, and a PACK needs no DISTINCT before it
    same = node.heading.degree == node.source.heading.degree or (node.packs and node.pack_list)
    distinct = "" if same else "DISTINCT "
    return f"SELECT {distinct}{column_list(node.heading)} FROM {child}"


@translates(Extend)
def _extend(node, children, c):
    (child,) = children
    h = node.source.heading
    values = [f"{expression(e, h, c)} AS {ident(n)}" for n, e in node.specs]
    return computed_on_every_row(f"SELECT *, {', '.join(values)} FROM {child}",
                                 fallible_attributes(node))


@translates(Rename)
def _rename(node, children, c):
    (child,) = children
    mapping = dict(node.pairs)
    if node.heading.degree == 0:
        return f"SELECT {DEE} FROM {child}"
    return "SELECT " + ", ".join(f"{ident(n)} AS {ident(mapping.get(n, n))}"
                                 for n in node.source.heading.names) + f" FROM {child}"


@translates(Transform)
def _transform(node, children, c):
    (child,) = children
    h = node.source.heading
    if node.heading.degree == 0:
        return f"SELECT DISTINCT TRUE AS {DEE} FROM {child}"
    values = [f"{expression(AttrRef(n) if e is None else e, h, c)} AS {ident(n)}"
              for n, e in node.specs]
    kept = {n for n, e in node.specs if e is None}
    out = computed_on_every_row(f"SELECT {', '.join(values)} FROM {child}",
                                fallible_attributes(node))
    if kept == set(h.names):
        return out
    return f"SELECT DISTINCT * FROM ({out}) AS {ident('transformed')}"
