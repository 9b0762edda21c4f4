"""The first later value beyond a threshold, for every position of a sequence at once.

Two of DuckDB's sequential window families need, for each element, the first later element of
its partition beyond a threshold of its own: an SPL sliding ``delta(a, D)`` eviction (the first
later tuple with a > a_i + D evicts i) and a CQL ``range(C) on(E)`` window over an E that goes up
and down (the first later element with E >= E_i + C ends i's window). SQL has no operator for it;
:func:`first_beyond` answers it for every element at once over Arrow arrays, by vectorised binary
lifting (Arrow compute, no loop over the values in Python).
"""

from __future__ import annotations

BLOCK_BITS = 6  # blocks of 64 values


def first_beyond(values, limits, ends, inclusive: bool = False):
    """For values in partition order (``ends[i]``: the index after the last value of i's
    partition), an Arrow int64 array holding for each index i the least p with i < p < ends[i]
    and values[p] > limits[i] (``>=`` when ``inclusive``), null where there is none.

    The maxima of the runs of 2**k values (k <= 6) and of the runs of 2**k whole blocks of 64
    let every index advance past the longest run of values not beyond its limit in O(log n)
    array steps: first to the end of the block after it, then over whole blocks, then inside
    the block where the run stops. O(n log n) time, O(n) memory (seven arrays of n values, and
    the blocks' levels, about n / 64 each). Integer or floating values (no NaN: sira refuses it
    at intake).

        >>> import pyarrow as pa
        >>> values = pa.array([5, 1, 2, 9, 3])
        >>> first_beyond(values, pa.array([8, 4, 5, 12, 6]), pa.array([5] * 5)).to_pylist()
        [3, 3, 3, None, None]
        >>> first_beyond(values, pa.array([1, 2, 9, 0, 0]), pa.array([3, 3, 3, 5, 5]),
        ...              inclusive=True).to_pylist()
        [1, 2, None, 4, None]
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    rising = _by_search(values, limits, ends, inclusive)
    if rising is not None:
        return rising
    n, block = len(values), 1 << BLOCK_BITS
    within = pc.less if inclusive else pc.less_equal  # a run no value of which is beyond
    index = _indices(n)
    fine = run_maxima(values, BLOCK_BITS + 1)  # runs of up to 64: a whole block
    # to the end of the block after i (or of the partition)
    p = pc.add(index, 1)
    stop = pc.min_element_wise(ends, pc.shift_left(pc.add(pc.shift_right(p, BLOCK_BITS), 1),
                                                   BLOCK_BITS))
    p = _lift(fine, p, stop, limits, within)
    none = pa.scalar(None, pa.int64())
    found = pc.if_else(pc.less(p, stop), p, none)
    # the others: over whole blocks, then inside the block holding the first value beyond
    onward = pc.and_(pc.is_null(found), pc.less(stop, ends))
    if pc.any(onward).as_py():
        full = n >> BLOCK_BITS  # each block's largest value (the last may be short)
        tops = [pc.take(fine[BLOCK_BITS], _indices(full * block, block))] if full else []
        if n % block:
            tops.append(pa.array([pc.max(values[full * block:]).as_py()], values.type))
        tops = pa.concat_arrays(tops)
        coarse = run_maxima(tops, max(1, len(tops).bit_length()))
        e, v = pc.filter(ends, onward), pc.filter(limits, onward)
        b = _lift(coarse, pc.shift_right(pc.filter(p, onward), BLOCK_BITS),
                  pc.shift_right(pc.add(e, block - 1), BLOCK_BITS), v, within)
        q = pc.shift_left(b, BLOCK_BITS)
        stop = pc.min_element_wise(e, pc.add(q, block))
        q = _lift(fine, q, stop, v, within)
        found = pc.replace_with_mask(found, onward, pc.if_else(pc.less(q, stop), q, none))
    return found


def _by_search(values, limits, ends, inclusive: bool):
    """:func:`first_beyond` for integer values that never go down within a partition (a time,
    a sequence number: the common case), by one binary search of every limit (numpy's
    ``searchsorted``, in C) instead of the lifting's O(log n) array passes; None for any other
    values, or when the partitions laid end to end would not fit in 64 bits.

    Each partition's values and limits are shifted so that the partitions follow each other in
    one ascending array, every partition's largest value or limit below the next partition's
    first value; the first value beyond a limit is then the search's answer, moved up to
    i + 1 when the limit is below i's own value, and none when it lies past i's partition.

        >>> import pyarrow as pa
        >>> _by_search(pa.array([1, 3, 3, 0, 9]), pa.array([2, 3, 9, 5, 9]),
        ...            pa.array([3, 3, 3, 5, 5]), False).to_pylist()
        [1, None, None, 4, None]
        >>> _by_search(pa.array([2, 1]), pa.array([2, 1]), pa.array([2, 2]), False) is None
        True
    """
    import numpy as np
    import pyarrow as pa

    n = len(values)
    if not n or not pa.types.is_signed_integer(values.type) or values.null_count \
            or limits.null_count:
        return None
    v = np.asarray(values.to_numpy(), dtype=np.int64)
    e = np.asarray(ends.to_numpy(), dtype=np.int64)
    index = np.arange(n, dtype=np.int64)
    start = np.ones(n, dtype=bool)
    start[1:] = e[:-1] == index[1:]  # the row before ended its partition here
    if not np.all((v[1:] >= v[:-1]) | start[1:]):
        return None  # a value goes down within a partition
    lim = np.asarray(limits.to_numpy(), dtype=np.int64)
    part = np.cumsum(start) - 1
    low = v[start]  # each partition's first value is its smallest
    high = np.maximum.reduceat(np.maximum(v, lim), np.flatnonzero(start))
    # the partitions end to end, in exact float bounds first: nothing below may overflow
    spans = high.astype(np.float64) - low.astype(np.float64) + 2
    if spans.sum() >= 2.0 ** 62 or low.min() == np.iinfo(np.int64).min:
        return None
    base = np.concatenate(([0], np.cumsum(high - low + 2)[:-1]))
    shift = (base - low)[part]
    # a limit below the partition's first value is beyond none of it: below it, not lower
    floor = low[part] - (0 if inclusive else 1)
    found = np.searchsorted(v + shift, np.maximum(lim, floor) + shift,
                            side="left" if inclusive else "right")
    found = np.maximum(found, index + 1)
    return pa.array(found, pa.int64(), mask=found >= e)


def float_reaches(values, delta):
    """``sira.engine.spl.float_reach`` of every value at once: an Arrow float64 array holding,
    for each FLOAT a, the largest FLOAT b with ``b - a <= delta`` as floating point rounds it
    (a later value evicts a from a sliding ``delta(attr, delta)`` window exactly when it is
    above that), for :func:`first_beyond`'s limits. The FLOATs are searched in their order (their
    bits as ordered integers): ``a + delta``, then its neighbour, which settles nearly every
    value; the rest (where ``a + delta`` cancels to near 0) by halving, about 64 array steps
    over those few.

        >>> import pyarrow as pa
        >>> float_reaches(pa.array([0.1, 1e20, float("-inf")]), 0.2).to_pylist()
        [0.3, 1e+20, -inf]
    """
    import math

    import numpy as np
    import pyarrow as pa

    # b - a > delta, compared exactly as Python compares a FLOAT with an integer delta: against
    # the largest FLOAT at or below delta (numpy would round a delta past 2**53 to nearest)
    at_most = float(delta)
    if at_most > delta:
        at_most = math.nextafter(at_most, -math.inf)
    delta = at_most
    a = np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float64)
    out = a.copy()  # an infinite value is its own reach
    finite = np.flatnonzero(np.isfinite(a))
    a = a[finite]
    with np.errstate(over="ignore", invalid="ignore"):
        x = _ranks(np.minimum(a + delta, np.finfo(np.float64).max))

        def beyond(ranks, which=slice(None)):
            return _floats(ranks) - a[which] > delta

        up = ~beyond(x)  # x - a <= delta: the reach is x or above, else below x
        near = np.where(up, x + 1, x - 1)
        settled = np.where(up, beyond(near), ~beyond(near))
        reach = np.where(up, x, near)
        # the others lie strictly between: [x + 1, +inf) going up, [a, x - 1) going down
        rest = np.flatnonzero(~settled)
        lo = np.where(up[rest], near[rest], _ranks(a[rest]))
        hi = np.where(up[rest], _ranks(np.full(len(rest), np.inf)), near[rest])
        while len(rest):
            mid = (lo >> 1) + (hi >> 1) + (lo & hi & 1)  # floor((lo + hi) / 2), no overflow
            out_of = beyond(mid, rest)
            hi = np.where(out_of, mid, hi)
            lo = np.where(out_of, lo, mid)
            done = hi <= lo + 1
            reach[rest[done]] = lo[done]
            keep = ~done
            rest, lo, hi = rest[keep], lo[keep], hi[keep]
    out[finite] = _floats(reach)
    return pa.array(out, pa.float64())


def _ranks(x):
    """FLOATs as int64 in their order (-0.0 and 0.0 both 0): ``sira.engine.spl._float_rank``."""
    import numpy as np
    bits = np.ascontiguousarray(x, dtype=np.float64).view(np.int64)
    return np.where(bits >= 0, bits, -(bits & np.int64(0x7FFF_FFFF_FFFF_FFFF)))


def _floats(ranks):
    """The FLOATs of :func:`_ranks`."""
    import numpy as np
    bits = np.where(ranks >= 0, ranks, (-ranks) | np.int64(-0x8000_0000_0000_0000))
    return np.ascontiguousarray(bits, dtype=np.int64).view(np.float64)


def partition_ends(positions, sizes):
    """For rows in partition order, each row's ``ends`` for :func:`first_beyond`: the index after
    its partition's last row, from its position in the partition (counted from 1) and the
    partition's size.

        >>> import pyarrow as pa
        >>> partition_ends(pa.array([1, 2, 1, 2, 3]), pa.array([2, 2, 3, 3, 3])).to_pylist()
        [2, 2, 5, 5, 5]
    """
    import pyarrow.compute as pc

    return pc.add(pc.subtract(_indices(len(positions)), positions), pc.add(sizes, 1))


def chain_members(successor, heads):
    """The indices on the chains from ``heads``: each head, its successor, the successor's
    successor... up to a null (``successor`` an Arrow int64 array of indices, each later than
    its own, or null). Pointer doubling: after round r the chains' first 2**r members are known
    and every index's 2**r-th successor is one array step away, so O(n log L) array work for
    chains of length L, with no step per member in Python. Sorted, without repeats.

        >>> import pyarrow as pa
        >>> chain_members(pa.array([2, 3, 4, None, None, None]), pa.array([0, 1])).to_pylist()
        [0, 1, 2, 3, 4]
    """
    import numpy as np
    import pyarrow as pa

    n = len(successor)
    jump = np.append(successor.fill_null(n).to_numpy(zero_copy_only=False), n)  # n: the end
    members = heads.to_numpy(zero_copy_only=False).astype(np.int64)
    while True:
        ahead = jump[members]  # the next 2**r members of every chain
        ahead = ahead[ahead < n]
        if not len(ahead):
            return pa.array(np.unique(members))
        members = np.concatenate([members, ahead])
        jump = jump[jump]


def _indices(stop: int, step: int = 1):
    """``0, step, 2 * step, ...`` below ``stop`` as an Arrow int64 array, made by numpy (from
    a Python ``range`` it took 80 ms for a million).

        >>> _indices(7, 3).to_pylist()
        [0, 3, 6]
    """
    import numpy as np
    import pyarrow as pa

    return pa.array(np.arange(0, stop, step, dtype=np.int64))


def run_maxima(values, levels: int) -> list:
    """``[m0, m1, ...]``, up to ``levels`` of them: mk[x] is the largest of values[x : x + 2**k]
    (mk has n - 2**k + 1 entries; levels longer than the values are left out).

        >>> import pyarrow as pa
        >>> [m.to_pylist() for m in run_maxima(pa.array([3, 1, 4, 1, 5]), 3)]
        [[3, 1, 4, 1, 5], [3, 4, 4, 5], [4, 5]]
    """
    import pyarrow.compute as pc

    out = [values]
    for k in range(1, levels):
        half = 1 << (k - 1)
        previous = out[-1]
        if len(previous) <= half:
            break
        out.append(pc.max_element_wise(previous[:len(previous) - half], previous[half:]))
    return out


def _lift(maxima: list, p, stop, limits, within):
    """``p`` advanced over the longest run p, p + 1, ... that ends at or before ``stop`` and
    holds no value beyond its limit, by powers of two from the largest (``maxima`` from
    :func:`run_maxima`; a run of 2**k values is crossed when ``within(its maximum, limit)``).
    Where p stops short of ``stop``, the value at p is the first beyond the limit."""
    import pyarrow.compute as pc

    for k in reversed(range(len(maxima))):
        after = pc.add(p, 1 << k)
        fits = pc.less_equal(after, stop)
        top = pc.take(maxima[k], pc.if_else(fits, p, 0))
        p = pc.if_else(pc.and_(fits, within(top, limits)), after, p)
    return p
