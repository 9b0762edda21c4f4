"""DuckDB translations of relvars, literals, RESTRICT, PROJECT, EXTEND, RENAME, TRANSFORM.

An expression that may fail (a division, a checked sum...) is computed above an optimisation
barrier (a LIMIT no relation reaches): DuckDB would otherwise push a condition below a join or
another restriction and evaluate it on tuples the Python engine never evaluates it on, raising
an error Python does not raise.
"""

from __future__ import annotations

from sira.algebra.basic import Extend, Project, RelationLiteral, RelvarRef, Rename, Restrict, Transform
from sira.errors import SiraTypeError
from sira.expressions.nodes import AttrRef

from .compiler import translates
from .functions import can_fail, expression
from .sql import DEE, column_list, ident

#: a LIMIT no relation reaches: DuckDB pushes no condition through it
BARRIER = 9223372036854775807


def guarded(name: str, child, exprs) -> str:
    """The FROM source for computing ``exprs`` over the child named ``name``: behind a
    barrier when one of them may fail and the child is more than a scan."""
    if any(can_fail(e) for e in exprs if e is not None) and \
            not isinstance(child, (RelvarRef, RelationLiteral)):
        return f"(SELECT * FROM {name} LIMIT {BARRIER}) AS {ident('barrier')}"
    return name


@translates(RelvarRef)
def _relvar(node, children, c):
    s = c.relvar_scan(node.name)
    if s.heading != node.heading:
        raise SiraTypeError(f"relvar '{node.name}' holds a relation with heading {s.heading}, "
                            f"but the expression was built for {node.heading}",
                            operator="RELVAR", expected=str(node.heading), got=str(s.heading))
    return s.sql()


@translates(RelationLiteral)
def _literal(node, children, c):
    from .relvars import _relation_scan
    return _relation_scan(c, "literal", node.value).sql()


@translates(Restrict)
def _restrict(node, children, c):
    (child,) = children
    cond = expression(node.condition, node.source.heading, c)
    return f"SELECT * FROM {guarded(child, node.source, [node.condition])} WHERE {cond}"


@translates(Project)
def _project(node, children, c):
    (child,) = children
    if node.heading.degree == 0:
        return f"SELECT DISTINCT TRUE AS {DEE} FROM {child}"
    distinct = "" if node.heading.degree == node.source.heading.degree else "DISTINCT "
    return f"SELECT {distinct}{column_list(node.heading)} FROM {child}"


@translates(Extend)
def _extend(node, children, c):
    (child,) = children
    h = node.source.heading
    values = [f"{expression(e, h, c)} AS {ident(n)}" for n, e in node.specs]
    source = guarded(child, node.source, [e for _, e in node.specs])
    return f"SELECT *, {', '.join(values)} FROM {source}"


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
    distinct = "" if kept == set(h.names) else "DISTINCT "
    source = guarded(child, node.source, [e for _, e in node.specs])
    return f"SELECT {distinct}{', '.join(values)} FROM {source}"
