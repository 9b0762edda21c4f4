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
