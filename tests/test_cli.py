"""The ``sira`` command: eval (CSV, JSON and literal relvars, --explain, --format), demo, repl."""

from __future__ import annotations

import json

import pytest

import sira
from sira.cli import main
from sira.demo import STEPS

DBMSFILE_CSV = """\
filename:string,pagesize:int
DATABASECATALOG.SPDB,32768
BW_SPECIES.SPDB,32768
BW_SPOTSXSPNAME.SPDB,49152
BW_POSSIBLESPECIES.SPDB,16384
BW_SPOTS.SPDB,16384
"""

DBMSFILE_JSON = {
    "heading": {"filename": "string", "pagesize": "int"},
    "body": [
        {"filename": "DATABASECATALOG.SPDB", "pagesize": 32768},
        {"filename": "BW_SPECIES.SPDB", "pagesize": 32768},
        {"filename": "BW_SPOTSXSPNAME.SPDB", "pagesize": 49152},
        {"filename": "BW_POSSIBLESPECIES.SPDB", "pagesize": 16384},
        {"filename": "BW_SPOTS.SPDB", "pagesize": 16384},
    ],
}

CATEGORIES_SIRA = """\
relation(heading(category(string) pagesize(int))
         body(tuple(category(string(big)) pagesize(32768))))
"""


@pytest.fixture
def files(tmp_path):
    csv_path = tmp_path / "dbmsfile.csv"
    csv_path.write_text(DBMSFILE_CSV)
    json_path = tmp_path / "dbmsfile.json"
    json_path.write_text(json.dumps(DBMSFILE_JSON))
    sira_path = tmp_path / "categories.sira"
    sira_path.write_text(CATEGORIES_SIRA)
    return {"csv": str(csv_path), "json": str(json_path), "sira": str(sira_path)}


def _json_out(capsys):
    return json.loads(capsys.readouterr().out)


# ------------------------------------------------------------------------------------ eval
def test_eval_csv_relvar_prints_a_table(files, capsys):
    code = main(["eval", "project(DBMSFILE, (pagesize))", "--relvar", f"DBMSFILE={files['csv']}"])
    out = capsys.readouterr().out
    assert code == 0
    assert out == (
        "+----------+\n"
        "| PAGESIZE |\n"
        "| INT      |\n"
        "+----------+\n"
        "| 16384    |\n"
        "| 32768    |\n"
        "| 49152    |\n"
        "+----------+\n"
        "3 tuples\n")


def test_eval_json_relvar_gives_the_same_relation_as_csv(files, capsys):
    assert main(["eval", "DBMSFILE", "--relvar", f"DBMSFILE={files['csv']}",
                 "--format", "json"]) == 0
    from_csv = _json_out(capsys)
    assert main(["eval", "dbmsfile", "--relvar", f"dbmsfile={files['json']}",
                 "--format", "json"]) == 0
    from_json = _json_out(capsys)
    assert from_csv == from_json
    assert from_json["heading"] == {"filename": "string", "pagesize": "int"}
    assert len(from_json["body"]) == 5


def test_eval_format_json_is_heading_and_body(files, capsys):
    assert main(["eval", "restrict(DBMSFILE, gt(pagesize, 32768))", "-r",
                 f"DBMSFILE={files['csv']}", "--format", "json"]) == 0
    assert _json_out(capsys) == {
        "heading": {"filename": "string", "pagesize": "int"},
        "body": [{"filename": "BW_SPOTSXSPNAME.SPDB", "pagesize": 49152}]}


def test_eval_format_json_writes_dates_as_iso_strings_and_reads_them_back(tmp_path, capsys):
    path = tmp_path / "records.csv"
    path.write_text("athlete:string,since:date\n\"Beamon, Bob\",1968-10-18\n")
    assert main(["eval", "R", "-r", f"R={path}", "--format", "json"]) == 0
    printed = capsys.readouterr().out
    assert json.loads(printed)["body"] == [{"athlete": "Beamon, Bob", "since": "1968-10-18"}]
    back = tmp_path / "records.json"
    back.write_text(printed)
    assert main(["eval", "eq(R, S)", "-r", f"R={path}", "-r", f"S={back}"]) == 0
    assert capsys.readouterr().out.strip() == "True"


def test_eval_format_text_parses_back_to_the_same_relation(files, capsys):
    assert main(["eval", "leftjoin(D, C, (category(string(unknown))))", "-r",
                 f"D={files['json']}", "-r", f"C={files['sira']}", "--format", "text"]) == 0
    text = capsys.readouterr().out
    value = sira.evaluate(sira.parse(text))
    assert len(value) == 5
    assert {r["category"] for r in value.to_rows()} == {"big", "unknown"}


def test_eval_reads_the_expression_from_a_file(files, tmp_path, capsys):
    query = tmp_path / "query.txt"
    query.write_text("semiminus(DBMSFILE,\n          CATEGORIES)\n")
    assert main(["eval", f"@{query}", "-r", f"DBMSFILE={files['csv']}",
                 "-r", f"CATEGORIES={files['sira']}", "-f", "json"]) == 0
    assert [r["pagesize"] for r in _json_out(capsys)["body"]] == [16384, 16384, 49152]


def test_eval_relvar_named_after_the_file_stem(files, capsys):
    assert main(["eval", "project(dbmsfile, ())", "--relvar", files["csv"]]) == 0
    assert "TABLE_DEE" in capsys.readouterr().out


def test_eval_scalar_result(files, capsys):
    assert main(["eval", "eq(TABLE_DEE, project(DBMSFILE, ()))", "-r",
                 f"DBMSFILE={files['csv']}", "-f", "json"]) == 0
    assert _json_out(capsys) is True


def test_explain_shows_arg_spec_and_result_blocks_bottom_up(files, capsys):
    code = main(["eval", "project(restrict(DBMSFILE, gt(pagesize, 16384)), (pagesize))",
                 "--relvar", f"DBMSFILE={files['csv']}", "--explain"])
    out = capsys.readouterr().out
    assert code == 0
    restrict_at = out.index("step 1 of 2: RESTRICT")
    project_at = out.index("step 2 of 2: PROJECT")
    assert restrict_at < project_at
    assert "RESTRICT SPEC: gt(pagesize,16384)" in out
    assert "PROJECT SPEC: (pagesize)" in out
    assert out.count("ARG: ") == 2
    assert "ARG: relvar DBMSFILE" in out
    assert "ARG: the result of step 1 (RESTRICT)" in out
    assert "RESULT of RESTRICT:" in out and "RESULT of PROJECT:" in out
    # the argument table, the restricted table, then the final table
    assert out.count("BW_POSSIBLESPECIES.SPDB") == 1
    assert out.count("DATABASECATALOG.SPDB") == 3
    assert out.rstrip().endswith("2 tuples")


def test_explain_of_a_binary_operator_shows_both_arguments(files, capsys):
    assert main(["eval", "semijoin(DBMSFILE, CATEGORIES)", "-r", f"DBMSFILE={files['csv']}",
                 "-r", f"CATEGORIES={files['sira']}", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "ARG1: relvar DBMSFILE" in out and "ARG2: relvar CATEGORIES" in out
    assert "SEMIJOIN SPEC: (none)" in out


# ------------------------------------------------------------------------------------ errors
def test_unknown_attribute_exits_1_with_the_class_name_on_stderr(files, capsys):
    code = main(["eval", "project(DBMSFILE, (nosuch))", "-r", f"DBMSFILE={files['csv']}"])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == ""
    assert captured.err.startswith("UnknownAttribute: ")
    assert "nosuch" in captured.err
    assert "Traceback" not in captured.err


def test_parse_error_exits_1_and_shows_line_and_col(capsys):
    assert main(["eval", "project(TABLE_DEE, ()"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ParseError: ")
    assert "line 1, col" in err


def test_runtime_error_exits_1(files, capsys):
    assert main(["eval", "extend(DBMSFILE, (x(div(pagesize, 0))))", "-r",
                 f"DBMSFILE={files['csv']}"]) == 1
    assert capsys.readouterr().err.startswith("DivisionByZero: ")


def test_bad_csv_value_is_a_sira_error(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("a:int\n12x\n")
    assert main(["eval", "R", "-r", f"R={path}"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("SiraValueError: ") and "line 2" in err


def test_csv_header_without_types_is_rejected(tmp_path, capsys):
    path = tmp_path / "untyped.csv"
    path.write_text("a,b\n1,2\n")
    assert main(["eval", "R", "-r", f"R={path}"]) == 1
    assert "name:type" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    [],
    ["eval"],
    ["eval", "R", "--format", "xml"],
    ["eval", "R", "--relvar", "R=/nonexistent/file.csv"],
    ["nosuchcommand"],
])
def test_usage_errors_exit_2(argv, capsys):
    assert main(argv) == 2
    assert capsys.readouterr().err


# ------------------------------------------------------------------------------------ demo
def test_demo_exits_0_and_shows_every_operator(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    for operator in ("RESTRICT", "PROJECT", "EXTEND", "RENAME", "TRANSFORM", "UNION",
                     "INTERSECT", "MINUS", "JOIN", "SEMIJOIN", "SEMIMINUS", "LEFTJOIN",
                     "XMINUS", "TCLOSE", "GTCLOSE", "GROUP", "UNGROUP", "AGGREGATE",
                     "SUMMARIZEBY", "PACK", "WINDOW", "ISTREAM"):
        assert f". {operator} ==" in out, operator
    assert "BEGIN(1968-02-24)END(1968-07-24)" in out  # the seed's pointwise MINUS
    assert "equal the batch algebra on the same rows: True" in out  # the live query
    for step in STEPS:
        assert f">>> {step.expression}" in out
    assert "TABLE_DEE" in out  # project onto ()
    assert "COUNT(5)VALUE(29491.199999999997)" in out  # the seed's AVERAGE example
    assert "Traceback" not in out


# ------------------------------------------------------------------------------------ repl
def _drive_repl(monkeypatch, tmp_path, lines, argv=("repl",)):
    monkeypatch.setenv("HOME", str(tmp_path))
    feed = iter(lines)
    prompts = []

    def fake_input(prompt=""):
        prompts.append(prompt)
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None
    monkeypatch.setattr("builtins.input", fake_input)
    return main(list(argv)), prompts


def test_repl_binds_queries_survives_errors_and_quits(monkeypatch, tmp_path, capsys):
    code, prompts = _drive_repl(monkeypatch, tmp_path, [
        "R := relation(heading(a(int) b(string))",
        "        body(tuple(a(1) b(string(x))) tuple(a(2) b(string(y)))))",
        "restrict(R, gt(a, 1))",
        "project(R, (nosuch))",
        "project(R, (b))",
        ":relvars",
        ":quit",
        "restrict(R, true)",  # never read
    ])
    captured = capsys.readouterr()
    assert code == 0
    assert prompts[:3] == ["sira> ", "....> ", "sira> "]  # continued while ( is open
    assert len(prompts) == 7
    assert "R := 2 tuples {a: INT, b: STRING}" in captured.out
    assert "| 2   | y      |" in captured.out
    assert "UnknownAttribute: " in captured.err
    assert "| y      |" in captured.out  # the state survived the error
    assert "R  {a: INT, b: STRING}  (2 tuples)" in captured.out


def test_repl_explain_help_and_end_of_input(monkeypatch, tmp_path, capsys, files):
    code, _ = _drive_repl(monkeypatch, tmp_path, [
        ":help",
        ":explain project(DBMSFILE, (pagesize))",
        "S := eq(1, 1)",
        "oops(",
        ")",
    ], argv=("repl", "--relvar", f"DBMSFILE={files['csv']}"))
    captured = capsys.readouterr()
    assert code == 0  # end of input (Ctrl-D) ends the session
    assert ":quit" in captured.out
    assert "PROJECT SPEC: (pagesize)" in captured.out and "ARG: relvar DBMSFILE" in captured.out
    assert "SiraValueError: only relations can be bound" in captured.err
    assert captured.err.count("\n") >= 2  # the error for "oops()" as well


def test_repl_loads_files_and_switches_format(monkeypatch, tmp_path, capsys, files):
    code, _ = _drive_repl(monkeypatch, tmp_path, [
        f":load D={files['json']}",
        ":format json",
        "project(D, (pagesize))",
        ":quit",
    ])
    out = capsys.readouterr().out
    assert code == 0
    assert "D := 5 tuples {filename: STRING, pagesize: INT}" in out
    printed = out[out.index('{\n  "heading"'):out.rindex("}") + 1]
    assert json.loads(printed)["body"] == [
        {"pagesize": 16384}, {"pagesize": 32768}, {"pagesize": 49152}]
