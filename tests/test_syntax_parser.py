"""Tests of the lexer and concrete-syntax parser (sira.syntax)."""

from __future__ import annotations


import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sira.errors import ParseError
from sira.syntax.cst import (
    BinOp, Bind, Call, DateLit, Expect, ExpectError, Group, Name, Number, Query, Raw,
    TimestampLit, UnaryOp,
)
from sira.syntax.parser import MAX_NESTING, parse_expression, parse_header, parse_script


def N(text):
    return Name(text)


def C(name, *args):
    return Call(name, args)


def G(*items):
    return Group(items)


def S(text):
    return Raw("string", text)


def num(text):
    return Number(text)


# --- the seed expressions --------------------------------------------------------------------

GTCLOSE = (
    "gtclose(extend(virtualrelvarreferences,(edgecnt(int(1))path(string()))), "
    "(relvarname,referencedrelvarname), (edgecnt(plus(__L__edgecnt,__R__edgecnt))"
    "path(concat(__L__path,concat(string(,),concat(the_string(__R__relvarname),"
    "concat(string(,),__R__path)))))))"
)

PACK_RELATION = (
    "relation(body(tuple(x(intinterval(from(4)to(7)))y(intinterval(from(1)to(4)))) "
    "tuple(x(intinterval(from(1)to(3)))y(intinterval(from(1)to(13))))))"
)

AGGREGATE = "AGGREGATE(DBMSFILE,(AVGPAGESIZE(PLUS(AVERAGE(COUNT(1)VALUE(TOFLOAT(PAGESIZE)))))))"

SEEDS = [
    ("restrict(R, gt(maximumlength,256))",
     C("restrict", N("R"), C("gt", N("maximumlength"), num("256")))),
    ("rename(R,(filename,pagesize,pagesize,filename))",
     C("rename", N("R"), G(N("filename"), N("pagesize"), N("pagesize"), N("filename")))),
    ("summarizeby(R,(filename),(cnt(plus(int(1)))))",
     C("summarizeby", N("R"), G(N("filename")), G(C("cnt", C("plus", C("int", num("1"))))))),
    (GTCLOSE,
     C("gtclose",
       C("extend", N("virtualrelvarreferences"),
         G(C("edgecnt", C("int", num("1"))), C("path", S("")))),
       G(N("relvarname"), N("referencedrelvarname")),
       G(C("edgecnt", C("plus", N("__L__edgecnt"), N("__R__edgecnt"))),
         C("path", C("concat", N("__L__path"),
                     C("concat", S(","),
                       C("concat", C("the_string", N("__R__relvarname")),
                         C("concat", S(","), N("__R__path"))))))))),
    (PACK_RELATION,
     C("relation", C("body",
                     C("tuple",
                       C("x", C("intinterval", C("from", num("4")), C("to", num("7")))),
                       C("y", C("intinterval", C("from", num("1")), C("to", num("4"))))),
                     C("tuple",
                       C("x", C("intinterval", C("from", num("1")), C("to", num("3")))),
                       C("y", C("intinterval", C("from", num("1")), C("to", num("13")))))))),
    (AGGREGATE,
     C("AGGREGATE", N("DBMSFILE"),
       G(C("AVGPAGESIZE", C("PLUS", C("AVERAGE", C("COUNT", num("1")),
                                       C("VALUE", C("TOFLOAT", N("PAGESIZE"))))))))),
    ("project(R, ())", C("project", N("R"), G())),
    ("project(R, (pagesize))", C("project", N("R"), G(N("pagesize")))),
    ("extend(R, (namelength(length(filename)) x(int(1))))",
     C("extend", N("R"), G(C("namelength", C("length", N("filename"))), C("x", C("int", num("1")))))),
    ("eq(TABLE_DEE, project(R, ()))",
     C("eq", N("TABLE_DEE"), C("project", N("R"), G()))),
    ("leftjoin(R1, R2, (category(string(unknown))))",
     C("leftjoin", N("R1"), N("R2"), G(C("category", S("unknown"))))),
    ("average(count(5)value(29491.199999999997))",
     C("average", C("count", num("5")), C("value", num("29491.199999999997")))),
    ("group(R, (a(x,y) b(z)))",
     C("group", N("R"), G(C("a", N("x"), N("y")), C("b", N("z"))))),
    ("f()", C("f")),
    ("f (x)", C("f", N("x"))),
]


@pytest.mark.parametrize("text, expected", SEEDS, ids=[t[:40] for t, _ in SEEDS])
def test_seed_expressions(text, expected):
    assert parse_expression(text) == expected


def test_positions_do_not_take_part_in_equality_but_are_recorded():
    tree = parse_expression("restrict(R,\n   gt(a, 1))")
    assert tree == C("restrict", N("R"), C("gt", N("a"), num("1")))
    gt = tree.args[1]
    assert (tree.line, tree.col) == (1, 1)
    assert (gt.line, gt.col) == (2, 4)
    assert (gt.args[1].line, gt.args[1].col) == (2, 10)
    assert hash(tree) == hash(C("restrict", N("R"), C("gt", N("a"), num("1"))))
    assert Name("x") != Number("x")


# --- literals ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["124", "2147483647", "1.5", "29491.199999999997",
                                  "1.4167099448608936E22", "1e-3", "0"])
def test_numbers(text):
    assert parse_expression(text) == Number(text)


def test_names_keep_case_and_underscores():
    assert parse_expression("__L__edgecnt") == N("__L__edgecnt")
    assert parse_expression("TABLE_DEE") == N("TABLE_DEE")
    assert parse_expression("_x1") == N("_x1")


@pytest.mark.parametrize("text, raw", [
    ("string()", ""),
    ("string(,)", ","),
    ("string(unknown)", "unknown"),
    ("string(a b)", "a b"),
    ("string(  spaced  out )", "  spaced  out "),
    ("string(f(x, (y)) z)", "f(x, (y)) z"),
    ("string(# not a comment)", "# not a comment"),
    ("STRING(Mixed)", "Mixed"),
    ("string(a := b || c ' \" !)", "a := b || c ' \" !"),
])
def test_raw_strings(text, raw):
    node = parse_expression(text)
    assert node == Raw("string", raw)
    assert node.text == raw


def test_raw_dates_and_timestamps():
    assert parse_expression("date(2015-07-30)") == Raw("date", "2015-07-30")
    assert parse_expression("Timestamp(2015-07-30T10:00)") == Raw("timestamp", "2015-07-30T10:00")


def test_raw_needs_the_parenthesis_directly_after_the_name():
    # a type name in a heading is a plain name
    assert parse_expression("heading(a(string) b(date))") == C(
        "heading", C("a", N("string")), C("b", N("date")))


def test_unbalanced_raw_is_an_error_at_its_parenthesis():
    with pytest.raises(ParseError) as info:
        parse_expression("f(x, string(abc (d)")
    assert (info.value.line, info.value.col) == (1, 12)
    assert info.value.expected == "')'"


def test_dates_and_timestamps():
    assert parse_expression("2015-07-30") == DateLit("2015-07-30")
    assert parse_expression("2015-07-30T10:00:00.5") == TimestampLit("2015-07-30T10:00:00.5")
    assert parse_expression("2015-07-30T10:00") == TimestampLit("2015-07-30T10:00")
    assert parse_expression("2015-07-30T10:00:59") == TimestampLit("2015-07-30T10:00:59")
    assert parse_expression("lt(d, 2015-07-30)") == C("lt", N("d"), DateLit("2015-07-30"))
    # a date is not a subtraction, but other digits still subtract
    assert parse_expression("2015 - 07") == BinOp("-", num("2015"), num("07"))
    assert parse_expression("d - 2015-07-30") == BinOp("-", N("d"), DateLit("2015-07-30"))


@pytest.mark.parametrize("text", ["2015-07-30x", "2015-07-301", "1abc", "1.", "1.x", "2015-07-30T10:00:00.1234567890"])
def test_malformed_literals(text):
    with pytest.raises(ParseError) as info:
        parse_expression(text)
    assert (info.value.line, info.value.col) == (1, 1)


# --- argument lists --------------------------------------------------------------------------

def test_commas_and_juxtaposition_mix():
    assert parse_expression("f(a, b c,d)") == C("f", N("a"), N("b"), N("c"), N("d"))
    assert parse_expression("(from(4)to(7))") == G(C("from", num("4")), C("to", num("7")))
    # juxtaposition ends an item only where no infix operator continues it
    assert parse_expression("f(a -1)") == C("f", BinOp("-", N("a"), num("1")))
    assert parse_expression("f(1 (b))") == C("f", num("1"), G(N("b")))
    # a name followed by a parenthesis (even after spaces) is a call
    assert parse_expression("f(a (b))") == C("f", C("a", N("b")))


@pytest.mark.parametrize("text, col", [("f(a,)", 5), ("f(,a)", 3), ("f(a,,b)", 5), ("(,)", 2)])
def test_trailing_leading_and_doubled_commas(text, col):
    with pytest.raises(ParseError) as info:
        parse_expression(text)
    assert info.value.col == col
    assert info.value.expected == "an expression"


def test_group_of_an_infix_expression_is_a_one_item_group():
    assert parse_expression("(a + 1)") == G(BinOp("+", N("a"), num("1")))


# --- infix precedence ------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("1 + 2 * 3", BinOp("+", num("1"), BinOp("*", num("2"), num("3")))),
    ("1+2*3", BinOp("+", num("1"), BinOp("*", num("2"), num("3")))),
    ("- a * b", BinOp("*", UnaryOp("-", N("a")), N("b"))),
    ("a || b = c", BinOp("=", BinOp("||", N("a"), N("b")), N("c"))),
    ("not a = b and c or d",
     BinOp("or", BinOp("and", UnaryOp("not", BinOp("=", N("a"), N("b"))), N("c")), N("d"))),
    ("a - b - c", BinOp("-", BinOp("-", N("a"), N("b")), N("c"))),
    ("a / b * c", BinOp("*", BinOp("/", N("a"), N("b")), N("c"))),
    ("a + b || c", BinOp("||", BinOp("+", N("a"), N("b")), N("c"))),
    ("a or b and c", BinOp("or", N("a"), BinOp("and", N("b"), N("c")))),
    ("a AND b Or c", BinOp("or", BinOp("and", N("a"), N("b")), N("c"))),
    ("a != b", BinOp("<>", N("a"), N("b"))),
    ("a <= b and a >= c", BinOp("and", BinOp("<=", N("a"), N("b")), BinOp(">=", N("a"), N("c")))),
    ("not not a", UnaryOp("not", UnaryOp("not", N("a")))),
    ("NOT a", UnaryOp("not", N("a"))),
    ("- - a", UnaryOp("-", UnaryOp("-", N("a")))),
    ("a * -b", BinOp("*", N("a"), UnaryOp("-", N("b")))),
    ("+a", UnaryOp("+", N("a"))),
    ("(a < b) < c", BinOp("<", G(BinOp("<", N("a"), N("b"))), N("c"))),
    ("a + 1 > b and not c",
     BinOp("and", BinOp(">", BinOp("+", N("a"), num("1")), N("b")), UnaryOp("not", N("c")))),
])
def test_precedence(text, expected):
    assert parse_expression(text) == expected


def test_not_and_or_with_a_parenthesis_are_calls():
    assert parse_expression("not(x)") == C("not", N("x"))
    assert parse_expression("and(a,b)") == C("and", N("a"), N("b"))
    assert parse_expression("OR(a,b)") == C("OR", N("a"), N("b"))
    assert parse_expression("not (x)") == UnaryOp("not", G(N("x")))
    assert parse_expression("f(x and(y))") == C("f", N("x"), C("and", N("y")))
    assert parse_expression("f(x and (y))") == C("f", BinOp("and", N("x"), G(N("y"))))


@pytest.mark.parametrize("text", ["a < b < c", "a = b + c <> d", "not a = b = c", "a<=b>=c"])
def test_comparisons_do_not_chain(text):
    with pytest.raises(ParseError):
        parse_expression(text)


@pytest.mark.parametrize("text", ["1 + not x", "- not x", "a = not b"])
def test_not_cannot_stand_where_a_tighter_operand_is_needed(text):
    with pytest.raises(ParseError) as info:
        parse_expression(text)
    assert info.value.col == text.index("not") + 1


# --- errors ----------------------------------------------------------------------------------

def test_error_message_line_col_and_caret():
    text = "restrict(R, gt(a,256)"
    with pytest.raises(ParseError) as info:
        parse_expression(text)
    err = info.value
    assert (err.line, err.col) == (1, 22)
    assert err.expected == "')'"
    assert err.source_line == text
    assert str(err).startswith("expected ')' but found end of input at line 1, col 22")
    assert str(err).endswith("\n  " + text + "\n  " + " " * 21 + "^")


@pytest.mark.parametrize("text, line, col, expected", [
    ("a b", 1, 3, "end of input"),
    ("f(x) )", 1, 6, "end of input"),
    (")", 1, 1, "an expression"),
    ("", 1, 1, "an expression"),
    ("f(a :=", 1, 5, "')'"),
    ("and", 1, 1, "an expression"),
    ("a | b", 1, 3, "a token"),
    ("a ! b", 1, 3, "a token"),
    ("restrict(R,\n  gt(a,\n     256 +))", 3, 11, "an expression"),
    ("f(\n  x\n  y", 3, 4, "')'"),
    ("extend(R, (a(x)\n\n   b(y) : ))", 3, 9, "a token"),
    ("project(R, (a, b))\n)", 2, 1, "end of input"),
])
def test_error_positions(text, line, col, expected):
    with pytest.raises(ParseError) as info:
        parse_expression(text)
    err = info.value
    assert (err.line, err.col, err.expected) == (line, col, expected), str(err)
    assert err.source_line == text.split("\n")[line - 1]


def test_nesting_at_the_limit_is_fine():
    n = MAX_NESTING
    assert parse_expression("f(" * n + "x" + ")" * n) == parse_expression("f(" * n + "x" + ")" * n)
    node = parse_expression("-" * n + "1")
    for _ in range(n):
        node = node.operand
    assert node == num("1")
    repr(parse_expression("(" * n + ")" * n))


@pytest.mark.parametrize("text", [
    "(" * 100_000,
    "(" * 100_000 + ")" * 100_000,
    "not " * 100_000 + "x",
    "f(" * 100_000,
    "f(" * 100_000 + "x" + ")" * 100_000,
    "-" * 100_000 + "1",
    "f(a+" * 100_000,
    "1" + " + 1" * 100_000,
    "1" + " or 1" * 100_000,
    "f(" * 257 + ")" * 257,
])
def test_deep_nesting_is_a_parse_error(text):
    with pytest.raises(ParseError) as info:
        parse_expression(text)
    assert "deeper than" in str(info.value)


def test_long_flat_inputs_parse():
    # 100,000 items and a long raw string (how fast: benchmarks, not a timed unit test)
    node = parse_expression("f(" + ",".join(["a(1)"] * 100_000) + ")")
    assert len(node.args) == 100_000
    assert parse_expression("string(" + "x" * 1_000_000 + ")").text == "x" * 1_000_000
    with pytest.raises(ParseError):
        parse_expression("string(" + "(" * 200_000)
    with pytest.raises(ParseError):
        parse_expression("1" * 200_000 + "x")


# --- scripts ---------------------------------------------------------------------------------

CASE = """\
# case: restrict-gt
# seed: 004, "Relational Algebra / Restriction": lists all the attributes
# note: free text; where the seed is incomplete
# notimpl: spark not today
# note: a second note

ATTRS := relation(heading(maximumlength(int) attributename(string))
                  body(tuple(maximumlength(124) attributename(string(CLIENTID)))
# a comment inside a statement
                       tuple(maximumlength(2147483647) attributename(string(A
# inside raw text: not a comment
B)))))
OTHER := relation(body())

# the query
restrict(ATTRS, gt(maximumlength, 256))

expect relation(heading(maximumlength(int) attributename(string))
                body(tuple(maximumlength(2147483647) attributename(string(OPERANDSIGNATURE)))))
# case: not a header line any more
"""


def test_parse_script_on_a_case_file():
    statements = parse_script(CASE)
    assert [type(s) for s in statements] == [Bind, Bind, Query, Expect]
    attrs_bind, other, query, expect = statements
    assert attrs_bind.name == "ATTRS"
    assert (attrs_bind.line, attrs_bind.col) == (7, 1)
    heading, body = attrs_bind.value.args
    assert heading == C("heading", C("maximumlength", N("int")), C("attributename", N("string")))
    assert len(body.args) == 2
    assert body.args[1].args[1] == C("attributename", S("A\n# inside raw text: not a comment\nB"))
    assert other == Bind("OTHER", C("relation", C("body")))
    assert query == Query(C("restrict", N("ATTRS"), C("gt", N("maximumlength"), num("256"))))
    assert query.line == 16
    assert expect.value.name == "relation"


def test_parse_header():
    assert parse_header(CASE) == {
        "case": ["restrict-gt"],
        "seed": ['004, "Relational Algebra / Restriction": lists all the attributes'],
        "note": ["free text; where the seed is incomplete", "a second note"],
        "notimpl": ["spark not today"],
    }
    assert parse_header("R := 1\n# case: late\n") == {}


def test_error_statements():
    statements = parse_script(
        "restrict(R, gt(nosuch, 1))\n"
        "error UnknownAttribute(attribute=nosuch, operator = RESTRICT , got=string(a, b))\n")
    assert statements[1] == ExpectError(
        "UnknownAttribute",
        (("attribute", "nosuch"), ("operator", "RESTRICT"), ("got", "string(a, b)")))
    assert parse_script("x\nerror DivisionByZero") == (Query(N("x")), ExpectError("DivisionByZero"))
    assert parse_script("x\nerror Foo()") == (Query(N("x")), ExpectError("Foo", ()))


def test_statements_spanning_lines_and_infix_continuations():
    statements = parse_script("A := 1\n  + 2\nB := f(\n  x,\n  y)\nA")
    assert statements == (Bind("A", BinOp("+", num("1"), num("2"))),
                          Bind("B", C("f", N("x"), N("y"))), Query(N("A")))


@pytest.mark.parametrize("text, line, col, expected", [
    ("A := 1 B := 2", 1, 8, "a new line"),
    ("x\nerror", 2, 6, "an error class name"),
    ("x\nerror X(a)", 2, 10, "'='"),
    ("x\nerror X(a=1", 2, 8, "')'"),
    ("x\nerror X(a=1,)", 2, 13, "a field name"),
    ("A :=\n", 1, 5, "an expression"),
    ("A := f(x\n# c\nexpect y", 3, 9, "')'"),
    ("expect", 1, 7, "an expression"),
    ("f(x) := 1", 1, 6, "a new line"),
])
def test_script_errors(text, line, col, expected):
    with pytest.raises(ParseError) as info:
        parse_script(text)
    assert (info.value.line, info.value.col, info.value.expected) == (line, col, expected), str(info.value)


# --- robustness: anything either parses or raises ParseError ---------------------------------

VALID = [text for text, _ in SEEDS] + [
    "1 + 2 * 3", "not a = b and c or d", "a || b = c", "- a * b", "string(a (b) c)",
    "lt(d, 2015-07-30T10:00:00.5)", "f(x and (y))",
]

ALPHABET = list("()(),,  \n\t#:=<>!|+-*/._aZ019T") + [
    "not ", "and ", "or ", "string(", "date(", "f(", "x", "1.5", "1e-3", "2015-07-30",
    "2015-07-30T10:00", ":=", "||", "<>", "!=", "<=", "expect ", "error ", "# k: v\n",
]


def _check(text):
    for parse in (parse_expression, parse_script):
        try:
            parse(text)
        except ParseError as err:
            assert err.line is not None and err.col is not None and err.expected
    parse_header(text)


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(ALPHABET), max_size=60).map("".join))
def test_random_token_soup_parses_or_raises_parse_error(text):
    _check(text)


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(VALID), st.data())
def test_truncations_and_mutations_parse_or_raise_parse_error(text, data):
    cut = data.draw(st.integers(0, len(text)))
    _check(text[:cut])
    mutated = list(text)
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(mutated)))
        action = data.draw(st.sampled_from(["insert", "delete", "replace"]))
        char = data.draw(st.sampled_from(ALPHABET))
        if action == "insert" or not mutated or pos == len(mutated):
            mutated.insert(pos, char)
        elif action == "delete":
            del mutated[pos]
        else:
            mutated[pos] = char
    _check("".join(mutated))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_arbitrary_unicode_parses_or_raises_parse_error(text):
    _check(text)


# ---------------------------------------------------------------- the fast path for tuples
# Tuples of plain values are read by a regular expression instead of the general loop; the CST
# (shapes *and* positions) and every error must be exactly those of the general loop.

import attrs as _attrs  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

import sira  # noqa: E402
from sira.syntax import parser as _parser_module  # noqa: E402


def _with_positions(node):
    """The tree as nested tuples including line and col (CST equality ignores positions)."""
    if isinstance(node, tuple):
        return tuple(_with_positions(n) for n in node)
    if not _attrs.has(type(node)):
        return node
    return (type(node).__name__,) + tuple(_with_positions(getattr(node, f.name))
                                          for f in _attrs.fields(type(node)))


def _parse_both(text, monkeypatch):
    """(result with the fast path, result without), each a CST or the ParseError's text."""
    def run():
        try:
            return _with_positions(parse_expression(text))
        except sira.ParseError as err:
            return ("error", str(err))
    fast = run()
    with monkeypatch.context() as m:
        m.setattr(_parser_module._FastTuples, "read", lambda self, name, end: None)
        slow = run()
    return fast, slow


_VALUES = st.sampled_from([
    "1", "-5", "2147483648", "1.5", "1e3", "-2.5E-3", "'it''s'", "''", "string(a b)",
    "string()", "true", "FALSE", "intinterval(from(4)to(7))", "longinterval(begin(-3)end(9))",
    "intinterval(begin(1))", "x", "12a", "1.", "string(a(b))", "plus(1,2)", "2015-07-30",
    "'unterminated", "(1)", "- 5", "tRuE",
])
_SPACE = st.sampled_from(["", " ", "\n", " , ", ",", "\n# a comment\n  "])


@settings(max_examples=int(__import__("os").environ.get("SIRA_FAST_PATH_EXAMPLES", "300")), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "B", "c_1", "a"]), _VALUES, _SPACE),
                min_size=0, max_size=4),
       st.integers(0, 3), _SPACE)
def test_the_fast_path_for_tuples_gives_exactly_the_general_parse(items, count, lead):
    import pytest
    monkeypatch = pytest.MonkeyPatch()
    try:
        body = "".join(f"{sep}{name}({value})" for name, value, sep in items)
        text = "relation(body(" + lead.join([f"tuple({body})"] * max(count, 1)) + "))"
        fast, slow = _parse_both(text, monkeypatch)
        assert fast == slow
    finally:
        monkeypatch.undo()


def test_the_fast_path_reads_a_large_body_in_one_go():
    text = "relation(body(" + " ".join(f"tuple(k({i}) v('x{i}'))" for i in range(2000)) + "))"
    node = parse_expression(text)
    assert len(node.args[0].args) == 2000
    assert node.args[0].args[1999].args[1].args[0] == Raw("string", "x1999")


@pytest.mark.parametrize("literal", ["timestamp(2015-07-30T10:00:00.1234567)",
                                     "timestamp(20150730T100000)", "date(20150730)",
                                     "date(2015-W31-4)"])
def test_a_timestamp_or_date_literal_reads_as_every_reader_reads_it(literal):
    # Python's own ISO parsing took a seventh digit of a second and dropped it (TIMESTAMP holds
    # microseconds; the CSV, JSON and Arrow readers refuse it), and week and compact dates
    with pytest.raises(sira.SiraValueError, match="is not a"):
        sira.evaluate(f"extend(TABLE_DEE, (x({literal})))")
