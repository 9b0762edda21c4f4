"""Scalar operators on Spark give the Python engine's values and errors: the string and interval
operators whose Spark spelling differs most (substring positions, Python's idea of blanks,
iminus's two failure cases), plus a check that every library operator has a translation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sira
from sira.errors import IntervalError, SiraValueError

from conftest import ENGINES

pytestmark = pytest.mark.skipif("spark" not in ENGINES, reason="needs Java and pyspark")


def both(text):
    """The value of a one-tuple query on both engines (they must agree)."""
    python = sira.evaluate(text)
    spark = sira.evaluate(text, engine="spark")
    assert spark == python, text
    return python


def quoted(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def test_every_library_operator_has_a_spark_translation():
    from sira_spark.functions import unsupported_operators
    assert unsupported_operators() == []


def test_the_blanks_spark_trims_are_pythons():
    from sira_spark.functions import PY_SPACES
    assert list(PY_SPACES) == [i for i in range(0x110000) if chr(i).isspace()]


BLANKS = " \t\n\x0b\x0c\r\x1c\x1f\x85\xa0\u2003\u3000"


@settings(max_examples=15, deadline=None)
@given(st.text(alphabet=BLANKS + "ab'é𝄞", max_size=8), st.data())
def test_trim_and_substring_agree_with_python(s, data):
    n = len(s)
    begin = data.draw(st.integers(0, n), label="begin")
    end = data.draw(st.integers(begin, n), label="end")
    r = both(f"relation(body(tuple(t(trim({quoted(s)})) u(substring({quoted(s)}, {begin}, "
             f"{end})) v(substring({quoted(s)}, {begin})))))")
    assert r.to_rows() == [{"t": s.strip(), "u": s[begin:end], "v": s[begin:]}]


@pytest.mark.parametrize("engine", ["python", "spark"])
@pytest.mark.parametrize("call", ["substring('abc', 2, 1)", "substring('abc', 0, 4)",
                                  "substring('abc', -1)"])
def test_substring_outside_the_string_is_an_error_on_both_engines(engine, call):
    with pytest.raises(SiraValueError, match="outside a string of length 3"):
        sira.evaluate(f"relation(body(tuple(x({call}))))", engine=engine)


IMINUS = [((1, 10), (4, 12)), ((1, 10), (0, 4)), ((1, 10), (20, 30)), ((1, 10), (10, 12)),
          ((5, None), (1, 8)), ((1, None), (5, None)), ((1, 10), (1, 10))]


def interval_text(b, e):
    return f"intinterval(begin({b}))" if e is None else f"intinterval(begin({b})end({e}))"


@pytest.mark.parametrize("a,b", IMINUS)
def test_iminus_agrees_with_python(a, b):
    text = f"relation(body(tuple(x(iminus({interval_text(*a)}, {interval_text(*b)})))))"
    try:
        expected = sira.evaluate(text)
    except IntervalError:
        with pytest.raises(IntervalError, match="covers"):
            sira.evaluate(text, engine="spark")
        return
    assert sira.evaluate(text, engine="spark") == expected


@pytest.mark.parametrize("engine", ["python", "spark"])
def test_iminus_of_an_inner_interval_is_an_error_on_both_engines(engine):
    with pytest.raises(IntervalError, match="two intervals"):
        sira.evaluate("relation(body(tuple(x(iminus(intinterval(begin(1)end(10)), "
                      "intinterval(begin(4)end(5)))))))", engine=engine)
