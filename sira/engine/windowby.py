"""Python evaluation of WINDOWBY (seed 003): the reference meaning of the operator.

Each partition is sorted once by the order attributes (ties by the tuples' canonical order);
the windows are then found on the positions 1..n of that sequence:

* the starts: every position satisfying START (sliding), or a left-to-right scan that looks
  for the next start only after the previous window ended (tumbling), or position 1
  (``start(unbounded)``); with LABEL, one window per position satisfying LABEL whose start is
  the first position satisfying START (position 1 and ``opened`` false when there is none);
* each window's end: scanning forward from its start to the first position whose END holds
  (the last position and ``closed`` false when there is none).

Conditions are compiled once against their scope's heading (the variables in scope), split by
:func:`sira.algebra.windowby.three_valued`: a part reading a PREV/NEXT variable that does not
exist at that position is :data:`MISSING`, ``and``/``or``/``not`` follow SQL++'s three-valued
logic, ``is_missing`` tests for MISSING, and a clause fires only where its condition is TRUE.
With ``aggregates`` (:func:`sira.algebra.windowby.push_down_aggregates`) the window's values
are folded as its positions are scanned and no relation-valued attribute is built.
"""

from __future__ import annotations

from ..algebra.windowby import Absence, Strict, WindowBy, pinned_offset
from ..expressions.nodes import attributes_used
from ..expressions.evaluate import aggregated_type, compile_row, rows_aggregate
from ..types import RelationType
from ..values import Heading, Relation, Tuple
from . import evaluates
from .basic import row_getter
from .guards import Guard, windows_error


def sequence_key(heading, node):
    """The sort key of a partition's sequence: the order attributes, then the canonical order."""
    keys = [(heading.index(n), heading.type_of(n).sort_key) for n in node.order]
    canonical = heading.sort_key_function() or (lambda r: r)
    return lambda r: (tuple(k(r[i]) for i, k in keys), canonical(r))


def ordered_sequences(relation, node) -> list:
    """Each partition's rows sorted by the order attributes, then canonically."""
    h = relation.heading
    part = row_getter([h.index(n) for n in node.partition])
    key = sequence_key(h, node)
    groups: dict = {}
    for row in relation.body:
        groups.setdefault(part(row), []).append(row)
    out = []
    for rows in groups.values():
        rows.sort(key=key)
        out.append(rows)
    return out


class _Sequence:
    """One ordered partition: the values the variables take at each position (1-based)."""

    def __init__(self, heading, rows):
        self.heading = heading
        self.rows = rows
        self.n = len(rows)
        self.tuples = [Tuple(heading, r) for r in rows]

    def value(self, kind, p, in_condition):
        """The value of a variable of ``kind`` bound at position p (None: no such tuple, or
        p None: a LABEL window's start when START never held)."""
        if p is None:
            return None
        if kind == "at":
            return p
        if kind == "as":
            return self.tuples[p - 1]
        q = p - 1 if kind == "prev" else p + 1
        if in_condition:
            return self.tuples[q - 1] if 1 <= q <= self.n else None
        return Relation(self.heading, frozenset({self.rows[q - 1]} if 1 <= q <= self.n
                                                else ()))


class _Missing:
    """The value of a condition part that reads a variable which does not exist."""

    def __repr__(self):
        return "MISSING"


#: SQL++'s MISSING, inside WINDOWBY conditions only (never in a result)
MISSING = _Missing()


class _Condition:
    """One clause's condition as a function of the positions of the clauses in scope."""

    def __init__(self, node, which, relation_of):
        part = node.condition(which)
        self.always = part is None
        if self.always:
            return
        scope = node.scope(which)
        where = {n: (role, k) for role in ("label", "start", "end")
                 for k, n in node.variables(role)}
        used = attributes_used(node.boundary(which).when)
        # only the variables the condition reads are computed; the others stay None
        self.slots = [(i, where[n][0], where[n][1]) for i, n in enumerate(scope.names)
                      if n in used]
        self.width = len(scope.names)
        self.fn = three_valued_function(part, scope, relation_of)

    def __call__(self, seq: _Sequence, positions: dict) -> bool:
        if self.always:
            return True
        # a variable that does not exist is None in the row (no sira value is None)
        row = [None] * self.width
        for i, role, kind in self.slots:
            row[i] = seq.value(kind, positions[role], True)
        value = self.fn(tuple(row))
        return value is not MISSING and bool(value)  # fires only on TRUE


def three_valued_function(part, scope, relation_of):
    """A function from a row of ``scope`` (None for a variable that does not exist) to the
    part's value, :data:`MISSING`, or for a condition TRUE/FALSE/MISSING.

    ``and``/``or`` evaluate their parts left to right and stop at the first that decides
    (FALSE for ``and``, TRUE for ``or``), as the two-valued ones do.
    """
    if isinstance(part, Strict):
        return _strict(part, scope, relation_of)
    if isinstance(part, Absence):
        inner = three_valued_function(part.part, scope, relation_of)
        return lambda row: inner(row) is MISSING
    # a Connective
    fns = [three_valued_function(p, scope, relation_of) for p in part.parts]
    if part.op == "not":
        (f,) = fns
        return lambda row: _not3(f(row))
    return _and3(fns) if part.op == "and" else _or3(fns)


def _strict(part, scope, relation_of):
    """A part that is MISSING when a variable it needs does not exist or a hole is MISSING."""
    if part.holes:
        return _strict_with_holes(part, scope, relation_of)
    fn = compile_row(part.expr, scope, relation_of)
    needs = tuple(scope.index(n) for n in sorted(part.needs))
    if not needs:
        return fn
    if len(needs) == 1:
        (i,) = needs
        return lambda row: MISSING if row[i] is None else fn(row)

    def value(row):
        for i in needs:
            if row[i] is None:
                return MISSING
        return fn(row)
    return value


def _strict_with_holes(part, scope, relation_of):
    """A strict part some of whose BOOLEAN arguments are three-valued parts (holes)."""
    heading = part.heading(scope)
    fn = compile_row(part.expr, heading, relation_of)
    needs = tuple(scope.index(n) for n in sorted(part.needs))
    holes = [three_valued_function(p, scope, relation_of) for _, p in part.holes]
    # the heading keeps its names in its own order: where each of its values comes from in
    # the scope's row followed by the holes' values
    sources = {n: i for i, n in enumerate(scope.names)}
    sources.update((name, len(scope.names) + j) for j, (name, _) in enumerate(part.holes))
    take = [sources[n] for n in heading.names]

    def value(row):
        for i in needs:
            if row[i] is None:
                return MISSING
        filled = tuple(h(row) for h in holes)
        if MISSING in filled:
            return MISSING
        values = row + filled
        return fn(tuple(values[i] for i in take))
    return value


def _not3(v):
    return MISSING if v is MISSING else not v


def _and3(fns):
    def conjunction(row):
        out = True
        for f in fns:
            v = f(row)
            if v is MISSING:
                out = MISSING
            elif not v:
                return False
        return out
    return conjunction


def _or3(fns):
    def disjunction(row):
        out = False
        for f in fns:
            v = f(row)
            if v is MISSING:
                out = MISSING
            elif v:
                return True
        return out
    return disjunction


def _at_name(node, role):
    return next((name for kind, name in node.variables(role) if kind == "at"), None)


def _pin(node, which, roles):
    """``(role, k)`` when clause ``which`` can hold only at the position of ``role`` plus k
    (:func:`sira.algebra.windowby.pinned_offset`), else None."""
    b = node.boundary(which)
    target = _at_name(node, which)
    if b is None or b.when is None or target is None:
        return None
    names = {_at_name(node, r): r for r in roles if _at_name(node, r) is not None}
    found = pinned_offset(b.when, target, set(names))
    return None if found is None else (names[found[0]], found[1])


def _reads_roles(node, which, roles) -> bool:
    b = node.boundary(which)
    if b is None or b.when is None:
        return False
    names = {name for r in roles for _, name in node.variables(r)}
    return bool(attributes_used(b.when) & names)


def find_windows(node, seq: _Sequence, label, start, end) -> list:
    """The windows of one sequence: (label position or None, start, end, opened, closed).

    A window's END is searched forward from its start, position by position, so the search
    walks the window it finds (its tuples are the result); when END pins its position to
    another variable's (``ep - sp = 3``, ``lp - ep = 2``) the one candidate is tested instead.
    A LABEL window's START is the first position where START holds: computed once per sequence
    when START does not read the label's variables, tested at its one candidate when it is
    pinned to them (``lp - sp = 4``), else searched from the first position."""
    n = seq.n
    end_pin = None if node.end.unbounded else _pin(node, "end", ("label", "start"))

    def find_end(positions, s):
        if node.end.unbounded:
            return n, True
        if end_pin is not None and positions.get(end_pin[0]) is not None:
            q = positions[end_pin[0]] + end_pin[1]
            positions["end"] = q
            if s <= q <= n and end(seq, positions):
                return q, True
            return n, False
        for q in range(s, n + 1):
            positions["end"] = q
            if end(seq, positions):
                return q, True
        return n, False

    out = []
    if node.label is not None:
        start_pin = None if node.start.unbounded else _pin(node, "start", ("label",))
        shared_start = None  # START's first position when it does not read the label
        if not node.start.unbounded and start_pin is None and \
                not _reads_roles(node, "start", ("label",)):
            shared_start = next((p for p in range(1, n + 1)
                                 if start(seq, {"label": 1, "start": p})), 0)
        for lp in range(1, n + 1):
            pos = {"label": lp}
            if not label(seq, pos):
                continue
            s, opened = 1, True
            if node.start.unbounded:
                pass
            elif shared_start is not None:
                s, opened = (shared_start, True) if shared_start else (1, False)
            elif start_pin is not None:
                p = lp + start_pin[1]
                pos["start"] = p
                if 1 <= p <= n and start(seq, pos):
                    s = p
                else:
                    s, opened = 1, False
            else:
                for p in range(1, n + 1):
                    pos["start"] = p
                    if start(seq, pos):
                        s = p
                        break
                else:
                    s, opened = 1, False
            pos["start"] = s if opened else None  # no start: its variables are MISSING in END
            e, closed = find_end(pos, s)
            out.append((lp, s, e, opened, closed))
        return out
    if node.start.unbounded:
        e, closed = find_end({"start": 1}, 1)
        return [(None, 1, e, True, closed)]
    if node.kind == "sliding":
        for s in range(1, n + 1):
            pos = {"start": s}
            if start(seq, pos):
                e, closed = find_end(pos, s)
                out.append((None, s, e, True, closed))
        return out
    p = 1  # tumbling: a new window only after the previous one ended
    while p <= n:
        s = next((q for q in range(p, n + 1) if start(seq, {"start": q})), None)
        if s is None:
            break
        e, closed = find_end({"start": s}, s)
        out.append((None, s, e, True, closed))
        if not closed:
            break  # an unclosed window runs to the end of the sequence
        p = e + 1
    return out


def _aggregate_fn(expr, source_heading, result):
    """A function of the window's rows computing one pushed-down aggregate."""
    window = Heading.of({result: RelationType(source_heading)})
    _, at, _ = aggregated_type(expr, window)
    return rows_aggregate(expr, source_heading, at)


@evaluates(WindowBy)
def _windowby(node, ctx):
    src = ctx.eval(node.source)
    h = src.heading
    conds = {w: _Condition(node, w, ctx.eval) for w in ("label", "start", "end")}
    aggs = [(name, _aggregate_fn(e, h, node.result)) for name, e in node.aggregates]
    names = node.heading.names
    part_index = [h.index(n) for n in node.partition]
    guard = None if aggs else Guard.of(node, ctx.options)  # max_tuples: what the windows hold
    held = 0
    out = set()
    for rows in ordered_sequences(src, node):
        seq = _Sequence(h, rows)
        first = rows[0]
        for lp, s, e, opened, closed in find_windows(node, seq, conds["label"], conds["start"],
                                                    conds["end"]):
            if node.only and not closed:
                continue
            values = {n: first[i] for n, i in zip(node.partition, part_index)}
            for role, p in (("label", lp), ("start", s), ("end", e)):
                for kind, name in node.variables(role):
                    values[name] = seq.value(kind, p, False)
            values["closed"] = closed
            if node.label is not None:
                values["opened"] = opened
            window = rows[s - 1:e]
            if aggs:
                for name, fn in aggs:
                    values[name] = fn(window)
            else:
                held += len(window)
                if held > guard.limit:
                    raise windows_error(guard)
                values[node.result] = Relation(h, frozenset(window))
            out.add(tuple(values[n] for n in names))
    return Relation(node.heading, frozenset(out))
