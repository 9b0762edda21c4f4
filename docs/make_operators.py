"""Generate ``docs/operators.md``, the reference of sira's scalar and aggregation operators.

Everything in the reference comes from the operator library (``sira/expressions/library.py``):
the signatures are found by asking each operator to resolve every combination of argument
types, and each example is evaluated by sira when the file is made. Only the examples are
written here, one per operator: an operator without one stops the generator, so the reference
never falls behind the library. Run it after changing the library::

    .venv/bin/python docs/make_operators.py          # rewrites docs/operators.md
    .venv/bin/python docs/make_operators.py --check  # exit 1 if the file is out of date

``tests/test_docs.py`` runs the check.
"""

from __future__ import annotations

import argparse
import itertools
import pathlib
import sys

import sira
from sira.errors import SiraError
from sira.expressions.evaluate import infer_type
from sira.expressions.library import LIBRARY, NO_IDENTITY, aggregation
from sira.intervals import INTERVAL_TYPES, IntervalType
from sira.types import (AVERAGE, BIGINT, BOOLEAN, DATE, FLOAT, INT, LONG, STRING, TIMESTAMP,
                        IntegerType, RelationType, TupleType)
from sira.values import Heading

OUTPUT = pathlib.Path(__file__).with_name("operators.md")

RELATION = RelationType(Heading.of({"a": INT}))
TUPLE = TupleType(Heading.of({"a": INT}))
INTERVALS = tuple(INTERVAL_TYPES.values())
NUMBERS = (INT, LONG, BIGINT, FLOAT)
PROBE_TYPES = NUMBERS + (STRING, BOOLEAN, DATE, TIMESTAMP, AVERAGE) + INTERVALS + (RELATION,
                                                                                 TUPLE)
TYPE_NAMES = {RELATION: "RELATION", TUPLE: "TUPLE"}
TYPE_SETS = (  # how a set of types is named in a signature, largest first
    (frozenset(PROBE_TYPES), "any type"),
    (frozenset(INTERVALS), "any interval type"),
    (frozenset(i for i in INTERVALS if i.point.ordinal), "any interval type of ordinal points"),
    (frozenset(NUMBERS), "any number type"),
    (frozenset((INT, LONG, BIGINT)), "any integer type"),
)

# One example per operator (its first name), evaluated when the reference is made.
EXAMPLES = {
    "abs": "abs(-7)",
    "adjacent": "adjacent(intinterval(from(1)to(3)), intinterval(from(4)to(6)))",
    "after": "after(intinterval(from(5)to(6)), intinterval(from(1)to(3)))",
    "allen_contains": "allen_contains(intinterval(from(1)to(9)), intinterval(from(3)to(4)))",
    "allen_overlaps": "allen_overlaps(intinterval(from(1)to(5)), intinterval(from(3)to(8)))",
    "and": "and(true, false)",
    "average": "average(count(2)value(3.5))",
    "before": "before(intinterval(from(1)to(3)), intinterval(from(5)to(6)))",
    "bigint": "bigint(string(123456789012345678901234567890))",
    "boolean": "boolean(string(true))",
    "cardinality": "cardinality(relation(body(tuple(a(1)) tuple(a(2)))))",
    "concat": "concat(string(BW_), string(SPOTS))",
    "contains": "contains(intinterval(from(1)to(5)), 4)",
    "contains_string": "contains_string(string(BW_SPOTS.SPDB), string(SPOTS))",
    "currentdate": "currentdate()",
    "dateinterval": "dateinterval(from(2015-07-30)to(2015-08-01))",
    "div": "div(-7, 2)",
    "duration": "duration(dateinterval(from(2015-07-30)to(2015-08-01)))",
    "during": "during(intinterval(from(3)to(4)), intinterval(from(1)to(9)))",
    "eq": "eq(relation(body(tuple(a(1)))), relation(body(tuple(a(1)))))",
    "finished_by": "finished_by(intinterval(from(1)to(9)), intinterval(from(5)to(9)))",
    "finishes": "finishes(intinterval(from(5)to(9)), intinterval(from(1)to(9)))",
    "float": "float(string(2.5))",
    "floatinterval": "floatinterval(begin(0.5)end(1.5))",
    "ge": "ge(2015-07-30, 2015-07-30)",
    "gt": "gt(32768, 16384)",
    "iequals": "iequals(intinterval(from(4)to(7)), intinterval(begin(4)end(8)))",
    "iintersect": "iintersect(intinterval(from(1)to(5)), intinterval(from(3)to(8)))",
    "iminus": "iminus(intinterval(from(1)to(9)), intinterval(from(6)to(12)))",
    "included_in": "included_in(intinterval(from(3)to(4)), intinterval(from(1)to(9)))",
    "includes": "includes(intinterval(from(1)to(9)), intinterval(from(1)to(4)))",
    "int": "int(string(42))",
    "intinterval": "intinterval(from(4)to(7))",
    "is_empty": "is_empty(relation(heading(a(int)) body()))",
    "iunion": "iunion(intinterval(from(1)to(3)), intinterval(from(4)to(6)))",
    "le": "le(string(abc), string(abd))",
    "length": "length(string(BW_SPOTS.SPDB))",
    "long": "long(2147483648)",
    "longinterval": "longinterval(begin(0)end(10000000000))",
    "lowercase": "lowercase(string(BW_SPOTS.SPDB))",
    "lt": "lt(1.5, 2.5)",
    "max": "max(3, 9, 4)",
    "meets": "meets(intinterval(from(1)to(3)), intinterval(from(4)to(6)))",
    "merges": "merges(intinterval(from(1)to(3)), intinterval(from(2)to(6)))",
    "met_by": "met_by(intinterval(from(4)to(6)), intinterval(from(1)to(3)))",
    "min": "min(string(b), string(a))",
    "minus": "minus(10, 4)",
    "mod": "mod(-7, 2)",
    "mult": "mult(tofloat(3), 0.5)",
    "ne": "ne(1, 2)",
    "neg": "neg(long(5))",
    "next": "next(2015-07-31)",
    "not": "not(false)",
    "or": "or(false, true)",
    "overlapped_by": "overlapped_by(intinterval(from(3)to(8)), intinterval(from(1)to(5)))",
    "overlaps": "overlaps(intinterval(from(1)to(5)), intinterval(from(5)to(8)))",
    "plus": "plus(average(count(1)value(1.0)), average(count(3)value(3.0)))",
    "started_by": "started_by(intinterval(from(1)to(9)), intinterval(from(1)to(4)))",
    "starts": "starts(intinterval(from(1)to(4)), intinterval(from(1)to(9)))",
    "substring": "substring(string(relational), 0, 8)",
    "the_begin": "the_begin(intinterval(from(4)to(7)))",
    "the_count": "the_count(average(count(2)value(3.5)))",
    "the_end": "the_end(intinterval(from(4)to(7)))",
    "the_string": "the_string(dateinterval(from(2015-07-30)to(2015-08-01)))",
    "the_to": "the_to(intinterval(from(4)to(7)))",
    "the_value": "the_value(average(count(2)value(3.5)))",
    "timestampinterval": "timestampinterval(begin(2015-07-30T12:00:00)end(2015-07-30T13:00:00))",
    "tofloat": "tofloat(pagesize)",
    "trim": "trim(string(  padded  ))",
    "uppercase": "uppercase(string(bw_spots.spdb))",
    "xor": "xor(true, true)",
}
# Examples that need a tuple to run on: their attributes and values.
EXAMPLE_TUPLES = {"tofloat": {"pagesize": (INT, 16384)}}
# Operators whose result changes from one day to the next: the reference says what it is.
VOLATILE = {"currentdate": "the date of the day it runs"}

AGGREGATION_OPERATORS = ("plus", "mult", "max", "min", "and", "or", "iunion", "iintersect",
                         "union", "intersect", "xminus", "join")


# ------------------------------------------------------------------------------- signatures
def type_name(t) -> str:
    return TYPE_NAMES.get(t, t.name)


def accepted_signatures(op) -> list:
    """Every (argument types, result type) the operator resolves, over PROBE_TYPES."""
    arity = op.min_args if op.max_args is None else op.max_args
    out = []
    for n in range(op.min_args, arity + 1):
        for args in itertools.product(PROBE_TYPES, repeat=n):
            try:
                result, _ = op.resolve(args)
            except SiraError:
                continue
            out.append((args, result))
    return out


def is_integer_widening(args, result, accepted) -> bool:
    """A signature mixing integer types that is the same-type one with integers widened."""
    integers = {t for t in args if isinstance(t, IntegerType)}
    if len(integers) < 2:
        return False
    widest = max(integers, key=lambda t: (INT, LONG, BIGINT).index(t))
    widened = tuple(widest if isinstance(t, IntegerType) else t for t in args)
    return widened in accepted


def arg_tokens(args) -> tuple:
    """The argument types with the first one as T (and its points as P, for an interval
    type); any other integer type is ``integer``, the others by name."""
    first = args[0] if args else None
    point = first.point if isinstance(first, IntervalType) else None

    def token(t):
        if t == first:
            return "T"
        if point is not None and t == point:
            return "P"
        return "integer" if isinstance(t, IntegerType) else type_name(t)
    return tuple(token(t) for t in args)


def describe_types(types) -> str:
    types = frozenset(types)
    for members, name in TYPE_SETS:
        if types == members:
            return name
    return ", ".join(type_name(t) for t in PROBE_TYPES if t in types)


def group_signatures(signatures) -> dict:
    """(argument tokens, result token) -> the first argument types it holds for.

    Results are named, except that same-shaped signatures whose result is their own first
    type (or its point type) for several first types are one signature with result T (or P).
    """
    fixed: dict = {}
    for args, result in signatures:
        firsts = fixed.setdefault((arg_tokens(args), type_name(result)), [])
        if not args or args[0] not in firsts:
            firsts.append(args[0] if args else None)
    results = {}
    for args, result in signatures:
        results[(arg_tokens(args), args[0] if args else None)] = result
    grouped: dict = {}
    for (tokens, result_name), firsts in fixed.items():
        token = result_name
        if len(firsts) == 1 and firsts[0] is not None:
            (first,) = firsts
            result = results[(tokens, first)]
            if result == first:
                token = "T"
            elif isinstance(first, IntervalType) and result == first.point:
                token = "P"
        grouped.setdefault((tokens, token), []).extend(firsts)
    for (tokens, token), firsts in list(grouped.items()):
        if token in ("T", "P") and len(firsts) == 1:  # alone: name the result after all
            del grouped[(tokens, token)]
            result = type_name(results[(tokens, firsts[0])])
            grouped.setdefault((tokens, result), []).extend(firsts)
    return grouped


def signature_lines(op) -> tuple:
    """Readable signatures, and whether integer arguments of different types mix."""
    accepted = accepted_signatures(op)
    arg_sets = {args for args, _ in accepted}
    kept = [(a, r) for a, r in accepted if not is_integer_widening(a, r, arg_sets)]
    mixes = len(kept) < len(accepted) or any("integer" in arg_tokens(a) for a, _ in kept)
    lines = []
    for (tokens, result_token), firsts in group_signatures(kept).items():
        args_text = ", ".join(tokens) + (", …" if op.max_args is None else "")
        text = f"({args_text}) → {result_token}"
        if firsts and firsts[0] is not None:
            text += f" for T {describe_types(firsts)}"
            if "P" in tokens or result_token == "P":
                text += ", P its point type"
        if text not in lines:
            lines.append(text)
    return tuple(lines), mixes


# ------------------------------------------------------------------------------- examples
def example_value(name: str) -> str:
    """The example's result, evaluated now, as sira prints it in tables."""
    if name in VOLATILE:
        return VOLATILE[name]
    text = EXAMPLES[name]
    if name in EXAMPLE_TUPLES:
        attrs_ = EXAMPLE_TUPLES[name]
        heading = {n: t for n, (t, _) in attrs_.items()}
        row = {n: v for n, (_, v) in attrs_.items()}
        r = sira.Relation.from_rows(heading, [row])
        result = sira.evaluate(f"extend(R, (example({text})))", {"r": r})
        (value,) = [t["example"] for t in result.to_rows()]
        value_type = result.heading.type_of("example")
    else:
        value = sira.evaluate(text)
        value_type = infer_type(sira.parse(text), Heading())
    return value_type.format(value)


def example_cell(name: str) -> str:
    where = ""
    if name in EXAMPLE_TUPLES:
        where = " (in a tuple with " + ", ".join(
            f"{n.upper()} = {t.format(v)}" for n, (t, v) in EXAMPLE_TUPLES[name].items()) + ")"
    return f"`{EXAMPLES[name]}`{where} gives `{example_value(name)}`"


# ------------------------------------------------------------------------------- the page
def operator_rows() -> list:
    """(names, description, signature lines, mixes integers) per operator, aliases together."""
    seen: dict = {}
    for name in sorted(LIBRARY):
        op = LIBRARY[name]
        key = (op.resolver, op.doc)
        seen.setdefault(key, []).append(name)
    rows = []
    for (resolver, doc), names in seen.items():
        primary = next((n for n in names if n in EXAMPLES), names[0])
        if primary not in EXAMPLES:
            raise SystemExit(f"docs/make_operators.py: no example for operator '{primary}': add "
                             f"one to EXAMPLES")
        lines, mixes = signature_lines(LIBRARY[primary])
        rows.append(([primary] + [n for n in names if n != primary], doc, lines, mixes))
    return sorted(rows, key=lambda r: r[0][0])


def escape(text: str) -> str:
    return text.replace("|", "\\|")


def identity_text(agg) -> str:
    if agg.identity is NO_IDENTITY:
        return "none (an error on an empty input)"
    if isinstance(agg.result_type, RelationType):
        return "the empty relation"
    text = agg.result_type.format(agg.identity)
    return f"`{text}`" if text else "the empty string"


def aggregation_rows() -> list:
    rows = []
    for op in AGGREGATION_OPERATORS:
        accepted, identities = [], []
        for t in PROBE_TYPES:
            try:
                agg = aggregation(op, t)
            except SiraError:
                continue
            accepted.append(t)
            identities.append(identity_text(agg))
        identity = identities[0] if len(set(identities)) == 1 else "; ".join(
            f"{type_name(t)}: {i}" for t, i in zip(accepted, identities))
        rows.append((op, describe_types(accepted), identity))
    return rows


def render() -> str:
    out = [
        "# Scalar operators",
        "",
        "<!-- Generated by docs/make_operators.py from sira/expressions/library.py: "
        "do not edit by hand. -->",
        "",
        "Every scalar operator of sira's library, with the argument types it takes, its result "
        "type and one example evaluated by sira when this page was made. Operators are called "
        "in SIRA_PRISE's function-call notation (`gt(pagesize, 16384)`); names are "
        "case-insensitive. `T` stands for the type of the first argument and `P` for the point "
        "type of an interval type, `integer` any of INT, LONG and BIGINT; `…` means more "
        "arguments of the same kind may follow. Integer arguments of the operators marked † "
        "may mix INT, LONG and BIGINT: the narrower ones widen "
        "(INT < LONG < BIGINT), and a result that does not fit its type is an `IntOverflow`, "
        "never a wrap. FLOAT never mixes with integers: convert with `tofloat`.",
        "",
        "| operator | what it does | arguments → result | example |",
        "|---|---|---|---|",
    ]
    for names, doc, lines, mixes in operator_rows():
        title = f"`{names[0]}`" + (f" (also {', '.join(f'`{n}`' for n in names[1:])})"
                                   if len(names) > 1 else "")
        signatures = "<br>".join(escape(line) for line in lines) + (" †" if mixes else "")
        out.append(f"| {title} | {escape(doc)} | {signatures} | "
                   f"{escape(example_cell(names[0]))} |")
    out += [
        "",
        "# Aggregation operators",
        "",
        "The operators AGGREGATE, SUMMARIZEBY and the pointwise SUMMARIZEBYUSING fold with "
        "(`aggregate(DBMSFILE, (total(plus(pagesize))))`). Each is associative and commutative; "
        "on an empty input the result is its identity, as the seed says, and an operator "
        "without one refuses an empty input.",
        "",
        "| operator | values it aggregates | identity (the result on an empty input) |",
        "|---|---|---|",
    ]
    for op, types, identity in aggregation_rows():
        out.append(f"| `{op}` | {types} | {escape(identity)} |")
    out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if docs/operators.md differs from what would be generated")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT} is out of date: run python docs/make_operators.py",
                  file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
