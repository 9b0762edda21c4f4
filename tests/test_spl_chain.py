"""The delta chain over a stream split into chunks (``sira_spark.spl_chain``), engine-free: on
random streams cut at random places, the first pass, the driver's walk and the corrections
give the members a sequential scan gives (several keys or one, windows spanning chunks)."""

from __future__ import annotations

import random

import pytest

from sira_spark.spl_chain import (CANDIDATE, CANDIDATES, GROUP, MEMBER, REPORT, Chain, correct,
                                  first_pass)


def sequential(rows, delta) -> set:
    """The members by a plain scan of (key, g, a) in stream order."""
    last: dict = {}
    out = set()
    for k, g, a in sorted(rows, key=lambda r: r[1]):
        if k not in last or a - last[k] > delta:
            last[k] = a
            out.add(g)
    return out


CORRECTED: list = []  # the (chunk, entry) pairs the last split corrected


def split(rows, delta, cuts, limit=CANDIDATES) -> set:
    """The members by the two-pass scheme over the chunks ``cuts`` makes of the rows in (key,
    g) order, each first run following ``limit`` candidates."""
    ordered = sorted(rows, key=lambda r: (r[0], r[1]))
    bounds = [0] + sorted(cuts) + [len(ordered)]
    chunks = {c: ordered[lo:hi] for c, (lo, hi) in enumerate(zip(bounds, bounds[1:])) if hi > lo}
    first = []
    for c, part in chunks.items():
        batches = [list(zip(*part[i:i + 3])) for i in range(0, len(part), 3)]
        for recs in first_pass(c, batches, delta, limit):
            first += recs
    chain = driver(first, delta)
    fixed = []
    rounds = 0
    CORRECTED.clear()
    while True:
        jobs = chain.wanted()
        if not jobs:
            break
        rounds += 1
        for c, entries in jobs.items():
            CORRECTED.extend((c, e) for e in entries)
            part = chunks[c]
            run = [r for r in part if r[0] == part[0][0]]
            out = correct(c, ([r[1] for r in run], [r[2] for r in run]), entries, delta)
            for r in out:
                if r[0] == REPORT:
                    chain.learn(c, r[4], r[10], None if r[11] else (r[8], r[9]))
                else:
                    fixed.append(r)
    groups, corrected = chain.kept()
    start = {(c, grp): s for c, grp, s in groups}
    members = {r[2] for r in first if r[0] == MEMBER and (
        not r[3] or ((r[1], r[4]) in start and r[2] >= start[(r[1], r[4])]))}
    members |= {r[2] for r in fixed if r[1] in corrected and r[4] == corrected[r[1]]}
    assert rounds <= len(chunks)
    return members


def driver(first, delta) -> Chain:
    """The driver's Chain from the first pass's records, as the engine collects them."""
    reports, candidates, groups = {}, {}, {}
    for r in first:
        if r[0] == REPORT:
            reports[r[1]] = (r[5], r[6], r[7], r[8], r[9], r[12], r[13])
        elif r[0] == CANDIDATE:
            candidates.setdefault(r[1], {})[r[4]] = (r[2], r[14], r[15])
        elif r[0] == GROUP:
            groups.setdefault(r[1], {})[r[15]] = (r[16], r[8], r[9])
    candidates = {c: [got[i] for i in range(len(got))] for c, got in candidates.items()}
    return Chain(reports, delta, candidates, groups)


@pytest.mark.parametrize("seed", range(60))
def test_the_split_chain_is_the_sequential_chain(seed):
    rng = random.Random(seed)
    n = rng.randrange(1, 80)
    keys = rng.choice(["a", "ab", "abcde", "aaaaaaab"])
    delta = rng.choice([0, 1, 3, 10, 40, 1000])
    floating = seed % 5 == 0
    rows = []
    for g in range(n):
        a = rng.randrange(-20, 20) if seed % 2 else g // 2 + rng.randrange(3)
        rows.append((rng.choice(keys), g, a + 0.1 * rng.random() if floating else a))
    cuts = rng.sample(range(1, n), min(n - 1, rng.randrange(0, 8))) if n > 1 else []
    # every entry among the candidates, past them (corrections), or a few of each
    for limit in (CANDIDATES, 1, 2, 5):
        assert split(rows, delta, cuts, limit) == sequential(rows, delta), limit


def test_a_window_spanning_many_chunks_settles_in_few_rounds():
    rows = [("", g, g) for g in range(100)]
    assert split(rows, 35, list(range(5, 100, 5))) == {0, 36, 72}


def test_chains_that_never_meet_correct_each_chunk_at_most_twice():
    # a rising attribute with members every 11 rows, entries past the one candidate each chunk
    # follows: a chain entered from the previous chunk never meets the speculative one
    # (another phase), so the chunks settle one a round; the guess that one window spans
    # them all must stop at the first chunk it cannot span (each round corrected every later
    # chunk again: quadratic)
    rows = [("", g, g) for g in range(400)]
    assert split(rows, 10, list(range(25, 400, 25)), limit=1) == set(range(0, 400, 11))
    assert len(CORRECTED) <= 2 * 16, len(CORRECTED)


def test_chains_of_every_phase_settle_in_the_first_pass():
    # the same rising attribute (a time at every tick, a window per 11): each chunk follows
    # the chains from its first records, one per phase, so the driver finds every chunk's
    # first member among them and nothing is corrected (one correction round per chunk
    # before); and a window spanning several chunks needs none either
    rows = [("", g, g) for g in range(400)]
    assert split(rows, 10, list(range(25, 400, 25))) == set(range(0, 400, 11))
    assert CORRECTED == []
    assert split(rows, 60, list(range(25, 400, 25))) == set(range(0, 400, 61))
    assert CORRECTED == []
    # a time in milliseconds, an event every 7 ms, windows of ten seconds: 1429 phases, past
    # the candidates of a chunk: corrected, and still right
    rows = [("", g, 7 * g) for g in range(6000)]
    assert split(rows, 10_000, [2000, 4000]) == sequential(rows, 10_000)
