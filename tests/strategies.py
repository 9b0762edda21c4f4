"""Hypothesis strategies for small random relations over small domains.

Every attribute name has one fixed type (``a``/``d``: INT, ``b``/``e``: STRING, ``c``: BOOLEAN),
so relations drawn independently always agree on the types of the attributes they share and
can be joined. Values come from tiny domains (0..3, 'a'..'c', both booleans) so that joins
match, projections collapse duplicates and unions overlap; sizes are 0..8.

    relations()                  a relation over a random heading (degree 0..3)
    relations(heading)           a relation over a given heading
    same_heading_pairs()         (R1, R2) with equal headings
    same_heading_triples()       (R1, R2, R3) with equal headings
    sharing_pairs()              (R1, R2) whose headings share some (maybe no) attributes
    graphs()                     an edge relation {src: INT, dst: INT} over nodes 0..5
    rva_relations()              a relation with a relation-valued attribute
    divideby_operands()          (SUBJECT, INTERSECTION, TARGET) for DIVIDEBY
    conditions(heading)          a BOOLEAN expression over a heading
    trees()                      (node, relvars): a random well-typed algebra tree
"""

from __future__ import annotations

from hypothesis import strategies as st

import sira
from sira import BOOLEAN, INT, STRING, Heading, Relation, RelationType, attr, call, lit

# --------------------------------------------------------------------------- domains

ATTRIBUTE_TYPES = {"a": INT, "b": STRING, "c": BOOLEAN, "d": INT, "e": STRING}
ATTRIBUTE_NAMES = tuple(sorted(ATTRIBUTE_TYPES))

INTS = st.integers(min_value=0, max_value=3)
STRINGS = st.sampled_from(["a", "b", "c"])
BOOLEANS = st.booleans()

MAX_SIZE = 8


def values_of(t):
    """A strategy for the values of one type (tiny domains)."""
    if t == INT:
        return INTS
    if t == STRING:
        return STRINGS
    if t == BOOLEAN:
        return BOOLEANS
    if isinstance(t, RelationType):
        return relations(t.heading, max_size=3)
    raise ValueError(f"no strategy for {t}")


def default_of(t):
    """A literal default value of a type (for LEFTJOIN): inside the domain, so it may collide."""
    return {INT: 0, STRING: "a", BOOLEAN: False}[t]


def heading_of(names) -> Heading:
    return Heading.of({n: ATTRIBUTE_TYPES[n] for n in names})


# --------------------------------------------------------------------------- headings

def name_sets(min_size=0, max_size=3, names=ATTRIBUTE_NAMES):
    return st.lists(st.sampled_from(names), min_size=min_size, max_size=max_size,
                    unique=True).map(lambda ns: tuple(sorted(ns)))


def headings(min_size=0, max_size=3, names=ATTRIBUTE_NAMES):
    """A heading of min_size..max_size attributes drawn from the fixed pool."""
    return name_sets(min_size, max_size, names).map(heading_of)


# --------------------------------------------------------------------------- relations

@st.composite
def relations(draw, heading=None, min_size=0, max_size=MAX_SIZE):
    """A relation over ``heading`` (a random one when None) with min_size..max_size rows drawn
    (duplicates collapse, so the cardinality may be lower)."""
    if heading is None:
        heading = draw(headings())
    heading = Heading.of(heading)
    row = st.tuples(*[values_of(t) for t in heading.types])
    rows = draw(st.lists(row, min_size=min_size, max_size=max_size))
    return Relation.from_rows(heading, rows)


@st.composite
def same_heading_pairs(draw, min_degree=0):
    h = draw(headings(min_size=min_degree))
    return draw(relations(h)), draw(relations(h))


@st.composite
def same_heading_triples(draw, min_degree=0):
    h = draw(headings(min_size=min_degree))
    return draw(relations(h)), draw(relations(h)), draw(relations(h))


@st.composite
def sharing_pairs(draw):
    """Two relations whose headings overlap in 0..n attributes (types always agree)."""
    shared = draw(name_sets(0, 2))
    rest = [n for n in ATTRIBUTE_NAMES if n not in shared]
    left_only = draw(name_sets(0, 2, tuple(rest)))
    rest = [n for n in rest if n not in left_only]
    right_only = draw(name_sets(0, 2, tuple(rest)))
    left = draw(relations(heading_of(shared + left_only)))
    right = draw(relations(heading_of(shared + right_only)))
    return left, right


@st.composite
def sharing_triples(draw):
    return draw(relations()), draw(relations()), draw(relations())


# --------------------------------------------------------------------------- graphs

GRAPH_HEADING = Heading.of({"src": INT, "dst": INT})
NODES = st.integers(min_value=0, max_value=5)


@st.composite
def graphs(draw, max_edges=12):
    """An edge relation {src, dst} over nodes 0..5; self-loops and cycles included."""
    edges = draw(st.lists(st.tuples(NODES, NODES), max_size=max_edges))
    if draw(st.booleans()):  # make sure cycles are common, not just possible
        ring = draw(st.lists(NODES, min_size=2, max_size=4, unique=True))
        edges += list(zip(ring, ring[1:] + ring[:1]))
    return Relation.from_rows(GRAPH_HEADING, edges)


# --------------------------------------------------------------------------- RVAs

@st.composite
def rva_relations(draw, allow_empty_rva=False, rva="r"):
    """A relation with a relation-valued attribute ``rva`` over 1..2 attributes and 0..2 key
    attributes; each key value appears once (as GROUP makes them). With allow_empty_rva some
    RVA values may be empty relations."""
    key_names = draw(name_sets(0, 2))
    inner_names = draw(name_sets(1, 2, tuple(n for n in ATTRIBUTE_NAMES if n not in key_names)))
    key_h, inner_h = heading_of(key_names), heading_of(inner_names)
    keys = draw(relations(key_h, max_size=4))
    rows = []
    for key_row in keys.sorted_body():
        inner = draw(relations(inner_h, min_size=0 if allow_empty_rva else 1, max_size=4))
        rows.append(key_row + (inner,))
    heading = Heading.of(list(key_h.attributes) + [(rva, RelationType(inner_h))])
    by_name = [dict(zip(key_h.names + (rva,), r)) for r in rows]
    return Relation.from_rows(heading, by_name)


# --------------------------------------------------------------------------- DIVIDEBY

@st.composite
def divideby_operands(draw):
    """(SUBJECT, INTERSECTION, TARGET): disjoint SUBJECT and TARGET headings (1..2 attributes
    each), INTERSECTION over a subset of their union, often built from SUBJECT x TARGET so that
    the division is not trivially empty."""
    subject_names = draw(name_sets(1, 2))
    target_names = draw(name_sets(1, 2, tuple(n for n in ATTRIBUTE_NAMES
                                              if n not in subject_names)))
    both = subject_names + target_names
    inter_names = draw(st.lists(st.sampled_from(both), min_size=1, max_size=len(both),
                                unique=True).map(lambda ns: tuple(sorted(ns))))
    subject = draw(relations(heading_of(subject_names), max_size=5))
    target = draw(relations(heading_of(target_names), max_size=3))
    inter_h = heading_of(inter_names)
    product = sira.evaluate(sira.literal(subject).join(sira.literal(target))
                            .project(*inter_names))
    kept = draw(st.lists(st.sampled_from(product.sorted_body()), max_size=len(product))
                if product else st.just([]))
    noise = draw(relations(inter_h, max_size=3))
    intersection = Relation(inter_h, frozenset(kept) | noise.body)
    return subject, intersection, target


# --------------------------------------------------------------------------- expressions

@st.composite
def atoms(draw, heading):
    """A BOOLEAN comparison over one attribute of ``heading`` (or a constant)."""
    if heading.degree == 0 or draw(st.integers(0, 9)) == 0:
        return lit(draw(st.booleans()))
    name = draw(st.sampled_from(heading.names))
    t = heading.type_of(name)
    if t == BOOLEAN:
        return attr(name) if draw(st.booleans()) else ~attr(name)
    if t not in (INT, STRING):
        return call("is_empty", attr(name)) if isinstance(t, RelationType) else lit(True)
    op = draw(st.sampled_from(["eq", "ne", "gt", "ge", "lt", "le"]))
    return call(op, attr(name), lit(draw(values_of(t))))


def conditions(heading, max_leaves=4):
    """A BOOLEAN expression (and/or/not of comparisons) over ``heading``."""
    return st.recursive(
        atoms(heading),
        lambda inner: st.one_of(
            st.tuples(inner, inner).map(lambda p: p[0] & p[1]),
            st.tuples(inner, inner).map(lambda p: p[0] | p[1]),
            inner.map(lambda e: ~e)),
        max_leaves=max_leaves)


@st.composite
def formulas(draw, heading, t=None):
    """A formula of type t (INT, STRING or BOOLEAN; random when None) over ``heading``."""
    if t is None:
        t = draw(st.sampled_from([INT, STRING, BOOLEAN]))
    same = [n for n in heading.names if heading.type_of(n) == t]
    if t == BOOLEAN:
        return draw(conditions(heading, max_leaves=2))
    base = attr(draw(st.sampled_from(same))) if same and draw(st.booleans()) \
        else lit(draw(values_of(t)))
    if t == INT:
        op = draw(st.sampled_from([None, "plus", "minus", "mult"]))
        return base if op is None else call(op, base, lit(draw(INTS)))
    kind = draw(st.sampled_from([None, "concat", "upper"]))
    if kind == "concat":
        return call("concat", base, lit(draw(STRINGS)))
    if kind == "upper":
        return call("uppercase", base)
    return base


# --------------------------------------------------------------------------- random trees

FRESH_NAMES = ("f", "g", "h")
for _n, _t in zip(FRESH_NAMES, (INT, STRING, BOOLEAN)):
    ATTRIBUTE_TYPES.setdefault(_n, _t)  # names EXTEND/RENAME may introduce


@st.composite
def leaves(draw, relvars):
    """A leaf: a relation literal, TABLE_DEE/TABLE_DUM, or a reference to a (new) relvar."""
    kind = draw(st.sampled_from(["literal", "literal", "relvar", "dee_dum"]))
    if kind == "dee_dum":
        return sira.literal(draw(st.sampled_from([sira.TABLE_DEE, sira.TABLE_DUM])))
    value = draw(relations(draw(headings(max_size=3, names=ATTRIBUTE_NAMES)), max_size=4))
    if kind == "literal":
        return sira.literal(value)
    name = f"r{len(relvars)}"
    relvars[name] = value
    return sira.relvar(name, value.heading)


def _fresh(heading, draw, t=None):
    free = [n for n in FRESH_NAMES + ATTRIBUTE_NAMES if n not in heading
            and (t is None or ATTRIBUTE_TYPES[n] == t)]
    return draw(st.sampled_from(free)) if free else None


@st.composite
def trees(draw, max_depth=3):
    """(node, relvars): a random well-typed tree of the operators the printer knows."""
    relvars: dict = {}
    node = draw(_tree(relvars, max_depth))
    return node, relvars


@st.composite
def _same_heading_leaf(draw, relvars, heading):
    value = draw(relations(heading, max_size=4))
    if draw(st.booleans()):
        return sira.literal(value)
    name = f"r{len(relvars)}"
    relvars[name] = value
    return sira.relvar(name, heading)


@st.composite
def _tree(draw, relvars, depth):
    if depth == 0:
        return draw(leaves(relvars))
    src = draw(_tree(relvars, depth - 1))
    h = src.heading
    op = draw(st.sampled_from([
        "leaf", "restrict", "project", "extend", "rename", "union", "intersect", "minus",
        "xminus", "join", "semijoin", "semiminus", "leftjoin", "group", "ungroup",
        "aggregate", "summarizeby", "tclose", "transform"]))
    names = h.names
    if op == "restrict":
        return src.restrict(draw(conditions(h)))
    if op == "project":
        keep = draw(st.lists(st.sampled_from(names), unique=True)) if names else []
        return src.project(*keep) if keep else src.project(())
    if op == "extend":
        t = draw(st.sampled_from([INT, STRING, BOOLEAN]))
        name = _fresh(h, draw, t)
        if name is not None:
            return src.extend(**{name: draw(formulas(h, t))})
    if op == "transform" and names:
        keep = draw(st.lists(st.sampled_from(names), unique=True, min_size=1))
        return src.transform(*keep)
    if op == "rename" and names:
        old = draw(st.sampled_from(names))
        new = _fresh(h, draw)
        if new is not None:
            return src.rename({old: new})
    if op in ("union", "intersect", "minus", "xminus"):
        other = draw(_same_heading_leaf(relvars, h))
        return getattr(src, op)(other)
    if op in ("join", "semijoin", "semiminus"):
        other = draw(_tree(relvars, depth - 1))
        try:
            return getattr(src, op)(other)
        except sira.SiraError:
            pass
    if op == "leftjoin":
        other = draw(_tree(relvars, depth - 1))
        missing = [n for n in other.heading.names if n not in h]
        try:
            return src.leftjoin(other, **{n: lit(default_of(other.heading.type_of(n)))
                                          for n in missing})
        except (sira.SiraError, KeyError):
            pass
    if op == "group" and names:
        grouped = draw(st.lists(st.sampled_from(names), unique=True, min_size=1))
        rva = _fresh(h.without(grouped), draw)
        if rva is not None:
            return src.group(**{rva: tuple(grouped)})
    if op == "ungroup":
        rvas = [n for n in names if isinstance(h.type_of(n), RelationType)]
        if rvas:
            try:
                return src.ungroup(rvas[0])
            except sira.SiraError:
                pass
    if op == "aggregate":
        ints = [n for n in names if h.type_of(n) == INT]
        spec = {"cnt": ("plus", lit(1))}
        if ints:
            spec["total"] = ("plus", attr(ints[0]))
        return src.aggregate(**spec)
    if op == "summarizeby" and names:
        by = draw(st.lists(st.sampled_from(names), unique=True))
        name = _fresh(h, draw, INT)
        if name is not None:
            return src.summarizeby(tuple(by), **{name: ("plus", lit(1))})
    if op == "tclose":
        ints = [n for n in names if h.type_of(n) == INT]
        if len(ints) == 2 and h.degree == 2:
            return src.tclose(ints[0], ints[1])
    return src
