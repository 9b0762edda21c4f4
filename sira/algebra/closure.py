"""TCLOSE and GTCLOSE (seed 004, "Transitive Closure", "Generalized Transitive Closure")."""

from __future__ import annotations

import attrs

from ..errors import DuplicateAttribute, SiraTypeError
from ..expressions.evaluate import infer_type
from ..values import Heading
from .basic import _lower_names, _lower_specs
from .node import Node, node_class

LEFT_PREFIX = "__l__"
RIGHT_PREFIX = "__r__"


def _check_pairs(node, heading):
    if len(node.pairs) == 0 or len(node.pairs) % 2:
        raise SiraTypeError(f"{node.operator_name} takes pairs of attribute names (got "
                            f"{len(node.pairs)} names)", operator=node.operator_name,
                            expected="an even number of names", got=str(len(node.pairs)))
    heading.require(node.pairs, node.operator_name)
    for a, b in node.pair_list:
        if heading.type_of(a) != heading.type_of(b):
            raise SiraTypeError(f"{node.operator_name}: '{a}' is {heading.type_of(a)} but "
                                f"'{b}' is {heading.type_of(b)}", operator=node.operator_name,
                                expected=str(heading.type_of(a)), got=str(heading.type_of(b)))


class _Closure(Node):
    # Interval attributes are node values, matched by equality, and the closure is not packed:
    # seed 004 defines no temporal counterpart of transitive closure (as of division), and
    # packing would merge edges into ones the closure does not hold
    packs = False

    @property
    def pair_list(self) -> tuple:
        """((from, to), ...): an edge goes from attribute ``from`` to attribute ``to``."""
        p = self.pairs
        return tuple(zip(p[0::2], p[1::2]))

    @property
    def children(self):
        return (self.source,)


@node_class
class TClose(_Closure):
    """TCLOSE (seed 004): ``tclose(R, (relvarname, referencedrelvarname))``; cycles allowed.

    Every attribute is in a pair (A, B); tuples l and r combine when l.B = r.A, giving A from l
    and B from r.
    """

    source: Node
    pairs: tuple = attrs.field(converter=_lower_names)
    operator_name = "TCLOSE"

    def compute_heading(self):
        h = self.source.heading
        _check_pairs(self, h)
        rest = [n for n in h.names if n not in self.pairs]
        if rest:
            raise SiraTypeError(f"TCLOSE: attribute '{rest[0]}' is in no pair (use GTCLOSE to "
                                "compute it)", operator="TCLOSE", expected="every attribute "
                                "in a pair", got=rest[0])
        return h


def closure_scope(heading: Heading) -> Heading:
    """The heading GTCLOSE formulas see: ``__L__x`` and ``__R__x`` for every attribute x."""
    return Heading.of([(LEFT_PREFIX + n, t) for n, t in heading.attributes]
                      + [(RIGHT_PREFIX + n, t) for n, t in heading.attributes])


@node_class
class GTClose(_Closure):
    """GTCLOSE (seed 004): ``gtclose(R, (a,b), (edgecnt(plus(__L__edgecnt,__R__edgecnt))))``.

    The formulas name every attribute not in a pair and compute it from the two combined tuples
    (``__L__`` and ``__R__`` prefixes). A closure that grows without end around a cycle stops
    with UnboundedClosure.
    """

    source: Node
    pairs: tuple = attrs.field(converter=_lower_names)
    specs: tuple = attrs.field(converter=_lower_specs)
    operator_name = "GTCLOSE"

    def compute_heading(self):
        h = self.source.heading
        _check_pairs(self, h)
        rest = [n for n in h.names if n not in self.pairs]
        named = [n for n, _ in self.specs]
        for n in named:
            if named.count(n) > 1:
                raise DuplicateAttribute(attribute=n, operator="GTCLOSE")
        h.require(named, "GTCLOSE")
        for n in rest:
            if n not in named:
                raise SiraTypeError(f"GTCLOSE needs a formula for attribute '{n}'",
                                    operator="GTCLOSE", expected=f"a formula for {n}", got="none")
        for n in named:
            if n in self.pairs:
                raise SiraTypeError(f"GTCLOSE: '{n}' is a pair attribute and cannot have a "
                                    f"formula", operator="GTCLOSE", expected="a non-pair attribute",
                                    got=n)
        scope = closure_scope(h)
        for n, e in self.specs:
            t = infer_type(e, scope, "GTCLOSE")
            if t != h.type_of(n):
                raise SiraTypeError(f"GTCLOSE: the formula for '{n}' must be {h.type_of(n)} "
                                    f"(got {t})", operator="GTCLOSE",
                                    expected=str(h.type_of(n)), got=str(t))
        return h

