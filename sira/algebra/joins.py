"""JOIN, SEMIJOIN, SEMIMINUS, LEFTJOIN, DIVIDEBY (seed 004)."""

from __future__ import annotations

import attrs

from ..errors import SiraTypeError, UnknownAttribute
from ..expressions.evaluate import infer_type
from .basic import _lower_specs
from .node import Node, node_class
from .packing import UsingMixin, optional_names
from .setops import _at_least_two


@node_class
class Join(UsingMixin, Node):
    """Natural JOIN (seed 004): ``join(R1, R2, ...)``; RVAs may be join attributes.

    Interval join attributes match when they overlap (the result holds the intersection);
    ``joinusing(R1, R2, (L))`` names the pointwise attributes explicitly.
    """

    sources: tuple = attrs.field(converter=tuple)
    using: tuple | None = attrs.field(default=None, converter=optional_names)
    operator_name = "JOIN"

    def compute_heading(self):
        _at_least_two("JOIN", self.sources)
        h = self.sources[0].heading
        for other in self.sources[1:]:
            h = h.union(other.heading, "JOIN")
        self.check_using(h)
        return h

    @property
    def children(self):
        return self.sources


class _BinaryJoin(UsingMixin, Node):
    def compute_heading(self):
        self.left.heading.common(self.right.heading, self.operator_name)
        self.check_using(self.left.heading.union(self.right.heading))
        return self.left.heading

    @property
    def children(self):
        return (self.left, self.right)


@node_class
class SemiJoin(_BinaryJoin):
    """SEMIJOIN (seed 004, "Semijoin"): the tuples of R1 that join some tuple of R2."""

    left: Node
    right: Node
    using: tuple | None = attrs.field(default=None, converter=optional_names)
    operator_name = "SEMIJOIN"


@node_class
class SemiMinus(_BinaryJoin):
    """SEMIMINUS (seed 004, "Semidifference"): the tuples of R1 that join no tuple of R2."""

    left: Node
    right: Node
    using: tuple | None = attrs.field(default=None, converter=optional_names)
    operator_name = "SEMIMINUS"


@node_class
class LeftJoin(UsingMixin, Node):
    """LEFTJOIN (seed 004, "Left join"): ``leftjoin(R1, R2, (category(string(unknown))))``.

    Equals ``union(join(R1,R2), extend(semiminus(R1,R2), defaults))``: the defaults give a value
    to every attribute of R2 that R1 lacks.
    """

    left: Node
    right: Node
    defaults: tuple = attrs.field(converter=_lower_specs)
    using: tuple | None = attrs.field(default=None, converter=optional_names)
    operator_name = "LEFTJOIN"

    def compute_heading(self):
        lh, rh = self.left.heading, self.right.heading
        joined = lh.union(rh, "LEFTJOIN")
        missing = [n for n in rh.names if n not in lh]
        given = [n for n, _ in self.defaults]
        for name in given:
            if name not in missing:
                raise UnknownAttribute(attribute=name, operator="LEFTJOIN",
                                       available=tuple(missing))
        for name in missing:
            if name not in given:
                raise SiraTypeError(f"LEFTJOIN needs a default value for attribute '{name}'",
                                    operator="LEFTJOIN", expected=f"a default for {name}",
                                    got="none")
        extended = lh.extend([(n, infer_type(e, lh, "LEFTJOIN")) for n, e in self.defaults],
                             "LEFTJOIN")
        if extended != joined:
            for name in missing:
                want, got = joined.type_of(name), extended.type_of(name)
                if want != got:
                    raise SiraTypeError(f"LEFTJOIN: the default for '{name}' must be {want} "
                                        f"(got {got})", operator="LEFTJOIN",
                                        expected=str(want), got=str(got))
        self.check_using(joined)
        return joined

    @property
    def repacked_for_defaults(self) -> tuple:
        """The SEMIMINUS's pack list (the left operand's pointwise attributes, in order) when a
        default formula reads one of them, else (): the defaults run on the packed SEMIMINUS
        result, as the definition says, not on the pieces of a pointwise split."""
        from ..expressions.nodes import attributes_used
        names = tuple(n for n in self.pointwise if n in self.left.heading)
        read = set()
        for _, e in self.defaults:
            read |= attributes_used(e)
        return names if read & set(names) else ()

    @property
    def children(self):
        return (self.left, self.right)


@node_class
class DivideBy(Node):
    """DIVIDEBY (seed 004, "Division"): ``divideby(SUBJECT, INTERSECTION, TARGET)``.

    The tuples s of SUBJECT such that for every tuple t of TARGET, the combination of s and t
    (projected on INTERSECTION's heading) is in INTERSECTION: "the customers who have all
    types of policy" is ``divideby(CUSTOMERS, POLICIES, POLICYTYPES)``. INTERSECTION's heading
    must be within SUBJECT's and TARGET's together.

    Interval attributes are values like any other here, matched by equality: seed 004 defines
    no temporal division ("it operates on relations holding interval-typed attributes in
    exactly the same way"), so the result is a subset of SUBJECT, never packed.
    """

    subject: Node
    intersection: Node
    target: Node
    operator_name = "DIVIDEBY"
    packs = False  # the tuples of SUBJECT that qualify, as they are

    def compute_heading(self):
        both = self.subject.heading.union(self.target.heading, "DIVIDEBY")
        for name in self.intersection.heading.names:
            if name not in both:
                raise UnknownAttribute(attribute=name, operator="DIVIDEBY", available=both.names)
        both.common(self.intersection.heading, "DIVIDEBY")
        return self.subject.heading

    @property
    def children(self):
        return (self.subject, self.intersection, self.target)
