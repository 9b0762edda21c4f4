"""AGGREGATE and SUMMARIZEBY (seed 004, "Aggregation", "Summarization")."""

from __future__ import annotations

import attrs

from ..errors import DuplicateAttribute
from ..expressions.evaluate import infer_type
from ..expressions.library import aggregation
from ..values import Heading, normalize_name
from .basic import _lower_names
from .node import Node, node_class


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


@node_class
class Aggregate(Node):
    """AGGREGATE (seed 004): ``aggregate(R, (silly(plus(pagesize)) count(plus(int(1)))))``.

    A one-tuple relation; on an empty input each attribute is its operator's identity.
    """

    source: Node
    specs: tuple = attrs.field(converter=_lower_agg_specs)
    operator_name = "AGGREGATE"

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
    """

    source: Node
    by: tuple = attrs.field(converter=_lower_names)
    specs: tuple = attrs.field(converter=_lower_agg_specs)
    operator_name = "SUMMARIZEBY"

    def compute_heading(self):
        h = self.source.heading
        key = h.project(self.by, "SUMMARIZEBY")
        aggs = aggregations(self.specs, h, "SUMMARIZEBY")
        return key.extend([(name, a.result_type) for (name, _, _), a in zip(self.specs, aggs)],
                          "SUMMARIZEBY")

    @property
    def children(self):
        return (self.source,)
