"""AGGREGATE and SUMMARIZEBY (seed 004, "Aggregation", "Summarization")."""

from __future__ import annotations

import attrs

from ..errors import DuplicateAttribute
from ..expressions.evaluate import infer_type
from ..expressions.library import aggregation
from ..values import Heading, normalize_name
from .basic import _lower_names
from .node import Node, node_class
from .packing import check_interval_list, optional_names


def _lower_agg_specs(specs) -> tuple:
    return tuple((normalize_name(n), op.lower(), e) for n, op, e in specs)


def aggregations(specs, heading, operator):
    """The resolved :class:`~sira.expressions.library.Aggregation` of each spec, in order."""
    out = []
    seen = set()
    for name, op, expr in specs:
        if name in seen:
            raise DuplicateAttribute(attribute=name, operator=operator)
        seen.add(name)
        out.append(aggregation(op, infer_type(expr, heading, operator)))
    return out


#: what a sweep line over one interval keeps running: integer sums, max, min, and, or
SWEPT_AGGREGATES = frozenset({"plus", "max", "min", "and", "or"})


def sweepable(node, names=SWEPT_AGGREGATES, floats: bool = False):
    """``(attribute, aggregations)`` when the SUMMARIZEBYUSING ``node`` can be a sweep line over
    its one USING attribute: no formula reads that attribute and every aggregation is one of
    ``names``, with ``plus`` over integers (or FLOATs too, with ``floats``: a sweep that keeps
    their exact sum and rounds it once, as ``float_sum`` does); None otherwise. Every engine's
    sweep asks this.

        >>> from sira import parse
        >>> from sira.values import Heading
        >>> h = {"r": Heading.of({"k": "int", "v": "int", "during": "intinterval"})}
        >>> sweepable(parse("summarizebyusing(r, (k, during), (n(plus(1))), (during))", h))[0]
        'during'
        >>> sweepable(parse("summarizebyusing(r, (k, during), (n(plus(tofloat(v)))), "
        ...                 "(during))", h)) is None
        True
    """
    from ..expressions.nodes import attributes_used
    from ..types import FLOAT, INTEGER_TYPES
    if not node.using or len(node.using) != 1:
        return None
    (during,) = node.using
    aggs = aggregations(node.specs, node.source.heading, node.operator_name)
    sums = INTEGER_TYPES + (FLOAT,) if floats else INTEGER_TYPES
    if any(during in attributes_used(e) for _, _, e in node.specs) or any(
            a.name not in names or (a.name == "plus" and a.result_type not in sums)
            for a in aggs):
        return None
    return during, aggs


def bounded_product(agg) -> bool:
    """Whether the aggregation ``agg`` is a product of INTs or LONGs (an integer type with
    bounds), which the Python engine's sweep and the segment trees of DuckDB and Spark take
    (and Spark's SUMMARIZEBY multiplies from a bounded list): a FLOAT product is rounded at
    every step of a fold in order of value, and a BIGINT one grows without bound, so those
    split.

        >>> from sira.expressions.library import aggregation
        >>> from sira.types import FLOAT, INT
        >>> bounded_product(aggregation("mult", INT)), bounded_product(aggregation("mult", FLOAT))
        (True, False)
    """
    from ..types import IntegerType
    t = agg.result_type
    return agg.name == "mult" and isinstance(t, IntegerType) and t.min is not None


@node_class
class Aggregate(Node):
    """AGGREGATE (seed 004): ``aggregate(R, (silly(plus(pagesize)) count(plus(int(1)))))``.

    A one-tuple relation; on an empty input each attribute is its operator's identity.
    """

    source: Node
    specs: tuple = attrs.field(converter=_lower_agg_specs)
    operator_name = "AGGREGATE"
    packs = False  # one tuple: packed by definition

    def compute_heading(self):
        aggs = aggregations(self.specs, self.source.heading, "AGGREGATE")
        return Heading.of([(name, a.result_type) for (name, _, _), a in zip(self.specs, aggs)])

    @property
    def children(self):
        return (self.source,)


@node_class
class SummarizeBy(Node):
    """SUMMARIZEBY (seed 004): ``summarizeby(R, (filename), (cnt(plus(int(1)))))``.

    One tuple per combination of the BY attributes present in R, with the aggregates of its group.
    ``summarizebyusing(R, (dept, during), (n(plus(1))), (during))`` aggregates at each point of
    the USING attributes (which must be among the BY attributes) and packs the result: the
    USING-SUMMARIZE of Date, Darwen and Lorentzos that SIRA_PRISE lists as not yet supported.
    """

    source: Node
    by: tuple = attrs.field(converter=_lower_names)
    specs: tuple = attrs.field(converter=_lower_agg_specs)
    using: tuple | None = attrs.field(default=None, converter=optional_names)
    operator_name = "SUMMARIZEBY"

    @property
    def pack_list(self):
        from .packing import interval_names
        return self.using if self.using is not None else interval_names(self.heading)

    def compute_heading(self):
        h = self.source.heading
        key = h.project(self.by, "SUMMARIZEBY")
        if self.using is not None:
            check_interval_list(self.using, key, "SUMMARIZEBYUSING")
        aggs = aggregations(self.specs, h, "SUMMARIZEBY")
        return key.extend([(name, a.result_type) for (name, _, _), a in zip(self.specs, aggs)],
                          "SUMMARIZEBY")

    @property
    def children(self):
        return (self.source,)
