"""SPL windows on Spark with the stream split across partitions (issue 18, point 3): the
tumbling and sliding windows that ``sira_spark.spl._split`` computes without a scan equal the
Python engine's on random streams (ties on ts, several keys or none, a few shuffle partitions and
inputs repartitioned so that windows span partitions), and their physical plans never put the
whole stream in one partition."""

from __future__ import annotations

import datetime
import random
import re

import pytest

import sira
from sira import BOOLEAN, FLOAT, INT, LONG, STRING, TIMESTAMP, Relation

from conftest import (checkpoints_in_plan, every_sequence_split, executed_plan, record_calls,
                      skewed_and_sparse_streams, spark_available, windows_in_plan)

pytestmark = pytest.mark.skipif(not spark_available(), reason="Spark is not available here")

HEADING = {"ts": LONG, "seq": LONG, "k": STRING, "i": INT, "p": BOOLEAN}

#: every policy combination computed without a scan (sira_spark.spl._splittable)
SPLIT = [
    "tumbling, count(3)",
    "tumbling, count(1)",
    "tumbling, time(7)",
    "tumbling, time(1)",
    "tumbling, punct(p)",
    "sliding, count(4)",
    "sliding, count(3) trigger(count(2))",
    "sliding, count(2) trigger(count(5))",
    "sliding, count(3) trigger(time(5))",
    "sliding, count(1) trigger(time(1))",
    "sliding, time(6)",
    "sliding, time(6) trigger(count(3))",
    "sliding, time(4) trigger(time(3))",
    "sliding, time(2) trigger(time(7))",
    "sliding, delta(i, 3)",
    "sliding, delta(i, 0) trigger(count(2))",
    "sliding, delta(i, 5) trigger(time(4))",
    "sliding, delta(ts, 4) trigger(count(3))",
    "tumbling, delta(i, 3)",
    "tumbling, delta(ts, 6)",
    "sliding, count(3) trigger(delta(i, 2))",
    "sliding, time(4) trigger(delta(ts, 1))",
    "sliding, delta(ts, 2) trigger(delta(i, 1))",
    "tumbling, delta(ts, 0)",
]


#: 4 shuffle partitions, kept apart however small the data (adaptive execution would coalesce
#: them into one, and every window would be inside one partition)
SETTINGS = {"spark.sql.shuffle.partitions": "4",
            "spark.sql.adaptive.coalescePartitions.enabled": "false"}


@pytest.fixture(scope="module")
def engine():
    """The shared engine with SETTINGS (restored afterwards)."""
    from sira_spark import default_engine
    engine = default_engine()
    conf = engine.spark.conf
    before = {k: conf.get(k) for k in SETTINGS}
    for k, v in SETTINGS.items():
        conf.set(k, v)
    yield engine
    for k, v in before.items():
        conf.set(k, v)


def test_the_stream_is_split_into_several_partitions(engine):
    from pyspark.sql import functions as F
    s = random_stream(3)
    df = spread(engine, s).orderBy("ts", "seq").withColumn("g", F.monotonically_increasing_id())
    sizes = df.groupBy(F.shiftright("g", 33)).count().collect()
    assert len(sizes) == 4 and max(r["count"] for r in sizes) < len(s) / 3


def random_stream(seed: int, n: int = 120, keys: str = "abc") -> Relation:
    """n tuples, ts in a range a third as long (ties), a rare punctuation, a quiet stretch."""
    rng = random.Random(seed)
    rows = []
    for seq in range(n):
        ts = rng.randrange(n // 3) + (40 if seq > n // 2 else 0)
        rows.append({"ts": ts, "seq": seq, "k": rng.choice(keys), "i": rng.randrange(-9, 9),
                     "p": rng.random() < 0.15})
    return Relation.from_rows(HEADING, rows)


def spread(engine, s: Relation, parts: int = 4):
    """The stream as a DataFrame in ``parts`` partitions, rows shuffled."""
    from sira_spark.convert import to_dataframe
    return to_dataframe(engine.spark, s).repartition(parts)


def same(engine, text: str, s: Relation):
    node = sira.parse(text, {"s": s})
    expected = sira.evaluate(node, {"s": s})
    got = engine.evaluate(text, {"s": spread(engine, s)})
    assert got == expected, f"{text}\npython:\n{expected}\nspark:\n{got}"
    return expected


def plan_and_windows(engine, text: str, s: Relation) -> tuple:
    """(the executed plan of ``text`` over ``s`` on Spark, every stored step in it; its
    windows, which must be the Python engine's)."""
    from sira_spark.convert import to_relation
    node = sira.parse(text, {"s": s})
    with windows_in_plan():
        df = engine.dataframe(text, {"s": spread(engine, s)})
        plan = executed_plan(df)
    got, expected = to_relation(df, node.heading), sira.evaluate(node, {"s": s})
    assert got == expected, f"{text}\npython:\n{expected}\nspark:\n{got}"
    return plan, got


@pytest.mark.parametrize("policy", SPLIT)
def test_split_windows_equal_the_python_engine_and_no_step_holds_the_stream(engine, policy):
    # one sequence with no key: the windows, and no plan step holding every tuple
    plan, out = plan_and_windows(engine, f"splwindow(s, ts, {policy})",
                                 random_stream(sum(map(ord, policy))))
    assert len(out) >= 1  # (a tumbling delta over a random i may close one window only)
    assert not _whole_stream_steps(plan), plan
    if SPLIT.index(policy) % 2 == 0:  # and three keys (arrival order breaking ties on ts)
        text = f"splwindow(s, ts, {policy} partitioned(k) arrival(seq))"
        assert len(same(engine, text, random_stream(len(policy)))) > 1


def test_one_key_holding_most_tuples_and_many_small_keys(engine):
    rng = random.Random(7)
    rows = [{"ts": t // 2, "seq": t, "k": "big" if rng.random() < 0.9 else f"k{t}",
             "i": t % 5, "p": t % 7 == 0} for t in range(150)]
    s = Relation.from_rows(HEADING, rows)
    for policy in ("tumbling, count(4)", "sliding, time(5) trigger(time(4))"):
        same(engine, f"splwindow(s, ts, {policy} partitioned(k))", s)
    plan, _ = plan_and_windows(engine, "splwindow(s, ts, sliding, delta(i, 2) partitioned(k))", s)
    assert not _whole_stream_steps(plan)


def test_timestamp_streams_with_units(engine):
    start = datetime.datetime(2024, 1, 1)
    rows = [{"ts": start + datetime.timedelta(seconds=3 * t // 2), "k": "ab"[t % 2], "i": t}
            for t in range(60)]
    s = Relation.from_rows({"ts": TIMESTAMP, "k": STRING, "i": INT}, rows)
    same(engine, "splwindow(s, ts, tumbling, time(10 second))", s)
    same(engine, "splwindow(s, ts, sliding, time(7 second) trigger(time(6 second)) "
                 "partitioned(k))", s)


def test_an_empty_stream_has_no_windows(engine):
    s = Relation.from_rows(HEADING, [])
    assert len(same(engine, "splwindow(s, ts, sliding, count(2) trigger(time(2)))", s)) == 0


def _whole_stream_steps(plan: str) -> list:
    """The plan's steps that hold every row in one partition."""
    return [line.strip() for line in plan.splitlines()
            if "SinglePartition" in line or re.search(r"\bWindow \[.*\], \[\], \[", line)]


#: partitioncount and tuplecount where they couple the keys: the scan of sira_spark.spl_scan
COUPLED = [
    "tumbling, count(3) partitioned(k, partitioncount(2))",
    "tumbling, time(5) partitioned(k, partitioncount(1))",
    "tumbling, delta(i, 3) partitioned(k, tuplecount(5))",
    "sliding, count(3) partitioned(k, tuplecount(5))",
    "sliding, time(6) trigger(count(2)) partitioned(k, partitioncount(2))",
    "sliding, delta(i, 2) trigger(delta(ts, 1)) partitioned(k, tuplecount(6))",
    "sliding, time(4) trigger(time(3)) partitioned(k, tuplecount(7)) arrival(seq)",
]


@pytest.fixture()
def corrections(monkeypatch):
    """The corrections the scan of coupled keys makes, as (chunk, whether the corrected scan
    never met the speculative one)."""
    from sira_spark import spl_scan
    made, learn = [], spl_scan.Walk.learn

    def counted(self, c, tag, met, state):
        made.append((c, met == spl_scan.NEVER))
        return learn(self, c, tag, met, state)

    monkeypatch.setattr(spl_scan.Walk, "learn", counted)
    return made


@pytest.mark.parametrize("policy", COUPLED)
def test_coupled_keys_are_scanned_in_chunks_corrected_where_entered_with_a_state(
        engine, policy, corrections):
    """The stream cut into four chunks, each scanned from an empty state and corrected from
    the state the previous chunk leaves until the two scans meet (sira_spark.spl_scan): the
    windows equal the Python engine's, a correction was needed, no plan step holds the stream.
    Streams: three keys with ties, or one key holding most tuples beside many rare ones."""
    rng = random.Random(len(policy))
    if COUPLED.index(policy) % 2:
        s = random_stream(len(policy), n=150, keys="abcdef")
    else:
        s = Relation.from_rows(HEADING, [
            {"ts": t // 2, "seq": t, "k": "big" if rng.random() < 0.8 else f"k{t % 9}",
             "i": rng.randrange(-9, 9), "p": False} for t in range(150)])
    with every_sequence_split(), checkpoints_in_plan():
        plan, out = plan_and_windows(engine, f"splwindow(s, ts, {policy})", s)
    assert len(out) > 1 and corrections
    assert not _whole_stream_steps(plan), plan


def test_chunks_whose_scans_never_meet_are_corrected_one_after_another(engine, corrections):
    # one key holding most tuples, never evicted, its tumbling count windows offset by the
    # tuples it held at each chunk's start: no correction meets its speculative scan, each
    # chunk waits for the previous one's true exit (one more round each)
    s = Relation.from_rows(HEADING, [
        {"ts": t, "seq": t, "k": "big" if t % 4 else f"r{t % 3}", "i": 0, "p": False}
        for t in range(120)])
    with every_sequence_split():
        same(engine, "splwindow(s, ts, tumbling, count(7) partitioned(k, partitioncount(2)))", s)
    assert sum(never for _, never in corrections) >= 2, corrections


@pytest.mark.parametrize("text", [
    "splwindow(s, ts, timeinterval, intervalduration(10) discardage(3) arrival(seq))",
    "splwindow(s, ts, timeinterval, intervalduration(9) creationperiod(4) discardage(5) "
    "intervaloffset(2) arrival(seq))",
    "splwindow(s, ts, timeinterval, intervalduration(3) creationperiod(5) arrival(seq))",
    "splwindow(s, ts, timeinterval, intervalduration(6) creationperiod(3))",
    "splwindow(s, ts, timeinterval, intervalduration(8) discardage(4) arrival(seq) "
    "partitioned(k))"])
def test_timeinterval_windows_split_across_buckets_equal_the_python_engine(engine, text):
    """SPL ``timeInterval`` over a stream cut into buckets of its order (every sequence split
    here, however short): the watermark and positions carried between buckets
    (``spl._watermarked``), the first advance reaching each pane's end found per bucket of
    value and carried back (``spl._first_reaching``), the emissions numbered across buckets;
    timestamps out of arrival order (late tuples, discarded ones), against the Python engine."""
    rng = random.Random(len(text))
    s = Relation.from_rows(HEADING, [
        {"ts": seq // 2 + rng.randrange(-7, 4), "seq": seq, "k": rng.choice("ab"),
         "i": rng.randrange(9), "p": False} for seq in range(90)])
    with every_sequence_split():
        assert len(same(engine, text, s)) > 0


def test_delta_chains_with_windows_spanning_partitions(engine):
    # one sequence, windows and trigger references spanning whole partitions (the driver's
    # guesses of the member open at a partition's start go wrong, and more rounds settle it)
    rng = random.Random(5)
    rows = [{"ts": t, "seq": t, "k": "a", "i": rng.randrange(-9, 9), "p": False}
            for t in range(160)]
    s = Relation.from_rows(HEADING, rows)
    for policy, windows in (("tumbling, delta(ts, 45)", 3),  # from 0, 46, 92 (138: open)
                            ("sliding, count(5) trigger(delta(ts, 38))", 4)):  # 39 .. 156
        assert len(same(engine, f"splwindow(s, ts, {policy})", s)) == windows


@pytest.mark.parametrize("policy", [
    "sliding, delta(i, 3)", "sliding, delta(ts, 4) trigger(count(3))",
    "sliding, delta(i, 5) trigger(time(4)) partitioned(k)",
    "sliding, delta(ts, 2) trigger(delta(i, 1)) partitioned(k, partitionage(9))"])
def test_sliding_delta_evictions_by_the_block_search(engine, policy, monkeypatch):
    """The tuples still waiting at the end of their bucket find their evictor's bucket by the
    block search (sira_spark.spl._first_later_above; on a cluster, past DIRECT_BUCKETS
    buckets), forced here over a stream in eight buckets, windows spanning several."""
    import sira_spark.spl
    monkeypatch.setattr(sira_spark.spl, "DIRECT_BUCKETS", 0)
    rng = random.Random(11)
    s = Relation.from_rows(HEADING, [
        {"ts": seq // 3, "seq": seq, "k": rng.choice("ab"), "i": rng.randrange(-9, 9) + seq // 6,
         "p": False} for seq in range(160)])
    engine.spark.conf.set("spark.sql.shuffle.partitions", "8")
    try:
        assert len(same(engine, f"splwindow(s, ts, {policy})", s)) > 0
    finally:
        engine.spark.conf.set("spark.sql.shuffle.partitions", SETTINGS[
            "spark.sql.shuffle.partitions"])


#: FLOAT values where ``b - a > D`` and ``b > a + D`` disagree (both rounded): tenths summed
#: one by one, values near -D (``a + D`` cancels to near 0), large values (one FLOAT step is
#: above D), infinities
FLOAT_VALUES = ([sum([0.1] * n) for n in range(12)] + [-0.3, -0.30000000000000004, -0.2, 1e17,
                1e17 + 16, 1e17 + 32, 1e300, 2.5, 2.8, 3.0, float("inf"), float("-inf")])


@pytest.mark.parametrize("policy, delta", [
    ("sliding, delta(f, 0.2) trigger(count(2))", 0.2),
    ("sliding, delta(f, 0.1) trigger(time(3))", 0.1),
    ("sliding, delta(f, 0.3) trigger(delta(ts, 2)) partitioned(k, partitionage(30))", 0.3)])
def test_float_delta_evictions_round_as_the_reference(engine, policy, delta):
    # a tuple evicts an older one when their difference, rounded, is above D, which is not
    # when it is above their rounded sum: the first half of the stream holds a, the second b,
    # where the two disagree, so the tuples waiting at the end of a bucket are evicted (or
    # not) in a later one; then random values, evicted inside buckets as well
    rng = random.Random(len(policy))
    a, b = next((a, b) for a in FLOAT_VALUES for b in FLOAT_VALUES
                if (b - a > delta) != (b > a + delta))
    values = [a] * 30 + [b] * 30 + [rng.choice(FLOAT_VALUES) + rng.choice([0.0, 0.1, 0.2, 16.0])
                                    for _ in range(40)]
    rows = [{"ts": t // 2, "seq": t, "k": rng.choice("ab"), "i": 0, "p": False, "f": v}
            for t, v in enumerate(values)]
    s = Relation.from_rows({**HEADING, "f": FLOAT}, rows)
    with every_sequence_split():
        plan, out = plan_and_windows(engine, f"splwindow(s, ts, {policy})", s)
    assert len(out) > 1 and not _whole_stream_steps(plan), plan


#: partitionage under every kind of policy: a break (a key's previous tuple more than T
#: before) starts a new window state, and under a sliding time eviction only when the
#: partition is aged before it expires; ticks age partitions too
PARTITIONAGE = [
    "tumbling, count(2) partitioned(k, partitionage(4))",
    "tumbling, punct(p) partitioned(k, partitionage(2))",
    "tumbling, time(5) partitioned(k, partitionage(2))",
    "tumbling, delta(i, 3) partitioned(k, partitionage(1))",
    "sliding, count(3) trigger(count(2)) partitioned(k, partitionage(3))",
    "sliding, count(3) trigger(time(2)) partitioned(k, partitionage(3))",
    "sliding, delta(i, 4) trigger(count(2)) partitioned(k, partitionage(2))",
    "sliding, count(4) trigger(delta(ts, 1)) partitioned(k, partitionage(2))",
    "sliding, time(5) trigger(count(2)) partitioned(k, partitionage(2))",
    "sliding, time(2) trigger(count(2)) partitioned(k, partitionage(3))",
    "sliding, time(3) trigger(count(1)) partitioned(k, partitionage(3))",
    "sliding, time(6) trigger(time(2)) partitioned(k, partitionage(3))",
    "sliding, time(2) trigger(time(3)) partitioned(k, partitionage(2))",
    "sliding, time(4) trigger(time(1)) partitioned(k, partitionage(4))",
    "sliding, time(3) trigger(time(2)) partitioned(k, partitionage(3))",
    "sliding, time(3) trigger(count(2)) partitioned(k, partitionage(3))",
]


@pytest.mark.parametrize("policy", PARTITIONAGE)
def test_partitionage_splits_each_key_into_epochs(engine, policy):
    # one stream of three shapes side by side (their keys apart, their times overlapping, so
    # ticks and the tuples of other keys fall between a key's tuples): four dense keys, one key
    # holding most tuples, two sparse keys with gaps of every length; the windows must equal
    # the reference's scan (tests/test_spark_plans.py has the partitionage families)
    text = f"splwindow(s, ts, {policy})"
    rng = random.Random(len(policy))
    dense = random_stream(PARTITIONAGE.index(policy), keys="abcd")
    skewed, sparse = skewed_and_sparse_streams(rng, HEADING)
    rows = [*dense.to_rows()]
    for shift, keys, part in ((1000, {"a": "e", "b": "f"}, skewed),
                              (2000, {"a": "g", "b": "h"}, sparse)):
        rows += [{**r, "seq": r["seq"] + shift, "k": keys[r["k"]]} for r in part.to_rows()]
    s = Relation.from_rows(HEADING, rows)
    assert len(same(engine, text, s)) > 1


#: partitioncount on sliding windows with a count or delta eviction and no ticks: each key's
#: tuples in epochs, a new one where the key is not among the N keys updated last
#: (sira_spark.spl._lru_epochs), carried across the stream's partitions
PARTITIONCOUNT = [
    "sliding, count(3) partitioned(k, partitioncount(2))",
    "sliding, count(2) trigger(count(2)) partitioned(k, partitioncount(1))",
    "sliding, delta(i, 3) trigger(delta(ts, 1)) partitioned(k, partitioncount(3))",
    "sliding, delta(ts, 2) trigger(count(3)) partitioned(k, partitioncount(4)) arrival(seq)",
    "sliding, count(4) trigger(delta(i, 2)) partitioned(k, f, partitioncount(2))",
]


@pytest.mark.parametrize("policy", PARTITIONCOUNT)
def test_partitioncount_splits_each_key_into_epochs_of_the_keys_updated_last(engine, policy):
    # seven keys, some frequent, some rare, one of them at -0.0 and 0.0 of f (one partition
    # in the reference); the windows must be the reference's, differ from the windows without
    # the cap (evictions happen), and no plan step may hold the stream
    rng = random.Random(len(policy))
    rows = [{"ts": t // 3, "seq": t, "k": rng.choice("aaabbbccdefg"), "i": rng.randrange(-5, 6),
             "p": False, "f": rng.choice([0.0, -0.0]) if t % 5 else 1.5} for t in range(150)]
    s = Relation.from_rows({**HEADING, "f": FLOAT}, rows)
    text = f"splwindow(s, ts, {policy})"
    plan, out = plan_and_windows(engine, text, s)
    assert not _whole_stream_steps(plan), plan
    uncapped = re.sub(r", partitioncount\(\d\)", "", text)
    assert out != sira.evaluate(uncapped, {"s": s}), "the cap evicts partitions"


@pytest.mark.parametrize("policy, held", [("tumbling, count(3)", 12),
                                          ("sliding, time(5) trigger(count(3))", 120)])
def test_caps_the_stream_never_reaches_change_nothing(engine, policy, held):
    # four keys: partitioncount(4) and tuplecount(held) can never evict (at most 4 partitions,
    # at most 4 * C tuples under count(C), else the stream's 120), so the windows are those
    # without the cap (split without a scan); one less and the scan of coupled keys gives the
    # reference's windows
    s = random_stream(len(policy), keys="abcd")
    uncapped = sira.evaluate(f"splwindow(s, ts, {policy} partitioned(k))", {"s": s})
    for cap, evicting in (("partitioncount(4)", False), ("partitioncount(3)", True),
                          (f"tuplecount({held})", False), (f"tuplecount({held - 1})", True)):
        with every_sequence_split():
            out = same(engine, f"splwindow(s, ts, {policy} partitioned(k, {cap}))", s)
        assert evicting or out == uncapped, cap


@pytest.mark.parametrize("seed", range(6))
def test_the_least_record_above_a_threshold_is_found_however_the_queries_crowd(engine, seed):
    """sira_spark.spl.least_above, the lookup closing a sliding delta eviction across buckets,
    against a plain search: groups holding most queries (all at one threshold, or spread),
    thresholds equal to a record's value (not above it), groups with no record, and the
    answers coming from the partition of the query or from earlier ones (4 partitions)."""
    from sira_spark.spl import least_above
    rng = random.Random(seed)
    records, queries = [], []
    for k in ["hot", "a", "b", ""][:rng.randrange(1, 5)]:
        values = rng.sample(range(-30, 30), rng.randrange(0, 12))
        records += [(k, v, 1000 + len(records)) for v in values]
        many = 300 if k == "hot" else rng.randrange(8)
        one = rng.randrange(-32, 32)
        queries += [(k, one if rng.random() < 0.5 else rng.choice(values + [rng.randrange(
            -32, 32)])) for _ in range(many)]
    queries = [(k, v, g) for g, (k, v) in enumerate(queries)]
    expected = set()
    for k, v, g in queries:
        above = [(rv, rg) for rk, rv, rg in records if rk == k and rv > v]
        if above:
            expected.add((g, min(above)[1]))
    spark = engine.spark
    got = least_above(spark.createDataFrame(queries, "__k string, __v long, __g long"),
                      spark.createDataFrame(records, "__k string, __v long, __rg long"),
                      ["__k"])
    rows = [tuple(r) for r in got.collect()]
    assert len(rows) == len(expected) and set(rows) == expected
    # the window is per range partition and group: a crowded group is cut across partitions
    windows = [line for line in executed_plan(got).splitlines() if "Window [" in line]
    assert windows and all(re.search(r"\], \[__pid#\d+, __k#\d+\], \[", w) for w in windows)


@pytest.mark.parametrize("seed", range(8))
def test_the_first_later_bucket_above_a_threshold_is_found_in_log_steps(engine, seed):
    """sira_spark.spl._first_later_above, the second pass of a sliding delta eviction (the
    block search past DIRECT_BUCKETS buckets, forced here), against the plain search (every
    later bucket of the key tried): up to 40 buckets, keys
    missing from some, maxima rising (a time), falling and random, thresholds equal to maxima
    and above all of them."""
    from sira_spark.spl import _first_later_above
    rng = random.Random(seed)
    buckets = rng.choice([2, 5, 17, 40])
    maxima, waiting = [], []
    for k in ["", "a", "b", "c"][:rng.randrange(1, 5)]:
        shape = rng.choice(["rising", "falling", "random"])
        held = sorted(rng.sample(range(buckets), rng.randrange(1, buckets + 1)))
        for i, b in enumerate(held):
            top = {"rising": i * 3, "falling": -i * 3}.get(shape, rng.randrange(-20, 20))
            maxima.append((k, b, top))
        for b in held:
            for _ in range(rng.randrange(6)):
                waiting.append((len(waiting), k, b, rng.choice(
                    [t for _, _, t in maxima if _ == k] + [rng.randrange(-25, 25), 10 ** 6])))
    expected = set()
    for g, k, b, v in waiting:
        later = [bq for kq, bq, top in maxima if kq == k and bq > b and top > v]
        if later:
            expected.add((g, min(later)))
    spark = engine.spark
    for direct in (0, 512):  # the block search, the join with every later bucket
        got = _first_later_above(
            spark.createDataFrame(waiting, "__g long, __k string, __b long, __v long"),
            spark.createDataFrame(maxima, "__k string, __bq long, __top long"), True, direct)
        assert {tuple(r) for r in got.collect()} == expected


@pytest.mark.parametrize("candidates", [None, 1])
def test_a_delta_chain_over_a_regular_time_settles_without_a_correction(
        engine, monkeypatch, candidates):
    """A tumbling ``delta(ts, 10)`` over one stream with a tuple at every tick (the windows of
    a regular time): the chain entered from the previous chunk has another phase than the
    chunk's own, and never meets it. Each chunk's first pass follows the chains from its
    first records, one per phase, so the driver finds every chunk's first member among them:
    no chunk is corrected. With one candidate only, every chunk is (one round each) and the
    windows are the same."""
    from sira_spark import spl_chain
    learned = []
    learn = spl_chain.Chain.learn
    monkeypatch.setattr(spl_chain.Chain, "learn",
                        lambda self, *args: learned.append(args) or learn(self, *args))
    if candidates is not None:
        monkeypatch.setattr(spl_chain, "CANDIDATES", candidates)
    s = Relation.from_rows(HEADING, [{"ts": t, "seq": t, "k": "a", "i": 0, "p": False}
                                     for t in range(300)])
    windows = same(engine, "splwindow(s, ts, tumbling, delta(ts, 10))", s)
    assert len(windows) == 27
    assert (learned == []) == (candidates is None), learned


@pytest.mark.parametrize("policy, emitted", [("tumbling, delta(i, 30)", 4),
                                             ("tumbling, punct(p)", 5)])
def test_a_window_that_never_closes_is_not_assembled(engine, monkeypatch, policy, emitted):
    """A key's last tumbling window never closes; here it holds most of the stream (a value no
    later one exceeds by 30; no punctuation after the fifth tuple). Its tuples are left out
    before the groupBy that collects each window's tuples: 10,000,000 of them in one group
    ran the heap out (the benchmark's ``delta(v, 30)`` with v = 19 ts mod 100)."""
    from sira_spark import spl
    grouped = []
    by_window = spl._by_window

    def counted(df, cols, rows):
        grouped.append(df.count())
        return by_window(df, cols, rows)

    monkeypatch.setattr(spl, "_by_window", counted)
    s = Relation.from_rows(HEADING, [{"ts": t, "seq": t, "k": "a", "i": 19 * t % 100,
                                      "p": t == 4} for t in range(200)])
    windows = same(engine, f"splwindow(s, ts, {policy})", s)
    assert sum(len(w["tuples"]) for w in windows) == emitted
    assert grouped == [emitted], grouped


@pytest.mark.parametrize("policy", [
    "tumbling, count(3)",  # a tuple is in one window at most: the stream's size bounds them
    "tumbling, delta(i, 3)",
    "sliding, count(4) trigger(count(2))",  # in ceil(4 / 2) windows at most
    "sliding, delta(i, 3)",  # counted exactly before they are made
    "sliding, time(6) trigger(count(3))",
])
def test_windows_counted_before_they_are_made_are_not_counted_again(engine, monkeypatch, policy):
    """The windows' tuples are bounded (or counted exactly) before the windows are made, so
    the count after them (``check_held``: storing every window, one job more) runs only when
    that bound passes ``max_tuples``, and then refuses exactly at the limit."""
    from sira_spark import spl
    after = record_calls(monkeypatch, spl, "check_held")
    s = random_stream(len(policy), n=60)
    text = f"splwindow(s, ts, {policy})"
    windows = same(engine, text, s)
    assert after == []
    held = sum(len(w["tuples"]) for w in windows)
    assert engine.evaluate(text, {"s": spread(engine, s)}, max_tuples=held) == windows
    with pytest.raises(sira.errors.TooManyTuples):
        engine.evaluate(text, {"s": spread(engine, s)}, max_tuples=held - 1)


def test_least_above_reads_one_range_partitioning(engine):
    """``least_above`` reads its range partitioning twice (the window within each partition,
    the least records of the partitions before); with more rows than the partitioner samples
    and no reuse of the exchange (adaptive execution off, and Spark's own reuse of equal
    exchanges off, as a plan whose two reads differ gets), a partitioning computed twice can
    cut the rows at different values. Against a brute-force answer."""
    import bisect

    from sira_spark.spl import least_above
    rng = random.Random(7)
    records = {}
    for rg in range(3000):  # one value per id, distinct within a group
        records.setdefault(rng.choice("abc"), {})[rng.randrange(10 ** 6)] = rg
    queries = [(rng.choice("abc"), rng.randrange(10 ** 6), g) for g in range(3000)]
    expected = set()
    for k, v, g in queries:
        values = sorted(records[k])
        i = bisect.bisect_right(values, v)
        if i < len(values):
            expected.add((g, records[k][values[i]]))
    spark = engine.spark
    conf = spark.conf
    settings = {"spark.sql.adaptive.enabled": "false", "spark.sql.exchange.reuse": "false"}
    saved = {k: conf.get(k) for k in settings}
    for k, v in settings.items():
        conf.set(k, v)
    try:
        r = spark.createDataFrame([(k, v, rg) for k, vs in records.items() for v, rg in vs.items()],
                                  "__k string, __v long, __rg long")
        q = spark.createDataFrame(queries, "__k string, __v long, __g long")
        got = {tuple(row) for row in least_above(q, r, ["__k"]).collect()}
    finally:
        for k, v in saved.items():
            conf.set(k, v)
    assert got == expected
