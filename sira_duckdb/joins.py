"""DuckDB translations of JOIN, SEMIJOIN, SEMIMINUS, LEFTJOIN: natural joins on the common
attributes, plain ``=`` on scalar attributes (hash join keys) and ``IS NOT DISTINCT FROM`` only
where a NULL may be inside (an interval's open end, nested values); SEMI and ANTI joins for the
semijoins (never NOT IN, whose three-valued logic would leak). A join of two sets is a set, so
no DISTINCT follows. Pointwise attributes are split together first."""

from __future__ import annotations

from sira.algebra.fallible import fallible_attributes
from sira.algebra.joins import Join, LeftJoin, SemiJoin, SemiMinus

from .basic import computed_on_every_row, guarded
from .compiler import translates
from .guards import limited, refuse_product
from .functions import Scope, expression
from .packing import split
from .sql import and_all, columns, ident
from .types import equal


def pointwise_pair(node, c, left, lh, right, rh):
    shared = [n for n in node.pointwise if n in lh and n in rh]
    if not shared:
        return left, right
    key = [n for n in lh.names if n in rh and n not in shared]
    split_sql = split(c, [left, right], [lh, rh], shared, key, node=node)
    return tuple(c.define(s, "split") for s in split_sql)


def join_condition(lh, rh, left="l", right="r") -> str:
    common = [n for n in lh.names if n in rh]
    return and_all(equal(f"{left}.{ident(n)}", f"{right}.{ident(n)}", lh.type_of(n))
                   for n in common)


def natural_join(left, lh, right, rh, out) -> str:
    """The SELECT of the natural join of two named relations, columns in ``out``'s order."""
    if out.degree == 0:
        return f"SELECT l.* FROM {left} AS l, {right} AS r"
    picked = [f"{'l' if n in lh else 'r'}.{ident(n)}" for n in out.names]
    common = [n for n in lh.names if n in rh]
    if not common:
        return f"SELECT {', '.join(picked)} FROM {left} AS l CROSS JOIN {right} AS r"
    return (f"SELECT {', '.join(picked)} FROM {left} AS l JOIN {right} AS r ON "
            f"{join_condition(lh, rh)}")


def semi(left, lh, right, rh, keep: bool) -> str:
    """The rows of ``left`` with (keep) / without a matching row in ``right``."""
    common = [n for n in lh.names if n in rh]
    if not common:
        exists = f"EXISTS (SELECT 1 FROM {right})"
        return f"SELECT * FROM {left} WHERE {'' if keep else 'NOT '}{exists}"
    how = "SEMI" if keep else "ANTI"
    return f"SELECT l.* FROM {left} AS l {how} JOIN {right} AS r ON {join_condition(lh, rh)}"


@translates(Join)
def _join(node, children, c):
    name, h = children[0], node.sources[0].heading
    for source, other in zip(node.sources[1:], children[1:]):
        name, other = pointwise_pair(node, c, name, h, other, source.heading)
        out = h.union(source.heading)
        if not any(n in source.heading for n in h.names):
            refuse_product(c, node, (name, other))  # its size is known now: refuse it early
        name = limited(c, node, natural_join(name, h, other, source.heading, out), "join")
        h = out
    return f"SELECT * FROM {name}"


@translates(SemiJoin)
def _semijoin(node, children, c):
    lh, rh = node.left.heading, node.right.heading
    left, right = pointwise_pair(node, c, children[0], lh, children[1], rh)
    return semi(left, lh, right, rh, True)


@translates(SemiMinus)
def _semiminus(node, children, c):
    lh, rh = node.left.heading, node.right.heading
    left, right = pointwise_pair(node, c, children[0], lh, children[1], rh)
    return semi(left, lh, right, rh, False)


@translates(LeftJoin)
def _leftjoin(node, children, c):
    lh, rh = node.left.heading, node.right.heading
    left, right = pointwise_pair(node, c, children[0], lh, children[1], rh)
    joined = c.define(natural_join(left, lh, right, rh, node.heading), "join")
    unmatched = c.define(semi(left, lh, right, rh, False), "unmatched")
    defaults = dict(node.defaults)
    source = guarded(unmatched, node, defaults.values())
    values = [ident(n) if n in lh else f"{expression(defaults[n], lh, c, Scope())} AS {ident(n)}"
              for n in node.heading.names] or columns(node.heading)
    cols = ", ".join(columns(node.heading))
    extended = computed_on_every_row(f"SELECT {', '.join(values)} FROM {source}",
                                     fallible_attributes(node))
    result = f"SELECT {cols} FROM {joined} UNION ALL SELECT {cols} FROM ({extended}) AS e"
    return f"SELECT * FROM {limited(c, node, result, 'leftjoin')}"  # max_tuples
