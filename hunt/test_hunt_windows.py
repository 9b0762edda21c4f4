"""Hunt driver: CQL windows of every kind composed with the interval operators (pointwise
SUMMARIZEBY, PACK, JOIN, MINUS, SEMIMINUS, XMINUS of two windows over one stream), the Python
engine (no rewrite) against DuckDB (with the rewrite) and the Python engine with the rewrite.

Run: hunt/run.sh N LOG hunt/test_hunt_windows.py
"""
from __future__ import annotations

import os

import pytest
from hypothesis import given, strategies as st

import sira

from sira import INT, LONG, STRING, Relation

# copied from tests/test_spark_windows.py (importing it needs the tests' conftest)
HEADING = {"ts": LONG, "seq": INT, "p": STRING, "v": INT}
GROUPS = [
    ("now", "range(5)", "range(unbounded)", "range(7) slide(3)"),
    ("range(6) slide(6)", "rows(1)", "rows(3)", "rows(4) slide(2)"),
    ("rows(3) slide(3)", "rows(17) slide(17)", "partition(p) rows(2)", "rows(2) slide(3)",
     "partition(p) rows(1) slide(4)", "rows(2) slide(17)"),
    ("partition(p) rows(2) range(6)", "partition(p) rows(3) range(7) slide(2)",
     "partition(p) rows(3) slide(2)"),
    ("range(5) on(ts)", "range(3) on(seq)", "range(4) on(v)"),
]
KINDS = [k for group in GROUPS for k in group]


@st.composite
def streams(draw, max_size=20):
    times = sorted(draw(st.lists(st.integers(0, 50), max_size=max_size)))
    rows = [{"ts": t, "seq": i, "p": draw(st.sampled_from("ab")), "v": draw(st.integers(0, 5))}
            for i, t in enumerate(times)]
    return Relation.from_rows(HEADING, rows)
from hunt.common import assert_engines_agree

ENGS = os.environ.get("HUNT_ENGINES", "duckdb,python").split(",")

SPECS = ["total(plus(v))", "n(plus(1))", "hi(max(v))", "lo(min(seq))"]


@st.composite
def win(draw):
    k = draw(st.sampled_from(KINDS))
    arrival = draw(st.booleans())
    return f"window(S, ts, {k}{' arrival(seq)' if arrival else ''})"


@st.composite
def queries(draw):
    w1, w2 = draw(win()), draw(win())
    op = draw(st.sampled_from(["sumusing", "sum", "pack", "join", "minus", "semiminus",
                               "xminus", "intersect", "union", "unpack_count"]))
    keys = draw(st.sampled_from([(), ("p",), ("v",), ("p", "v")]))
    kl = "".join(f"{k}, " for k in keys)
    specs = " ".join(draw(st.lists(st.sampled_from(SPECS), min_size=1, max_size=3, unique=True)))
    if op == "sumusing":
        return f"summarizebyusing({w1}, ({kl}during), ({specs}), (during))"
    if op == "sum":
        return f"summarizeby({w1}, ({kl}during), ({specs}))"
    if op == "pack":
        return f"pack(project({w1}, ({kl}during)), (during))"
    if op == "unpack_count":
        return (f"summarizeby(unpack(restrict(project({w1}, ({kl}during)), "
                f"lt(the_begin(during), 60)), (during)), (during), (n(plus(1))))")
    a = f"project({w1}, ({kl}during))"
    b = f"project({w2}, ({kl}during))"
    if op == "join":
        extra = draw(st.sampled_from(["seq", "v", "p"]))
        b2 = f"project({w2}, ({kl}{'' if extra in keys else extra + ', '}during))"
        using = draw(st.sampled_from(["", ", (during)", ", ()"]))
        return f"join{'using' if using else ''}({a}, {b2}{using})"
    using = draw(st.sampled_from(["", ", (during)", ", ()"]))
    if op == "semiminus":
        return f"semiminus{'using' if using else ''}({w1}, {b}{using})"
    return f"{op}{'using' if using else ''}({a}, {b}{using})"


@pytest.mark.parametrize("engine", ENGS)
@given(streams(), queries())
def test_windows_composed_with_interval_operators_agree(engine, stream, text):
    relvars = {"S": stream}
    node = sira.parse(text, {"S": stream.heading})
    assert_engines_agree(node, relvars, engine=engine)


@given(streams(), queries(), st.data())
def test_windows_over_a_duplicated_arrow_stream_agree(stream, text, data):
    """The stream handed to DuckDB as an Arrow table with repeated rows, shuffled."""
    import pyarrow as pa
    from hunt.common import _outcome
    node = sira.parse(text, {"S": stream.heading})
    t = stream.to_arrow()
    if t.num_rows:
        idx = list(range(t.num_rows)) + data.draw(st.lists(st.integers(0, t.num_rows - 1),
                                                           max_size=2 * t.num_rows))
        t = t.take(pa.array(data.draw(st.permutations(idx))))
    expected, err = _outcome(node, {"S": stream}, "python", rewrite=False)
    got, err2 = _outcome(node, {"S": t}, "duckdb")
    if err is not None:
        assert err2 is not None and type(err2) is type(err), f"{text}\n{err!r} vs {err2!r}"
        return
    assert err2 is None, f"{text}\n{err2!r}"
    assert got == expected, f"{text}\n{stream}\nonly py {expected.body - got.body}\nonly dk {got.body - expected.body}"


# copied from tests/test_spark_windows.py
SEGMENTS = [
    # sessions: a window ends where the next element comes more than 3 after the last one
    "windowby(S, partition(p) order(ts) tumbling, start(as(s) at(sp) prev(ps)), "
    "end(as(e) at(ep) next(en) when(en.ts - e.ts > 3)))",
    "windowby(S, partition(p) order(ts) tumbling, start(), end(as(e) when(e.v = 0)), only)",
    "windowby(S, order(ts) tumbling, start(next(ns)), end(as(e) prev(pe) at(ep) when(pe.v > e.v)), "
    "aggregates(n(count(w)) total(sum(w, v)) hi(max(w, p)) a(avg(w, v)) lo(min(w, ts))))",
    "windowby(S, partition(p) order(v) tumbling, start(), end(unbounded))",
    "windowby(S, partition(p) order(ts) tumbling, start(), end(at(ep) when(mod(ep, 3) = 0)))",
]

LABEL_FRAMES = [
    "windowby(S, partition(p) order(ts) sliding, label(as(l) at(lp)), "
    "start(at(sp) when(lp - sp = 3)), end(at(ep) when(ep = lp)))",
    "windowby(S, partition(p) order(ts) sliding, label(as(l) at(lp) when(l.v < 3)), "
    "start(as(s) at(sp) when(lp - sp = 1)), end(as(e) at(ep) when(lp = ep)), "
    "aggregates(n(count(w)) total(sum(w, v)) a(avg(w, v)) hi(max(w, ts))))",
    "windowby(S, order(ts) sliding, label(at(lp)), start(unbounded), end(at(ep) when(ep = lp)), "
    "aggregates(a(avg(w, v))))",
    "windowby(S, partition(p) order(v) sliding, label(at(lp)), start(at(sp) when(lp - sp = 0)), "
    "end(at(ep) when(ep = lp)))",
]

WINDOW_TABLES = ["tumble(S, ts, size(7) offset(2))", "hop(S, ts, size(10) slide(4))",
                 "hop(S, ts, size(6) slide(6) offset(-1))", "cumulate(S, ts, step(3) size(9))",
                 "session(S, ts, gap(4) partition(p))", "session(S, ts, gap(3))"]


@given(streams(max_size=25), st.sampled_from(SEGMENTS + LABEL_FRAMES + WINDOW_TABLES), st.data())
def test_windowby_and_window_tables_over_a_duplicated_arrow_stream(stream, text, data):
    import pyarrow as pa
    from hunt.common import _outcome
    node = sira.parse(text, {"S": stream.heading})
    t = stream.to_arrow()
    if t.num_rows:
        idx = list(range(t.num_rows)) + data.draw(st.lists(st.integers(0, t.num_rows - 1),
                                                           max_size=2 * t.num_rows))
        t = t.take(pa.array(data.draw(st.permutations(idx))))
    expected, err = _outcome(node, {"S": stream}, "python", rewrite=False)
    got, err2 = _outcome(node, {"S": t}, "duckdb")
    if err is not None:
        assert err2 is not None and type(err2) is type(err), f"{text}\n{err!r} vs {err2!r}"
        return
    assert err2 is None, f"{text}\n{err2!r}"
    assert got == expected, f"{text}\n{stream}\nonly py {expected.body - got.body}\nonly dk {got.body - expected.body}"
