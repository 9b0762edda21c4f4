"""FLOAT sums are the exact sum of the values rounded once to the nearest FLOAT (ties to even):
``sira.expressions.library.float_sum`` against exact rational arithmetic, over values of every
magnitude (subnormals, the largest FLOATs), and its independence from the order of the values."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sira.errors import FloatOverflow, SiraValueError
from sira.expressions.library import float_sum, rounded_float, scaled_float

LARGEST = 1.7976931348623157e308

floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=-1e-300, max_value=1e-300),  # subnormals and tiny values
    st.sampled_from([LARGEST, -LARGEST, 5e-324, -5e-324, 0.1, 0.2, 0.3, 1e16, -1e16, 1.0]),
)
with_infinities = st.one_of(floats, st.sampled_from([math.inf, -math.inf]))


def _reference(values):
    """The exact sum rounded to the nearest FLOAT, ties to even, by rational arithmetic (None:
    overflow; "nan": infinities of both signs)."""
    infinite = {v for v in values if math.isinf(v)}
    if infinite:
        return "nan" if len(infinite) > 1 else infinite.pop()
    exact = sum(map(Fraction, values), Fraction(0))
    if exact == 0:
        return 0.0
    limit = Fraction(2) ** 1024 - Fraction(2) ** 970  # halfway past the largest FLOAT
    if abs(exact) >= limit:
        return None  # overflow
    return float(exact)  # Fraction.__float__ rounds correctly (integer division)


@settings(max_examples=600, deadline=None)
@given(st.lists(with_infinities, max_size=12), st.randoms())
def test_a_float_sum_is_the_exact_sum_rounded_once_in_any_order(values, rnd):
    expected = _reference(values)
    shuffled = list(values)
    rnd.shuffle(shuffled)
    for order in (values, shuffled):
        if expected is None:
            with pytest.raises(FloatOverflow):
                float_sum(order)
        elif expected == "nan":
            with pytest.raises(SiraValueError):
                float_sum(order)
        else:
            got = float_sum(order)
            assert got == expected and math.copysign(1.0, got) == math.copysign(1.0, expected)
            if math.isfinite(expected):
                assert rounded_float(sum(map(scaled_float, order))) == expected


def test_ties_go_to_even_and_a_partial_overflow_is_no_overflow():
    assert float_sum([1.0, 2.0 ** -53]) == 1.0  # halfway: to the even FLOAT, 1.0
    assert float_sum([1.0 + 2.0 ** -52, 2.0 ** -53]) == 1.0 + 2.0 ** -51
    assert float_sum([1.0, 2.0 ** -53, 2.0 ** -105]) == 1.0 + 2.0 ** -52  # past halfway
    assert float_sum([LARGEST, LARGEST, -LARGEST]) == LARGEST
    assert float_sum([0.1, 0.2, 0.3]) == 0.6 != (0.1 + 0.2) + 0.3
    assert float_sum([-0.0]) == 0.0 and math.copysign(1.0, float_sum([-0.0])) == 1.0


def test_infinities_and_overflow():
    assert float_sum([math.inf, 1.0, -LARGEST]) == math.inf
    assert float_sum([-math.inf, 1.0]) == -math.inf
    with pytest.raises(SiraValueError, match="not a number"):
        float_sum([math.inf, -math.inf, 1.0])
    with pytest.raises(FloatOverflow, match="too large"):
        float_sum([LARGEST, 2.0 ** 970])  # exactly halfway past the largest: to even, 2**1024
    assert float_sum([LARGEST, 2.0 ** 970 - 2.0 ** 918]) == LARGEST


def test_an_overflowing_partial_sum_beside_infinities():
    # math.fsum overflows on the finite values before it sees the infinity
    assert float_sum([math.inf, LARGEST, 1e308]) == math.inf
    assert float_sum([LARGEST, 1e308, -math.inf]) == -math.inf
    with pytest.raises(SiraValueError, match="not a number"):
        float_sum([LARGEST, 1e308, -math.inf, math.inf])
