"""Every SPL and WindowBy case of ``specs/windows/`` run live (issue 20): its input relation
becomes a live stream, rows inserted in rowtime order with bounds, then ``finish()``; the
query's results must be the case's expected relation.

A live stream's rowtime is a LONG and it carries an arrival attribute: an SPL case's stream
(``ts``, ``seq``) is one already; a WindowBy case's relation gets its order attribute as the
rowtime and the arrival attribute projected away, and its expected relation is compared with
its types left out (the live order attribute is a LONG where the case's is an INT; the values
are the same integers).
"""

from __future__ import annotations

import attrs
import pytest

import sira
from sira import LONG, Relation
from sira.algebra.basic import Project, RelvarRef
from sira.algebra.node import Node
from sira.streams import StreamEngine
from sira.syntax import cst
from sira.syntax.builder import build_cst
from sira.syntax.parser import parse_script
from sira.values import Tuple

from specs import SPECS, all_cases

CASES = [c for c in all_cases()
         if c.path.parent in (SPECS / "windows" / "spl", SPECS / "windows" / "windowby")
         and "\nerror " not in c.text]


def _load(case):
    """(relvars, query, expected); a relvar bound to an expression over others (``D :=
    union(X, Y)``) is read in the query as that expression, so it runs live on their streams."""
    relvars, query, expect, derived = {}, None, None, {}
    for s in parse_script(case.text):
        if isinstance(s, cst.Bind):
            node = build_cst(s.value, relvars, relvars)
            relvars[s.name.lower()] = sira.evaluate(node, relvars)
            if _names_used(node):
                derived[s.name.lower()] = _replace(node, derived)
        elif isinstance(s, cst.Query):
            query = _replace(build_cst(s.value, relvars, relvars), derived)
        elif isinstance(s, cst.Expect):
            expect = sira.evaluate(build_cst(s.value, relvars, relvars), relvars)
    return relvars, query, expect


def _plain(value):
    """A relation, tuple or scalar as plain Python data, its attribute names kept and its
    types left out (a live stream reads the order attribute as LONG where the case has INT,
    and so do the attributes computed from it)."""
    if isinstance(value, Relation):
        return frozenset(tuple((n, _plain(v)) for n, v in zip(value.heading.names, row))
                         for row in value.body)
    if isinstance(value, Tuple):
        return tuple((n, _plain(v)) for n, v in zip(value.heading.names, value.values))
    return value


def _replace(node, mapping):
    """``node`` with each relvar reference replaced as ``mapping`` says."""
    if isinstance(node, RelvarRef):
        return mapping.get(node.name, node)
    changes = {}
    for field in attrs.fields(type(node)):
        value = getattr(node, field.name)
        if isinstance(value, Node):
            changes[field.name] = _replace(value, mapping)
    return attrs.evolve(node, **changes) if changes else node


def _names_used(node) -> set:
    if isinstance(node, RelvarRef):
        return {node.name}
    return set().union(*(_names_used(c) for c in node.children))


def _order_of(node):
    from sira.algebra.spl import SplWindow
    from sira.algebra.windowby import WindowBy
    if isinstance(node, WindowBy):
        return node.order[0]
    if isinstance(node, SplWindow):
        return node.arrival if node.kind == "timeinterval" and node.arrival else node.ts
    for c in node.children:
        found = _order_of(c)
        if found is not None:
            return found
    return None


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_every_spl_and_windowby_case_runs_live(case):
    relvars, query, expect = _load(case)
    rowtime = _order_of(query)
    engine = StreamEngine()
    streams, mapping, constants = {}, {}, {}
    read = _names_used(query)
    for name, rel in relvars.items():
        h = rel.heading
        if name not in read or rowtime not in h:
            constants[name] = rel
            continue
        if h.type_of(rowtime) not in (LONG, sira.INT):
            pytest.skip(f"the rowtime '{rowtime}' is {h.type_of(rowtime)}: a live stream's "
                        f"rowtime is a LONG")
        arrival = "seq" if "seq" in h and rowtime != "seq" else "arrival_"
        payload = {n: h.type_of(n) for n in h.names if n not in (rowtime, arrival)}
        stream = engine.create_stream(name, payload, rowtime=rowtime, arrival=arrival)
        streams[name] = (stream, rel)
        if arrival not in h:  # the stream adds an attribute the case's relation lacks
            mapping[name] = Project(RelvarRef(name, stream.heading), tuple(h.names))
    q = engine.register(_replace(query, mapping), constants)
    for name, (stream, rel) in streams.items():
        p = stream.attach()
        h = rel.heading
        order = sorted(rel.to_rows(), key=lambda r: (r[rowtime], r.get("seq", 0)))
        if "seq" in h and rowtime != "seq" and [r["seq"] for r in order] != sorted(
                r["seq"] for r in order):
            pytest.skip("the case's arrival order is not its rowtime order")
        last = None
        for r in order:
            t = r[rowtime]
            if last is not None and t > last:
                p.bound(t)  # every earlier instant is complete
            p.insert({n: r[n] for n in r if n not in (rowtime, "seq")}, t)
            last = t
        p.detach()
    engine.finish()
    results = [tuple(sorted(r.items())) for r in q.results()]
    assert len(results) == len(set(results)), "a result was emitted twice"
    got = q.relation()
    if all(rel.heading.type_of(rowtime) == LONG for _, rel in streams.values()):
        assert got == expect, f"{case.id}:\nexpected\n{expect}\ngot\n{got}"
    else:
        assert got.heading.names == expect.heading.names
        assert _plain(got) == _plain(expect), f"{case.id}:\nexpected\n{expect}\ngot\n{got}"


def test_the_cases_run_live_cover_every_spl_and_windowby_case():
    assert len(CASES) >= 40
