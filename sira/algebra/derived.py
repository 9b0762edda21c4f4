"""Derived operators written once as trees of core operators: their reference meaning.

An engine without a faster native translation evaluates the lowered tree; property tests check
the native translations against these definitions.

    >>> from sira import relvar, INT
    >>> s = relvar("s", {"c": INT}); i = relvar("i", {"c": INT, "t": INT}); t = relvar("t", {"t": INT})
    >>> lower_divideby(s.divideby(i, t))
    semiminususing(s,semiminususing(joinusing(s,t,()),i,()),())
"""

from __future__ import annotations

from .aggregation import Aggregate, SummarizeBy
from .basic import Extend, Project
from .joins import DivideBy, Join, LeftJoin, SemiJoin, SemiMinus
from .nesting import Group, Ungroup
from .packing import interval_names
from .setops import Intersect, Minus, Union, XMinus


def lower_divideby(node: DivideBy):
    """SUBJECT minus the subjects some TARGET tuple is not paired with in INTERSECTION. Interval
    attributes are matched by equality (``using=()``): seed 004 defines no temporal division,
    and the result holds tuples of SUBJECT as they are."""
    pairs = Join((node.subject, node.target), using=())
    unpaired = SemiMinus(pairs, node.intersection, using=())
    return SemiMinus(node.subject, unpaired, using=())


def lower_semijoin(node: SemiJoin):
    """SEMIJOIN is the projection of the join on the left heading (seed 004)."""
    return Project(Join((node.left, node.right)), node.left.heading.names)


def lower_semiminus(node: SemiMinus):
    """SEMIMINUS is the left minus its semijoin (seed 004)."""
    return Minus(node.left, SemiJoin(node.left, node.right))


def overlap_attribute(node: Join):
    """The one interval attribute a two-operand JOIN takes pointwise when the engines' overlap
    joins can run it (both operands hold it, it is their only shared pointwise attribute), or
    None. Its points need not be ordinal: the overlap join only compares them, and over FLOAT
    points gives what the split at every boundary gives.

        >>> from sira import relvar, INT, INTINTERVAL
        >>> l = relvar("l", {"k": INT, "x": INTINTERVAL})
        >>> overlap_attribute(l.join(relvar("r", {"k": INT, "w": INT, "x": INTINTERVAL})))
        'x'
    """
    if len(node.sources) != 2:
        return None
    lh, rh = node.sources[0].heading, node.sources[1].heading
    shared = [n for n in node.pointwise if n in lh and n in rh]
    return shared[0] if len(shared) == 1 else None


def binary_joins(node: Join):
    """A JOIN of three or more operands some of which share a pointwise attribute, as the
    left-deep chain of two-operand JOINs (each with the USING names its operands hold), or
    None. Pointwise, a JOIN is the natural join of its unpacked operands, packed; packing a
    step's result leaves its points as they are, so the chain gives the same relation. Each
    step can then be an overlap join (:func:`overlap_attribute`), where the JOIN of many
    operands split every operand at every boundary of its group.

        >>> from sira import relvar, INT, INTINTERVAL
        >>> a, b, c = (relvar(n, {"k": INT, n: INT, "x": INTINTERVAL}) for n in "abc")
        >>> binary_joins(a.join(b, c))
        join(join(a,b),c)
    """
    if len(node.sources) < 3:
        return None
    pointwise = set(node.pointwise)
    acc, splits = node.sources[0], False
    for source in node.sources[1:]:
        splits = splits or any(n in acc.heading and n in source.heading for n in pointwise)
        using = None if node.using is None else tuple(
            n for n in node.using if n in acc.heading or n in source.heading)
        acc = Join((acc, source), using=using)
    return acc if splits else None


def semi_as_overlap_join(node):
    """SEMIJOIN or SEMIMINUS pointwise on one interval attribute ``x`` that both operands hold,
    as a JOIN with what the right operand covers, or None for any other (several shared
    pointwise attributes). The result is packed on ``x``; one to be packed on the left
    operand's other pointwise attributes too is packed on them after.

    Only the attributes the operands share matter in the right operand, so
    ``semijoinusing(L, R, (x))`` is ``joinusing(L, project(R, shared), (x))``: each left tuple
    over the points of ``x`` where a right tuple agreeing on the shared attributes holds. When
    they share another interval attribute, matched by equality, PROJECT (which packs it too)
    gives way to ``summarizebyusing(R, shared, (), (x))``, packed on ``x`` alone. Its
    SEMIMINUS is the left minus that, pointwise. An engine with an overlap join (and a swept
    MINUS) runs both in O(n log n + output), where the pointwise split costs every overlap.

        >>> from sira import relvar, INT, INTINTERVAL
        >>> l = relvar("l", {"k": INT, "v": INT, "x": INTINTERVAL})
        >>> r = relvar("r", {"k": INT, "w": INT, "x": INTINTERVAL})
        >>> semi_as_overlap_join(l.semiminus(r))
        minususing(l,joinusing(l,project(r,(k,x)),(x)),(x))
    """
    left, right = node.left.heading, node.right.heading
    shared = [n for n in node.pointwise if n in left and n in right]
    if len(shared) != 1:
        return None
    common = left.common(right, node.operator_name)
    using = tuple(shared)
    if any(n in interval_names(left) for n in common if n not in shared):
        # PROJECT packs every interval attribute it keeps: another shared interval attribute,
        # matched by equality here, would be packed too and match other values. SUMMARIZEBY
        # with no aggregate, pointwise on x alone, packs x alone (a sweep on every engine).
        coverage = SummarizeBy(node.right, common, (), using=using)
    else:
        coverage = Project(node.right, common)
    covered = Join((node.left, coverage), using=using)
    return covered if isinstance(node, SemiJoin) else Minus(node.left, covered, using=using)


def lower_leftjoin(node: LeftJoin):
    """UNION(JOIN(R1,R2), EXTEND(SEMIMINUS(R1,R2), defaults)) (seed 004)."""
    return Union((Join((node.left, node.right)),
                  Extend(SemiMinus(node.left, node.right), node.defaults)))


def leftjoin_parts(node: LeftJoin):
    """``(JOIN, SEMIMINUS)``, each with the LEFTJOIN's USING list, when the JOIN is an overlap
    join (one shared pointwise attribute, :func:`overlap_attribute`), or None. The LEFTJOIN is
    then the union of the JOIN and the SEMIMINUS extended with the defaults, packed on its pack
    list (seed 004): no tuple is split at the other operand's boundaries, where the split cost
    every overlap of a group (20,000 tuples of one group: over a minute on the Python engine).

    The SEMIMINUS's result is packed on the left operand's pointwise attributes, so a default
    that reads one of them sees them packed, as the definition says.

        >>> from sira import relvar, INT, INTINTERVAL, lit
        >>> l = relvar("l", {"k": INT, "x": INTINTERVAL})
        >>> leftjoin_parts(l.leftjoin(relvar("r", {"k": INT, "w": INT, "x": INTINTERVAL}),
        ...                           w=lit(0)))
        (join(l,r), semiminus(l,r))
    """
    join = Join((node.left, node.right), using=node.using)
    if overlap_attribute(join) is None:
        return None
    return join, SemiMinus(node.left, node.right, using=node.using)


def lower_xminus(node: XMinus):
    """(A MINUS B) UNION (B MINUS A), folded left to right."""
    acc = node.sources[0]
    for other in node.sources[1:]:
        acc = Union((Minus(acc, other), Minus(other, acc)))
    return acc


def lower_summarizeby(node: SummarizeBy, rva: str = "__group__"):
    """GROUP the non-BY attributes, AGGREGATE each group, UNGROUP (seed 004, "Summarization").

    Written with EXTEND over an AGGREGATE of the RVA would need a correlated operand, so the
    reference form is the per-group definition the property tests evaluate directly.
    """
    rest = tuple(n for n in node.source.heading.names if n not in node.by)
    return Group(node.source, ((rva, rest),)) if rest else Project(node.source, node.by)


def summarize_by_points(node: SummarizeBy):
    """SUMMARIZEBYUSING whose aggregate formulas read a USING attribute, as its definition
    (Date, Darwen and Lorentzos): ``pack(summarizeby(unpack(R, U), BY, specs), U)``, so a
    formula sees each point's unit interval, as it would over UNPACK(R); None when no formula
    reads a USING attribute (the engines' sweeps and splits are then exact). Its cost follows
    the points, and UNPACK refuses more than ``max_tuples`` of them.

        >>> from sira import relvar, INT, INTINTERVAL, attr, call
        >>> r = relvar("r", {"k": INT, "x": INTINTERVAL})
        >>> node = SummarizeBy(r, ("k", "x"), (("n", "plus", call("duration", attr("x"))),),
        ...                    using=("x",))
        >>> summarize_by_points(node)
        pack(summarizebyusing(unpack(r,(x)),(k,x),(n(plus(duration(x)))),()),(x))
    """
    from ..expressions.nodes import attributes_used
    from .packing import Pack, Unpack
    if not node.using:
        return None
    read = set()
    for _, _, e in node.specs:
        read |= attributes_used(e)
    if not read & set(node.using):
        return None
    inner = SummarizeBy(Unpack(node.source, node.using), node.by, node.specs, using=())
    return Pack(inner, node.using)


def float_sums_apart(node: SummarizeBy, names):
    """A SUMMARIZEBYUSING on one interval attribute whose FLOAT sums sit beside aggregations an
    engine's segment tree takes (``names``: max, min, and, or, iintersect) but whose tree keeps
    no exact FLOAT sum, as the pointwise JOIN of two SUMMARIZEBYUSINGs of the same source: the
    sums (integer and FLOAT: a sweep line) and the others (the tree). At every point both hold
    the same groups (those with tuples there), so the join holds each point's aggregates; a
    JOINUSING is packed, as the SUMMARIZEBYUSING must be. None when the node is not so.

        >>> from sira import relvar, INT, FLOAT, INTINTERVAL, attr
        >>> r = relvar("r", {"k": INT, "v": FLOAT, "x": INTINTERVAL})
        >>> node = SummarizeBy(r, ("k", "x"), (("t", "plus", attr("v")),
        ...                                    ("m", "max", attr("v"))), using=("x",))
        >>> apart = float_sums_apart(node, {"plus", "max"})
        >>> type(apart).__name__, apart.using, [part.specs for part in apart.sources]
        ('Join', ('x',), [(('t', 'plus', v),), (('m', 'max', v),)])
    """
    from ..types import FLOAT
    from .aggregation import sweepable
    swept = sweepable(node, names, floats=True)
    if swept is None:
        return None
    _, aggs = swept
    sums = [a.name == "plus" for a in aggs]
    if all(sums) or not any(a.name == "plus" and a.result_type == FLOAT for a in aggs):
        return None
    first = tuple(s for s, is_sum in zip(node.specs, sums) if is_sum)
    rest = tuple(s for s, is_sum in zip(node.specs, sums) if not is_sum)
    return Join((SummarizeBy(node.source, node.by, first, using=node.using),
                 SummarizeBy(node.source, node.by, rest, using=node.using)), using=node.using)


def lower_changes(node):
    """CHANGES: ISTREAM tagged '+' union DSTREAM tagged '-'."""
    from ..expressions.nodes import Literal
    from ..types import STRING
    from .windows import DStream, IStream
    ins = Extend(IStream(node.source, node.at, node.during), (("kind", Literal("+", STRING)),))
    dels = Extend(DStream(node.source, node.at, node.during), (("kind", Literal("-", STRING)),))
    return Union((ins, dels))


def lower_intersect(node: Intersect):
    """INTERSECT is JOIN of relations with equal headings."""
    return Join(node.sources)


__all__ = ["lower_divideby", "lower_semijoin", "lower_semiminus", "lower_leftjoin",
           "leftjoin_parts", "binary_joins", "lower_xminus", "lower_intersect", "Aggregate",
           "Ungroup"]
