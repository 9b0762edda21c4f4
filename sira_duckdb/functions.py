"""Scalar expressions as DuckDB SQL: one translation per library operator name.

Every translation gives the Python engine's value, or its error: integer arithmetic overflows
in DuckDB's own checked arithmetic (INTEGER, BIGINT, HUGEINT; called by its function names,
which DuckDB's optimizer does not rewrite: ``INTEGER_FUNCTIONS``), division by zero and the other
checks sira makes are spelled out (``error('SIRA|Class|operator|message')``, which the engine
turns back into the sira exception), FLOAT results that are not a number are refused as in
Python. ``and``/``or`` short-circuit as Python's do when a later operand could fail. A few
operators whose Python definition DuckDB has no equal for on unusual input (Unicode case
mapping, Python's number syntax) take DuckDB's path for the common case and call the library's
own Python implementation for the rest (``udfs.py``).

    >>> from sira import INT, attr
    >>> from sira.values import Heading
    >>> expression(attr("a") + 1, Heading.of({"a": INT}), None)
    'add("a", CAST(1 AS INTEGER))'
"""

from __future__ import annotations

import datetime
import math

from sira.errors import SiraTypeError
from sira.expressions.evaluate import aggregated_type, infer_type
from sira.expressions.library import LIBRARY, NO_IDENTITY, aggregation, resolve
from sira.expressions.nodes import Aggregated, AttrRef, Call, FieldOf, Literal, RelationArg
from sira.intervals import INTERVAL_TYPES, IntervalType, empty_interval
from sira.types import (AVERAGE, BIGINT, BOOLEAN, DATE, FLOAT, INT, LONG, STRING, TIMESTAMP,
                        IntegerType, RelationType, TupleType)

from .sql import field, ident, sira_error, sira_error_expr, string, struct_pack
from .types import duckdb_type, equal, has_relation_inside

TRANSLATIONS: dict = {}


def translates(*names):
    """Register the DuckDB translation of library operators ``names``."""
    def register(fn):
        for name in names:
            TRANSLATIONS[name] = fn
        return fn
    return register


def unsupported_operators() -> list:
    """Library operators with no DuckDB translation (documentation and a test use this)."""
    return sorted(set(LIBRARY) - set(TRANSLATIONS))


# ----------------------------------------------------------------------------- literals

def cast(sql: str, t) -> str:
    return f"CAST({sql} AS {duckdb_type(t)})"


def literal(t, value) -> str:
    """A DuckDB literal of sira type ``t`` (strings quoted, never pasted)."""
    if isinstance(t, IntegerType):
        if t == BIGINT:
            from .convert import _bigint
            _bigint(value)
            return f"CAST({string(str(value))} AS HUGEINT)"
        return cast(str(value), t)
    if t == FLOAT:
        text = "inf" if value == math.inf else "-inf" if value == -math.inf else repr(value)
        return f"CAST({string(text)} AS DOUBLE)"
    if t == STRING:
        return f"CAST({string(value)} AS VARCHAR)"
    if t == BOOLEAN:
        return "TRUE" if value else "FALSE"
    if t == DATE:
        return f"CAST({string(value.isoformat())} AS DATE)"
    if t == TIMESTAMP:
        return f"CAST({string(value.isoformat(sep=' '))} AS TIMESTAMP)"
    if t == AVERAGE:
        return struct_pack([("count", cast(str(value.count), LONG)),
                            ("value", literal(FLOAT, value.value))])
    if isinstance(t, IntervalType):
        if value.empty:
            value = empty_interval(t)  # the one struct every empty interval is held as
        end = f"CAST(NULL AS {duckdb_type(t.point)})" if value.end is None else \
            literal(t.point, value.end)
        return struct_pack([("begin", literal(t.point, value.begin)), ("end", end)])
    if isinstance(t, TupleType):
        return tuple_literal(t.heading, value.values)
    if isinstance(t, RelationType):
        rows = [tuple_literal(t.heading, row) for row in value.body]
        if not rows:
            return f"CAST([] AS {duckdb_type(t)})"
        return canonical_list(f"[{', '.join(rows)}]")
    raise SiraTypeError(f"no DuckDB literal for {t}", expected="a sira type", got=str(t))


def tuple_literal(heading, values) -> str:
    return struct_pack([(n, literal(t, v)) for (n, t), v in zip(heading.attributes, values)])


def canonical_list(sql: str) -> str:
    """A relation value's canonical form: its tuples distinct and sorted."""
    return f"list_sort(list_distinct({sql}), 'ASC', 'NULLS FIRST')"


def rows_as_list(name: str, heading) -> str:
    """A scalar subquery: the relation named ``name`` as one relation value (a list)."""
    row = struct_pack([(n, ident(n)) for n in heading.names])
    empty = f"CAST([] AS {duckdb_type(RelationType(heading))})"
    return (f"(SELECT coalesce(list_sort(list(DISTINCT {row}), 'ASC', 'NULLS FIRST'), {empty})"
            f" FROM {name})")


# ----------------------------------------------------------------------------- expressions

class Scope:
    """How attribute names map to SQL (plain quoted names, qualified ones, GTCLOSE's pairs)."""

    def __init__(self, columns: dict | None = None, alias: str | None = None):
        self.columns = columns or {}
        self.alias = alias

    def col(self, name: str) -> str:
        if name in self.columns:
            return self.columns[name]
        return ident(name) if self.alias is None else f"{self.alias}.{ident(name)}"


def expression(expr, heading, c, scope: Scope | None = None) -> str:
    """The SQL computing ``expr`` on rows of ``heading``."""
    scope = scope or Scope()
    if isinstance(expr, AttrRef):
        return scope.col(expr.name)
    if isinstance(expr, Literal):
        return literal(expr.type, expr.value)
    if isinstance(expr, RelationArg):
        if getattr(c, "inline_operands", False):  # inside a lambda: no subquery allowed
            return literal(RelationType(expr.node.heading), c.relation_value(expr.node))
        return rows_as_list(c.compile(expr.node), expr.node.heading)
    if isinstance(expr, FieldOf):
        return field(expression(expr.source, heading, c, scope), expr.name)
    if isinstance(expr, Aggregated):
        return aggregated(expr, expression(expr.source, heading, c, scope), heading, c)
    if isinstance(expr, Call):
        arg_types = tuple(infer_type(a, heading) for a in expr.args)
        result_type, _ = resolve(expr.op, arg_types)
        fn = TRANSLATIONS.get(expr.op)
        if fn is None:
            from .compiler import NotSupportedOnDuckDB
            raise NotSupportedOnDuckDB(node=f"the operator '{expr.op}'")
        if expr.op in ("and", "or"):
            return _short_circuit(expr, heading, c, scope)
        if expr.op in ("cardinality", "is_empty") and isinstance(expr.args[0], RelationArg) \
                and not getattr(c, "inline_operands", False):
            name = c.compile(expr.args[0].node)
            if expr.op == "cardinality":
                return f"CAST((SELECT count(*) FROM {name}) AS INTEGER)"
            return f"(NOT EXISTS (SELECT 1 FROM {name}))"
        args = [expression(a, heading, c, scope) for a in expr.args]
        return fn(args, arg_types, result_type, c)
    raise SiraTypeError(f"{expr!r} is not an expression", expected="an expression",
                        got=type(expr).__name__)


#: operators that never fail (the others may raise on some input: overflow, division by zero,
#: an unbounded interval, a malformed string...)
_SAFE = {"eq", "ne", "gt", "ge", "lt", "le", "and", "or", "not", "xor", "max", "min", "concat",
         "length", "lowercase", "uppercase", "trim", "contains_string", "matches_substring",
         "the_string", "tofloat", "the_value", "currentdate", "cardinality",
         "is_empty", "iintersect", "overlaps", "contains", "iequals", "merges", "includes",
         "included_in"}  # the_begin and Allen's relations fail on the empty interval


def can_fail(expr) -> bool:
    """Whether evaluating ``expr`` may raise for some tuple (so it must not be evaluated on
    tuples the Python engine never evaluates it on)."""
    if isinstance(expr, Call):
        return expr.op not in _SAFE or any(can_fail(a) for a in expr.args)
    if isinstance(expr, Aggregated):
        return True
    if isinstance(expr, FieldOf):
        return can_fail(expr.source)
    return False


def _short_circuit(expr, heading, c, scope) -> str:
    """``and``/``or``: plain AND/OR when no operand can fail; otherwise a CASE that evaluates
    an operand only where Python's short-circuit does, and always where it does (with plain AND,
    DuckDB evaluates the cheaper operand first: in ``(a > 0 OR 6 // a > 1) AND a > 0`` the
    division was never reached for a = 0, where the reference raises)."""
    args = [expression(a, heading, c, scope) for a in expr.args]
    if not any(can_fail(a) for a in expr.args):
        joiner = " AND " if expr.op == "and" else " OR "
        return "(" + joiner.join(f"({a})" for a in args) + ")"
    stop = "FALSE" if expr.op == "and" else "TRUE"
    cases = " ".join(f"WHEN {'NOT ' if expr.op == 'and' else ''}({a}) THEN {stop}"
                     for a in args[:-1])
    return f"(CASE {cases} ELSE ({args[-1]}) END)"


def once(c, sql: str, fn) -> str:
    """``fn(value)`` where the value's SQL may appear several times in fn's result: short SQL
    is repeated, longer SQL bound once to a lambda parameter (so nested checks never grow the
    query exponentially)."""
    if len(sql) <= 80 or c is None:
        return fn(sql)
    v = c.lambda_name()
    body = fn(v)
    if "SELECT" in body:  # DuckDB allows no subquery inside a lambda: repeat the value
        return fn(sql)
    return f"(list_transform([{sql}], lambda {v}: {body})[1])"


# ----------------------------------------------------------------------------- comparison

@translates("eq")
def _eq(args, types, rt, c):
    t = types[0]
    if isinstance(t, IntervalType):
        return f"({_interval_equal(args[0], args[1], c)})"
    return equal(args[0], args[1], t)


@translates("ne")
def _ne(args, types, rt, c):
    return f"(NOT {_eq(args, types, rt, c)})"


def _interval_equal(a, b, c):
    """Interval equality; every empty interval (only IINTERSECT makes them) is one value."""
    return once(c, a, lambda x: once(c, b, lambda y: (
        f"({x} IS NOT DISTINCT FROM {y}) OR ({_empty(x)} AND {_empty(y)})")))


def _empty(iv):
    return f"(({iv}).\"end\" IS NOT NULL AND ({iv}).\"end\" <= ({iv}).\"begin\")"


for _name, _op in (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<=")):
    translates(_name)(lambda args, types, rt, c, _op=_op: f"({args[0]} {_op} {args[1]})")


@translates("not")
def _not(args, types, rt, c):
    return f"(NOT {args[0]})"


@translates("xor")
def _xor(args, types, rt, c):
    return f"({args[0]} <> {args[1]})"


translates("and", "or")(lambda args, types, rt, c: None)  # see _short_circuit


# ----------------------------------------------------------------------------- arithmetic

def _widened(args, types, rt):
    return [a if t == rt else cast(a, rt) for a, t in zip(args, types)]


def checked_float(c, operator: str, operands, compute) -> str:
    """A FLOAT operation checked as the Python engine checks it: a NaN result is an error, an
    infinity from finite operands is FloatOverflow (IEEE overflow), -0.0 becomes 0.0.
    ``compute`` builds the result from the operands' SQL (each bound once)."""
    nan = sira_error("SiraValueError", operator, f"{operator}: the result is not a number")
    overflow = sira_error("FloatOverflow", operator,
                          f"{operator}: the result is too large for a FLOAT")

    def check(xs):
        finite_operands = " AND ".join(f"isfinite({x})" for x in xs) or "TRUE"
        return once(c, compute(*xs), lambda r: (
            f"(CASE WHEN isnan({r}) THEN {nan} WHEN isinf({r}) AND {finite_operands} "
            f"THEN {overflow} ELSE {r} + CAST(0.0 AS DOUBLE) END)"))

    def bind(rest, bound):
        if not rest:
            return check(bound)
        return once(c, rest[0], lambda x: bind(rest[1:], bound + [x]))
    return bind(list(operands), [])


#: integer arithmetic by DuckDB's function names, not its operators: DuckDB's optimizer moves
#: the constants of ``x + 1 > 0`` (``-x > 0``, ``x * 2 > 0``) to the other side (``x > -1``),
#: so an overflow the Python engine raises would never be computed; it does not rewrite the
#: functions, which overflow as the operators do
INTEGER_FUNCTIONS = {"+": "add", "-": "subtract", "*": "multiply"}


def integer_arith(sql_op: str, a: str, b: str) -> str:
    """``a sql_op b`` on integers, failing on overflow wherever it appears.

        >>> integer_arith("+", '"x"', "1")
        'add("x", 1)'
    """
    return f"{INTEGER_FUNCTIONS[sql_op]}({a}, {b})"


def _arith(op, sql_op):
    def translate(args, types, rt, c):
        if rt == AVERAGE:
            return average_plus(args[0], args[1], c)
        a, b = _widened(args, types, rt)
        if rt == FLOAT:
            return checked_float(c, op, [a, b], lambda x, y: f"({x} {sql_op} {y})")
        return integer_arith(sql_op, a, b)
    return translate


translates("plus")(_arith("plus", "+"))
translates("minus")(_arith("minus", "-"))
translates("mult")(_arith("mult", "*"))


def average_plus(a: str, b: str, c, operator: str = "plus") -> str:
    """AVERAGE's plus, the Python formula operation for operation (the same bits), its mean
    checked as a FLOAT result (NaN, or an infinity from finite means, is an error)."""
    def combine(x, y):
        n = f'(({x})."count" + ({y})."count")'
        value = (f'(({x})."value" * ({x})."count" / {n} + ({y})."value" * ({y})."count" / {n})')
        mean = checked_float(c, operator, [f'({x})."value"', f'({y})."value"'],
                             lambda vx, vy: value)
        return struct_pack([("count", n),
                            ("value", f"(CASE WHEN {n} = 0 THEN CAST(0.0 AS DOUBLE) "
                                      f"ELSE {mean} END)")])
    return once(c, a, lambda x: once(c, b, lambda y: combine(x, y)))


def _zero_checked(op, divisor, compute, c):
    return once(c, divisor, lambda d: (
        f"(CASE WHEN {d} = 0 THEN {sira_error('DivisionByZero', op, f'{op}: division by zero')}"
        f" ELSE {compute(d)} END)"))


@translates("div")
def _div(args, types, rt, c):
    a, b = _widened(args, types, rt)
    if rt == FLOAT:
        return _zero_checked("div", b, lambda d: checked_float(
            c, "div", [a, d], lambda x, y: f"({x} / {y})"), c)
    return _zero_checked("div", b, lambda d: f"({a} // {d})", c)


@translates("mod")
def _mod(args, types, rt, c):
    a, b = _widened(args, types, rt)
    if rt == FLOAT:
        return _zero_checked("mod", b, lambda d: checked_float(
            c, "mod", [a, d], lambda x, y: f"({x} % {y})"), c)
    return _zero_checked("mod", b, lambda d: f"({a} % {d})", c)


@translates("neg")
def _neg(args, types, rt, c):
    if rt == FLOAT:
        return f"(CAST(0.0 AS DOUBLE) - {args[0]})"
    return integer_arith("-", cast("0", rt), args[0])  # (not -x: see INTEGER_FUNCTIONS)


@translates("abs")
def _abs(args, types, rt, c):
    return f"abs({args[0]})"


@translates("max")
def _max(args, types, rt, c):
    return f"greatest({', '.join(_widened(args, types, rt))})"


@translates("min")
def _min(args, types, rt, c):
    return f"least({', '.join(_widened(args, types, rt))})"


# ----------------------------------------------------------------------------- strings

@translates("concat")
def _concat(args, types, rt, c):
    return "(" + " || ".join(args) + ")"


translates("length")(lambda args, types, rt, c: f"CAST(length({args[0]}) AS INTEGER)")
translates("contains_string", "matches_substring")(
    lambda args, types, rt, c: f"contains({args[0]}, {args[1]})")

_ASCII = string("^[\\x00-\\x7f]*$")


def _ascii_or_python(c, s, native, udf):
    """DuckDB's ``native`` on ASCII text (where it is Python's), the Python UDF elsewhere."""
    return once(c, s, lambda v: (f"(CASE WHEN regexp_matches({v}, {_ASCII}) THEN {native}({v}) "
                                 f"ELSE {udf}({v}) END)"))


translates("lowercase")(lambda args, types, rt, c: _ascii_or_python(c, args[0], "lower",
                                                                    "sira_py_lower"))
translates("uppercase")(lambda args, types, rt, c: _ascii_or_python(c, args[0], "upper",
                                                                    "sira_py_upper"))

# Python's str.strip() removes every character for which str.isspace() holds
PY_SPACES = (0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680,
             *range(0x2000, 0x200b), 0x2028, 0x2029, 0x202f, 0x205f, 0x3000)
_PY_SPACE = "".join(f"\\x{{{i:x}}}" for i in PY_SPACES)
_STRIP = string(f"^[{_PY_SPACE}]+|[{_PY_SPACE}]+$")


def py_strip(sql: str) -> str:
    return f"regexp_replace({sql}, {_STRIP}, '', 'g')"


translates("trim")(lambda args, types, rt, c: py_strip(args[0]))


@translates("substring")
def _substring(args, types, rt, c):
    """``substring(s, begin[, end])``: 0-based, end exclusive, positions checked as in Python."""
    def body(s, begin, end):
        n = f"length({s})"
        end = end if end is not None else n
        message = (f"'substring: positions ' || CAST({begin} AS VARCHAR) || '..' || "
                   f"CAST({end} AS VARCHAR) || ' outside a string of length ' || "
                   f"CAST({n} AS VARCHAR)")
        return (f"(CASE WHEN {begin} < 0 OR {begin} > {end} OR {end} > {n} THEN "
                f"{sira_error_expr('SiraValueError', 'substring', message)} "
                f"ELSE substring({s}, CAST({begin} AS BIGINT) + 1, "
                f"CAST({end} AS BIGINT) - CAST({begin} AS BIGINT)) END)")
    return once(c, args[0], lambda s: once(c, args[1], lambda b: (
        body(s, b, None) if len(args) == 2 else once(c, args[2], lambda e: body(s, b, e)))))


# ----------------------------------------------------------------------------- the_string

def _iso_date(d: str) -> str:
    return f"strftime({d}, '%Y-%m-%d')"


def _iso_timestamp(ts: str) -> str:
    """Python's ``isoformat()``: microseconds only when there are any."""
    return (f"(strftime({ts}, '%Y-%m-%dT%H:%M:%S') || CASE WHEN microsecond({ts}) % 1000000 = 0"
            f" THEN '' ELSE strftime({ts}, '.%f') END)")


def format_value(t, v: str, c) -> str:
    """SQL giving ``t.format(value)``: the value's text as the seed prints it."""
    if t == STRING:
        return v
    if isinstance(t, IntegerType) or t == FLOAT:
        return f"CAST({v} AS VARCHAR)"  # DuckDB prints doubles as Python's repr does
    if t == BOOLEAN:
        return f"(CASE WHEN {v} THEN 'True' ELSE 'False' END)"
    if t == DATE:
        return _iso_date(v)
    if t == TIMESTAMP:
        return _iso_timestamp(v)
    if t == AVERAGE:
        return (f"('COUNT(' || CAST(({v}).\"count\" AS VARCHAR) || ')VALUE(' || "
                f"CAST(({v}).\"value\" AS VARCHAR) || ')')")
    if isinstance(t, IntervalType):
        return once(c, v, lambda x: (
            f"('BEGIN(' || {format_value(t.point, field(x, 'begin'), c)} || ')END(' || "
            f"coalesce({format_value(t.point, field(x, 'end'), c)}, '') || ')')"))
    if isinstance(t, (RelationType, TupleType)):
        from .udfs import format_udf
        return f"{format_udf(c, t)}({v})"
    raise SiraTypeError(f"the_string of {t}", expected="a formattable type", got=str(t))


translates("the_string")(lambda args, types, rt, c: format_value(types[0], args[0], c))


# ----------------------------------------------------------------------------- conversions

translates("tofloat")(lambda args, types, rt, c: cast(args[0], FLOAT))

_INTEGER_TEXT = string("^[\\t\\n\\x0b\\x0c\\r ]*[+-]?[0-9]+[\\t\\n\\x0b\\x0c\\r ]*$")
_FLOAT_TEXT = string("^[\\t\\n\\x0b\\x0c\\r ]*[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)"
                     "([eE][+-]?[0-9]+)?[\\t\\n\\x0b\\x0c\\r ]*$")
_ASCII_BLANKS = "chr(9) || chr(10) || chr(11) || chr(12) || chr(13) || chr(32)"


@translates("int", "long", "bigint")
def _integer_selector(args, types, rt, c):
    name = rt.name.lower()
    if types[0] != STRING:
        return cast(args[0], rt)
    return once(c, args[0], lambda s: (
        f"CAST(CAST(CASE WHEN regexp_matches({s}, {_INTEGER_TEXT}) "
        f"THEN trim({s}, {_ASCII_BLANKS}) ELSE sira_py_int({s}, {string(name)}) END "
        f"AS HUGEINT) AS {duckdb_type(rt)})"))


@translates("float")
def _float_selector(args, types, rt, c):
    if types[0] != STRING:
        return cast(args[0], FLOAT)
    return once(c, args[0], lambda s: (
        f"(CASE WHEN regexp_matches({s}, {_FLOAT_TEXT}) THEN CAST(trim({s}, {_ASCII_BLANKS}) "
        f"AS DOUBLE) ELSE sira_py_float({s}) END)"))


@translates("boolean")
def _boolean(args, types, rt, c):
    if types[0] == BOOLEAN:
        return args[0]
    return once(c, py_strip(args[0]), lambda s: (
        f"(CASE WHEN regexp_matches({s}, '^[Tt][Rr][Uu][Ee]$') THEN TRUE "
        f"WHEN regexp_matches({s}, '^[Ff][Aa][Ll][Ss][Ee]$') THEN FALSE ELSE "
        + sira_error_expr("SiraValueError", "boolean",
                          f"'boolean: ''' || {args[0]} || ''' is not true or false'")
        + " END)"))


@translates("average")
def _average(args, types, rt, c):
    return struct_pack([("count", cast(args[0], LONG)), ("value", cast(args[1], FLOAT))])


translates("the_count")(lambda args, types, rt, c: cast(field(args[0], "count"), INT))
translates("the_value")(lambda args, types, rt, c: field(args[0], "value"))
translates("currentdate")(lambda args, types, rt, c: literal(DATE, datetime.date.today()))
translates("cardinality")(lambda args, types, rt, c: f"CAST(len({args[0]}) AS INTEGER)")
translates("is_empty")(lambda args, types, rt, c: f"(len({args[0]}) = 0)")


# ----------------------------------------------------------------------------- intervals

def begin_of(iv):
    return field(iv, "begin")


def end_of(iv):
    return field(iv, "end")


def end_before(x: str, y: str) -> str:
    """x < y for interval ends, NULL meaning +infinity (never NULL itself)."""
    return f"(CASE WHEN {x} IS NULL THEN FALSE WHEN {y} IS NULL THEN TRUE ELSE {x} < {y} END)"


def point_before_end(p: str, end: str) -> str:
    return f"({end} IS NULL OR {p} < {end})"


def overlaps(a: str, b: str) -> str:
    return (f"({point_before_end(begin_of(a), end_of(b))} AND "
            f"{point_before_end(begin_of(b), end_of(a))})")


def interval(begin: str, end: str) -> str:
    return struct_pack([("begin", begin), ("end", end)])


def _ends_equal(x, y):
    return f"({x} IS NOT DISTINCT FROM {y})"


def _no_ends(operator):
    return sira_error("IntervalError", operator,
                      f"{operator}: the empty interval has no ends (it holds no point)")


@translates("the_begin", "the_from", "startpointof")
def _the_begin(args, types, rt, c):
    return once(c, args[0], lambda iv: (
        f"(CASE WHEN {_empty(iv)} THEN {_no_ends('the_begin')} ELSE {begin_of(iv)} END)"))


def _bounded_end(iv, operator):
    return (f"CASE WHEN {end_of(iv)} IS NULL THEN "
            f"{sira_error('IntervalError', operator, f'{operator}: the interval is unbounded above')}"
            f" ELSE {end_of(iv)} END")


@translates("the_end", "endpointof")
def _the_end(args, types, rt, c):
    return once(c, args[0], lambda iv: (
        f"(CASE WHEN {_empty(iv)} THEN {_no_ends('the_end')} "
        f"ELSE ({_bounded_end(iv, 'the_end')}) END)"))


def previous_point(point, sql: str) -> str:
    if isinstance(point, IntegerType):
        return integer_arith("-", sql, cast("1", point))
    if point == DATE:
        return f"({sql} - 1)"
    return f"({sql} - INTERVAL 1 MICROSECOND)"


def next_point(point, sql: str) -> str:
    if isinstance(point, IntegerType):
        return integer_arith("+", sql, cast("1", point))
    if point == DATE:
        return f"({sql} + 1)"
    return f"({sql} + INTERVAL 1 MICROSECOND)"


@translates("the_to")
def _the_to(args, types, rt, c):
    point = types[0].point
    return once(c, args[0], lambda iv: (
        f"(CASE WHEN {end_of(iv)} IS NULL THEN "
        f"{sira_error('IntervalError', 'the_to', 'the_to: the interval is unbounded above')} "
        f"WHEN {_empty(iv)} THEN "
        f"{sira_error('IntervalError', 'the_to', 'the_to: the empty interval has no last point')}"
        f" ELSE {previous_point(point, end_of(iv))} END)"))


@translates("next")
def _next(args, types, rt, c):
    """The next point; past DATE's or TIMESTAMP's last an IntOverflow where it is computed,
    as the Python engine fails (DuckDB's own range goes on past year 9999, so a value never
    shown, projected away or only compared, would otherwise pass)."""
    t = types[0]
    if t not in (DATE, TIMESTAMP):
        return next_point(t, args[0])
    last = literal(t, datetime.date.max if t == DATE else datetime.datetime.max)
    return once(c, args[0], lambda x: (
        f"(CASE WHEN {x} >= {last} THEN "
        + sira_error_expr("IntOverflow", "successor", f"'successor: the point after ' || "
                          f"CAST({x} AS VARCHAR) || ' does not fit {t.name}'")
        + f" ELSE {next_point(t, x)} END)"))


def interval_intersect(a: str, b: str, t, c=None) -> str:
    """Interval.intersect: the common points, or the empty interval, held as the one
    canonical struct (``sira.intervals.empty_interval``) whatever the operands."""
    empty = literal(t, empty_interval(t))

    def body(x, y):
        begin = f"greatest({begin_of(x)}, {begin_of(y)})"
        end = (f"(CASE WHEN {end_of(x)} IS NULL THEN {end_of(y)} WHEN {end_of(y)} IS NULL "
               f"THEN {end_of(x)} ELSE least({end_of(x)}, {end_of(y)}) END)")
        return (f"(CASE WHEN {_empty(x)} OR {_empty(y)} "
                f"OR ({end} IS NOT NULL AND {end} <= {begin}) THEN {empty} "
                f"ELSE {interval(begin, end)} END)")
    return once(c, a, lambda x: once(c, b, lambda y: body(x, y)))


translates("iintersect")(
    lambda args, types, rt, c: interval_intersect(args[0], args[1], types[0], c))


@translates("iminus")
def _iminus(args, types, rt, c):
    """The points of a not in b, when they form one interval (else an IntervalError)."""
    def body(a, b):
        b_empty = _empty(b)
        left = f"({begin_of(a)} < {begin_of(b)})"
        right = f"({end_of(b)} IS NOT NULL AND ({end_of(a)} IS NULL OR {end_of(b)} < {end_of(a)}))"
        inside = sira_error("IntervalError", "iminus", "iminus: the second interval lies "
                            "strictly inside the first, so the difference is two intervals")
        covers = sira_error("IntervalError", "iminus", "iminus: the second interval covers the "
                            "first, so the difference is empty")
        return (f"(CASE WHEN NOT {overlaps(a, b)} OR {b_empty} OR {_empty(a)} THEN {a} "
                f"WHEN {left} AND {right} THEN {inside} "
                f"WHEN {left} THEN {interval(begin_of(a), begin_of(b))} "
                f"WHEN {right} THEN {interval(end_of(b), end_of(a))} ELSE {covers} END)")
    return once(c, args[0], lambda a: once(c, args[1], lambda b: body(a, b)))


def interval_union(a: str, b: str, c=None) -> str:
    """iunion: two intervals that overlap or meet as one (an empty one is the other)."""
    def body(x, y):
        touching = (f"({overlaps(x, y)} OR {_ends_equal(end_of(x), begin_of(y))} OR "
                    f"{_ends_equal(end_of(y), begin_of(x))})")
        end = (f"(CASE WHEN {end_of(x)} IS NULL OR {end_of(y)} IS NULL THEN NULL "
               f"ELSE greatest({end_of(x)}, {end_of(y)}) END)")
        error = sira_error("IntervalError", "iunion", "iunion: the intervals neither overlap "
                           "nor meet, so their union is not one interval")
        return (f"(CASE WHEN {_empty(x)} THEN {y} WHEN {_empty(y)} THEN {x} "
                f"WHEN NOT {touching} THEN {error} "
                f"ELSE {interval(f'least({begin_of(x)}, {begin_of(y)})', end)} END)")
    return once(c, a, lambda x: once(c, b, lambda y: body(x, y)))


translates("iunion")(lambda args, types, rt, c: interval_union(args[0], args[1], c))


def _relation(fn):
    def translate(args, types, rt, c):
        return once(c, args[0], lambda a: once(c, args[1], lambda b: f"({fn(a, b)})"))
    return translate


def _of_ends(name, fn):
    """An interval relation comparing ends: IntervalError on the empty interval (none)."""
    return lambda a, b: (f"CASE WHEN {_empty(a)} OR {_empty(b)} THEN {_no_ends(name)} "
                         f"ELSE ({fn(a, b)}) END")


def _ends_relation(name, fn):
    return translates(name)(_relation(_of_ends(name, fn)))


translates("overlaps")(_relation(
    lambda a, b: f"NOT {_empty(a)} AND NOT {_empty(b)} AND {overlaps(a, b)}"))
_ends_relation("before", (lambda a, b: f"{end_of(a)} IS NOT NULL AND {end_of(a)} < "
                                            f"{begin_of(b)}"))
_ends_relation("after", (lambda a, b: f"{end_of(b)} IS NOT NULL AND {end_of(b)} < "
                                           f"{begin_of(a)}"))
_ends_relation("meets", (lambda a, b: f"{end_of(a)} IS NOT NULL AND {end_of(a)} = "
                                           f"{begin_of(b)}"))
_ends_relation("met_by", (lambda a, b: f"{end_of(b)} IS NOT NULL AND {end_of(b)} = "
                                            f"{begin_of(a)}"))
_ends_relation("allen_overlaps", (
    lambda a, b: f"{begin_of(a)} < {begin_of(b)} AND {point_before_end(begin_of(b), end_of(a))}"
                 f" AND {end_before(end_of(a), end_of(b))}"))
_ends_relation("overlapped_by", (
    lambda a, b: f"{begin_of(b)} < {begin_of(a)} AND {point_before_end(begin_of(a), end_of(b))}"
                 f" AND {end_before(end_of(b), end_of(a))}"))
_ends_relation("starts", (
    lambda a, b: f"{begin_of(a)} = {begin_of(b)} AND {end_before(end_of(a), end_of(b))}"))
_ends_relation("started_by", (
    lambda a, b: f"{begin_of(a)} = {begin_of(b)} AND {end_before(end_of(b), end_of(a))}"))
_ends_relation("during", (
    lambda a, b: f"{begin_of(b)} < {begin_of(a)} AND {end_before(end_of(a), end_of(b))}"))
_ends_relation("allen_contains", (
    lambda a, b: f"{begin_of(a)} < {begin_of(b)} AND {end_before(end_of(b), end_of(a))}"))
_ends_relation("finishes", (
    lambda a, b: f"{begin_of(b)} < {begin_of(a)} AND {_ends_equal(end_of(a), end_of(b))}"))
_ends_relation("finished_by", (
    lambda a, b: f"{begin_of(a)} < {begin_of(b)} AND {_ends_equal(end_of(a), end_of(b))}"))
_ends_relation("adjacent", (
    lambda a, b: f"{_ends_equal(end_of(a), begin_of(b))} OR {_ends_equal(end_of(b), begin_of(a))}"))
translates("merges")(_relation(
    lambda a, b: f"{_empty(a)} OR {_empty(b)} OR {overlaps(a, b)} OR {_ends_equal(end_of(a), begin_of(b))} OR "
                 f"{_ends_equal(end_of(b), begin_of(a))}"))
def _includes(a, b):
    """a includes every point of b (true of the empty b; the empty a includes only it)."""
    return (f"{_empty(b)} OR (NOT {_empty(a)} AND {begin_of(a)} <= {begin_of(b)} AND NOT "
            f"{end_before(end_of(a), end_of(b))})")


translates("includes")(_relation(_includes))
translates("included_in")(_relation(lambda a, b: _includes(b, a)))


@translates("iequals")
def _iequals(args, types, rt, c):
    return f"({_interval_equal(args[0], args[1], c)})"


@translates("contains")
def _contains(args, types, rt, c):
    if types[1] == types[0]:
        return _relation(_includes)(args, types, rt, c)
    return once(c, args[0], lambda a: once(c, args[1], lambda p: (
        f"({begin_of(a)} <= {p} AND {point_before_end(p, end_of(a))})")))


@translates("duration", "count_points")
def _duration(args, types, rt, c):
    point = types[0].point

    def body(a):
        b, e = begin_of(a), end_of(a)
        if isinstance(point, IntegerType):
            value = integer_arith("-", cast(e, rt), cast(b, rt))
        elif point == FLOAT:
            value = checked_float(c, "duration", [e, b], lambda x, y: f"({x} - {y})")
        elif point == DATE:
            value = f"CAST({e} - {b} AS BIGINT)"
        else:
            value = f"(epoch_us({e}) - epoch_us({b}))"
        return (f"(CASE WHEN {e} IS NULL THEN "
                f"{sira_error('IntervalError', 'duration', 'duration: the interval is unbounded above')}"
                f" ELSE {value} END)")
    return once(c, args[0], body)


def _interval_selector(itype):
    def translate(args, types, rt, c):
        p = itype.point
        begin = cast(args[0], p)
        if len(args) == 1:
            return interval(begin, f"CAST(NULL AS {duckdb_type(p)})")
        end = cast(args[1], p)
        return once(c, begin, lambda b: once(c, end, lambda e: (
            f"(CASE WHEN {b} >= {e} THEN "
            + sira_error_expr("IntervalError", itype.name,
                              f"'{itype.name}: begin ' || CAST({b} AS VARCHAR) || "
                              f"' is not before end ' || CAST({e} AS VARCHAR)")
            + f" ELSE {interval(b, e)} END)")))
    return translate


for _key, _itype in INTERVAL_TYPES.items():
    translates(_key)(_interval_selector(_itype))


# ----------------------------------------------------------------------------- aggregates of RVAs

def sorted_fold(values: str, start: str, merge, c, key=None) -> str:
    """Fold a list in ascending order (by ``key`` of each element when given) from ``start``:
    the Python engine's order for inexact aggregations."""
    if key is None:
        ordered = f"list_sort({values}, 'ASC', 'NULLS FIRST')"
    else:
        v = c.lambda_name()
        k = c.lambda_name()
        ordered = (f"list_transform(list_sort(list_transform({values}, lambda {v}: "
                   f"struct_pack(k := {key(v)}, v := {v})), 'ASC', 'NULLS FIRST'), "
                   f"lambda {k}: ({k}).v)")
    acc, x = c.lambda_name(), c.lambda_name()
    return f"list_reduce({ordered}, lambda {acc}, {x}: {merge(acc, x)}, {start})"


def aggregated(expr, rows: str, heading, c) -> str:
    """``count(w)``, ``sum/min/max/avg(w, a)`` over a relation value (a list of structs).

    ``avg`` folds the ascending values with AVERAGE's ``plus`` as the Python engine does (the
    same bits); ``sum`` of FLOAT values is their exact sum rounded once; an empty relation
    gives the aggregation's identity (``avg`` of it fails, as in Python).
    """
    _, at, rt = aggregated_type(expr, heading)
    if expr.op == "count":
        return f"CAST(len({rows}) AS INTEGER)"
    v = c.lambda_name()
    values = f"list_transform({rows}, lambda {v}: ({v}).{ident(expr.name)})"
    if expr.op == "avg":
        def body(vals):
            ones = f"list_transform(list_sort(list_transform({vals}, lambda {v}: " \
                   f"CAST({v} AS DOUBLE)), 'ASC', 'NULLS FIRST'), lambda {v}: " \
                   f"struct_pack(\"count\" := 1, \"value\" := {v}))"
            acc, x = c.lambda_name(), c.lambda_name()
            zero = literal(AVERAGE, _zero_average())
            merge = average_plus(acc, x, None, "avg")
            folded = f"list_reduce({ones}, lambda {acc}, {x}: {merge}, {zero})"
            message = f"avg({expr.name}) of an empty relation has no value"
            return (f"(CASE WHEN len({vals}) = 0 THEN {sira_error('SiraValueError', 'avg', message)}"
                    f" ELSE ({folded}).\"value\" END)")
        return once(c, values, body)
    agg = aggregation({"sum": "plus"}.get(expr.op, expr.op), at)
    if expr.op == "sum":
        if at == FLOAT:  # the exact sum rounded once, as the Python engine's float_sum
            return f"sira_py_float_sum({values})"
        if rt == AVERAGE:
            return sorted_fold(values, literal(AVERAGE, agg.identity),
                               lambda a, x: average_plus(a, x, None), c,
                               key=lambda e: f'struct_pack(c := ({e})."count", '
                                             f'v := ({e})."value")')
        acc, x = c.lambda_name(), c.lambda_name()
        total = f"list_reduce({values}, lambda {acc}, {x}: {acc} + {x}, CAST(0 AS HUGEINT))"
        return cast(total, rt)
    fn = "list_max" if expr.op == "max" else "list_min"
    if agg.identity is NO_IDENTITY:
        fallback = sira_error("SiraValueError", expr.op, f"{expr.op} has no identity value "
                              f"for {rt}, so it cannot aggregate an empty relation")
    else:
        fallback = literal(rt, agg.identity)
    return once(c, values, lambda vals: (
        f"(CASE WHEN len({vals}) = 0 THEN {fallback} ELSE {fn}({vals}) END)"))


def _zero_average():
    from sira.types import Average
    return Average(0, 0.0)


def canonical(sql: str, t, c) -> str:
    """A value of type ``t`` with every relation inside it in canonical order."""
    if not has_relation_inside(t):
        return sql
    if isinstance(t, RelationType):
        inner = t.heading
        if any(has_relation_inside(x) for x in inner.types):
            v = c.lambda_name()
            sql = f"list_transform({sql}, lambda {v}: {canonical(v, TupleType(inner), c)})"
        return canonical_list(sql)
    return once(c, sql, lambda v: struct_pack(
        [(n, canonical(field(v, n), x, c)) for n, x in t.heading.attributes]))


__all__ = ["expression", "literal", "translates", "unsupported_operators", "Scope", "once",
           "can_fail", "interval", "overlaps", "end_before", "interval_intersect",
           "interval_union", "average_plus", "checked_float", "sorted_fold", "canonical"]
