"""Scalar expressions as Spark Columns: one translation per library operator name.

Spark runs in ANSI mode, so integer overflow and division by zero raise, as in sira. Checks
Spark has no built-in error for (an inverted interval, an iunion of disjoint intervals, a FLOAT
result that overflows to infinity or is not a number) raise ``raise_error`` with a
``SIRA|ErrorClass|message`` text that the engine turns back into the sira exception.

    >>> from sira import INT, attr
    >>> from sira.values import Heading
    >>> from sira_spark import default_engine
    >>> _ = default_engine()  # Columns need a running Spark session
    >>> "+" in str(column(attr("a") + 1, Heading.of({"a": INT}), None))
    True
"""

from __future__ import annotations

import datetime

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType

from sira.errors import NotSupportedOnSpark
from sira.expressions.evaluate import infer_type
from sira.expressions.facts import is_total
from sira.expressions.library import resolve
from sira.expressions.nodes import Aggregated, AttrRef, Call, FieldOf, Literal, RelationArg
from sira.intervals import INTERVAL_TYPES, IntervalType, empty_interval
from sira.types import (AVERAGE, BOOLEAN, DATE, FLOAT, LONG, STRING, TIMESTAMP, IntegerType,
                        RelationType, TupleType)

from .types import spark_type

TRANSLATIONS: dict = {}


def translates(*names):
    """Register the Spark translation of library operators ``names``."""
    def register(fn):
        for name in names:
            TRANSLATIONS[name] = fn
        return fn
    return register


def sira_error(cls: str, message: str) -> Column:
    """A column that fails the query with a sira error when evaluated."""
    return F.raise_error(F.lit(f"SIRA|{cls}|{message}"))


def literal_column(t, value) -> Column:
    """A Spark literal of sira type ``t``."""
    st = spark_type(t)
    if isinstance(t, IntervalType):
        if value.empty:
            value = empty_interval(t)  # the one struct every empty interval is held as
        end = F.lit(None).cast(spark_type(t.point)) if value.end is None else \
            literal_column(t.point, value.end)
        return F.struct(literal_column(t.point, value.begin).alias("begin"),
                        end.alias("end"))
    if t == AVERAGE:
        return F.struct(F.lit(value.count).cast("int").alias("count"),
                        F.lit(value.value).cast("double").alias("value"))
    if isinstance(t, TupleType):
        return F.struct(*[literal_column(ty, v).alias(n)
                          for (n, ty), v in zip(t.heading.attributes, value.values)])
    if isinstance(t, RelationType):
        from sira.types import TupleType as TT
        from sira.values import Tuple
        rows = [literal_column(TT(t.heading), Tuple(t.heading, row))
                for row in value.sorted_body()]
        return (F.array(*rows) if rows else F.array()).cast(st)
    if t == DATE:  # from its ISO text: py4j's java.sql.Date would shift a date before the
        return F.lit(value.isoformat()).cast(st)  # Gregorian reform, and refuse one before 1000
    if t == TIMESTAMP:  # (the same for java.sql.Timestamp)
        return F.lit(value.isoformat(sep=" ")).cast(st)
    return F.lit(value).cast(st)


class Scope:
    """How attribute names map to columns (plain names, or GTCLOSE's prefixed pairs)."""

    def __init__(self, heading, columns=None, compiler=None):
        self.heading = heading
        self.columns = columns or {}
        self.compiler = compiler

    def col(self, name) -> Column:
        return self.columns.get(name) if name in self.columns else F.col(f"`{name}`")


def column(expr, heading, compiler, scope: Scope | None = None) -> Column:
    """The Spark column computing ``expr`` on rows of ``heading``."""
    scope = scope or Scope(heading, compiler=compiler)
    if isinstance(expr, AttrRef):
        return scope.col(expr.name)
    if isinstance(expr, Literal):
        return literal_column(expr.type, expr.value)
    if isinstance(expr, RelationArg):
        return relation_operand(expr.node, compiler)
    if isinstance(expr, FieldOf):
        return column(expr.source, heading, compiler, scope)[expr.name]
    if isinstance(expr, Aggregated) and isinstance(expr.source, RelationArg):
        return operand_aggregate(expr, heading, compiler)
    if isinstance(expr, Aggregated):
        return aggregated_column(expr, column(expr.source, heading, compiler, scope), heading)
    if isinstance(expr, Call):
        arg_types = tuple(infer_type(a, heading) for a in expr.args)
        result_type, _ = resolve(expr.op, arg_types)
        fn = TRANSLATIONS.get(expr.op)
        if fn is None:
            raise NotSupportedOnSpark(node=f"the operator '{expr.op}'")
        if expr.op == "cardinality" and isinstance(expr.args[0], RelationArg):
            df = compiler.compile(expr.args[0].node)
            return df.agg(F.count(F.lit(1)).cast("int")).scalar()
        args = [column(a, heading, compiler, scope) for a in expr.args]
        if expr.op in ("and", "or") and not all(map(is_total, expr.args)):
            return _in_order(expr.op, args)
        if expr.op in _COMPARISONS:  # Catalyst folds x = x to TRUE (x > x to FALSE), and a
            from .basic import opaque  # failing x with it; an opaque x is never "the same"
            args = [a if is_total(e) else opaque(a) for a, e in zip(args, expr.args)]
        return fn(args, arg_types, result_type)
    raise NotSupportedOnSpark(node=f"the expression {expr!r}")


#: the comparisons Catalyst folds when both operands are the same expression
_COMPARISONS = frozenset({"eq", "ne", "gt", "ge", "lt", "le"})


def _in_order(op: str, args: list) -> Column:
    """``and``/``or`` over operands one of which may fail, evaluated as the Python engine does:
    left to right, each only where the ones before it have not decided. A chain of CASE
    branches whose conditions are opaque (:func:`sira_spark.basic.opaque`): Catalyst would
    otherwise simplify the plain AND/OR and may drop a failing operand altogether
    (``(a > 0 OR 6 / a > 1) AND a > 0`` is absorbed into ``a > 0``, and no division by zero
    is raised where the reference raises it)."""
    from .basic import opaque
    stop = F.lit(op == "or")
    out = None
    for a in args[:-1]:
        decides = opaque(a) if op == "or" else ~opaque(a)
        out = F.when(decides, stop) if out is None else out.when(decides, stop)
    return out.otherwise(args[-1])


def relation_operand(node, compiler) -> Column:
    """A relational operand (``eq(R1, R2)``, ``extend(S, (r, R))``) as a scalar subquery: its
    rows collected into one sorted array of structs (an RVA's canonical form, as GROUP makes it)
    by Spark itself, never through the driver (a literal built row by row over Py4J took about
    100 s for 20,000 tuples). The operand's rows are distinct: a relvar under it is counted
    (``sira.algebra.duplicates``), so it was made distinct where it is read.

        >>> import sira
        >>> from sira_spark import default_engine
        >>> one = "relation(heading(a(int)) body(tuple(a(1))))"
        >>> sira.evaluate(f"eq({one}, project(extend({one}, (b(plus(a, 1)))), (a)))",
        ...               engine=default_engine())
        True
    """
    df = compiler.compile(node)
    names = sorted(node.heading.names)
    return df.agg(F.array_sort(F.collect_set(F.struct(*[F.col(f"`{n}`") for n in names])))
                  ).scalar()


def operand_aggregate(expr, heading, compiler) -> Column:
    """``count(R)``, ``sum(R, a)``, ``min``, ``max``, ``avg`` of a relational operand: one global
    aggregation of its DataFrame as a scalar subquery, with AGGREGATE's exact translations
    (partial aggregates per partition for count, integer sums, min and max; FLOAT sums exact,
    rounded once, and averages folded in ascending order, as the Python engine does).

        >>> import sira
        >>> from sira_spark import default_engine
        >>> sira.evaluate("sum(relation(heading(a(int)) body(tuple(a(1)) tuple(a(2)))), a)",
        ...               engine=default_engine())
        3
    """
    from sira.expressions.evaluate import aggregated_type
    from sira.expressions.library import aggregation

    from .aggregation import aggregate_column
    node = expr.source.node
    _, at, rt = aggregated_type(expr, heading)
    df = compiler.compile(node)
    if expr.op == "count":
        value = F.count(F.lit(1)).cast("int")
    elif expr.op == "avg":
        value = aggregated_column(expr, F.collect_list(F.struct(
            F.col(f"`{expr.name}`").alias(expr.name))), heading)
    elif expr.op == "sum" and at == FLOAT:  # AGGREGATE's partial sums of exact limbs
        from sira.algebra.aggregation import Aggregate
        total = Aggregate(node, ((expr.name, "plus", AttrRef(expr.name)),))
        return compiler.compile(total).select(F.col(f"`{expr.name}`")).scalar()
    else:
        _refuse_unordered(expr.op, at)
        agg = aggregation({"sum": "plus"}.get(expr.op, expr.op), at)
        value = aggregate_column(agg, F.col(f"`{expr.name}`"), at).cast(spark_type(rt))
    return df.agg(value).scalar()


def _refuse_unordered(op: str, at) -> None:
    """``sum``/``min``/``max`` of intervals, tuples or relations: Spark compares their structs
    field by field, which is not sira's order, so they are refused."""
    if isinstance(at, (IntervalType, RelationType, TupleType)):
        raise NotSupportedOnSpark(node=f"{op} of {at} values")


def aggregated_column(expr, rows: Column, heading) -> Column:
    """``count(w)``, ``sum/min/max/avg(w, a)`` over an array of structs (a relation value).

    ``avg`` folds the ascending values with AVERAGE's ``plus`` as the Python engine does (the
    same bits); ``sum`` of FLOAT values is their exact sum rounded once; an empty relation
    gives the aggregation's identity (``avg`` of it fails, as in Python).
    """
    from sira.expressions.evaluate import aggregated_type
    from sira.expressions.library import NO_IDENTITY, aggregation
    _, at, rt = aggregated_type(expr, heading)
    if expr.op == "count":
        return F.size(rows).cast("int")
    values = F.transform(rows, lambda r: r[expr.name])
    if expr.op == "avg":
        ones = F.transform(F.array_sort(F.transform(values, lambda v: v.cast("double"))),
                           lambda v: F.struct(F.lit(1).alias("count"), v.alias("value")))
        zero = F.struct(F.lit(0).alias("count"), F.lit(0.0).alias("value"))
        folded = F.aggregate(ones, zero, lambda a, v: average_combination(a, v, "avg"))["value"]
        return F.when(F.size(rows) == 0, sira_error(
            "SiraValueError", f"avg({expr.name}) of an empty relation has no value")) \
            .otherwise(folded)
    agg = aggregation({"sum": "plus"}.get(expr.op, expr.op), at)
    st = spark_type(rt)
    if expr.op == "sum":
        if at == FLOAT:
            return float_sum_column(values)
        if rt == AVERAGE:
            return F.aggregate(F.array_sort(values), literal_column(rt, agg.identity),
                               _average_plus)
        return F.aggregate(values, F.lit(0).cast(st), lambda a, v: (a + v).cast(st))
    pick = F.greatest if expr.op == "max" else F.least
    _refuse_unordered(expr.op, at)
    first = F.get(values, 0)
    out = F.aggregate(values, first, lambda a, v: pick(a, v))
    if agg.identity is NO_IDENTITY:
        fallback = sira_error("SiraValueError", f"{expr.op} has no identity value for {rt}, "
                              "so it cannot aggregate an empty relation")
    else:
        fallback = literal_column(rt, agg.identity)
    return F.when(F.size(rows) == 0, fallback).otherwise(out)


def _cast(result_type):
    return lambda c: c.cast(spark_type(result_type))


# ----------------------------------------------------------------------------- comparison
@translates("eq")
def _eq(args, types, rt):
    return args[0].eqNullSafe(args[1])


@translates("ne")
def _ne(args, types, rt):
    return ~args[0].eqNullSafe(args[1])


for _name, _op in (("gt", "__gt__"), ("ge", "__ge__"), ("lt", "__lt__"), ("le", "__le__")):
    translates(_name)(lambda args, types, rt, _op=_op: getattr(args[0], _op)(args[1]))


@translates("and")
def _and(args, types, rt):
    out = args[0]
    for a in args[1:]:
        out = out & a
    return out


@translates("or")
def _or(args, types, rt):
    out = args[0]
    for a in args[1:]:
        out = out | a
    return out


@translates("not")
def _not(args, types, rt):
    return ~args[0]


@translates("xor")
def _xor(args, types, rt):
    return args[0] != args[1]


# ----------------------------------------------------------------------------- arithmetic
_INF = float("inf")


def is_infinite(c: Column) -> Column:
    return (c == F.lit(_INF)) | (c == F.lit(-_INF))


def exact_sum(value: Column, t, over=None) -> Column:
    """The sum of an integer column ``value`` of type ``t`` (over the window ``over``, if
    given), exact as the Python engine's: a LONG sum with ANSI on fails as soon as a partial
    sum leaves LONG, even when the total fits, so a LONG's high and low 32 bits are summed
    apart (each sum fits LONG for up to 2**31 rows) and put together in DECIMAL(38,0) --
    within about 20% of one LONG sum (CHANGELOG, Performance), where a DECIMAL sum is two to
    three times slower. An INT sum is a
    LONG sum (exact up to 2**32 rows); a BIGINT one a DECIMAL(38,0) sum. The caller casts the
    total to the result type (IntOverflow when it does not fit)."""
    def total(col):
        return F.sum(col) if over is None else F.sum(col).over(over)
    if t != LONG:
        return total(value)
    high = total(F.shiftright(value, 32)).cast("decimal(38,0)")
    low = total(value.bitwiseAND(F.lit(0xFFFFFFFF))).cast("decimal(38,0)")
    return high * F.lit(2 ** 32).cast("decimal(38,0)") + low


def checked_float(result: Column, operands, name: str) -> Column:
    """A FLOAT result checked as the Python engine checks it: NaN is a SiraValueError, an
    infinity made from finite operands is a FloatOverflow (IEEE overflow); infinite operands
    (``1e999``, MAX's identity) give infinities as IEEE says; -0.0 becomes 0.0 (sira's FLOAT
    has one zero: Spark would show and write ``-0.0`` for ``mult(-1.0, 0.0)``)."""
    finite_operands = F.lit(True)
    for o in operands:
        finite_operands = finite_operands & ~is_infinite(o)
    return (F.when(F.isnan(result), sira_error("SiraValueError",
                                               f"{name}: the result is not a number"))
            .when(is_infinite(result) & finite_operands,
                  sira_error("FloatOverflow", f"{name}: the result is too large for a FLOAT"))
            .otherwise(result + F.lit(0.0)))


def float_plus(a: Column, b: Column) -> Column:
    """``a + b`` on FLOAT columns, checked."""
    return checked_float(a + b, (a, b), "plus")


def _float_sum(values):
    from sira.expressions.library import float_sum

    from .compiler import reported
    if values is None:
        return None
    with reported():
        return float_sum(list(values))


_FLOAT_SUM = F.udf(_float_sum, DoubleType())


def _float_round(limbs, which, pos, neg):
    from sira.expressions.library import float_total

    from .compiler import reported
    if pos is None:
        return None
    with reported():
        return float_total(sum(int(x["s"]) << (32 * x["b"]) for x in limbs or ()
                               if x["j"] == which), pos, neg)


_FLOAT_ROUND = F.udf(_float_round, DoubleType())


def float_round_column(limbs: Column, which: int, pos: Column, neg: Column) -> Column:
    """A FLOAT sum a sweep kept exactly (``sira_spark.aggregation._float_segments``): the sum
    ``which``'s limbs of the array ``limbs`` (each ``s * 2**(32 * b)`` in units of 2**-1074;
    null: none), rounded once (:func:`sira.expressions.library.rounded_float`, in a Python
    UDF); its counts of +inf and -inf decide first."""
    return _FLOAT_ROUND(limbs, F.lit(which), pos, neg)


def float_sum_column(values: Column) -> Column:
    """The FLOAT sum of an array of FLOATs: their exact sum rounded once
    (:func:`sira.expressions.library.float_sum`, in a Python UDF), the Python engine's bits
    whatever order Spark gathered the values in."""
    return _FLOAT_SUM(values)


def float_mult(a: Column, b: Column) -> Column:
    """``a * b`` on FLOAT columns, checked (folds of FLOAT products use it)."""
    return checked_float(a * b, (a, b), "mult")


def _arith(op, name):
    def translate(args, types, rt):
        if rt == AVERAGE:
            return _average_plus(args[0], args[1])
        a, b = (x.cast(spark_type(rt)) for x in args)
        out = getattr(a, op)(b).cast(spark_type(rt))
        return checked_float(out, (a, b), name) if rt == FLOAT else out
    return translate


translates("plus")(_arith("__add__", "plus"))
translates("minus")(_arith("__sub__", "minus"))
translates("mult")(_arith("__mul__", "mult"))


def _average_plus(a: Column, b: Column) -> Column:
    """AVERAGE's plus (a two-argument function, as ``F.aggregate`` folds want)."""
    return average_combination(a, b, "plus")


def average_combination(a: Column, b: Column, name: str) -> Column:
    """AVERAGE's plus, the Python engine's formula, with its FLOAT checks on the mean."""
    total = a["count"] + b["count"]
    value = F.when(total == 0, F.lit(0.0)).otherwise(
        a["value"] * a["count"] / total + b["value"] * b["count"] / total)
    value = checked_float(value, (a["value"], b["value"]), name)
    return F.struct(total.alias("count"), value.alias("value"))


@translates("div")
def _div(args, types, rt):
    if rt == FLOAT:
        a, b = args[0].cast("double"), args[1].cast("double")
        return F.when(b == 0, sira_error("DivisionByZero", "div: division by zero")) \
            .otherwise(checked_float(a / b, (a, b), "div"))
    return F.call_function("div", args[0], args[1]).cast(spark_type(rt))


@translates("mod")
def _mod(args, types, rt):
    """The remainder, with the dividend's sign (as Python's sira ``mod``); a zero divisor is
    DivisionByZero for every type (Spark's own integer error is REMAINDER_BY_ZERO)."""
    remainder = args[0] % args[1] + F.lit(0.0) if rt == FLOAT else \
        (args[0] % args[1]).cast(spark_type(rt))  # (-0.0 is 0.0, as checked_float says)
    return F.when(args[1] == 0, sira_error("DivisionByZero", "mod: division by zero")) \
        .otherwise(remainder)


@translates("neg")
def _neg(args, types, rt):
    if rt == FLOAT:  # -0.0 is 0.0, as checked_float says
        return -args[0] + F.lit(0.0)
    return (-args[0]).cast(spark_type(rt))


@translates("abs")
def _abs(args, types, rt):
    return F.abs(args[0]).cast(spark_type(rt))


@translates("max")
def _max(args, types, rt):
    return F.greatest(*args)


@translates("min")
def _min(args, types, rt):
    return F.least(*args)


# ----------------------------------------------------------------------------- strings
@translates("concat")
def _concat(args, types, rt):
    return F.concat(*args)


translates("length")(lambda args, types, rt: F.char_length(args[0]).cast("int"))
translates("lowercase")(lambda args, types, rt: F.lower(args[0]))
translates("uppercase")(lambda args, types, rt: F.upper(args[0]))
translates("contains_string", "matches_substring")(
    lambda args, types, rt: F.instr(args[0], args[1]) > 0)


# Python's str.strip() removes every character for which str.isspace() holds; Java's \s
# knows fewer, so the class is spelled out (tests/test_spark_scalars.py checks the list).
PY_SPACES = (0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680,
             *range(0x2000, 0x200b), 0x2028, 0x2029, 0x202f, 0x205f, 0x3000)
_PY_SPACE = "".join(f"\\x{{{i:x}}}" for i in PY_SPACES)


@translates("trim")
def _trim(args, types, rt):
    return F.regexp_replace(args[0], f"^[{_PY_SPACE}]+|[{_PY_SPACE}]+$", "")


@translates("substring")
def _substring(args, types, rt):
    """``substring(s, begin[, end])``: 0-based, end exclusive, positions checked as in Python."""
    s = args[0]
    n = F.char_length(s).cast("long")
    begin = args[1].cast("long")
    end = args[2].cast("long") if len(args) == 3 else n
    outside = (begin < 0) | (begin > end) | (end > n)
    message = F.concat(F.lit("SIRA|SiraValueError|substring: positions "), begin.cast("string"),
                       F.lit(".."), end.cast("string"), F.lit(" outside a string of length "),
                       n.cast("string"))
    return F.when(outside, F.raise_error(message)).otherwise(
        s.substr((begin + 1).cast("int"), (end - begin).cast("int")))


@translates("the_string")
def _the_string(args, types, rt):
    t = types[0]
    c = args[0]
    if t == STRING:
        return c
    if isinstance(t, IntegerType) or t == DATE:
        return c.cast("string")
    if t == BOOLEAN:
        return F.when(c, F.lit("True")).otherwise(F.lit("False"))
    if isinstance(t, IntervalType) and (isinstance(t.point, IntegerType) or t.point == DATE):
        return F.concat(F.lit("BEGIN("), c["begin"].cast("string"), F.lit(")END("),
                        F.coalesce(c["end"].cast("string"), F.lit("")), F.lit(")"))
    raise NotSupportedOnSpark(node=f"the_string of a {t} (Spark formats it differently)")


# ----------------------------------------------------------------------------- conversions
translates("tofloat")(lambda args, types, rt: args[0].cast("double"))


@translates("int", "long", "bigint", "float")
def _selector(args, types, rt):
    c = args[0]
    if types[0] == STRING:
        c = F.trim(c)
    out = c.cast(spark_type(rt))
    if rt == FLOAT and types[0] == STRING:  # 'NaN' reads as a double, but is no FLOAT value
        return F.when(F.isnan(out), sira_error("SiraValueError", "float: NaN is not a FLOAT "
                                               "value")).otherwise(out)
    return out


@translates("boolean")
def _boolean(args, types, rt):
    if types[0] == BOOLEAN:
        return args[0]
    low = F.lower(F.trim(args[0]))
    return F.when(low == "true", F.lit(True)).when(low == "false", F.lit(False)).otherwise(
        sira_error("SiraValueError", "boolean: the text is not true or false"))


@translates("average")
def _average(args, types, rt):
    return F.struct(args[0].cast("int").alias("count"), args[1].cast("double").alias("value"))


translates("the_count")(lambda args, types, rt: args[0]["count"])
translates("the_value")(lambda args, types, rt: args[0]["value"])
translates("currentdate")(lambda args, types, rt: F.current_date())
translates("cardinality")(lambda args, types, rt: F.size(args[0]).cast("int"))
translates("is_empty")(lambda args, types, rt: F.size(args[0]) == 0)


# ----------------------------------------------------------------------------- intervals
def end_before(x: Column, y: Column) -> Column:
    """x < y for interval ends, a null end meaning +infinity."""
    return F.when(x.isNull(), F.lit(False)).when(y.isNull(), F.lit(True)).otherwise(x < y)


def point_before_end(p: Column, end: Column) -> Column:
    return end.isNull() | (p < end)


def overlaps(a: Column, b: Column) -> Column:
    return point_before_end(a["begin"], b["end"]) & point_before_end(b["begin"], a["end"])


def interval(begin: Column, end: Column) -> Column:
    return F.struct(begin.alias("begin"), end.alias("end"))


def is_empty_interval(a: Column) -> Column:
    """Whether the interval is empty (only IINTERSECT makes one; held as one canonical struct)."""
    return a["end"].isNotNull() & (a["end"] <= a["begin"])


def _no_ends(operator: str) -> Column:
    return sira_error("IntervalError",
                      f"{operator}: the empty interval has no ends (it holds no point)")


@translates("the_begin", "the_from", "startpointof")
def _the_begin(args, types, rt):
    a = args[0]
    return F.when(is_empty_interval(a), _no_ends("the_begin")).otherwise(a["begin"])


@translates("the_end", "endpointof")
def _the_end(args, types, rt):
    end = args[0]["end"]
    return F.when(end.isNull(), sira_error("IntervalError", "the_end: the interval is unbounded "
                                           "above")) \
        .when(is_empty_interval(args[0]), _no_ends("the_end")).otherwise(end)


def previous_point(point, c: Column) -> Column:
    if isinstance(point, IntegerType):
        return (c - 1).cast(spark_type(point))
    if point == DATE:
        return F.date_sub(c, 1)
    return c - F.expr("INTERVAL 1 MICROSECOND")


def next_point(point, c: Column) -> Column:
    if isinstance(point, IntegerType):
        return (c + 1).cast(spark_type(point))
    if point == DATE:
        return F.date_add(c, 1)
    return c + F.expr("INTERVAL 1 MICROSECOND")


@translates("the_to")
def _the_to(args, types, rt):
    end = args[0]["end"]
    return F.when(end.isNull(), sira_error("IntervalError", "the_to: the interval is unbounded "
                                           "above")) \
        .when(is_empty_interval(args[0]), sira_error(
            "IntervalError", "the_to: the empty interval has no last point")) \
        .otherwise(previous_point(types[0].point, end))


@translates("next")
def _next(args, types, rt):
    """The next point; past DATE's or TIMESTAMP's last an IntOverflow where it is computed,
    as the Python engine fails (Spark's own range goes on past year 9999)."""
    t = types[0]
    if t not in (DATE, TIMESTAMP):
        return next_point(t, args[0])
    last = literal_column(t, datetime.date.max if t == DATE else datetime.datetime.max)
    return F.when(args[0] >= last, sira_error(
        "IntOverflow", f"successor: the point after the last {t.name} does not fit {t.name}")) \
        .otherwise(next_point(t, args[0]))


@translates("iintersect")
def _iintersect(args, types, rt):
    return interval_intersect(args[0], args[1], types[0])


def interval_intersect(a: Column, b: Column, t) -> Column:
    """The common points, or the empty interval, held as the one canonical struct
    (``sira.intervals.empty_interval``) whatever the operands."""
    begin = F.greatest(a["begin"], b["begin"])
    end = F.when(a["end"].isNull(), b["end"]).when(b["end"].isNull(), a["end"]) \
        .otherwise(F.least(a["end"], b["end"]))
    disjoint = end.isNotNull() & (end <= begin)
    return F.when(is_empty_interval(a) | is_empty_interval(b) | disjoint,
                  literal_column(t, empty_interval(t))).otherwise(interval(begin, end))


@translates("iminus")
def _iminus(args, types, rt):
    """The points of a not in b, when they form one interval (else an IntervalError)."""
    a, b = args
    b_empty = is_empty_interval(b) | is_empty_interval(a)
    left = a["begin"] < b["begin"]  # a keeps points before b
    right = b["end"].isNotNull() & (a["end"].isNull() | (b["end"] < a["end"]))  # and after b
    return (F.when(~overlaps(a, b) | b_empty, a)
            .when(left & right, sira_error("IntervalError", "iminus: the second interval lies "
                                           "strictly inside the first, so the difference is two "
                                           "intervals"))
            .when(left, interval(a["begin"], b["begin"]))
            .when(right, interval(b["end"], a["end"]))
            .otherwise(sira_error("IntervalError", "iminus: the second interval covers the "
                                  "first, so the difference is empty")))


@translates("iunion")
def _iunion(args, types, rt):
    a, b = args
    touching = point_before_end(a["begin"], b["end"]) & point_before_end(b["begin"], a["end"]) \
        | a["end"].eqNullSafe(b["begin"]) | b["end"].eqNullSafe(a["begin"])
    end = F.when(a["end"].isNull() | b["end"].isNull(), F.lit(None)) \
        .otherwise(F.greatest(a["end"], b["end"]))
    return F.when(is_empty_interval(a), b).when(is_empty_interval(b), a) \
        .when(~touching, sira_error("IntervalError", "iunion: the intervals neither overlap "
                                    "nor meet, so their union is not one interval")) \
        .otherwise(interval(F.least(a["begin"], b["begin"]), end))


@translates("overlaps")
def _overlaps(args, types, rt):
    a, b = args
    return ~is_empty_interval(a) & ~is_empty_interval(b) & overlaps(a, b)


def _relation(fn):
    return lambda args, types, rt: fn(args[0], args[1])


def _ends_relation(name, fn):
    """An interval relation comparing ends: IntervalError on the empty interval (none)."""
    translates(name)(lambda args, types, rt: F.when(
        is_empty_interval(args[0]) | is_empty_interval(args[1]), _no_ends(name))
        .otherwise(fn(args[0], args[1])))


def _includes(a, b):
    """a includes every point of b (true of the empty b; the empty a includes only it)."""
    return is_empty_interval(b) | (~is_empty_interval(a) & (a["begin"] <= b["begin"])
                                   & ~end_before(a["end"], b["end"]))


def _ends_equal(a, b):
    return a.eqNullSafe(b)


_ends_relation("before", (lambda a, b: a["end"].isNotNull() & (a["end"] < b["begin"])))
_ends_relation("after", (lambda a, b: b["end"].isNotNull() & (b["end"] < a["begin"])))
_ends_relation("meets", (lambda a, b: a["end"].isNotNull() & (a["end"] == b["begin"])))
_ends_relation("met_by", (lambda a, b: b["end"].isNotNull() & (b["end"] == a["begin"])))
_ends_relation("allen_overlaps", (
    lambda a, b: (a["begin"] < b["begin"]) & point_before_end(b["begin"], a["end"])
    & end_before(a["end"], b["end"])))
_ends_relation("overlapped_by", (
    lambda a, b: (b["begin"] < a["begin"]) & point_before_end(a["begin"], b["end"])
    & end_before(b["end"], a["end"])))
_ends_relation("starts", (
    lambda a, b: (a["begin"] == b["begin"]) & end_before(a["end"], b["end"])))
_ends_relation("started_by", (
    lambda a, b: (a["begin"] == b["begin"]) & end_before(b["end"], a["end"])))
_ends_relation("during", (
    lambda a, b: (b["begin"] < a["begin"]) & end_before(a["end"], b["end"])))
_ends_relation("allen_contains", (
    lambda a, b: (a["begin"] < b["begin"]) & end_before(b["end"], a["end"])))
_ends_relation("finishes", (
    lambda a, b: (b["begin"] < a["begin"]) & _ends_equal(a["end"], b["end"])))
_ends_relation("finished_by", (
    lambda a, b: (a["begin"] < b["begin"]) & _ends_equal(a["end"], b["end"])))
translates("iequals")(_relation(lambda a, b: a.eqNullSafe(b)))
_ends_relation("adjacent", (
    lambda a, b: a["end"].eqNullSafe(b["begin"]) | b["end"].eqNullSafe(a["begin"])))
translates("merges")(_relation(
    lambda a, b: is_empty_interval(a) | is_empty_interval(b) | overlaps(a, b)
    | a["end"].eqNullSafe(b["begin"]) | b["end"].eqNullSafe(a["begin"])))
translates("includes")(_relation(_includes))
translates("included_in")(_relation(lambda a, b: _includes(b, a)))


@translates("contains")
def _contains(args, types, rt):
    a, b = args
    if types[1] == types[0]:
        return _includes(a, b)
    return (a["begin"] <= b) & point_before_end(b, a["end"])


@translates("duration", "count_points")
def _duration(args, types, rt):
    t = types[0]
    a = args[0]
    guard = a["end"].isNull()
    if isinstance(t.point, IntegerType):  # in LONG: an INTINTERVAL may span more than INT
        value = a["end"].cast(spark_type(rt)) - a["begin"].cast(spark_type(rt))
    elif t.point == FLOAT:
        value = checked_float(a["end"] - a["begin"], (a["end"], a["begin"]), "duration")
    elif t.point == DATE:
        value = F.datediff(a["end"], a["begin"]).cast("long")
    else:
        value = (F.unix_micros(a["end"].cast("timestamp"))
                 - F.unix_micros(a["begin"].cast("timestamp")))
    return F.when(guard, sira_error("IntervalError", "duration: the interval is unbounded "
                                    "above")).otherwise(value)


def _interval_selector(itype):
    def translate(args, types, rt):
        begin = args[0].cast(spark_type(itype.point))
        if len(args) == 1:
            return interval(begin, F.lit(None).cast(spark_type(itype.point)))
        end = args[1].cast(spark_type(itype.point))
        return F.when(begin >= end, sira_error(
            "IntervalError", f"{itype.name}: begin is not before end")).otherwise(
            interval(begin, end))
    return translate


for _key, _itype in INTERVAL_TYPES.items():
    translates(_key)(_interval_selector(_itype))


def unsupported_operators() -> list:
    """Library operators with no Spark translation (documentation and tests use this)."""
    from sira.expressions.library import LIBRARY
    return sorted(set(LIBRARY) - set(TRANSLATIONS))


__all__ = ["column", "literal_column", "translates", "unsupported_operators", "Scope",
           "sira_error", "interval", "overlaps", "end_before", "datetime", "checked_float",
           "float_plus", "float_mult", "float_sum_column", "float_round_column"]
