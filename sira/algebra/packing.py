"""PACK and UNPACK (seed 004, "The RA and interval types"), and the USING lists of other nodes.

Every relational operator packs its result on all interval attributes in lexicographic order
(its ``pack_list``), except RESTRICT, EXTEND, RENAME and UNPACK, which keep the pack state of
their input. The *USING variants name the list explicitly; ``()`` means no attribute.

    >>> from sira import parse
    >>> parse("pack(relation(heading(x(intinterval) y(intinterval)) body()), (y, x))").pack_list
    ('y', 'x')
"""

from __future__ import annotations

import attrs

from ..errors import DuplicateAttribute, SiraTypeError, UnknownAttribute
from ..intervals import IntervalType
from ..values import normalize_name
from .node import Node, node_class


def interval_names(heading) -> tuple:
    """The interval-typed attributes of a heading, in lexicographic order."""
    return tuple(n for n, t in heading.attributes if isinstance(t, IntervalType))


def packed_on(node, name: str) -> bool:
    """Whether ``node``'s result is packed on its interval attribute ``name`` by construction
    (no two of its tuples agreeing on every other attribute have intervals that overlap or
    meet), so that a sweep over ``name`` reads it as it is instead of packing it first. True
    for a CQL window (each element of its source, a set, is one tuple keeping its own period:
    no two tuples agree on the rest), for a node every engine packs on ``name`` alone, and
    through RESTRICT, EXTEND and RENAME (a subset of a packed relation is packed; an added
    attribute only tells more tuples apart). False where it is not known.

        >>> from sira import parse
        >>> h = {"s": {"ts": "long", "v": "int"}}
        >>> packed_on(parse("restrict(window(s, ts, range(10)), gt(v, 1))", h), "during")
        True
        >>> packed_on(parse("project(window(s, ts, range(10)), (during))", h), "during")
        True
        >>> packed_on(parse("rename(window(s, ts, range(10)), (during, p))", h), "p")
        True
        >>> packed_on(parse("unpack(window(s, ts, range(10)), (during))", h), "during")
        False
    """
    from .basic import Extend, Rename, Restrict
    from .windows import Window
    while isinstance(node, (Restrict, Extend, Rename)):
        if isinstance(node, Rename):
            name = {new: old for old, new in node.pairs}.get(name, name)
        node = node.source
    if isinstance(node, Window):
        return node.during == name
    return node.packs and tuple(node.pack_list) == (name,)


def optional_names(names):
    """Converter for ``using`` fields: None stays None (meaning: every interval attribute)."""
    if names is None:
        return None
    return tuple(normalize_name(n) for n in names)


def check_interval_list(names, heading, operator, *, ordinal=False) -> None:
    """Every name is an interval attribute of ``heading`` (ordinal ones when ``ordinal``)."""
    seen = set()
    for name in names:
        if name in seen:
            raise DuplicateAttribute(attribute=name, operator=operator)
        seen.add(name)
        if name not in heading:
            raise UnknownAttribute(attribute=name, operator=operator, available=heading.names)
        t = heading.type_of(name)
        if not isinstance(t, IntervalType):
            raise SiraTypeError(f"{operator}: '{name}' is not interval-typed (it is {t})",
                                operator=operator, expected="an interval attribute", got=str(t))
        if ordinal and not t.point.ordinal:
            raise SiraTypeError(f"{operator}: '{name}' is {t}, whose points ({t.point}) have no "
                                f"successor, so it cannot be unpacked", operator=operator,
                                expected="an interval over an ordinal type", got=str(t))


class UsingMixin:
    """Nodes with an optional ``using`` list: pointwise attributes and the result's pack list."""

    def input_headings(self):
        return [c.heading for c in self.children]

    @property
    def pointwise(self) -> tuple:
        """The attributes treated pointwise (overlap instead of equality)."""
        if self.using is not None:
            return self.using
        names = set()
        for h in self.input_headings():
            names.update(interval_names(h))
        return tuple(sorted(names))

    @property
    def pack_list(self) -> tuple:
        return tuple(n for n in self.pointwise if n in self.heading)

    def check_using(self, heading) -> None:
        if self.using is not None:
            check_interval_list(self.using, heading, self.operator_name + "USING")


@node_class
class Pack(Node):
    """PACK (seed 004): ``pack(R, (y, x))``: unpack on all, then pack on y, then on x."""

    source: Node
    on: tuple = attrs.field(converter=optional_names)
    operator_name = "PACK"

    def compute_heading(self):
        check_interval_list(self.on, self.source.heading, "PACK")
        return self.source.heading

    @property
    def pack_list(self):
        return self.on

    @property
    def children(self):
        return (self.source,)


@node_class
class Unpack(Node):
    """UNPACK (seed 004): ``unpack(R, (ii, dd, ll))``: one tuple per combination of points.

    Refuses intervals over FLOAT (no successor), unbounded intervals, and results larger than
    the caller's limit (``max_tuples``, 50 million by default).
    """

    source: Node
    on: tuple = attrs.field(converter=optional_names)
    operator_name = "UNPACK"
    packs = False

    def compute_heading(self):
        check_interval_list(self.on, self.source.heading, "UNPACK", ordinal=True)
        return self.source.heading

    @property
    def children(self):
        return (self.source,)
