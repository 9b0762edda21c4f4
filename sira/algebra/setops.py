"""UNION, INTERSECT, MINUS, XMINUS (seed 004); the associative ones are n-ary."""

from __future__ import annotations

import attrs

from ..errors import SiraTypeError
from .node import Node, node_class
from .packing import UsingMixin, optional_names


def _at_least_two(operator, sources):
    if len(sources) < 2:
        raise SiraTypeError(f"{operator} takes two or more relations (got {len(sources)})",
                            operator=operator, expected="2 or more relations",
                            got=str(len(sources)))


class _NarySetOp(UsingMixin, Node):
    def compute_heading(self):
        _at_least_two(self.operator_name, self.sources)
        first = self.sources[0].heading
        for other in self.sources[1:]:
            first.require_equal(other.heading, self.operator_name)
        self.check_using(first)
        return first

    @property
    def children(self):
        return self.sources


@node_class
class Union(_NarySetOp):
    """UNION (seed 004, "Union"): ``union(R1, R2, ...)``; duplicates eliminated."""

    sources: tuple = attrs.field(converter=tuple)
    using: tuple | None = attrs.field(default=None, converter=optional_names)
    operator_name = "UNION"


@node_class
class Intersect(_NarySetOp):
    """INTERSECT (seed 004, "Intersection"): ``intersect(R1, R2, ...)``."""

    sources: tuple = attrs.field(converter=tuple)
    using: tuple | None = attrs.field(default=None, converter=optional_names)
    operator_name = "INTERSECT"


@node_class
class XMinus(_NarySetOp):
    """XMINUS, symmetric difference (seed 004): ``xminus(R1, R2, ...)``.

    n-ary XMINUS folds left to right, so a tuple is kept when it is in an odd number of arguments.
    """

    sources: tuple = attrs.field(converter=tuple)
    using: tuple | None = attrs.field(default=None, converter=optional_names)
    operator_name = "XMINUS"


@node_class
class Minus(UsingMixin, Node):
    """MINUS (seed 004, "Difference"): ``minus(R1, R2)``; ``minususing(R1, R2, (during))``."""

    left: Node
    right: Node
    using: tuple | None = attrs.field(default=None, converter=optional_names)
    operator_name = "MINUS"

    def compute_heading(self):
        self.left.heading.require_equal(self.right.heading, "MINUS")
        self.check_using(self.left.heading)
        return self.left.heading

    @property
    def children(self):
        return (self.left, self.right)
