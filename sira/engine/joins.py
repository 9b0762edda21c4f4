"""Python evaluation of JOIN, SEMIJOIN, SEMIMINUS, LEFTJOIN (hash joins) and DIVIDEBY.

A join counts its result before building it and refuses one larger than ``max_tuples``
(``guards.py``).
"""

from __future__ import annotations

from itertools import compress, repeat
from operator import not_

from ..algebra.derived import binary_joins, leftjoin_parts, lower_divideby, overlap_attribute
from ..algebra.joins import DivideBy, Join, LeftJoin, SemiJoin, SemiMinus
from ..errors import TooManyTuples
from ..values import Heading, Relation
from . import Packed, Rows, evaluates, map_rows
from .basic import compiler, key_getter, row_getter
from .guards import Guard, operator_label
from .packing import split_relations


def shared_pointwise(node, lh: Heading, rh: Heading) -> list:
    """The node's pointwise attributes that both headings hold."""
    return [n for n in node.pointwise if n in lh and n in rh]


def pointwise_pair(node, left: Relation, right: Relation, guard: Guard):
    """The two inputs, split together on the pointwise attributes they share."""
    shared = shared_pointwise(node, left.heading, right.heading)
    if not shared:
        return left, right
    key = [n for n in left.heading.names if n in right.heading and n not in shared]
    lbody, rbody = split_relations([left, right], shared, key, guard)
    return Relation(left.heading, frozenset(lbody)), Relation(right.heading, frozenset(rbody))


def semijoin_body(lh, lbody, rh, rbody, keep: bool) -> frozenset:
    """The left tuples that match (keep=True) or do not match (keep=False) some right tuple."""
    left = semijoin_rows(Rows(lh, lbody, True), lh, Rows(rh, rbody, True), rh, keep)
    return frozenset(left.rows)


def semijoin_rows(left: Rows, lh: Heading, right: Rows, rh: Heading, keep: bool) -> Rows:
    """The left rows that match (keep=True) or do not match (keep=False) some right row, on
    the attributes the left and right operands' headings ``lh`` and ``rh`` share."""
    common = [n for n in lh.names if n in rh]
    keys = set(map(_key_of(right, common), right.rows))
    flags = map(keys.__contains__, map(_key_of(left, common), left.rows))
    if not keep:
        flags = map(not_, flags)
    return Rows(left.heading, list(compress(left.rows, flags)), left.distinct)


def _key_of(rows: Rows, names):
    """The join key of one of ``rows`` (a scalar for one attribute, see key_getter)."""
    index = rows.heading.index
    return key_getter([index(n) for n in names])


def join_bodies(lh: Heading, lbody, rh: Heading, rbody, out: Heading,
                guard: Guard) -> frozenset:
    """Natural hash join of two bodies (see :func:`join_rows`)."""
    return join_rows(Rows(lh, lbody, True), lh, Rows(rh, rbody, True), rh, out, guard).body(out)


def join_rows(left: Rows, lh: Heading, right: Rows, rh: Heading, out: Heading, guard: Guard,
              wanted=None) -> Rows:
    """Natural hash join of the results of two operands of headings ``lh`` and ``rh``, given
    as rows; the index is built on the smaller side, the other side probes it.

    The result's size is known before it is built (a product, or the sum over join keys of
    left count x right count), so a join larger than ``guard``'s limit is refused up front
    (counting each input tuple once, even where the rows repeat some). With ``wanted`` (names
    of ``out``) the result holds only those attributes: a set of the projected tuples, the
    join itself never built.
    """
    common = [n for n in lh.names if n in rh]
    if len(common) == rh.degree:  # the right side adds no attribute: a semijoin
        return semijoin_rows(left, lh, right, rh, True)
    if len(common) == lh.degree:
        return semijoin_rows(right, rh, left, lh, True)
    target = out if wanted is None else out.project(wanted)
    if not common:
        return _product(_Side(left, lh), _Side(right, rh), target, out, guard)
    build, probe = _Side(left, lh), _Side(right, rh)
    if len(build.rows.rows) > len(probe.rows.rows):
        build, probe = probe, build
    index = build.index(common)
    if not _surely_within(index, build, probe, guard.limit):
        build, probe = build.distinct(), probe.distinct()
        index = build.index(common)
        guard.check(_join_size(index, probe.rows.rows, _key_of(probe.rows, common)))
    combine = pair_assembler([probe.source_of(n, build) for n in target.names],
                             probe.rows.heading.degree)
    key = _key_of(probe.rows, common)
    if target != out:
        tuples = set()
        _probe(probe.rows.rows, key, index, combine, tuples.add)
        return Rows(target, tuples, True)
    tuples = []
    _probe(probe.rows.rows, key, index, combine, tuples.append)
    return Rows(out, tuples, probe.exact() and build.exact())


class _Side:
    """One operand of a join: its rows and its node's heading."""

    __slots__ = ("rows", "heading")

    def __init__(self, rows: Rows, heading: Heading):
        self.rows = rows
        self.heading = heading

    def exact(self) -> bool:
        return self.rows.exact(self.heading)

    def distinct(self) -> "_Side":
        """This side with each of its node's tuples once."""
        return _Side(self.rows.distinct_on(self.heading), self.heading)

    def index(self, names) -> dict:
        return build_index(self.rows.rows, _key_of(self.rows, names))

    def source_of(self, name: str, other: "_Side") -> tuple:
        """Where an output attribute comes from: (0, position) in this side's rows, or (1,
        position) in the other side's."""
        if name in self.heading:
            return 0, self.rows.heading.index(name)
        return 1, other.rows.heading.index(name)


def _product(left: _Side, right: _Side, target: Heading, out: Heading, guard: Guard) -> Rows:
    """The cartesian product (no common attribute), refused beyond the guard's limit."""
    if len(left.rows.rows) * len(right.rows.rows) > guard.limit:
        left, right = left.distinct(), right.distinct()
        guard.check(len(left.rows.rows) * len(right.rows.rows))
    combine = pair_assembler([left.source_of(n, right) for n in target.names],
                             left.rows.heading.degree)
    tuples = (combine(a, b) for a in left.rows.rows for b in right.rows.rows)
    if target != out:
        return Rows(target, set(tuples), True)
    return Rows(out, list(tuples), left.exact() and right.exact())


def pair_assembler(sources, width: int):
    """A function (row, other row) -> output row; ``sources`` gives for each output value
    (0, i): the row's i-th value, or (1, j): the other row's j-th; ``width`` is the rows'
    width.

        >>> pair_assembler([(1, 0), (0, 2)], 3)((1, 2, 3), ("c",))
        ('c', 3)
    """
    sides = {side for side, _ in sources}
    if sides == {0}:
        mine = row_getter([i for _, i in sources])
        return lambda row, other: mine(row)
    if sides == {1}:
        theirs = row_getter([j for _, j in sources])
        return lambda row, other: theirs(other)
    if len(sources) == 2:
        (first, i), (_, j) = sources
        if first == 0:
            return lambda row, other: (row[i], other[j])
        return lambda row, other: (other[i], row[j])
    both = row_getter([i if side == 0 else width + i for side, i in sources])
    return lambda row, other: both(row + other)


def _surely_within(index: dict, build: _Side, probe: _Side, limit: int) -> bool:
    """Whether the join is within ``limit`` by a bound alone: probing n rows against an index
    of m rows gives at most n x m tuples, and at most n x (the most rows one key holds)."""
    n, indexed = len(probe.rows.rows), len(build.rows.rows)
    return n * indexed <= limit or n * _longest(index, indexed) <= limit


def _join_size(index: dict, body, key) -> int:
    """The exact size of the join of distinct rows: the sum over the probing rows of the
    indexed rows sharing their key (every such pair gives a distinct tuple)."""
    sizes = {k: len(v) if type(v) is list else 1 for k, v in index.items()}
    return sum(map(sizes.get, map(key, body), repeat(0)))


def _longest(index: dict, indexed: int) -> int:
    """The most rows one key of the index (holding ``indexed`` rows) holds."""
    if len(index) == indexed:  # unique keys: no lists
        return 1
    return max((len(v) for v in index.values() if type(v) is list), default=1)


def build_index(body, key) -> dict:
    """key -> the one row with that key, or a list of rows when several share it.

    Keeping single rows unwrapped saves a list per key (keys are mostly unique in joins).
    """
    index = {}
    for row in body:
        k = key(row)
        found = index.get(k)
        if found is None:
            index[k] = row
        elif type(found) is list:
            found.append(row)
        else:
            index[k] = [found, row]
    return index


def _probe(body, key, index, combine, put) -> None:
    """put(combine(row, match)) for every row of ``body`` and every indexed row with its key
    (``put``: the ``add`` of a set or the ``append`` of a list)."""
    get = index.get
    for row in body:
        found = get(key(row))
        if found is None:
            continue
        if type(found) is list:
            for match in found:
                put(combine(row, match))
        else:
            put(combine(row, found))


def overlap_join(left: Relation, right: Relation, name: str, out: Heading,
                 guard: Guard) -> Relation:
    """JOIN pointwise on one interval attribute ``name`` (JOINUSING), packed, by a sweep line.

    Both inputs are packed on ``name`` first, so a tuple's other values hold over intervals that
    neither overlap nor meet; then, per value of the other common attributes, the intervals of
    both sides in order of their begins, each paired with the other side's intervals still
    open (those ending after it begins: a heap by end drops the others). Each overlapping pair
    gives one tuple over the intersection; two pairs never give equal tuples, and one pair's
    intersections neither overlap nor meet, so the result is packed as it comes.
    O(n log n + output), however long the intervals (the pointwise split it replaces costs
    every overlap of every piece).
    """
    import heapq

    from ..intervals import Interval
    from .packing import pack_relation
    lp, rp = pack_relation(left, [name]), pack_relation(right, [name])
    lh, rh = lp.heading, rp.heading
    common = [n for n in lh.names if n in rh and n != name]
    lkey, rkey = key_getter([lh.index(n) for n in common]), key_getter([rh.index(n) for n in
                                                                        common])
    li, ri = lh.index(name), rh.index(name)
    groups: dict = {}
    for side, rel, key, at in ((0, lp, lkey, li), (1, rp, rkey, ri)):
        for row in rel.body:
            groups.setdefault(key(row), ([], []))[side].append((row[at], row))
    # an output tuple picks its values from left row + right row + (intersection,)
    width = lh.degree + rh.degree
    where = {n: lh.index(n) for n in lh.names if n != name}
    where.update((n, lh.degree + rh.index(n)) for n in rh.names if n not in where and n != name)
    where[name] = width
    assemble = row_getter([where[n] for n in out.names])
    result = []
    add = result.append
    for lrows, rrows in groups.values():
        if not lrows or not rrows:
            continue
        items = sorted([(iv.begin, 0, i) for i, (iv, _) in enumerate(lrows)] +
                       [(iv.begin, 1, i) for i, (iv, _) in enumerate(rrows)])
        sides = (lrows, rrows)
        open_ = ({}, {})
        ends = ([], [])
        for begin, side, i in items:
            other = 1 - side
            heap, active = ends[other], open_[other]
            while heap and heap[0][0] == 0 and heap[0][1] <= begin:
                del active[heapq.heappop(heap)[2]]
            iv, row = sides[side][i]
            b, e = iv.begin, iv.end
            others = sides[other]
            for j in active:
                jv, match = others[j]
                je = jv.end
                hi = e if je is None else je if e is None or je < e else e
                pair = row + match if side == 0 else match + row
                add(assemble(pair + (Interval(b if b > jv.begin else jv.begin, hi),)))
            if len(result) > guard.limit:
                raise guard.error()
            open_[side][i] = None
            # (0, end, i); an open end (1, 0, i) sorts after every end and never leaves
            heapq.heappush(ends[side], (0, iv.end, i) if iv.end is not None else (1, 0, i))
    guard.check(len(result))
    return Relation(out, frozenset(result))


@evaluates(Join)
def _join(node, ctx):
    guard = Guard.of(node, ctx.options)
    swept = overlap_attribute(node)
    if swept is not None:
        joined = overlap_join(ctx.eval(node.sources[0]), ctx.eval(node.sources[1]), swept,
                              node.heading, guard)
        # packed on that attribute only: packed again when the result is to be packed on
        # another interval attribute as well (one operand's own)
        return Packed(joined) if tuple(node.pack_list) == (swept,) else joined
    chain = binary_joins(node)
    if chain is not None:  # each step an overlap join where it can be: no split of all
        joined = ctx.eval(chain)
        return Packed(joined) if chain.pack_list == node.pack_list else joined
    first, *rest = node.sources
    acc, h = ctx.rows(first), first.heading
    for i, source in enumerate(rest, 1):
        other = ctx.rows(source)
        if shared_pointwise(node, h, source.heading):
            left, right = pointwise_pair(node, Relation(h, acc.body(h)),
                                         Relation(source.heading, other.body(source.heading)),
                                         guard)
            acc, other = Rows.of(left), Rows.of(right)
        out = h.union(source.heading)
        wanted = ctx.wanted(node) if i == len(rest) else None
        acc = join_rows(acc, h, other, source.heading, out, guard, wanted)
        h = out
    return acc


def semi_by_coverage(node, ctx, keep: bool):
    """SEMIJOIN (keep=True) or SEMIMINUS pointwise on one shared interval attribute, by the
    right operand's coverage (``coverage.py``: O(n log n + output), no split); None when the
    operands share no or several pointwise attributes."""
    shared = shared_pointwise(node, node.left.heading, node.right.heading)
    if len(shared) != 1:
        return None
    from .coverage import semi_rows
    from .packing import pack_relation
    (name,) = shared
    left = pack_relation(ctx.eval(node.left), [name])  # its pieces then come out packed
    rows = semi_rows(left, ctx.eval(node.right), name, keep, Guard.of(node, ctx.options))
    result = Relation(node.heading, frozenset(rows))
    return Packed(result) if tuple(node.pack_list) == (name,) else result


def _semi(node, ctx, keep: bool):
    """SEMIJOIN (keep=True) or SEMIMINUS: the left rows stream through a set of right keys."""
    lh, rh = node.left.heading, node.right.heading
    covered = semi_by_coverage(node, ctx, keep)
    if covered is not None:
        return covered
    if shared_pointwise(node, lh, rh):
        l, r = pointwise_pair(node, ctx.eval(node.left), ctx.eval(node.right),
                              Guard.of(node, ctx.options))
        return Relation(node.heading, semijoin_body(l.heading, l.body, r.heading, r.body, keep))
    left = ctx.rows(node.left)
    right = ctx.rows(node.right, [n for n in lh.names if n in rh])
    return semijoin_rows(left, lh, right, rh, keep)


@evaluates(SemiJoin)
def _semijoin(node, ctx):
    return _semi(node, ctx, True)


@evaluates(SemiMinus)
def _semiminus(node, ctx):
    return _semi(node, ctx, False)


@evaluates(LeftJoin)
def _leftjoin(node, ctx):
    guard = Guard.of(node, ctx.options)
    lh = node.left.heading
    parts = leftjoin_parts(node)
    if parts is not None:  # an overlap join and a SEMIMINUS by coverage: nothing is split
        joined, unmatched = (_part_of(node, ctx, part).body for part in parts)
        unmatched = list(unmatched)  # packed on the left's pointwise attributes already
        guard.check(len(joined) + len(unmatched))
    else:
        l, r = pointwise_pair(node, ctx.eval(node.left), ctx.eval(node.right), guard)
        joined = join_bodies(lh, l.body, r.heading, r.body, node.heading, guard)
        unmatched = list(semijoin_body(lh, l.body, r.heading, r.body, False))
        guard.check(len(joined) + len(unmatched))  # disjoint: from different left tuples
        repack = node.repacked_for_defaults  # a default reads a pointwise attribute
        if repack:
            from .packing import pack_relation
            unmatched = list(pack_relation(Relation(lh, frozenset(unmatched)), repack).body)
    fns = [compiler(ctx)(e, lh) for _, e in node.defaults]
    where = {n: i for i, n in enumerate(lh.names + tuple(n for n, _ in node.defaults))}
    assemble = row_getter([where[n] for n in node.heading.names])
    values = map_rows(unmatched, lambda row: tuple(f(row) for f in fns), lh)
    return Relation(node.heading,
                    joined | frozenset(assemble(row + v) for row, v in zip(unmatched, values)))


def _part_of(node, ctx, part) -> Relation:
    """``part`` (an operator ``node`` is computed through) evaluated, its refusal named after
    ``node`` (``LEFTJOIN: its JOINUSING would make ...``), as DuckDB and Spark name it; a
    refusal inside an operand of ``node`` keeps its own name."""
    for child in node.children:
        ctx.eval(child)
    try:
        return ctx.eval(part)
    except TooManyTuples as err:
        raise Guard(operator_label(node), err.limit).error(f"its {err.operator}") from None


@evaluates(DivideBy)
def _divideby(node, ctx):
    # what is refused is usually its JOIN, the cartesian product of SUBJECT and TARGET
    return _part_of(node, ctx, lower_divideby(node))
