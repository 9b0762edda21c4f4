"""A deliberately naive, UNPACK-based reference for the interval operators (tests only).

Everything here goes through points: UNPACK materialises unit intervals, PACK is defined as
"unpack on all, then pack on each attribute in order" with a plain merge of unit intervals.
The engine must agree with it on small relations while never unpacking itself.
"""

from __future__ import annotations

from itertools import product

from sira import Relation
from sira.intervals import Interval


def ref_unpack(r: Relation, names) -> Relation:
    h = r.heading
    pos = [h.index(n) for n in names]
    out = set()
    for row in r.body:
        ranges = [[Interval(p, p + 1) for p in range(row[i].begin, row[i].end)] for i in pos]
        for combo in product(*ranges):
            base = list(row)
            for i, iv in zip(pos, combo):
                base[i] = iv
            out.add(tuple(base))
    return Relation(h, frozenset(out))


def _pack_units(rows, i) -> set:
    """Merge unit-or-larger intervals at position i that are adjacent, per group."""
    groups = {}
    for row in rows:
        groups.setdefault(row[:i] + row[i + 1:], set()).update(
            range(row[i].begin, row[i].end))
    out = set()
    for key, points in groups.items():
        pts = sorted(points)
        start = prev = pts[0]
        for p in pts[1:] + [None]:
            if p is not None and p == prev + 1:
                prev = p
                continue
            out.add(key[:i] + (Interval(start, prev + 1),) + key[i:])
            if p is not None:
                start = prev = p
    return out


def ref_pack(r: Relation, names) -> Relation:
    if not names:
        return r
    rows = ref_unpack(r, names).body
    for n in names:
        rows = _pack_units(rows, r.heading.index(n))
    return Relation(r.heading, frozenset(rows))


def _natural_join(r1: Relation, r2: Relation) -> Relation:
    h = r1.heading.union(r2.heading)
    common = [n for n in r1.heading.names if n in r2.heading]
    out = set()
    for a in r1.body:
        da = dict(zip(r1.heading.names, a))
        for b in r2.body:
            db = dict(zip(r2.heading.names, b))
            if all(da[n] == db[n] for n in common):
                merged = {**da, **db}
                out.add(tuple(merged[n] for n in h.names))
    return Relation(h, frozenset(out))


def ref_using(op: str, r1: Relation, r2: Relation, names) -> Relation:
    """PACK(op(UNPACK(r1, L), UNPACK(r2, L)), L): the definition of every USING operator."""
    u1 = ref_unpack(r1, [n for n in names if n in r1.heading])
    u2 = ref_unpack(r2, [n for n in names if n in r2.heading])
    if op == "union":
        res = Relation(u1.heading, u1.body | u2.body)
    elif op == "intersect":
        res = Relation(u1.heading, u1.body & u2.body)
    elif op == "minus":
        res = Relation(u1.heading, u1.body - u2.body)
    elif op == "xminus":
        res = Relation(u1.heading, u1.body ^ u2.body)
    elif op == "join":
        res = _natural_join(u1, u2)
    elif op in ("semijoin", "semiminus"):
        joined = _natural_join(u1, u2)
        pos = [joined.heading.index(n) for n in u1.heading.names]
        matched = {tuple(row[i] for i in pos) for row in joined.body}
        body = u1.body & matched if op == "semijoin" else u1.body - matched
        res = Relation(u1.heading, frozenset(body))
    else:
        raise ValueError(op)
    return ref_pack(res, [n for n in names if n in res.heading])
