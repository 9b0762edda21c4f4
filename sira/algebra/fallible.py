"""Formulas that may fail, and the rule every engine keeps for them.

**The rule.** Every engine evaluates a formula on exactly the tuples the algebra gives it:
RESTRICT's condition on every tuple of its operand; EXTEND's and TRANSFORM's formulas on every
tuple of theirs; LEFTJOIN's defaults on every tuple of its left operand that matches nothing;
AGGREGATE's and SUMMARIZEBY's formulas on every tuple of their operand and their aggregations on
every group; WINDOWBY's conditions on the tuples of every partition and its aggregates on every
window; whether or not a later operator discards the attribute or the tuple. A formula
that may fail (division or mod by zero, INT or LONG overflow, FLOAT overflow, an IUNION of
intervals that do not meet: anything :func:`sira.expressions.facts.is_total` does not call total)
therefore raises on every engine exactly where the Python engine (the reference) raises, and
nowhere else. Within a condition, ``and`` and ``or`` evaluate their operands left to right and
stop as soon as the result is known, as the Python engine does.

Total formulas cannot tell the difference, so rewrites and the engines' own optimizers stay
free to move, repeat or drop them (a total condition still goes below a join, an unused total
attribute is still never computed). Only formulas that may fail are fenced off, node by node:

* the Python engine evaluates every operand in full, so it keeps the rule by construction;
* the rewrite pass (:mod:`sira.rewrite`) moves only total conditions and prunes no formula that
  may fail;
* Spark (:mod:`sira_spark.basic`) wraps such a formula in a cheap nondeterministic identity,
  which Catalyst neither pushes, infers, combines nor reorders, and keeps an attribute computed
  by one alive with a filter that reads it and is true for every value;
* DuckDB (:mod:`sira_duckdb.basic`) computes such a formula between LIMITs no relation reaches
  (no filter crosses a LIMIT, in either direction) and keeps its attribute alive with a filter
  on ``vector_type`` (volatile: never folded away), true for every value.

What the fences do not cover: an engine may still skip an operand altogether when it knows,
from the plan or at run time, that the operator above it has nothing to combine it with (a
join or semijoin whose other operand is empty, a restriction whose condition is false for every
tuple, or restrictions above it whose conditions together are: ``le(a, 0)`` over ``gt(a, 0)``,
even through a projection or a semijoin between them). The operand's formulas then never run,
and an error the Python engine raises on it does not happen (the result the engine gives is the
one the algebra gives, had the operand not failed).

    >>> from sira import parse
    >>> from sira.values import Heading
    >>> h = {"r": Heading.of({"a": "int", "b": "int"})}
    >>> fallible_attributes(parse("extend(r, (q(div(a, b)), c(gt(a, b))))", h))
    ('q',)
    >>> may_fail(parse("restrict(r, gt(a, 1))", h).condition)
    False
"""

from __future__ import annotations

from ..expressions.facts import conjoin, conjuncts, is_total
from ..expressions.library import NO_IDENTITY
from .aggregation import Aggregate, SummarizeBy, aggregations
from .basic import Extend, Restrict, Transform
from .joins import LeftJoin
from .windowby import WindowBy

#: aggregations whose fold may raise on some group (overflow, intervals that do not meet)
FALLIBLE_AGGREGATIONS = frozenset({"plus", "mult", "iunion"})


def may_fail(expr) -> bool:
    """Whether evaluating ``expr`` may raise for some tuple (it is not total)."""
    return not is_total(expr)


def fallible_attributes(node) -> tuple:
    """The attributes of ``node``'s result computed by a formula or an aggregation that may
    fail (an engine must compute them on every tuple or group, even when nothing reads them)."""
    if isinstance(node, (Extend, Transform)):
        return tuple(n for n, e in node.specs if e is not None and may_fail(e))
    if isinstance(node, LeftJoin):
        return tuple(n for n, e in node.defaults if may_fail(e))
    if isinstance(node, WindowBy):
        return tuple(n for n, e in node.aggregates if may_fail(e))
    if isinstance(node, (Aggregate, SummarizeBy)):
        grouped = isinstance(node, SummarizeBy)
        aggs = aggregations(node.specs, node.source.heading, node.operator_name)
        return tuple(n for (n, _, e), agg in zip(node.specs, aggs)
                     if may_fail(e) or agg.name in FALLIBLE_AGGREGATIONS
                     or (not grouped and agg.identity is NO_IDENTITY))
    return ()


def fallible_conditions(node) -> tuple:
    """The conditions ``node`` evaluates on tuples of its operand that may fail (a RESTRICT's;
    a WINDOWBY's START, END and LABEL conditions)."""
    if isinstance(node, Restrict):
        conditions = [node.condition]
    elif isinstance(node, WindowBy):
        conditions = [b.when for b in (node.start, node.end, node.label)
                      if b is not None and b.when is not None]
    else:
        conditions = []
    return tuple(e for e in conditions if may_fail(e))


def needs_fence(node) -> bool:
    """Whether some formula ``node`` evaluates may fail, so that an engine must evaluate it on
    exactly the tuples the algebra gives it (no more, no fewer)."""
    return bool(fallible_conditions(node) or fallible_attributes(node))


def split_condition(condition) -> tuple:
    """``(total, rest)``: the leading conjuncts of ``condition`` that cannot fail (evaluated on
    every tuple, so any engine may push them anywhere) and the conjunction of the others
    (evaluated, left to right, only on the tuples that satisfy the first); either may be None.

        >>> from sira import attr, call
        >>> split_condition((attr("a") > 1) & (call("div", 6, attr("a")) > 1))
        (gt(a,1), gt(div(6,a),1))
    """
    parts = conjuncts(condition)
    n = 0
    while n < len(parts) and not may_fail(parts[n]):
        n += 1
    total = conjoin(parts[:n]) if n else None
    rest = conjoin(parts[n:]) if n < len(parts) else None
    return total, rest
