"""The scalar operator library: one table of SIRA_PRISE operator names.

Each operator resolves its argument types to a result type and a Python implementation; the
Spark compiler maps the same names to Spark SQL functions. Integer arithmetic widens INT < LONG
< BIGINT and checks the result fits (overflow is an error); FLOAT needs an explicit ``tofloat``.

    >>> from sira.types import INT, STRING
    >>> result_type, impl = resolve("plus", (INT, INT))
    >>> result_type, impl(2, 3)
    (INT, 5)
    >>> resolve("plus", (STRING, INT))
    Traceback (most recent call last):
    ...
    sira.errors.SiraTypeError: plus: expected numeric operands of one kind, got STRING and INT

Aggregation operators (``plus mult max min and or iunion iintersect union intersect``) are in
:data:`AGGREGATORS`, each with its identity, as the seed's AGGREGATE needs.
"""

from __future__ import annotations

import datetime
import math
import operator as py_operator
from collections.abc import Callable

import attrs

from ..errors import (DivisionByZero, FloatOverflow, IntervalError, SiraTypeError, SiraValueError,
                      UnknownOperator)
from ..intervals import (Interval, IntervalType, as_held, predecessor,
                         successor)
from ..types import (article, AVERAGE, BIGINT, BOOLEAN, DATE, FLOAT, INT, INTEGER_TYPES, LONG,
                     NUMERIC_TYPES, STRING, TIMESTAMP, Average, IntegerType, RelationType, Type,
                     TupleType, wider_integer)
from ..values import Relation, Tuple

RELATION_ANY = "RELATION"  # marker used in messages


@attrs.frozen
class Operator:
    """A named scalar operator: ``resolve(arg_types) -> (result_type, impl)``."""

    name: str
    min_args: int
    max_args: int | None
    resolver: Callable
    doc: str = ""

    def resolve(self, arg_types: tuple):
        n = len(arg_types)
        if n < self.min_args or (self.max_args is not None and n > self.max_args):
            expected = (f"{self.min_args}" if self.max_args == self.min_args else
                        f"{self.min_args} or more" if self.max_args is None else
                        f"{self.min_args} to {self.max_args}")
            raise SiraTypeError(f"{self.name} takes {expected} arguments (got {n})",
                                operator=self.name, expected=f"{expected} arguments",
                                got=f"{n} arguments")
        return self.resolver(self.name, tuple(arg_types))


LIBRARY: dict = {}


def operator(name, min_args, max_args=None, doc=""):
    """Register a resolver under one or more names (comma separated)."""
    def register(resolver):
        for alias in name.split(","):
            LIBRARY[alias] = Operator(alias, min_args, max_args, resolver, doc)
        return resolver
    return register


def resolve(name: str, arg_types: tuple):
    """(result type, implementation) of operator ``name`` on arguments of these types.

    Raises:
        UnknownOperator: no such operator.
        SiraTypeError: the operator does not take arguments of these types.
    """
    op = LIBRARY.get(name.lower())
    if op is None:
        from ..errors import closest_names
        raise UnknownOperator(operator=name.lower(),
                              suggestions=closest_names(name, LIBRARY))
    return op.resolve(arg_types)


def _bad(name, expected, types):
    got = " and ".join(str(t) for t in types) if types else "no arguments"
    return SiraTypeError(f"{name}: expected {expected}, got {got}", operator=name,
                         expected=expected, got=got)


def _same(name, types, allowed=None, what="operands of one type"):
    """The common type of all operands (integer types widen); checks membership in ``allowed``."""
    first = types[0]
    common = first
    for t in types[1:]:
        if isinstance(common, IntegerType) and isinstance(t, IntegerType):
            common = wider_integer(common, t)
        elif t != common:
            raise _bad(name, what, types)
    if allowed is not None and not allowed(common):
        raise _bad(name, what, types)
    return common


def _is_numeric(t):
    return t in NUMERIC_TYPES


def _checked(result_type, fn, name):
    """Wrap an integer implementation with the overflow check of its result type."""
    if isinstance(result_type, IntegerType) and result_type.bits is not None:
        lo, hi, fit = result_type.min, result_type.max, result_type.fit

        def checked(*args):
            v = fn(*args)
            if lo <= v <= hi:
                return v
            return fit(v, operator=name)
        return checked
    return fn


# ----------------------------------------------------------------------------- comparison

def _comparable(name, types):
    return _same(name, types, what="operands of one type")


@operator("eq", 2, 2, "equality, on any type (relations and tuples included)")
def _eq(name, types):
    _comparable(name, types)
    return BOOLEAN, py_operator.eq


@operator("ne", 2, 2, "inequality")
def _ne(name, types):
    _comparable(name, types)
    return BOOLEAN, py_operator.ne


def _ordered(t):
    return t.ordered and not isinstance(t, (RelationType, TupleType, IntervalType)) \
        and t != AVERAGE


for _name, _fn in (("gt", py_operator.gt), ("ge", py_operator.ge), ("lt", py_operator.lt),
                   ("le", py_operator.le)):
    def _cmp(name, types, _fn=_fn):
        _same(name, types, _ordered, "ordered operands of one type")
        return BOOLEAN, _fn
    operator(_name, 2, 2, f"{_name} comparison")(_cmp)


# ----------------------------------------------------------------------------- boolean

@operator("and", 2, None, "conjunction (short-circuit)")
def _and(name, types):
    _same(name, types, lambda t: t == BOOLEAN, "BOOLEAN operands")
    return BOOLEAN, lambda *args: all(args)


@operator("or", 2, None, "disjunction (short-circuit)")
def _or(name, types):
    _same(name, types, lambda t: t == BOOLEAN, "BOOLEAN operands")
    return BOOLEAN, lambda *args: any(args)


@operator("not", 1, 1, "negation")
def _not(name, types):
    _same(name, types, lambda t: t == BOOLEAN, "a BOOLEAN operand")
    return BOOLEAN, py_operator.not_


@operator("xor", 2, 2, "exclusive or")
def _xor(name, types):
    _same(name, types, lambda t: t == BOOLEAN, "BOOLEAN operands")
    return BOOLEAN, py_operator.ne


# ----------------------------------------------------------------------------- arithmetic

def _int_div(a, b):
    if b == 0:
        raise DivisionByZero(operator="div")
    q = abs(a) // abs(b)  # Java semantics: truncate toward zero
    return q if (a >= 0) == (b >= 0) else -q


def _int_mod(a, b):
    if b == 0:
        raise DivisionByZero(operator="mod")
    return a - b * _int_div(a, b)


def _float_div(a, b):
    if b == 0:
        raise DivisionByZero(operator="div")
    return a / b


def _float_mod(a, b):
    if b == 0:
        raise DivisionByZero(operator="mod")
    if math.isinf(a):
        return math.nan  # IEEE's remainder of an infinity; _finite refuses it as not a number
    return math.fmod(a, b)


def _finite(fn, name):
    """A FLOAT operation whose result is checked: not a number is an error, and so is an
    infinity made from finite operands (IEEE overflow), as integer overflow is. Infinite
    operands (``1e999``, MAX's identity) give infinities as IEEE says.

        >>> _finite(py_operator.mul, "mult")(1e300, 1e300)
        Traceback (most recent call last):
        ...
        sira.errors.FloatOverflow: mult: the result of 1e+300, 1e+300 is too large for a FLOAT
    """
    def checked(*args):
        v = fn(*args)
        if v - v != 0.0:  # an infinity or NaN: the rare path
            _check_float_result(v, args, name)
        return v + 0.0
    return checked


def _check_float_result(value, operands, name):
    """Raise for a NaN result, or an infinite one from finite operands (overflow)."""
    if math.isnan(value):
        raise SiraValueError(f"{name}: the result is not a number", operator=name, value=value)
    if math.isinf(value) and all(math.isfinite(a) for a in operands):
        raise FloatOverflow(operator=name, operands=tuple(operands))


#: a finite FLOAT times 2**FLOAT_SCALE is an integer (the least subnormal is 2**-1074)
FLOAT_SCALE = 1074


def scaled_float(x: float) -> int:
    """The finite FLOAT ``x`` as the integer ``x * 2**FLOAT_SCALE`` (exact).

        >>> scaled_float(0.75) == 3 << 1072
        True
    """
    p, q = x.as_integer_ratio()  # q is 2**k, k <= 1074
    return p << (FLOAT_SCALE + 1 - q.bit_length())


def rounded_float(scaled: int, name: str = "plus") -> float:
    """The FLOAT nearest ``scaled / 2**FLOAT_SCALE`` (ties to even: Python's division of
    integers rounds correctly); FloatOverflow beyond the largest FLOAT.

        >>> rounded_float(scaled_float(0.1) + scaled_float(0.2))
        0.30000000000000004
    """
    try:
        return scaled / (1 << FLOAT_SCALE) + 0.0
    except OverflowError:
        raise FloatOverflow(operator=name, operands=()) from None


def float_total(scaled: int, positive: int, negative: int, name: str = "plus") -> float:
    """A FLOAT sum kept as the exact sum of its finite values (:func:`scaled_float`) and its
    counts of +inf and -inf: what :func:`float_sum` gives for those values (the sweeps and
    running sums keep them so, adding and taking back values exactly).

        >>> float_total(scaled_float(0.1) + scaled_float(0.2), 0, 0)
        0.30000000000000004
        >>> float_total(0, 1, 0)
        inf
    """
    if positive and negative:
        raise _not_a_number(name)
    if positive or negative:
        return math.inf if positive else -math.inf
    return rounded_float(scaled, name)


def _not_a_number(name: str) -> SiraValueError:
    return SiraValueError(f"{name}: the result is not a number", operator=name, value=math.nan)


def float_sum(values, name: str = "plus") -> float:
    """The sum of FLOAT values: their exact sum rounded once to the nearest FLOAT (ties to
    even), so it does not depend on the order of the values (an engine may add them in any
    order, in parts, or as a window slides) and is the FLOAT closest to the true sum. With
    infinities: -inf with +inf is not a number (an error), else the infinity; an exact sum
    whose rounding is beyond the largest FLOAT is FloatOverflow, never an infinity.

        >>> float_sum([0.1, 0.2, 0.3]), 0.1 + 0.2 + 0.3
        (0.6, 0.6000000000000001)
        >>> float_sum([1e308, 1e308, -1e308])
        1e+308
        >>> float_sum([1e308, 1e308])
        Traceback (most recent call last):
        ...
        sira.errors.FloatOverflow: plus: the result is too large for a FLOAT
    """
    try:
        total = math.fsum(values)  # correctly rounded, unless a partial sum overflows
    except OverflowError:
        return _exact_float_sum(values, name)
    except ValueError:  # -inf with +inf
        raise _not_a_number(name) from None
    if total - total != 0.0 and all(map(math.isfinite, values)):  # overflow: said exactly
        return _exact_float_sum(values, name)
    return total + 0.0


def _exact_float_sum(values, name: str) -> float:
    """:func:`float_sum` by integer arithmetic (when a partial sum of ``math.fsum`` overflows)."""
    finite = [v for v in values if math.isfinite(v)]
    positive = sum(1 for v in values if v == math.inf)
    return float_total(sum(map(scaled_float, finite)), positive, len(values) - len(finite) -
                       positive, name)


def float_conversion(name):
    """Conversion of a number to FLOAT; an integer beyond FLOAT's range is FloatOverflow."""
    def convert(v):
        try:
            return float(v)
        except OverflowError:
            raise FloatOverflow(operator=name, operands=(v,)) from None
    return convert


def average_plus(a: Average, b: Average, name: str = "plus") -> Average:
    """AVERAGE's ``plus`` (``Average.plus``) with FLOAT's checks on the combined mean. Its
    formula (which reproduces the seed's figures to the last bit) multiplies a mean by its
    count, so means near the largest FLOAT can overflow: FloatOverflow, never infinity."""
    out = a.plus(b)
    v = out.value
    if v - v != 0.0:
        _check_float_result(v, (a.value, b.value), name)
    return out


def _arith(int_fn, float_fn, average_fn=None):
    def resolver(name, types):
        if average_fn is not None and all(t == AVERAGE for t in types):
            return AVERAGE, average_fn
        t = _same(name, types, _is_numeric, "numeric operands of one kind")
        if t == FLOAT:
            return FLOAT, _finite(float_fn, name)
        return t, _checked(t, int_fn, name)
    return resolver


operator("plus", 2, 2, "addition; on AVERAGE, combination of averages")(
    _arith(py_operator.add, py_operator.add, average_plus))
operator("minus", 2, 2, "subtraction")(_arith(py_operator.sub, py_operator.sub))
operator("mult", 2, 2, "multiplication")(_arith(py_operator.mul, py_operator.mul))
operator("div", 2, 2, "division (integers truncate toward zero)")(_arith(_int_div, _float_div))
operator("mod", 2, 2, "remainder (sign of the dividend)")(_arith(_int_mod, _float_mod))


@operator("neg", 1, 1, "arithmetic negation")
def _neg(name, types):
    t = _same(name, types, _is_numeric, "a numeric operand")
    return t, (_finite(py_operator.neg, name) if t == FLOAT else _checked(t, py_operator.neg, name))


@operator("abs", 1, 1, "absolute value")
def _abs(name, types):
    t = _same(name, types, _is_numeric, "a numeric operand")
    return t, _checked(t, abs, name)


def _extreme(fn):
    def resolver(name, types):
        t = _same(name, types, _ordered, "ordered operands of one type")
        return t, fn
    return resolver


operator("max", 2, None, "the greatest operand")(_extreme(max))
operator("min", 2, None, "the least operand")(_extreme(min))


# ----------------------------------------------------------------------------- strings

@operator("concat", 2, None, "string concatenation")
def _concat(name, types):
    _same(name, types, lambda t: t == STRING, "STRING operands")
    return STRING, lambda *args: "".join(args)


def _string_fn(fn, result=STRING):
    def resolver(name, types):
        _same(name, types, lambda t: t == STRING, "a STRING operand")
        return result, fn
    return resolver


operator("length", 1, 1, "number of characters")(_string_fn(len, INT))
operator("lowercase", 1, 1, "lower case")(_string_fn(str.lower))
operator("uppercase", 1, 1, "upper case")(_string_fn(str.upper))
operator("trim", 1, 1, "without leading and trailing blanks")(_string_fn(str.strip))


@operator("substring", 2, 3, "substring(s, begin[, end]) with 0-based begin, end exclusive")
def _substring(name, types):
    if types[0] != STRING or any(not isinstance(t, IntegerType) for t in types[1:]):
        raise _bad(name, "a STRING and integer positions", types)

    def impl(s, begin, end=None):
        end = len(s) if end is None else end
        if not 0 <= begin <= end <= len(s):
            raise SiraValueError(f"substring: positions {begin}..{end} outside a string of "
                                 f"length {len(s)}", operator=name, value=(begin, end))
        return s[begin:end]
    return STRING, impl


@operator("contains_string,matches_substring", 2, 2, "whether the first string contains the second")
def _contains_string(name, types):
    _same(name, types, lambda t: t == STRING, "STRING operands")
    return BOOLEAN, lambda a, b: b in a


# ----------------------------------------------------------------------------- conversions

@operator("the_string", 1, 1, "the value's text, as the seed prints it")
def _the_string(name, types):
    t = types[0]
    if not _holds_an_interval(t):
        return STRING, t.format
    return STRING, lambda v: t.format(_one_empty(t, v))


def _holds_an_interval(t) -> bool:
    if isinstance(t, IntervalType):
        return True
    if isinstance(t, (RelationType, TupleType)):
        return any(_holds_an_interval(a) for a in t.heading.types)
    return False


def _one_empty(t, v):
    """``v`` with every empty interval in it (nested ones included) as the one struct every
    engine hands out (``as_held``): all empty intervals are one value, so THE_STRING gives one
    text for them, whatever begin the Python engine shows an empty interval at::

        >>> from sira.intervals import INTINTERVAL
        >>> _one_empty(INTINTERVAL, Interval(16384, 16384))
        Interval(begin=0, end=0)
    """
    if isinstance(t, IntervalType):
        return as_held(t, v)
    if isinstance(t, TupleType):
        return Tuple(v.heading, _one_empty_row(v.heading, v.values))
    if isinstance(t, RelationType):
        return Relation(v.heading, frozenset(_one_empty_row(v.heading, row) for row in v.body))
    return v


def _one_empty_row(heading, values) -> tuple:
    return tuple(_one_empty(t, x) if _holds_an_interval(t) else x
                 for t, x in zip(heading.types, values))


@operator("tofloat", 1, 1, "conversion of a number to FLOAT")
def _tofloat(name, types):
    _same(name, types, _is_numeric, "a numeric operand")
    return FLOAT, float_conversion(name)


def _integer_selector(target: IntegerType):
    def resolver(name, types):
        (t,) = types
        if isinstance(t, IntegerType):
            return target, _checked(target, lambda v: v, name)
        if t == STRING:
            def parse(s):
                try:
                    v = int(s.strip())
                except ValueError:
                    raise SiraValueError(f"{name}: '{s}' is not an integer", operator=name,
                                         value=s) from None
                return target.fit(v, operator=name)
            return target, parse
        raise _bad(name, "an integer or a STRING (use a rounding operator for FLOAT)", types)
    return resolver


operator("int", 1, 1, "INT selector")(_integer_selector(INT))
operator("long", 1, 1, "LONG selector")(_integer_selector(LONG))
operator("bigint", 1, 1, "BIGINT selector")(_integer_selector(BIGINT))


@operator("float", 1, 1, "FLOAT selector")
def _float_sel(name, types):
    (t,) = types
    if t in NUMERIC_TYPES:
        return FLOAT, float_conversion(name)
    if t == STRING:
        def parse(s):
            try:
                return FLOAT.check(float(s.strip()), operator=name)
            except ValueError:
                raise SiraValueError(f"{name}: '{s}' is not a number", operator=name,
                                     value=s) from None
        return FLOAT, parse
    raise _bad(name, "a number or a STRING", types)


@operator("boolean", 1, 1, "BOOLEAN selector")
def _boolean_sel(name, types):
    (t,) = types
    if t == BOOLEAN:
        return BOOLEAN, lambda v: v
    if t == STRING:
        def parse(s):
            low = s.strip().lower()
            if low not in ("true", "false"):
                raise SiraValueError(f"{name}: '{s}' is not true or false", operator=name,
                                     value=s)
            return low == "true"
        return BOOLEAN, parse
    raise _bad(name, "a BOOLEAN or a STRING", types)


@operator("average", 2, 2, "AVERAGE selector: average(count(n)value(v))")
def _average_sel(name, types):
    if not isinstance(types[0], IntegerType) or types[1] != FLOAT:
        raise _bad(name, "an integer count and a FLOAT value", types)
    return AVERAGE, lambda c, v: Average(c, v)


@operator("the_count", 1, 1, "the observation count of an AVERAGE")
def _the_count(name, types):
    _same(name, types, lambda t: t == AVERAGE, "an AVERAGE")
    return INT, lambda a: INT.fit(a.count, operator=name)  # a count past INT: IntOverflow


@operator("the_value", 1, 1, "the mean of an AVERAGE")
def _the_value(name, types):
    _same(name, types, lambda t: t == AVERAGE, "an AVERAGE")
    return FLOAT, lambda a: a.value


@operator("currentdate", 0, 0, "today's date (one value for the whole query)")
def _currentdate(name, types):
    return DATE, lambda: datetime.date.today()


# ----------------------------------------------------------------------------- relations

@operator("cardinality", 1, 1, "the number of tuples of a relation")
def _cardinality(name, types):
    if not isinstance(types[0], RelationType):
        raise _bad(name, "a relation", types)
    return INT, len


@operator("is_empty", 1, 1, "whether a relation has no tuples")
def _is_empty(name, types):
    if not isinstance(types[0], RelationType):
        raise _bad(name, "a relation", types)
    return BOOLEAN, lambda r: len(r) == 0


# ----------------------------------------------------------------------------- intervals

def _interval_arg(name, types, n=1):
    if not all(isinstance(t, IntervalType) for t in types[:n]):
        raise _bad(name, "an interval", types)
    return types[0]


def _no_ends(name, i):
    """The error for an operator that reads the ends of the empty interval, which has none.

    Every empty interval is one value (IINTERSECT of disjoint intervals makes it), so an
    operator giving an answer from the begin it happens to show would answer differently for
    equal values."""
    return IntervalError(f"{name}: the empty interval has no ends (it holds no point)",
                         operator=name, value=i)


@operator("the_begin,the_from,startpointof", 1, 1, "the first point of an interval")
def _the_begin(name, types):
    t = _interval_arg(name, types)

    def impl(i):
        if i.empty:
            raise _no_ends(name, i)
        return i.begin
    return t.point, impl


@operator("the_end,endpointof", 1, 1, "the end of an interval (the first point after it)")
def _the_end(name, types):
    t = _interval_arg(name, types)

    def impl(i):
        if i.end is None:
            raise IntervalError(f"{name}: the interval is unbounded above", operator=name,
                                value=i)
        if i.empty:
            raise _no_ends(name, i)
        return i.end
    return t.point, impl


def _interval_pair(name, types):
    t = _interval_arg(name, types, 2)
    if types[0] != types[1]:
        raise _bad(name, "two intervals of one type", types)
    return t


@operator("iintersect", 2, 2, "the intersection of two intervals (may be empty)")
def _iintersect(name, types):
    t = _interval_pair(name, types)
    return t, Interval.intersect


@operator("overlaps", 2, 2, "whether two intervals share a point")
def _overlaps(name, types):
    _interval_pair(name, types)
    return BOOLEAN, _share_a_point


@operator("the_to", 1, 1, "the last point of an interval (ordinal point types)")
def _the_to(name, types):
    t = _interval_arg(name, types)
    if not t.point.ordinal:
        raise _bad(name, "an interval over an ordinal type", types)

    def impl(i):
        if i.end is None:
            raise IntervalError(f"{name}: the interval is unbounded above", operator=name,
                                value=i)
        if i.empty:
            raise IntervalError(f"{name}: the empty interval has no last point", operator=name,
                                value=i)
        return predecessor(t.point, i.end)
    return t.point, impl


@operator("iminus", 2, 2, "the points of the first interval not in the second (one interval)")
def _iminus(name, types):
    _interval_pair(name, types)
    return types[0], _iminus_impl


def _iminus_impl(a: Interval, b: Interval) -> Interval:
    if not a.overlaps(b) or b.empty:
        return a
    left = a.begin < b.begin
    right = b.end is not None and (a.end is None or b.end < a.end)
    if left and right:
        raise IntervalError(f"iminus: {b} lies strictly inside {a}, so the difference is two "
                            f"intervals", operator="iminus", value=(a, b))
    if left:
        return Interval(a.begin, b.begin)
    if right:
        return Interval(b.end, a.end)
    raise IntervalError(f"iminus: {b} covers {a}, so the difference is empty",
                        operator="iminus", value=(a, b))


def _lt_end(x, y):
    """x < y for interval ends, None meaning +infinity (so never true when x is None: infinity
    is not less than infinity).

        >>> _lt_end(None, None), _lt_end(3, None), _lt_end(None, 3), _lt_end(2, 3)
        (False, True, False, True)
    """
    return x is not None and (y is None or x < y)


def _share_a_point(a: Interval, b: Interval) -> bool:
    """overlaps: whether the intervals share a point (never when one is empty)."""
    return not (a.empty or b.empty) and a.overlaps(b)


def _relations():
    """Allen's thirteen relations and SIRA_PRISE's/TDATRM's interval comparisons.

    On the empty interval (it holds no point): ``overlaps`` is false, ``includes`` true of it
    (and ``included_in`` true of it in anything), ``merges`` true (IINTERSECT's identity of
    IUNION: iunion(empty, b) is b), ``iequals`` true only of another empty one; Allen's
    relations and ``adjacent`` compare ends, which the empty interval lacks, so they raise
    IntervalError (see ``ENDS_READ``).
    """
    def eq_end(x, y):
        return x == y

    return {
        "before": lambda a, b: a.end is not None and a.end < b.begin,
        "after": lambda a, b: b.end is not None and b.end < a.begin,
        "meets": lambda a, b: a.end is not None and a.end == b.begin,
        "met_by": lambda a, b: b.end is not None and b.end == a.begin,
        "allen_overlaps": lambda a, b: a.begin < b.begin and _lt_end(b.begin, a.end)
        and _lt_end(a.end, b.end),
        "overlapped_by": lambda a, b: b.begin < a.begin and _lt_end(a.begin, b.end)
        and _lt_end(b.end, a.end),
        "starts": lambda a, b: a.begin == b.begin and _lt_end(a.end, b.end),
        "started_by": lambda a, b: a.begin == b.begin and _lt_end(b.end, a.end),
        "during": lambda a, b: b.begin < a.begin and _lt_end(a.end, b.end),
        "allen_contains": lambda a, b: a.begin < b.begin and _lt_end(b.end, a.end),
        "finishes": lambda a, b: b.begin < a.begin and eq_end(a.end, b.end),
        "finished_by": lambda a, b: a.begin < b.begin and eq_end(a.end, b.end),
        "iequals": lambda a, b: a == b,
        "overlaps": _share_a_point,
        "adjacent": lambda a, b: (a.end is not None and a.end == b.begin)
        or (b.end is not None and b.end == a.begin),
        "merges": lambda a, b: a.empty or b.empty or a.overlaps(b)
        or (a.end is not None and a.end == b.begin) or (b.end is not None and b.end == a.begin),
        "includes": lambda a, b: b.empty or (not a.empty and a.begin <= b.begin
                                             and not _lt_end(a.end, b.end)),
        "included_in": lambda a, b: a.empty or (not b.empty and b.begin <= a.begin
                                                and not _lt_end(b.end, a.end)),
    }


#: the interval relations that compare ends, so are undefined on the empty interval
ENDS_READ = frozenset({"before", "after", "meets", "met_by", "allen_overlaps", "overlapped_by",
                       "starts", "started_by", "during", "allen_contains", "finishes",
                       "finished_by", "adjacent"})


def _of_ends(name, rel):
    def impl(a, b):
        if a.empty or b.empty:
            raise _no_ends(name, a if a.empty else b)
        return rel(a, b)
    return impl


for _rel_name, _rel in _relations().items():
    def _rel_resolver(name, types, _rel=_of_ends(_rel_name, _rel) if _rel_name in ENDS_READ
                      else _rel):
        _interval_pair(name, types)
        return BOOLEAN, _rel
    operator(_rel_name, 2, 2, f"interval relation {_rel_name}")(_rel_resolver)


@operator("contains", 2, 2, "whether an interval contains another interval or a point")
def _contains(name, types):
    t = _interval_arg(name, types)
    if types[1] == t:
        return BOOLEAN, _relations()["includes"]
    if types[1] == t.point or (isinstance(types[1], IntegerType)
                               and isinstance(t.point, IntegerType)):
        return BOOLEAN, lambda i, p: i.begin <= p and (i.end is None or p < i.end)
    raise _bad(name, f"an interval and {article(str(t.point))} point or {t}", types)


@operator("duration,count_points", 1, 1, "the number of points of an interval (FLOAT: length)")
def _duration(name, types):
    t = _interval_arg(name, types)
    length = _finite(py_operator.sub, name)  # a FLOAT interval's end minus its begin

    def impl(i):
        if i.end is None:
            raise IntervalError(f"{name}: the interval is unbounded above", operator=name,
                                value=i)
        if isinstance(t.point, IntegerType):  # a LONGINTERVAL may span more than LONG
            return LONG.fit(i.end - i.begin, operator=name)
        if t.point == DATE:
            return (i.end - i.begin).days
        if t.point == TIMESTAMP:
            return (i.end - i.begin) // datetime.timedelta(microseconds=1)
        return length(i.end, i.begin)
    return (FLOAT if t.point == FLOAT else LONG), impl


def _interval_selector(itype: IntervalType):
    def resolver(name, types):
        for t in types:
            if t != itype.point and not (isinstance(t, IntegerType)
                                         and isinstance(itype.point, IntegerType)):
                raise _bad(name, f"{itype.point} points", types)
        return itype, lambda begin, end=None: itype.select(begin, end, operator=name)
    return resolver


def _next_point(name, types):
    (t,) = types
    if not t.ordinal or isinstance(t, IntervalType):
        raise _bad(name, "a point of an ordinal type", types)
    return t, lambda v: successor(t, v)


operator("next", 1, 1, "the next point of an ordinal type")(_next_point)


def register_interval_selectors():
    from ..intervals import INTERVAL_TYPES
    for key, itype in INTERVAL_TYPES.items():
        operator(key, 1, 2, f"{itype.name} selector: {key}(begin(a)end(b)) or "
                 f"{key}(from(a)to(b))")(_interval_selector(itype))


register_interval_selectors()


# ----------------------------------------------------------------------------- aggregation

@attrs.frozen
class Aggregation:
    """An associative, commutative operator for AGGREGATE: its identity and how to fold."""

    name: str
    result_type: Type
    identity: object  # a value, or NO_IDENTITY
    combine: Callable  # (a, b) -> value
    exact: bool  # False: folded in ascending order of the values (or by ``fold``)
    fold: Callable | None = None  # fast fold of a list of values (identity included)


NO_IDENTITY = object()


def fold(agg: Aggregation, values: list):
    """Aggregate a list of values with one Aggregation: its identity when the list is empty;
    exact folds in any order; FLOAT sums are the exact sum rounded once (:func:`float_sum`);
    the other inexact ones (FLOAT products, AVERAGE, IINTERSECT) fold in ascending order of the
    values from the identity, so the result does not depend on iteration order.

        >>> from sira.types import INT
        >>> fold(aggregation("plus", INT), [1, 2, 3])
        6

    Raises:
        SiraValueError: an empty list for an operator without an identity value.
    """
    if not values:
        if agg.identity is NO_IDENTITY:
            raise SiraValueError(f"{agg.name} has no identity value for {agg.result_type}, so "
                                 f"it cannot aggregate an empty relation", operator=agg.name,
                                 value=None)
        return agg.identity
    if agg.fold is not None:
        return agg.fold(values)
    acc = agg.identity
    if not agg.exact:
        values = sorted(values, key=agg.result_type.sort_key)
    start = 0
    if acc is NO_IDENTITY:
        acc, start = values[0], 1
    combine = agg.combine
    for v in values[start:]:
        acc = combine(acc, v)
    return acc

_INTEGER_EXTREMES = {INT: (INT.min, INT.max), LONG: (LONG.min, LONG.max)}


def _fold_checked(t, fn, name):
    """A fold whose result must fit t (the sum of ints checked once, at the end)."""
    def fold(values):
        v = fn(values)
        return t.fit(v, operator=name) if isinstance(t, IntegerType) else v
    return fold


def aggregation(op: str, value_type: Type) -> Aggregation:
    """The aggregation for operator ``op`` over values of ``value_type``.

    Raises:
        UnknownOperator: not an aggregation operator.
        SiraTypeError: the operator does not aggregate that type.
    """
    op = op.lower()
    t = value_type
    if op == "plus":
        if t == AVERAGE:
            return Aggregation(op, t, Average(0, 0.0), average_plus, False)
        if t in INTEGER_TYPES:
            return Aggregation(op, t, 0, py_operator.add, True, _fold_checked(t, sum, op))
        if t == FLOAT:  # the exact sum rounded once (float_sum), whatever the order
            return Aggregation(op, t, 0.0, _finite(py_operator.add, op), False,
                               lambda values: float_sum(values, op))
    elif op == "mult":
        if t in INTEGER_TYPES:
            return Aggregation(op, t, 1, py_operator.mul, True, _fold_checked(t, math.prod, op))
        if t == FLOAT:
            return Aggregation(op, t, 1.0, _finite(py_operator.mul, op), False)
    elif op in ("max", "min"):
        if _ordered(t):
            pick = max if op == "max" else min
            ident = _extreme_identity(op, t)
            return Aggregation(op, t, ident, pick, True,
                               (lambda values, pick=pick, ident=ident:
                                pick(values, default=ident) if ident is not NO_IDENTITY
                                else pick(values)))
    elif op in ("and", "or"):
        if t == BOOLEAN:
            return Aggregation(op, t, op == "and", (lambda a, b: a and b) if op == "and"
                               else (lambda a, b: a or b), True, all if op == "and" else any)
    elif op == "iintersect":
        if isinstance(t, IntervalType):
            ident = _universe(t)
            return Aggregation(op, t, ident, Interval.intersect, False)
    elif op == "iunion":
        if isinstance(t, IntervalType):
            return Aggregation(op, t, NO_IDENTITY, _iunion, False)  # folded in order of begin
    elif op in ("union", "intersect", "xminus", "join"):
        if isinstance(t, RelationType):
            from ..values import Relation
            empty = Relation(t.heading, frozenset())
            fns = {"union": lambda a, b: Relation(t.heading, a.body | b.body),
                   "intersect": lambda a, b: Relation(t.heading, a.body & b.body),
                   "xminus": lambda a, b: Relation(t.heading, a.body ^ b.body),
                   "join": lambda a, b: Relation(t.heading, a.body & b.body)}
            ident = empty if op in ("union", "xminus") else NO_IDENTITY
            return Aggregation(op, t, ident, fns[op], True)
    else:
        raise UnknownOperator(f"'{op}' is not an aggregation operator (plus, mult, max, min, "
                              f"and, or, iunion, iintersect, union, intersect, xminus)",
                              operator=op)
    raise _bad(op, f"a type {op} can aggregate", (t,))


def _extreme_identity(op, t):
    if t in _INTEGER_EXTREMES:
        lo, hi = _INTEGER_EXTREMES[t]
        return lo if op == "max" else hi
    if t == FLOAT:
        return -math.inf if op == "max" else math.inf
    if t == BOOLEAN:
        return op == "min"
    if t == DATE:
        return datetime.date.min if op == "max" else datetime.date.max
    if t == TIMESTAMP:
        return datetime.datetime.min if op == "max" else datetime.datetime.max
    if t == STRING and op == "max":
        return ""
    return NO_IDENTITY


def _universe(t: IntervalType):
    p = t.point
    if isinstance(p, IntegerType) and p.bits is not None:
        return Interval(p.min, None)
    if p == DATE:
        return Interval(datetime.date.min, None)
    if p == TIMESTAMP:
        return Interval(datetime.datetime.min, None)
    if p == FLOAT:
        return Interval(-math.inf, None)
    return NO_IDENTITY


def _iunion(a: Interval, b: Interval) -> Interval:
    if a.empty:
        return b
    if b.empty:
        return a
    if not (a.overlaps(b) or a.end == b.begin or b.end == a.begin):
        raise IntervalError(f"iunion: {a} and {b} neither overlap nor meet, so their union is "
                            f"not one interval", operator="iunion", value=(a, b))
    ends = [e for e in (a.end, b.end) if e is not None]
    return Interval(min(a.begin, b.begin), max(ends) if len(ends) == 2 else None)


@operator("iunion", 2, 2, "the union of two intervals that overlap or meet")
def _iunion_op(name, types):
    t = _interval_pair(name, types)
    return t, _iunion
