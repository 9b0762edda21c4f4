"""Hunt driver: the CQL windows of the Python engine (and DuckDB) against the definitions in
design.md section 2 "Streams and windows", computed naively per element.

Run: hunt/run.sh N LOG hunt/test_hunt_window_defs.py
"""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

import sira
from sira import INT, LONG, STRING, Relation
from sira.intervals import Interval

ENGS = __import__("os").environ.get("HUNT_ENGINES", "python,duckdb").split(",")
HEADING = {"ts": LONG, "seq": INT, "p": STRING, "v": INT}


@st.composite
def streams(draw, max_size=14):
    times = sorted(draw(st.lists(st.integers(0, 30), max_size=max_size)))
    rows = [{"ts": t, "seq": i, "p": draw(st.sampled_from("ab")), "v": draw(st.integers(0, 5))}
            for i, t in enumerate(times)]
    return Relation.from_rows(HEADING, rows)


def ceil_div(a, b):
    return -((-a) // b)


def definition(rows, spec):
    """{seq: (begin, end)} by the design's definitions; rows sorted by (ts, seq)."""
    out = {}
    parts = {}
    for r in rows:
        parts.setdefault(r["p"] if spec.get("partition") else None, []).append(r)
    for seqs in parts.values():
        times = [r["ts"] for r in seqs]
        for i, r in enumerate(seqs):
            t = r["ts"]
            p = i + 1
            ends = []
            begin = t
            kind = spec["kind"]
            if kind == "now":
                ends.append(t + 1)
            if kind == "range":
                T, L = spec["T"], spec.get("L")
                if T is None:
                    ends.append(None)
                elif L is None:
                    ends.append(t + T)
                else:
                    begin = ceil_div(t, L) * L
                    ends.append(ceil_div(t + T, L) * L)
            if kind == "rows":
                N, M = spec["N"], spec.get("M")
                if M is None:
                    ends.append(times[i + N] if i + N < len(times) else None)
                else:
                    start_pos = ceil_div(p, M) * M
                    end_pos = ceil_div(p + N, M) * M
                    if start_pos > len(times) or start_pos == end_pos:
                        continue
                    begin = times[start_pos - 1]
                    ends.append(times[end_pos - 1] if end_pos <= len(times) else None)
                if spec.get("T") is not None:
                    ends.append(t + spec["T"])
            if kind == "on":
                C = spec["C"]
                later = [s["ts"] for s in seqs[i + 1:] if s[spec["E"]] >= r[spec["E"]] + C]
                ends.append(later[0] if later else None)
            bounded = [e for e in ends if e is not None]
            end = min(bounded) if bounded else None
            if end is not None and end <= begin:
                continue
            out[r["seq"]] = (begin, end)
    return out


SPECS = st.one_of(
    st.just({"kind": "now"}),
    st.builds(lambda T: {"kind": "range", "T": T}, st.integers(1, 7)),
    st.just({"kind": "range", "T": None}),
    st.tuples(st.integers(1, 4), st.integers(1, 9)).map(
        lambda p: {"kind": "range", "L": p[0], "T": p[0] + p[1] - 1}),
    st.builds(lambda N, part: {"kind": "rows", "N": N, "partition": part},
              st.integers(1, 4), st.booleans()),
    st.builds(lambda N, M, part: {"kind": "rows", "N": N, "M": M, "partition": part},
              st.integers(1, 4), st.integers(1, 4), st.booleans()),
    st.builds(lambda N, T, part: {"kind": "rows", "N": N, "T": T, "partition": part},
              st.integers(1, 4), st.integers(1, 6), st.booleans()),
    st.builds(lambda C, E: {"kind": "on", "C": C, "E": E}, st.integers(1, 5),
              st.sampled_from(["ts", "seq", "v"])),
)


def text(spec):
    k = spec["kind"]
    part = "partition(p) " if spec.get("partition") else ""
    if k == "now":
        return "now"
    if k == "range":
        if spec["T"] is None:
            return "range(unbounded)"
        return f"range({spec['T']})" + (f" slide({spec['L']})" if spec.get("L") else "")
    if k == "rows":
        s = f"{part}rows({spec['N']})"
        if spec.get("T") is not None:
            s += f" range({spec['T']})"
        if spec.get("M"):
            s += f" slide({spec['M']})"
        return s
    return f"range({spec['C']}) on({spec['E']})"


@pytest.mark.parametrize("engine", ENGS)
@given(streams(), SPECS)
def test_windows_follow_the_design_definitions(engine, stream, spec):
    q = f"window(S, ts, {text(spec)} arrival(seq))"
    got = sira.evaluate(q, {"S": stream}, engine=engine).to_rows()
    got = {r["seq"]: (r["during"].begin, r["during"].end) for r in got}
    rows = sorted(stream.to_rows(), key=lambda r: (r["ts"], r["seq"]))
    want = definition(rows, spec)
    assert got == want, (f"{q}\n{[(r['ts'], r['seq'], r['p'], r['v']) for r in rows]}\n"
                         f"only engine {set(got.items()) - set(want.items())}\n"
                         f"only definition {set(want.items()) - set(got.items())}")


def _packed(rows):
    """{(p, v): [(begin, end)...]} maximal intervals of presence."""
    groups = {}
    for key, (b, e) in rows:
        groups.setdefault(key, []).append((b, e))
    out = {}
    for key, ivs in groups.items():
        ivs.sort(key=lambda x: x[0])
        merged = []
        for b, e in ivs:
            if merged and (merged[-1][1] is None or b <= merged[-1][1]):
                lb, le = merged[-1]
                merged[-1] = (lb, None if le is None or e is None else max(le, e))
            else:
                merged.append((b, e))
        out[key] = merged
    return out


@pytest.mark.parametrize("engine", ENGS)
@given(streams(), SPECS, st.lists(st.integers(0, 40), min_size=1, max_size=6))
def test_relation_to_stream_operators_follow_their_definitions(engine, stream, spec, ticks):
    w = f"project(window(S, ts, {text(spec)} arrival(seq)), (p, v, during))"
    rows = sorted(stream.to_rows(), key=lambda r: (r["ts"], r["seq"]))
    want = definition(rows, spec)
    by_seq = {r["seq"]: r for r in rows}
    present = [((by_seq[s]["p"], by_seq[s]["v"]), iv) for s, iv in want.items()]
    packed = _packed(present)
    ticks_rel = Relation.from_rows({"at": LONG}, [(t,) for t in ticks])
    relvars = {"S": stream, "TICKS": ticks_rel}

    def run(q):
        return {(r["p"], r["v"], r["at"]) for r in
                sira.evaluate(q, relvars, engine=engine).to_rows()}
    ist = {(k[0], k[1], b) for k, ivs in packed.items() for b, _ in ivs}
    dst = {(k[0], k[1], e) for k, ivs in packed.items() for _, e in ivs if e is not None}
    rst = {(k[0], k[1], t) for k, ivs in packed.items() for b, e in ivs for t in set(ticks)
           if b <= t and (e is None or t < e)}
    assert run(f"istream({w}, at)") == ist, (w, rows)
    assert run(f"dstream({w}, at)") == dst, (w, rows)
    assert run(f"rstream({w}, at, TICKS)") == rst, (w, rows)
