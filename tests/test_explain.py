"""``sira.explain``: the plan without data; with data, every step (ARG / SPEC / RESULT) as text
and as the operator tree in a notebook."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

import sira
from sira import INT, STRING, Relation
from sira.cli import explain_steps
from sira.demo import catalog
from sira.display import DEFAULT_LIMIT
from sira.errors import ParseError, SiraValueError, UnknownRelvar
from sira.explain import Explanation, plan_text

QUERY = "project(restrict(DBMSFILE, gt(pagesize, 16384)), (pagesize))"


@pytest.fixture(scope="module")
def db():
    return catalog()


class Tags(HTMLParser):
    """The opening tags of an HTML text, in order, and its text content."""

    def __init__(self, text):
        super().__init__()
        self.tags, self.text = [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


# ------------------------------------------------------------------------------- the plan
def test_without_relations_explain_is_the_plan(db):
    node = sira.parse(QUERY, db)
    got = sira.explain(node)
    assert got == ("PROJECT (pagesize) -> {pagesize: INT}\n"
                   "  RESTRICT gt(pagesize,16384) -> {filename: STRING, pagesize: INT}\n"
                   "    RELVAR dbmsfile -> {filename: STRING, pagesize: INT}")
    assert got.steps == ()


def test_with_headings_only_explain_parses_text_and_shows_the_plan(db):
    headings = {"DBMSFILE": db["dbmsfile"].heading}
    assert sira.explain(QUERY, headings) == plan_text(sira.parse(QUERY, headings))


def test_the_plan_renders_in_a_notebook_as_escaped_preformatted_text():
    node = sira.parse("restrict(TABLE_DEE, eq(string(<b>), string(<b>)))")
    page = sira.explain(node)._repr_html_()
    assert page.startswith("<pre") and "&lt;b&gt;" in page and "<b>" not in page


# ------------------------------------------------------------------------------- the steps
def test_explain_accepts_text_and_evaluates_every_step(db):
    got = sira.explain(QUERY, db)
    assert isinstance(got, Explanation)
    assert [(s.number, s.title, s.spec) for s in got.steps] == [
        (1, "RESTRICT", "gt(pagesize,16384)"), (2, "PROJECT", "(pagesize)")]
    restrict, project = got.steps
    assert restrict.args == (("relvar DBMSFILE", db["dbmsfile"]),)
    assert project.args[0][0] == "the result of step 1 (RESTRICT)"
    assert project.result == sira.evaluate(QUERY, db)
    assert project.inner == (1,)


def test_explain_prints_as_the_cli_teaching_view(db):
    node = sira.parse(QUERY, db)
    expected = explain_steps(node, db, display={"dbmsfile": "DBMSFILE"})
    assert str(sira.explain(QUERY, db)) == expected
    assert repr(sira.explain(QUERY, db)) == expected
    assert "RESTRICT SPEC: gt(pagesize,16384)" in expected
    assert expected.rstrip().endswith("2 tuples")


def test_display_names_relvars_as_the_caller_wants(db):
    got = sira.explain(QUERY, db, display={"dbmsfile": "DbmsFile"})
    assert "ARG: relvar DbmsFile" in got


def test_explain_of_a_scalar_expression_ends_with_its_value(db):
    got = sira.explain("eq(TABLE_DEE, project(DBMSFILE, ()))", db)
    assert [s.title for s in got.steps] == ["PROJECT", "SCALAR EXPRESSION"]
    assert got.steps[-1].result is True
    assert got.rstrip().endswith("RESULT:\nTrue")


def test_a_single_relvar_query_is_one_step(db):
    got = sira.explain("DBMSFILE", db)
    assert [s.title for s in got.steps] == ["RELVAR"]
    assert got.steps[0].result == db["dbmsfile"]


def test_explain_cuts_large_tables_and_limit_none_shows_them_all():
    big = Relation.from_rows({"n": INT}, [(i,) for i in range(100)])
    cut = sira.explain("restrict(R, ge(n, 10))", {"r": big})
    assert cut.count(f"... and {100 - DEFAULT_LIMIT} more tuples") == 1  # the ARG
    assert cut.count(f"... and {90 - DEFAULT_LIMIT} more tuples") == 1  # the RESULT
    whole = sira.explain("restrict(R, ge(n, 10))", {"r": big}, limit=None)
    assert "more tuple" not in whole and "| 99 " in whole


def test_the_cli_view_never_cuts_tables():
    big = Relation.from_rows({"n": INT}, [(i,) for i in range(100)])
    text = explain_steps(sira.parse("project(R, (n))", {"r": big}), {"r": big})
    assert "more tuple" not in text


def test_bad_text_and_bad_limits_are_sira_errors(db):
    with pytest.raises(ParseError):
        sira.explain("project(DBMSFILE, (pagesize)", db)
    with pytest.raises(UnknownRelvar):
        sira.explain("project(NOSUCH, ())", db)
    with pytest.raises(SiraValueError):
        sira.explain(QUERY, db, limit=-1)


# ------------------------------------------------------------------------------- HTML
def test_the_html_is_the_operator_tree_with_arg_spec_and_result(db):
    page = sira.explain("join(restrict(STORAGESPACE, gt(pagecount, 500)), project(DBMSFILE, "
                        "(filename)))", db)._repr_html_()
    tags = Tags(page)
    assert tags.tags.count("details") == 3  # JOIN, and nested under it RESTRICT and PROJECT
    text = "".join(tags.text)
    assert text.index("step 3 of 3: JOIN") < text.index("step 1 of 3: RESTRICT") \
        < text.index("step 2 of 3: PROJECT")
    for column in ("ARG1", "ARG2", "JOIN SPEC", "ARG", "RESTRICT SPEC", "RESTRICT",
                   "PROJECT SPEC", "PROJECT"):
        assert f">{column}<" in page
    assert "gt(pagecount,500)" in text
    assert "relvar STORAGESPACE" in text and "the result of step 1 (RESTRICT)" in text


def test_the_html_cuts_tables_and_escapes_values():
    r = Relation.from_rows({"s": STRING}, [("<script>x</script>",)]
                           + [(f"v{i:03}",) for i in range(40)])
    page = sira.explain("restrict(R, true)", {"r": r})._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;x&lt;/script&gt;" in page
    assert page.count(f"… and {41 - DEFAULT_LIMIT} more tuples") == 2  # ARG and RESULT


def test_the_html_of_a_scalar_expression_shows_its_value(db):
    page = sira.explain("cardinality(DBMSFILE)", db)._repr_html_()
    assert ">RESULT<" in page and "<code>5</code>" in page
