"""``sira_duckdb.lifting.first_beyond`` against a plain search: runs shorter and longer than its
blocks of 64, partitions cutting anywhere, rising, falling, flat and float values, limits near
LONG's largest, ``>`` and ``>=``."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("pyarrow")


def plain(values, limits, ends, inclusive):
    def beyond(v, limit):
        return v >= limit if inclusive else v > limit
    out = {}
    for i in range(len(values)):
        p = next((p for p in range(i + 1, ends[i]) if beyond(values[p], limits[i])), None)
        if p is not None:
            out[i] = p
    return out


@pytest.mark.parametrize("inclusive", [False, True])
def test_the_first_value_beyond_a_limit_is_found_past_blocks_and_partitions(inclusive):
    import pyarrow as pa

    from sira_duckdb.lifting import first_beyond
    rng = random.Random(int(inclusive))
    for _ in range(300):
        n = rng.choice([0, 1, 2, 63, 64, 65, 127, 128, 129, 300, 1000])
        values = [rng.randrange(-50, 50) * 10 ** rng.randrange(3) for _ in range(n)]
        shape = rng.random()
        if shape < 0.3:
            values.sort(reverse=shape < 0.1)
        elif shape < 0.4:
            values = [v + 2 ** 63 - 10 ** 5 for v in values]
        cuts = sorted({0, n, *(rng.randrange(n + 1) for _ in range(rng.randrange(4)))})
        ends = [e for s, e in zip(cuts, cuts[1:]) for _ in range(s, e)]
        amount = rng.choice([0, 1, 3, 20, 2 ** 62, 2 ** 63 - 1])
        limits = [min(v + amount, 2 ** 63 - 1) for v in values]
        if shape > 0.8:  # floats
            values = [v / 7 for v in values]
            limits = [v + amount / 3 for v in values]
        typ = pa.float64() if shape > 0.8 else pa.int64()
        found = first_beyond(pa.array(values, typ), pa.array(limits, typ),
                             pa.array(ends, pa.int64()), inclusive).to_pylist()
        expected = plain(values, limits, ends, inclusive)
        assert found == [expected.get(i) for i in range(n)], (n, amount)


@pytest.mark.parametrize("inclusive", [False, True])
def test_values_that_never_go_down_are_searched_and_agree(inclusive):
    # the binary search taken for integer values rising within each partition: limits below,
    # at and above the values, partitions far apart, values near both ends of LONG
    import pyarrow as pa

    from sira_duckdb.lifting import _by_search
    rng = random.Random(10 + int(inclusive))
    searched = 0
    for _ in range(400):
        n = rng.choice([1, 2, 5, 64, 65, 300])
        cuts = sorted({0, n, *(rng.randrange(n + 1) for _ in range(rng.randrange(5)))})
        ends = [e for s, e in zip(cuts, cuts[1:]) for _ in range(s, e)]
        origin = rng.choice([0, -10 ** 6, 2 ** 63 - 10 ** 4, -2 ** 63 + 1])
        values = []
        for s, e in zip(cuts, cuts[1:]):  # each partition rising (ties too) from its own start
            at = origin + rng.randrange(-50, 50) * (origin == 0)
            for _ in range(s, e):
                values.append(at)
                at = min(at + rng.choice([0, 0, 1, 3, 40]), 2 ** 63 - 1)
        amount = rng.choice([-5, 0, 1, 3, 20, 2 ** 62])
        limits = [max(min(v + amount, 2 ** 63 - 1), -2 ** 63) for v in values]
        got = _by_search(pa.array(values, pa.int64()), pa.array(limits, pa.int64()),
                         pa.array(ends, pa.int64()), inclusive)
        if got is None:  # partitions end to end past 64 bits: left to the lifting
            assert amount == 2 ** 62 or origin == -2 ** 63 + 1 and not inclusive \
                or max(values) - min(values) > 2 ** 60
            continue
        searched += 1
        expected = plain(values, limits, ends, inclusive)
        assert got.to_pylist() == [expected.get(i) for i in range(n)], (n, amount, origin)
    assert searched > 250


def test_values_that_go_down_or_are_not_integers_are_not_searched():
    import pyarrow as pa

    from sira_duckdb.lifting import _by_search
    ends = pa.array([3, 3, 3])
    assert _by_search(pa.array([1, 0, 2]), pa.array([1, 0, 2]), ends, False) is None
    assert _by_search(pa.array([1.0, 2.0, 3.0]), pa.array([1.0, 2.0, 3.0]), ends, False) is None
    assert _by_search(pa.array([1, 2, 3]), pa.array([1, 2, 3]), ends, False) is not None


def test_float_reaches_are_the_reference_roundings_every_value_at_once():
    # float_reaches (numpy, for the SQL path) against float_reach (one value, the reference's
    # subtraction): values of every magnitude, near -D (a + D cancels: the halving path),
    # infinities, -0.0, and D as FLOAT or as an integer past 2**53 (compared exactly)
    import math
    import sys

    import pyarrow as pa

    from sira.engine.spl import float_reach
    from sira_duckdb.lifting import float_reaches
    rng = random.Random(3)
    for _ in range(200):
        delta = rng.choice([0.0, 0.1, 0.2, 2.5, rng.random() * 10 ** rng.randint(-20, 18),
                            5e-324, 7, 2 ** 53 + 3, 2 ** 63 - 1, rng.randrange(2 ** 53, 2 ** 63)])
        values = [float(rng.choice([
            rng.uniform(-1, 1), rng.uniform(-1e300, 1e300),
            rng.random() * 10 ** rng.randint(-300, 300) * rng.choice([-1, 1]),
            float(rng.randrange(-10 ** 18, 10 ** 18)), -delta * rng.uniform(0.99, 1.01), -delta,
            5e-324, -5e-324, sys.float_info.max, -sys.float_info.max, math.inf, -math.inf, -0.0,
            sum([0.1] * rng.randrange(10))])) for _ in range(100)]
        got = float_reaches(pa.array(values, pa.float64()), delta).to_pylist()
        assert got == [float_reach(v, delta) for v in values], delta
