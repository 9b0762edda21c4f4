"""SPL windows on DuckDB computed in SQL (issue 18, point 2): the tumbling and sliding windows
``sira_duckdb.spl._windows_sql`` computes with window functions, and the timeInterval panes,
equal the Python engine's on seeded random streams -- no key or several, ties on ts, an arrival
attribute or none, punctuation, a quiet stretch (timer ticks with nothing to emit), tiny windows
and windows longer than the stream, TIMESTAMP streams with units."""

from __future__ import annotations

import datetime
import random

import pytest

import sira
from sira import BOOLEAN, FLOAT, INT, LONG, STRING, TIMESTAMP, Relation

from conftest import duckdb_available, skewed_and_sparse_streams

pytestmark = pytest.mark.skipif(not duckdb_available(), reason="DuckDB is not available here")

HEADING = {"ts": LONG, "seq": LONG, "k": STRING, "i": INT, "p": BOOLEAN}

#: every policy combination computed in SQL, with tiny windows and windows longer than the
#: stream (120 tuples, ts up to about 80)
SQL = [
    "tumbling, count(3)",
    "tumbling, count(1)",
    "tumbling, count(500)",
    "tumbling, time(7)",
    "tumbling, time(1)",
    "tumbling, time(500)",
    "tumbling, punct(p)",
    "sliding, count(4)",
    "sliding, count(1)",
    "sliding, count(500)",
    "sliding, count(3) trigger(count(2))",
    "sliding, count(2) trigger(count(5))",
    "sliding, count(500) trigger(count(7))",
    "sliding, count(3) trigger(time(5))",
    "sliding, count(1) trigger(time(1))",
    "sliding, count(500) trigger(time(9))",
    "sliding, time(6)",
    "sliding, time(1)",
    "sliding, time(500) trigger(count(4))",
    "sliding, time(6) trigger(count(3))",
    "sliding, time(4) trigger(time(3))",
    "sliding, time(2) trigger(time(7))",
    "sliding, time(500) trigger(time(11))",
    "sliding, delta(i, 3)",
    "sliding, delta(i, 0)",
    "sliding, delta(i, 500)",
    "sliding, delta(i, 5) trigger(count(3))",
    "sliding, delta(ts, 4) trigger(count(2))",
    "sliding, delta(i, 2) trigger(time(4))",
    "sliding, delta(ts, 3) trigger(time(1))",
    "sliding, count(3) trigger(delta(i, 2))",
    "sliding, count(1) trigger(delta(i, 0))",
    "sliding, count(500) trigger(delta(ts, 5))",
    "sliding, time(4) trigger(delta(ts, 1))",
    "sliding, time(3) trigger(delta(i, 3))",
    "sliding, delta(ts, 2) trigger(delta(i, 1))",
    "sliding, delta(i, 4) trigger(delta(i, 500))",
]

#: the ways the stream is read: no key, keys, keys with arrival order breaking the ties on ts
READS = ["", " arrival(seq)", " partitioned(k)", " partitioned(k) arrival(seq)"]


def random_stream(seed: int, n: int = 120, keys: str = "abc") -> Relation:
    """n tuples, ts in a range a third as long (ties), a rare punctuation, a quiet stretch."""
    rng = random.Random(seed)
    rows = []
    for seq in range(n):
        ts = rng.randrange(n // 3) + (40 if seq > n // 2 else 0)
        rows.append({"ts": ts, "seq": seq, "k": rng.choice(keys), "i": rng.randrange(-9, 9),
                     "p": rng.random() < 0.15})
    return Relation.from_rows(HEADING, rows)


def same(text: str, s: Relation) -> Relation:
    node = sira.parse(text, {"s": s})
    expected = sira.evaluate(node, {"s": s})
    got = sira.evaluate(node, {"s": s}, engine="duckdb")
    assert got == expected, f"{text}\n{s}\npython:\n{expected}\nduckdb:\n{got}"
    return expected


@pytest.mark.parametrize("policy", SQL)
def test_sql_windows_equal_the_python_engine(policy):
    from sira_duckdb.spl import _in_sql
    for r, read in enumerate(READS):
        text = f"splwindow(s, ts, {policy}{read})"
        s = random_stream(sum(map(ord, policy)) + r)
        assert _in_sql(sira.parse(text, {"s": s}))
        same(text, s)


def test_one_key_holding_most_tuples_and_many_small_keys():
    rng = random.Random(7)
    rows = [{"ts": t // 2, "seq": t, "k": "big" if rng.random() < 0.9 else f"k{t}",
             "i": t % 5, "p": t % 7 == 0} for t in range(150)]
    s = Relation.from_rows(HEADING, rows)
    for policy in ("tumbling, count(4)", "tumbling, punct(p)", "tumbling, time(3)",
                   "sliding, count(3) trigger(count(2))", "sliding, time(5) trigger(time(4))",
                   "sliding, count(2) trigger(time(3))", "sliding, time(3) trigger(count(2))"):
        assert len(same(f"splwindow(s, ts, {policy} partitioned(k))", s)) > 0


def test_timestamp_streams_with_units():
    start = datetime.datetime(2024, 1, 1)
    rows = [{"ts": start + datetime.timedelta(seconds=3 * t // 2), "k": "ab"[t % 2], "i": t}
            for t in range(60)]
    s = Relation.from_rows({"ts": TIMESTAMP, "k": STRING, "i": INT}, rows)
    for policy in ("tumbling, time(10 second)", "tumbling, count(4) partitioned(k)",
                   "sliding, time(7 second) trigger(time(6 second)) partitioned(k)",
                   "sliding, time(5 second) trigger(count(2))",
                   "sliding, count(3) trigger(time(4 second))"):
        assert len(same(f"splwindow(s, ts, {policy})", s)) > 0


def test_scanned_policies_still_equal_the_python_engine():
    from sira_duckdb.spl import _in_sql
    s = random_stream(11)
    for policy in ("tumbling, delta(i, 3)",
                   "tumbling, count(3) partitioned(k, partitioncount(2))",
                   "sliding, time(5) partitioned(k, tuplecount(7))",
                   "sliding, delta(i, 4) partitioned(k, tuplecount(9))"):
        text = f"splwindow(s, ts, {policy})"
        assert not _in_sql(sira.parse(text, {"s": s}))
        same(text, s)


@pytest.mark.parametrize("policy", ["tumbling, time(2)", "sliding, count(2) trigger(time(2))",
                                    "sliding, time(3) trigger(count(2))", "tumbling, punct(p)"])
def test_an_empty_stream_has_no_windows(policy):
    s = Relation.from_rows(HEADING, [])
    assert len(same(f"splwindow(s, ts, {policy} partitioned(k))", s)) == 0


@pytest.mark.parametrize("text", [
    "splwindow(s, ts, timeinterval, intervalduration(10) discardage(3) arrival(seq))",
    "splwindow(s, ts, timeinterval, intervalduration(9) creationperiod(4) discardage(5) "
    "intervaloffset(2) arrival(seq))",
    "splwindow(s, ts, timeinterval, intervalduration(3) creationperiod(5) arrival(seq))",
    "splwindow(s, ts, timeinterval, intervalduration(6) creationperiod(3))",
    "splwindow(s, ts, timeinterval, intervalduration(500) creationperiod(7) arrival(seq))",
    "splwindow(s, ts, timeinterval, intervalduration(8) discardage(4) arrival(seq) "
    "partitioned(k))",
    "splwindow(s, ts, timeinterval, intervalduration(5) creationperiod(2) arrival(seq) "
    "partitioned(k))"])
def test_timeinterval_windows_equal_the_python_engine(text):
    # timestamps out of arrival order: late tuples (the pane emitted again), discarded ones
    for seed in range(3):
        rng = random.Random(seed * 31 + len(text))
        s = Relation.from_rows(HEADING, [
            {"ts": seq // 2 + rng.randrange(-7, 4), "seq": seq, "k": rng.choice("ab"),
             "i": rng.randrange(9), "p": False} for seq in range(90)])
        assert len(same(text, s)) > 0


def test_a_partition_of_two_attributes():
    rng = random.Random(2)
    s = Relation.from_rows({"ts": LONG, "a": INT, "b": STRING, "v": INT}, [
        {"ts": rng.randrange(30), "a": rng.randrange(2), "b": rng.choice("xy"), "v": v}
        for v in range(80)])
    for policy in ("tumbling, count(3)", "tumbling, time(4)", "sliding, count(2)",
                   "sliding, count(3) trigger(time(2))", "sliding, time(3) trigger(count(2))",
                   "timeinterval, intervalduration(6) creationperiod(3)"):
        assert len(same(f"splwindow(s, ts, {policy} partitioned(b, a))", s)) > 0


#: partitionage with every policy computed in SQL: epochs of each key (a break where the key's
#: previous tuple is more than T before; under a sliding time eviction with a count trigger
#: only where ageing comes before expiry), ticks ageing partitions
PARTITIONAGE = [
    "tumbling, count(2) partitioned(k, partitionage(4))",
    "tumbling, punct(p) partitioned(k, partitionage(2))",
    "tumbling, time(5) partitioned(k, partitionage(2))",
    "tumbling, time(3) partitioned(k, partitionage(3)) arrival(seq)",
    "sliding, count(3) trigger(count(2)) partitioned(k, partitionage(3))",
    "sliding, count(3) trigger(time(2)) partitioned(k, partitionage(3))",
    "sliding, time(5) trigger(count(2)) partitioned(k, partitionage(2))",
    "sliding, time(2) trigger(count(2)) partitioned(k, partitionage(3))",
    "sliding, time(3) trigger(count(2)) partitioned(k, partitionage(3))",
    "sliding, time(3) trigger(count(1)) partitioned(k, partitionage(3))",
    "sliding, time(6) trigger(time(2)) partitioned(k, partitionage(3))",
    "sliding, time(2) trigger(time(3)) partitioned(k, partitionage(2))",
    "sliding, time(4) trigger(time(1)) partitioned(k, partitionage(4))",
]


@pytest.mark.parametrize("policy", PARTITIONAGE)
def test_partitionage_windows_in_sql_equal_the_python_engine(policy):
    from sira_duckdb.spl import _in_sql
    text = f"splwindow(s, ts, {policy})"
    for seed in range(4):
        rng = random.Random(seed * 100 + len(policy))
        streams = (random_stream(seed, keys="abcd"), *skewed_and_sparse_streams(rng, HEADING))
        for s in streams:
            assert _in_sql(sira.parse(text, {"s": s}))
            assert len(same(text, s)) > 1


@pytest.mark.parametrize("policy, held", [
    ("tumbling, count(3)", 12), ("sliding, count(4) trigger(count(2))", 16),
    ("sliding, time(5) trigger(count(3))", 120), ("tumbling, time(4)", 120)])
def test_caps_the_stream_never_reaches_leave_the_windows_in_sql(policy, held, monkeypatch):
    # four keys: partitioncount(4) never evicts, partitioncount(3) may; at most 4 * C tuples
    # are held under a count(C) eviction, else at most the stream's 120: the windows are
    # computed in SQL when the cap cannot be reached (or, for partitioncount on a sliding
    # count window, per epoch of the keys updated last), and equal the reference's
    import sira_duckdb.spl as spl
    scans = []
    real = spl._scanned
    monkeypatch.setattr(spl, "_scanned", lambda *a: scans.append(1) or real(*a))
    s = random_stream(len(policy), keys="abcd")
    for cap, evicting in (("partitioncount(4)", False), ("partitioncount(3)", True),
                          (f"tuplecount({held})", False), (f"tuplecount({held - 1})", True)):
        scans.clear()
        same(f"splwindow(s, ts, {policy} partitioned(k, {cap}))", s)
        by_recency = cap.startswith("partitioncount") and policy.startswith("sliding, count")
        assert bool(scans) == (evicting and not by_recency), cap


#: partitioncount on sliding windows with a count or delta eviction and no ticks: each key's
#: tuples in epochs, a new one where the key is not among the N keys updated last
#: (sira_duckdb.spl._lru_epochs)
PARTITIONCOUNT = [
    "sliding, count(3) partitioned(k, partitioncount(2))",
    "sliding, delta(i, 0) partitioned(k, partitioncount(1))",
    "sliding, count(2) trigger(count(2)) partitioned(k, partitioncount(1))",
    "sliding, delta(i, 3) trigger(delta(ts, 1)) partitioned(k, partitioncount(3))",
    "sliding, delta(ts, 2) trigger(count(3)) partitioned(k, partitioncount(4)) arrival(seq)",
    "sliding, count(4) trigger(delta(i, 2)) partitioned(k, partitioncount(2))",
]


@pytest.mark.parametrize("policy", PARTITIONCOUNT)
def test_partitioncount_windows_per_epoch_of_the_keys_updated_last(policy, monkeypatch):
    # seven keys (some frequent, some rare), one key holding most tuples beside many small
    # ones, sparse keys: the windows are the reference's, made without the scan, and over
    # the seven keys differ from those without the cap (evictions happen)
    import re

    import sira_duckdb.spl as spl
    monkeypatch.setattr(spl, "_scanned", lambda *a: pytest.fail("scanned"))
    text = f"splwindow(s, ts, {policy})"
    rng = random.Random(len(policy))
    for seed, s in enumerate((random_stream(len(policy), keys="aaabbbccdefg"),
                              *skewed_and_sparse_streams(rng, HEADING))):
        assert spl._in_sql(sira.parse(text, {"s": s}))
        capped = same(text, s)
        if seed == 0:  # seven keys: the cap evicts partitions
            uncapped = re.sub(r", partitioncount\(\d\)", "", text)
            assert capped != sira.evaluate(uncapped, {"s": s})


@pytest.mark.parametrize("policy", [
    "sliding, count(4) trigger(delta(ts, 1)) partitioned(k, partitionage(2))",
    "sliding, time(3) trigger(delta(i, 2)) partitioned(k, partitionage(3))",
    "sliding, delta(i, 2) trigger(delta(ts, 3)) partitioned(k, partitionage(2))",
    "sliding, delta(i, 4) trigger(count(2)) partitioned(k, partitionage(2))",
    "sliding, delta(i, 1) trigger(time(3)) partitioned(k, partitionage(3))",
    "sliding, delta(ts, 2) partitioned(k, partitionage(1))"])
def test_sliding_delta_policies_per_epoch_equal_the_python_engine(policy):
    from sira_duckdb.spl import _in_sql
    skewed, sparse = skewed_and_sparse_streams(random.Random(len(policy)), HEADING)
    for s in (random_stream(len(policy)), skewed, sparse):
        assert _in_sql(sira.parse(f"splwindow(s, ts, {policy})", {"s": s}))
        same(f"splwindow(s, ts, {policy})", s)


@pytest.mark.parametrize("read", READS)
def test_sliding_delta_policies_far_away_equal_the_python_engine(read, monkeypatch):
    """Long windows and long trigger gaps: an attribute on a slow random walk (a tuple waits
    hundreds of positions for the one evicting it or firing after it, past the blocks of 64 of
    ``first_beyond``), a long run never evicted, values near LONG's ends, where a + D is
    capped, and TIMESTAMP in microseconds."""
    import sira_duckdb.spl as spl

    def no_scan(*args):
        raise AssertionError("the sliding delta went to the scan")
    monkeypatch.setattr(spl, "_scanned", no_scan)
    rng = random.Random(len(read))
    walk, rows = 0, []
    for seq in range(700):
        walk += rng.choice((-1, -1, 0, 1, 1, 1)) if seq < 500 else -1
        rows.append({"ts": seq // 3, "seq": seq, "k": "abcd"[rng.randrange(4)] if seq % 5 else "a",
                     "i": walk, "p": False})
    s = Relation.from_rows(HEADING, rows)
    for policy in ("sliding, delta(i, 6) trigger(count(50))", "sliding, delta(i, 25) "
                   "trigger(time(40))", "sliding, delta(seq, 130) trigger(count(90))",
                   "sliding, count(40) trigger(delta(i, 12))",
                   "sliding, delta(i, 9) trigger(delta(i, 5))"):
        assert len(same(f"splwindow(s, ts, {policy}{read})", s)) > 2
    top = 2 ** 63 - 1
    s = Relation.from_rows({"ts": LONG, "seq": LONG, "k": STRING, "a": LONG}, [
        {"ts": t // 2, "seq": t, "k": "ab"[t % 3 // 2],
         "a": (top - rng.randrange(90)) if t % 2 else (-top - 1 + rng.randrange(90))}
        for t in range(200)])
    for policy in ("delta(a, 40) trigger(count(7))", f"delta(a, {top})", "delta(a, 0)",
                   "count(3) trigger(delta(a, 40))", f"count(2) trigger(delta(a, {top}))",
                   "time(5) trigger(delta(a, 0))"):
        same(f"splwindow(s, ts, sliding, {policy}{read})", s)
    start = datetime.datetime(2024, 2, 29, 23, 59, 58)
    s = Relation.from_rows({"ts": TIMESTAMP, "k": STRING, "i": INT}, [
        {"ts": start + datetime.timedelta(milliseconds=rng.randrange(90000)), "k": "ab"[t % 2],
         "i": t} for t in range(60)])
    for policy in ("delta(ts, 2 second) trigger(count(3))",
                   "count(4) trigger(delta(ts, 1500 millisecond))"):
        same(f"splwindow(s, ts, sliding, {policy}{read.replace('(seq)', '(i)')})", s)


#: tumbling delta chains over an attribute that never goes down within a key (ts, in stream order)
CHAINS = ["tumbling, delta(ts, 0)", "tumbling, delta(ts, 1)", "tumbling, delta(ts, 3)",
          "tumbling, delta(ts, 500)"]


@pytest.mark.parametrize("policy", CHAINS)
@pytest.mark.parametrize("read", READS)
def test_delta_chains_over_a_rising_attribute_equal_the_python_engine(policy, read, monkeypatch):
    import sira_duckdb.spl as spl

    def no_scan(*args):
        raise AssertionError("the chain went to the scan")
    monkeypatch.setattr(spl, "_scanned", no_scan)
    for seed in (3, 4):
        same(f"splwindow(s, ts, {policy}{read})", random_stream(seed))
    skewed, sparse = skewed_and_sparse_streams(random.Random(7), HEADING)
    for s in (skewed, sparse):
        same(f"splwindow(s, ts, {policy}{read})", s)


def test_delta_chains_near_the_end_of_long_and_in_microseconds():
    top = 2 ** 63 - 1
    s = Relation.from_rows({"ts": LONG, "k": INT}, [(top - d, d % 2) for d in range(12)])
    assert len(same("splwindow(s, ts, tumbling, delta(ts, 3) partitioned(k))", s)) > 0
    start = datetime.datetime(2024, 2, 29, 23, 59, 58)
    rows = [{"ts": start + datetime.timedelta(milliseconds=700 * t), "k": "ab"[t % 2], "i": t}
            for t in range(20)]
    s = Relation.from_rows({"ts": TIMESTAMP, "k": STRING, "i": INT}, rows)
    assert len(same("splwindow(s, ts, tumbling, delta(ts, 2 second) partitioned(k))", s)) > 0


def test_an_attribute_that_goes_down_takes_the_scan(monkeypatch):
    import sira_duckdb.spl as spl
    scans = []
    real = spl._scanned
    monkeypatch.setattr(spl, "_scanned", lambda *a: scans.append(1) or real(*a))
    s = random_stream(5)
    node = sira.parse("splwindow(s, ts, tumbling, delta(i, 3) partitioned(k))", {"s": s})
    assert spl._a_delta_chain(node)
    same("splwindow(s, ts, tumbling, delta(i, 3) partitioned(k))", s)
    same("splwindow(s, ts, tumbling, delta(seq, 2) arrival(seq))", s)  # seq falls in ts order
    assert len(scans) == 2


@pytest.mark.parametrize("policy, delta, pair", [
    ("sliding, delta(f, 0.2)", 0.2, (0.1, 0.30000000000000004)),
    ("sliding, delta(f, 0.3) trigger(count(2)) partitioned(k)", 0.3, (0.1, 0.4)),
    ("sliding, count(3) trigger(delta(f, 0.1))", 0.1, (0.2, 0.30000000000000004)),
    ("sliding, delta(f, 0.1) trigger(delta(f, 0.2))", 0.2, (0.1, 0.30000000000000004)),
    # an integer D past 2**53 is compared exactly: 2**53 + 4 - 0 > 2**53 + 3, though the
    # nearest FLOAT to 2**53 + 3 is 2**53 + 4
    ("sliding, delta(f, 9007199254740995) trigger(time(3))", 9007199254740995,
     (0.0, 9007199254740996.0))])
def test_float_deltas_are_searched_as_the_reference_rounds(monkeypatch, policy, delta, pair):
    """Over FLOAT the reference subtracts (b - a > D, rounded), which is not b > a + D rounded:
    sliding delta evictions and delta triggers over FLOAT are computed in SQL against
    ``float_reaches``, never the scan, and give the reference's windows where the two roundings
    disagree (the first half of a key's tuples at a, the second at b) and on random values."""
    import sira_duckdb.spl as spl
    a, b = pair
    assert (b - a > delta) != (b > a + delta)
    monkeypatch.setattr(spl, "_scanned", lambda *args: pytest.fail("scanned"))
    rng = random.Random(len(policy))
    values = [a] * 20 + [b] * 20 + [rng.choice((0.1, 0.2, 0.3, 1e16, 1e16 + 2.0, -0.7, -0.3,
                                                float("inf"), float("-inf"), 0.0))
                                    for _ in range(40)]
    s = Relation.from_rows({"ts": LONG, "k": INT, "f": FLOAT}, [
        {"ts": t // 2, "k": t % 2, "f": v} for t, v in enumerate(values)])
    assert len(same(f"splwindow(s, ts, {policy})", s)) > 1


def test_a_tumbling_float_delta_takes_the_scan(monkeypatch):
    """A tumbling ``delta(a, D)`` chain over FLOAT is not searched in SQL (its ASOF join sums
    a + D): the reference's scan."""
    import sira_duckdb.spl as spl
    scans = []
    real = spl._scanned
    monkeypatch.setattr(spl, "_scanned", lambda *a: scans.append(1) or real(*a))
    rng = random.Random(9)
    s = Relation.from_rows({"ts": LONG, "f": FLOAT}, [
        {"ts": t, "f": rng.choice((0.1, 0.2, 0.3, 1e16, 1e16 + 2.0, -0.7))} for t in range(80)])
    same("splwindow(s, ts, tumbling, delta(f, 0.2))", s)
    assert len(scans) == 1
