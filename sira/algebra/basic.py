"""Relvar references, relation literals, RESTRICT, PROJECT, EXTEND, RENAME, TRANSFORM (seed 004)."""

from __future__ import annotations

import attrs

from ..errors import DuplicateAttribute
from ..expressions.evaluate import infer_type, require_type
from ..types import BOOLEAN
from ..values import Heading, Relation, normalize_name
from .node import Node, node_class


def _lower_names(names) -> tuple:
    return tuple(normalize_name(n) for n in names)


def _lower_specs(specs) -> tuple:
    return tuple((normalize_name(n), e) for n, e in specs)


@node_class
class RelvarRef(Node):
    """A named relation variable with its declared heading: ``dbmsfile``."""

    name: str = attrs.field(converter=normalize_name)
    declared: Heading = attrs.field(converter=Heading.of)
    operator_name = "RELVAR"
    packs = False

    def compute_heading(self):
        return self.declared


@node_class
class RelationLiteral(Node):
    """A relation value in the tree: ``relation(heading(a(int)) body(tuple(a(1))))``, TABLE_DEE."""

    value: Relation
    operator_name = "RELATION"
    packs = False

    def compute_heading(self):
        return self.value.heading


@node_class
class Restrict(Node):
    """RESTRICT (seed 004, "Restriction"): ``restrict(R, gt(maximumlength,256))``."""

    source: Node
    condition: object
    operator_name = "RESTRICT"
    packs = False  # a restriction of a packed relation is packed (seed 004)

    def compute_heading(self):
        require_type(self.condition, self.source.heading, BOOLEAN, "RESTRICT", "the condition")
        return self.source.heading

    @property
    def children(self):
        return (self.source,)


@node_class
class Project(Node):
    """PROJECT (seed 004, "Projection"): ``project(R, (pagesize))``; ``project(R, ())``."""

    source: Node
    names: tuple = attrs.field(converter=_lower_names)
    operator_name = "PROJECT"

    def compute_heading(self):
        return self.source.heading.project(self.names, "PROJECT")

    @property
    def children(self):
        return (self.source,)


@node_class
class Extend(Node):
    """EXTEND (seed 004, "Extension"): ``extend(R, (namelength(length(filename))))``."""

    source: Node
    specs: tuple = attrs.field(converter=_lower_specs)
    operator_name = "EXTEND"
    packs = False  # seed 004: "when fed unpacked relations, expect them to produce unpacked results"

    def compute_heading(self):
        h = self.source.heading
        return h.extend([(n, infer_type(e, h, "EXTEND")) for n, e in self.specs], "EXTEND")

    @property
    def children(self):
        return (self.source,)


@node_class
class Rename(Node):
    """RENAME, parallel (seed 004, "Renaming"): ``rename(R, (filename,pagesize,pagesize,filename))``."""

    source: Node
    pairs: tuple = attrs.field(converter=_lower_specs)
    operator_name = "RENAME"
    packs = False

    def compute_heading(self):
        olds = [o for o, _ in self.pairs]
        self.source.heading.require(olds, "RENAME")
        return self.source.heading.rename(dict(self.pairs), "RENAME")

    @property
    def children(self):
        return (self.source,)


@node_class
class Transform(Node):
    """TRANSFORM (seed 004): ``transform(R, (pagesize, name(lowercase(the_string(filename)))))``.

    A spec ``(name, None)`` keeps the attribute; ``(name, expr)`` computes it; every other
    attribute of the input is projected away.
    """

    source: Node
    specs: tuple = attrs.field(converter=_lower_specs)
    operator_name = "TRANSFORM"

    def compute_heading(self):
        h = self.source.heading
        out = []
        seen = set()
        for name, expr in self.specs:
            if name in seen:
                raise DuplicateAttribute(attribute=name, operator="TRANSFORM")
            seen.add(name)
            t = h.type_of(name, "TRANSFORM") if expr is None else infer_type(expr, h, "TRANSFORM")
            out.append((name, t))
        return Heading.of(out)

    @property
    def children(self):
        return (self.source,)
