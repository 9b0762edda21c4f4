"""GROUP and UNGROUP (seed 004, "Grouping", "Ungrouping")."""

from __future__ import annotations

import attrs

from ..errors import DuplicateAttribute, SiraTypeError
from ..types import RelationType
from ..values import normalize_name
from .basic import _lower_names
from .node import Node, node_class


def _lower_group_specs(specs) -> tuple:
    return tuple((normalize_name(n), _lower_names(names)) for n, names in specs)


@node_class
class Group(Node):
    """GROUP (seed 004): ``group(R, (attributenames(attributename)))``; several specs at once.

    Each spec (rva, names) gathers the named attributes into a relation-valued attribute; the
    attributes no spec names are the grouping key.
    """

    source: Node
    specs: tuple = attrs.field(converter=_lower_group_specs)
    operator_name = "GROUP"

    def compute_heading(self):
        h = self.source.heading
        grouped = []
        for rva, names in self.specs:
            h.require(names, "GROUP")
            for n in names:
                if n in grouped:
                    raise DuplicateAttribute(attribute=n, operator="GROUP")
                grouped.append(n)
        rest = h.without(grouped, "GROUP")
        return rest.extend([(rva, RelationType(h.project(names))) for rva, names in self.specs],
                           "GROUP")

    @property
    def key_names(self) -> tuple:
        grouped = {n for _, names in self.specs for n in names}
        return tuple(n for n in self.source.heading.names if n not in grouped)

    @property
    def children(self):
        return (self.source,)


@node_class
class Ungroup(Node):
    """UNGROUP (seed 004): ``ungroup(R, operandsignature)``; a tuple whose RVA is empty vanishes.

    Several RVAs ungroup one after the other (every combination of their tuples).
    """

    source: Node
    names: tuple = attrs.field(converter=_lower_names)
    operator_name = "UNGROUP"

    def compute_heading(self):
        h = self.source.heading
        h.require(self.names, "UNGROUP")
        if not self.names:
            raise SiraTypeError("UNGROUP needs at least one relation-valued attribute",
                                operator="UNGROUP", expected="an RVA name", got="none")
        out = h.without(self.names, "UNGROUP")
        for n in self.names:
            t = h.type_of(n)
            if not isinstance(t, RelationType):
                raise SiraTypeError(f"UNGROUP: '{n}' is not relation-valued (it is {t})",
                                    operator="UNGROUP", expected="a relation-valued attribute",
                                    got=str(t))
            out = out.extend(t.heading.attributes, "UNGROUP")
        return out

    @property
    def children(self):
        return (self.source,)
