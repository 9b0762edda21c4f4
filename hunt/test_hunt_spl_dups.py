"""Hunt driver: SPL windows over a stream handed to DuckDB as an Arrow table with repeated rows
(shuffled), against the Python engine on the set (SPL counts tuples: duplicates must not count).
Strategies copied from tests/test_spl.py."""
from __future__ import annotations

import pyarrow as pa
from hypothesis import given, strategies as st

import sira
from sira import BOOLEAN, INT, LONG, STRING, Relation

from hunt.common import _outcome

HEADING = {"ts": LONG, "seq": LONG, "k": STRING, "i": INT, "p": BOOLEAN}

def stream(*rows):
    """A stream relation from (ts, i) / (ts, i, k) / (ts, i, k, p) rows; seq = listing order."""
    out = []
    for seq, row in enumerate(rows, 1):
        ts, i, k, p = tuple(row) + ("a", False)[len(row) - 2:]
        out.append({"ts": ts, "seq": seq, "k": k, "i": i, "p": p})
    return Relation.from_rows(HEADING, out)

def _stream_rows():
    row = st.tuples(st.integers(0, 30), st.integers(-20, 20), st.sampled_from("abc"),
                    st.booleans())
    return st.lists(row, min_size=0, max_size=12)

@st.composite
def window_texts(draw):
    kind = draw(st.sampled_from(["tumbling", "sliding", "timeinterval"]))
    parts = []
    if kind == "timeinterval":
        parts.append(f"intervalduration({draw(st.integers(1, 10))})")
        for name, lo in (("creationperiod", 1), ("discardage", 0), ("intervaloffset", 0)):
            if draw(st.booleans()):
                parts.append(f"{name}({draw(st.integers(lo, 10))})")
    else:
        evictions = ["count", "time", "delta"] + (["punct"] if kind == "tumbling" else [])
        ev = draw(st.sampled_from(evictions))
        parts.append({"count": f"count({draw(st.integers(1, 4))})",
                      "time": f"time({draw(st.integers(1, 10))})",
                      "delta": f"delta(i,{draw(st.integers(0, 10))})",
                      "punct": "punct(p)"}[ev])
        if kind == "sliding":
            tr = draw(st.sampled_from([None, "count", "time", "delta"]))
            if tr is not None:
                parts.append({"count": f"trigger(count({draw(st.integers(1, 3))}))",
                              "time": f"trigger(time({draw(st.integers(1, 10))}))",
                              "delta": f"trigger(delta(i,{draw(st.integers(0, 10))}))"}[tr])
    part = draw(st.sampled_from([None, "", "partitionage", "partitioncount", "tuplecount"]
                                if kind != "timeinterval" else [None, ""]))
    if part == "":
        parts.append("partitioned(k)")
    elif part is not None:
        n = draw(st.integers(1, 6 if part != "partitioncount" else 2))
        parts.append(f"partitioned(k,{part}({n}))")
    if draw(st.booleans()):
        parts.append("arrival(seq)")
    return f"splwindow(s,ts,{kind},{' '.join(parts)})"


@given(_stream_rows(), window_texts(), st.data())
def test_spl_windows_over_a_duplicated_arrow_stream(rows, text, data):
    s = stream(*rows)
    node = sira.parse(text, {"s": s})
    t = s.to_arrow()
    if t.num_rows:
        idx = list(range(t.num_rows)) + data.draw(st.lists(st.integers(0, t.num_rows - 1),
                                                           max_size=2 * t.num_rows))
        t = t.take(pa.array(data.draw(st.permutations(idx))))
    expected, err = _outcome(node, {"s": s}, "python")
    got, err2 = _outcome(node, {"s": t}, "duckdb")
    if err is not None:
        assert err2 is not None and type(err2) is type(err), f"{text}\n{err!r} vs {err2!r}"
        return
    assert err2 is None, f"{text}\n{err2!r}"
    assert got == expected, f"{text}\n{s}\npython:\n{expected}\nduckdb:\n{got}"
