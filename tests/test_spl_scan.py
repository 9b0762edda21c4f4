"""The scan of coupled keys over a stream split into chunks (``sira_spark.spl_scan``),
engine-free: on random streams cut at random places, the first pass, the driver's walk and the
corrections give the windows one scan of the whole stream gives, for every policy that
``partitioncount``/``tuplecount`` couples (several keys, one key holding most tuples, ticks
between chunks, chunks of one tuple)."""

from __future__ import annotations

import json
import random

import pytest

from sira import parse
from sira.engine.guards import Guard
from sira.engine.spl import SplScanner
from sira_spark.spl_scan import (CHECK, REPORT, WINDOW, Walk, correct, first_pass,
                                  scanner_from, state_bytes)

STREAM = "relation(heading(ts(long) k(string) i(int) p(boolean)) body())"

POLICIES = [
    "tumbling, count(3) partitioned(k, partitioncount(2))",
    "tumbling, count(4) partitioned(k, tuplecount(5))",
    "tumbling, time(4) partitioned(k, partitioncount(1))",
    "tumbling, delta(i, 3) partitioned(k, tuplecount(5))",
    "tumbling, punct(p) partitioned(k, partitioncount(2))",
    "sliding, count(3) partitioned(k, tuplecount(5))",
    "sliding, count(3) trigger(count(2)) partitioned(k, tuplecount(4))",
    "sliding, time(5) trigger(count(2)) partitioned(k, partitioncount(2))",
    "sliding, count(3) trigger(time(4)) partitioned(k, partitioncount(2))",
    "sliding, delta(i, 2) trigger(delta(ts, 1)) partitioned(k, tuplecount(6))",
    "sliding, time(4) trigger(time(3)) partitioned(k, tuplecount(7))",
    "sliding, delta(i, 3) trigger(count(2)) partitioned(k, partitioncount(2))",
]


def _inputs(node, rows) -> list:
    """(g, key, t, a, p, ta) of each row, as the engine feeds the scanner."""
    ev, tr = node.eviction, node.trigger
    out = []
    for g, r in enumerate(rows):
        out.append((g, r["k"], r["ts"], r[ev.attr] if ev.kind == "delta" else None,
                    r[ev.attr] if ev.kind == "punct" else False,
                    r[tr.attr] if tr is not None and tr.kind == "delta" else None))
    return out


def whole(node, inputs) -> list:
    scanner = SplScanner(node)
    out = []
    for g, k, t, a, p, ta in inputs:
        out += scanner.push(k, t, g, a, p, ta)
    return out


def in_chunks(node, inputs, cuts) -> tuple:
    """(the windows by the scheme over the chunks ``cuts`` makes, the rounds it took)."""
    bounds = [0] + sorted(cuts) + [len(inputs)]
    chunks = {c: inputs[lo:hi] for c, (lo, hi) in enumerate(zip(bounds, bounds[1:])) if hi > lo}

    def batches(c):
        part = chunks[c]
        return [tuple(list(col) for col in zip(*part[i:i + 3])) for i in range(0, len(part), 3)]

    proto, origin = SplScanner(node), inputs[0][2] if inputs else None
    first = {c: [r for recs in first_pass(c, batches(c), proto, origin) for r in recs.rows()]
             for c in chunks}
    empty = {c: r[8] for c, recs in first.items() for r in recs
             if r[0] == REPORT and r[9] is None}
    exits = {c: r[9] for c, recs in first.items() for r in recs
             if r[0] == REPORT and r[9] is not None}
    checks = {c: {r[3]: r[8] for r in recs if r[0] == CHECK} for c, recs in first.items()}
    walk = Walk({c: (empty[c], exits[c]) for c in chunks}, proto)
    fixed, rounds = [], 0
    while True:
        jobs = walk.wanted()
        if not jobs:
            break
        rounds += 1
        for c, entry in jobs.items():
            for r in correct(c, batches(c), entry, checks[c], proto).rows():
                if r[0] == REPORT:
                    walk.learn(c, r[2], r[3], r[9])
                else:
                    fixed.append(r)
    decided = walk.decisions()
    kept = [r for c, recs in first.items() for r in recs
            if r[0] == WINDOW and (c not in decided or r[3] > decided[c][1])]
    kept += [r for r in fixed if r[1] in decided and r[2] == decided[r[1]][0]]
    windows = {(r[3], r[4]): (r[5], r[6], r[7]) for r in kept}
    assert len(windows) == len(kept)
    assert rounds <= len(chunks)
    return [windows[w] for w in sorted(windows)], rounds


def random_rows(rng, n: int) -> list:
    keys = rng.choice(["ab", "abcde", "aaaaaaabc", "abcdefghij"])
    rows, t = [], rng.randrange(-5, 5)
    for _ in range(n):
        t += rng.choice([0, 0, 1, 1, 2, 7])
        rows.append({"ts": t, "k": rng.choice(keys), "i": rng.randrange(-6, 7),
                     "p": rng.random() < 0.15})
    return rows


@pytest.mark.parametrize("policy", POLICIES)
def test_the_chunks_give_the_windows_of_one_scan(policy):
    node = parse(f"splwindow({STREAM}, ts, {policy})")
    rng = random.Random(policy)
    for _ in range(40):
        inputs = _inputs(node, random_rows(rng, rng.randrange(0, 80)))
        cuts = set(rng.sample(range(1, max(2, len(inputs))), min(len(inputs) // 2,
                                                                   rng.randrange(0, 8))))
        got, _ = in_chunks(node, inputs, cuts)
        assert got == whole(node, inputs), (policy, cuts)


def test_chunks_whose_scans_never_meet_take_a_round_each():
    # one key holding most tuples, never evicted, its tumbling count windows offset by what it
    # held at each chunk's start: each chunk waits for the previous one's true exit
    node = parse(f"splwindow({STREAM}, ts, tumbling, count(7) partitioned(k, partitioncount(2)))")
    rows = [{"ts": t, "k": "big" if t % 4 else f"r{t % 3}", "i": 0, "p": False}
            for t in range(120)]
    inputs = _inputs(node, rows)
    got, rounds = in_chunks(node, inputs, {30, 61, 90})
    assert got == whole(node, inputs) and rounds == 3


def test_chunks_that_meet_at_once_take_one_round():
    # ten keys in turn under partitioncount(2): every partition is evicted within three tuples
    node = parse(f"splwindow({STREAM}, ts, tumbling, count(3) partitioned(k, partitioncount(2)))")
    rows = [{"ts": t, "k": "abcdefghij"[t % 10], "i": 0, "p": False} for t in range(200)]
    inputs = _inputs(node, rows)
    got, rounds = in_chunks(node, inputs, {50, 100, 150})
    assert got == whole(node, inputs) and rounds == 1


def test_a_meeting_is_found_at_a_checkpoint():
    # the scans meet after the chunk's second tuple: found at the checkpoint after it, the
    # corrected windows kept up to that tuple
    node = parse(f"splwindow({STREAM}, ts, tumbling, count(2) partitioned(k, partitioncount(1)))")
    rows = [{"ts": t, "k": "ab"[t % 5 == 0], "i": 0, "p": False} for t in range(12)]
    inputs = _inputs(node, rows)
    proto = SplScanner(node)
    recs = [r for b in first_pass(1, [tuple(map(list, zip(*inputs[6:])))], proto, 0)
            for r in b.rows()]
    checks = {r[3]: r[8] for r in recs if r[0] == CHECK}
    assert sorted(checks) == [1, 2, 4, 6]
    entry = SplScanner(node)
    for g, k, t, a, p, ta in inputs[:6]:
        entry.push(k, t, g, a, p, ta)
    out = correct(1, [tuple(map(list, zip(*inputs[6:])))], (0, entry), checks, proto).rows()
    assert [r[3] for r in out if r[0] == REPORT] == [6]  # met after g = 6, not NEVER


def test_a_correction_counts_its_windows_against_the_guard():
    # the chunk starts after a quiet stretch: the speculative scan, holding no partition, ticks
    # nothing; the scan from the true entry emits its two partitions at each of a trillion ticks
    node = parse(f"splwindow({STREAM}, ts, sliding, count(2) trigger(time(1)) "
                 "partitioned(k, tuplecount(5)))")
    proto = SplScanner.guarded(node, Guard("SPLWINDOW", 1000))
    entry = SplScanner(node)
    for g, k in enumerate("abc"):
        entry.push(k, g, g)
    chunk = [([3], ["c"], [10 ** 12], [None], [False], [None])]
    recs = [r for b in first_pass(1, chunk, proto, 0) for r in b.rows()]
    assert not [r for r in recs if r[0] == WINDOW]
    with pytest.raises(RuntimeError, match=r"SIRA\|TooManyTuples\|"):  # as the worker says it
        correct(1, chunk, (0, entry), {1: b""}, proto)


@pytest.mark.parametrize("policy", POLICIES)
def test_a_state_read_back_from_its_bytes_scans_on_as_the_scanner_did(policy):
    """The exit states travel from the workers to the driver as data (JSON, never a pickle):
    a scanner read back from its bytes at any point emits what the scanner itself emits."""
    node = parse(f"splwindow({STREAM}, ts, {policy})")
    rng = random.Random("bytes " + policy)
    for _ in range(20):
        inputs = _inputs(node, random_rows(rng, rng.randrange(1, 60)))
        cut = rng.randrange(0, len(inputs))
        scanner = SplScanner(node)
        for g, k, t, a, p, ta in inputs[:cut]:
            scanner.push(k, t, g, a, p, ta)
        copy = scanner_from(state_bytes(scanner), SplScanner(node))
        assert copy.digest() == scanner.digest()
        for g, k, t, a, p, ta in inputs[cut:]:
            assert copy.push(k, t, g, a, p, ta) == scanner.push(k, t, g, a, p, ta)


def test_a_malformed_state_is_refused_by_name():
    node = parse(f"splwindow({STREAM}, ts, {POLICIES[0]})")
    scanner = SplScanner(node)
    scanner.push("a", 1, 0)
    data = json.loads(state_bytes(scanner))
    data["parts"][0][5] = 3  # a size that is not the item count
    with pytest.raises(ValueError, match="a partition's size is its item count"):
        scanner_from(json.dumps(data).encode(), SplScanner(node))
    with pytest.raises(ValueError, match="the total must be a non-negative integer"):
        scanner_from(b'{"parts": [], "total": -1}', SplScanner(node))
