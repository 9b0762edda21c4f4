"""Hunt driver: every node of a random interval tree (INT intervals x, y, bounded and unbounded)
is checked on the Python engine against a naive point-based definition: unpack the inputs on
the pointwise attributes, apply the plain operator, pack on the node's pack list in order.

Run: hunt/run.sh N LOG hunt/test_hunt_oracle.py
"""
from __future__ import annotations

from itertools import product

import pytest
from hypothesis import given, strategies as st

import sira
from sira import Relation
from sira.algebra.aggregation import SummarizeBy
from sira.algebra.basic import Project
from sira.algebra.joins import Join, LeftJoin, SemiJoin, SemiMinus
from sira.algebra.packing import Pack, Unpack, interval_names
from sira.algebra.setops import Intersect, Minus, Union, XMinus
from sira.intervals import Interval

from hunt import test_hunt_intervals as thi

thi.NAME_POOL = ("k", "k", "j", "s", "x", "x", "x", "y", "y")
thi.IVS = ("x", "y")
thi.FALLBACK_IVS = ("x", "x", "y")

BIG = 60


def unpack_rows(rows, heading, names):
    pos = [heading.index(n) for n in names]
    out = set()
    for row in rows:
        ranges = []
        for i in pos:
            iv = row[i]
            end = BIG if iv.end is None else iv.end
            ranges.append([Interval(p, p + 1) for p in range(iv.begin, end)])
        for combo in product(*ranges):
            base = list(row)
            for i, iv in zip(pos, combo):
                base[i] = iv
            out.add(tuple(base))
    return out


def pack_rows(rows, heading, names):
    """unpack on names, then pack on each in order; an end at BIG is unbounded."""
    names = list(names)
    if not names:
        return set(rows)
    rows = unpack_rows(rows, heading, names)
    for n in names:
        i = heading.index(n)
        groups = {}
        for row in rows:
            iv = row[i]
            end = BIG if iv.end is None else iv.end
            groups.setdefault(row[:i] + row[i + 1:], set()).update(range(iv.begin, end))
        rows = set()
        for key, points in groups.items():
            pts = sorted(points)
            start = prev = pts[0]
            for p in pts[1:] + [None]:
                if p is not None and p == prev + 1:
                    prev = p
                    continue
                rows.add(key[:i] + (Interval(start, None if prev + 1 >= BIG else prev + 1),)
                         + key[i:])
                if p is not None:
                    start = prev = p
    return rows


def natural_join(r1, h1, r2, h2, out):
    common = [n for n in h1.names if n in h2]
    res = set()
    for a in r1:
        for b in r2:
            if all(a[h1.index(n)] == b[h2.index(n)] for n in common):
                d = {**dict(zip(h1.names, a)), **dict(zip(h2.names, b))}
                res.add(tuple(d[n] for n in out.names))
    return res


def semi(r1, h1, r2, h2, keep):
    common = [n for n in h1.names if n in h2]
    res = set()
    for a in r1:
        m = any(all(a[h1.index(n)] == b[h2.index(n)] for n in common) for b in r2)
        if m == keep:
            res.add(a)
    return res


def reference(node, kids):
    """The naive result of ``node`` over its children's values (Relations), or None when
    the node is not checked here."""
    h = node.heading
    if isinstance(node, Pack):
        (r,) = kids
        return pack_rows(r.body, h, node.on)
    if isinstance(node, Project):
        (r,) = kids
        rows = {tuple(row[r.heading.index(n)] for n in h.names) for row in r.body}
        return pack_rows(rows, h, node.pack_list)
    if isinstance(node, (Union, Intersect, Minus, XMinus)):
        p = [n for n in node.pointwise if n in h]
        ups = [unpack_rows(k.body, k.heading, p) for k in kids]
        # reorder columns to node heading (children share the heading)
        if isinstance(node, Union):
            res = set().union(*ups)
        elif isinstance(node, Intersect):
            res = set(ups[0]).intersection(*ups[1:])
        elif isinstance(node, Minus):
            res = ups[0] - ups[1]
        else:
            res = set(ups[0])
            for u in ups[1:]:
                res = res ^ u
        return pack_rows(res, h, node.pack_list)
    if isinstance(node, (Join, SemiJoin, SemiMinus, LeftJoin)):
        pw = node.pointwise
        ups = [unpack_rows(k.body, k.heading, [n for n in pw if n in k.heading]) for k in kids]
        if isinstance(node, Join):
            acc, ah = ups[0], kids[0].heading
            for u, k in zip(ups[1:], kids[1:]):
                out = ah.union(k.heading)
                acc = natural_join(acc, ah, u, k.heading, out)
                ah = out
            res = {tuple(dict(zip(ah.names, row))[n] for n in h.names) for row in acc}
        elif isinstance(node, LeftJoin):
            (l, r), (ul, ur) = kids, ups
            res = natural_join(ul, l.heading, ur, r.heading, h)
            defaults = {n: e.value for n, e in node.defaults}
            for row in semi(ul, l.heading, ur, r.heading, False):
                d = dict(zip(l.heading.names, row))
                d.update(defaults)
                res.add(tuple(d[n] for n in h.names))
        else:
            (l, r), (ul, ur) = kids, ups
            res = semi(ul, l.heading, ur, r.heading, isinstance(node, SemiJoin))
        return pack_rows(res, h, node.pack_list)
    if isinstance(node, SummarizeBy):
        (r,) = kids
        rh = r.heading
        rows = unpack_rows(r.body, rh, node.using or ())
        groups = {}
        for row in rows:
            groups.setdefault(tuple(row[rh.index(n)] for n in node.by), set()).add(row)
        res = set()
        for key, grp in groups.items():
            agg = sira.evaluate(sira.literal(Relation(rh, frozenset(grp))).aggregate(
                **{n: (op, e) for n, op, e in node.specs}), rewrite=False)
            (vals,) = agg.body
            d = {**dict(zip(node.by, key)), **dict(zip(agg.heading.names, vals))}
            res.add(tuple(d[n] for n in h.names))
        return pack_rows(res, h, node.pack_list)
    return None


def _nodes(tree):
    yield tree
    for c in tree.children:
        yield from _nodes(c)


def check_tree(tree, relvars):
    for node in _nodes(tree):
        if not node.children:
            continue
        try:
            got = sira.evaluate(node, relvars, rewrite=False)
            kids = [sira.evaluate(c, relvars, rewrite=False) for c in node.children]
        except sira.SiraError:
            continue
        try:
            ref = reference(node, kids)
        except sira.SiraError:
            continue
        if ref is None:
            continue
        assert set(got.body) == ref, (
            f"python differs from the point definition at\n{node!r}\nin tree {tree!r}\n"
            f"relvars {relvars!r}\nkids {kids!r}\npython {sorted(got.body)}\nref {sorted(ref)}\n"
            f"only python: {set(got.body) - ref}\nonly ref: {ref - set(got.body)}")


@given(thi.trees())
def test_python_matches_point_definition(tr):
    check_tree(*tr)


@given(thi.trees())
def test_python_rewrite_agrees(tr):
    from hunt.common import assert_engines_agree
    assert_engines_agree(tr[0], tr[1], engine="python", rewrite=True)
