"""The ``sira`` command: eval (CSV, JSON and literal relvars, --explain, --format), demo, repl."""

from __future__ import annotations

import json
import sys

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


def test_a_relvar_given_twice_is_a_usage_error_not_the_last_file(files, capsys):
    # the second binding used to replace the first without a word
    assert main(["eval", "dbmsfile", "-r", f"dbmsfile={files['csv']}",
                 "-r", f"DBMSFILE={files['sira']}"]) == 2
    err = capsys.readouterr().err
    assert "relvar 'DBMSFILE' is given twice" in err and files["sira"] in err


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
    assert "SEMIJOIN SPEC: on the common attributes (pagesize)" in out


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


def test_bad_csv_value_is_a_data_format_error_naming_line_and_attribute(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("a:int\n12x\n")
    assert main(["eval", "R", "-r", f"R={path}"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("DataFormatError: ") and "line 2, attribute 'a'" in err


def test_csv_header_without_types_has_them_inferred(tmp_path, capsys):
    path = tmp_path / "untyped.csv"
    path.write_text("a,b\n1,x\n")
    assert main(["eval", "R", "-r", f"R={path}", "-f", "json"]) == 0
    assert _json_out(capsys)["heading"] == {"a": "int", "b": "string"}


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
def _drive_repl(monkeypatch, tmp_path, lines, argv=("repl",), terminal=True):
    """Run the repl over ``lines`` typed at a terminal (``terminal``) or piped in."""
    import io
    monkeypatch.setenv("HOME", str(tmp_path))
    stdin = io.StringIO()
    stdin.isatty = lambda: terminal
    monkeypatch.setattr("sys.stdin", stdin)
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


def test_a_piped_repl_script_reports_an_unfinished_expression_and_fails(monkeypatch, tmp_path,
                                                                          capsys):
    # piped in, the repl ended at an unfinished "oops(" without a word, and exited 0 whatever
    # failed; at a terminal each error is seen as it happens and the exit stays 0
    code, _ = _drive_repl(monkeypatch, tmp_path, ["R := relation(heading(a(int)) body())",
                                                  "oops("], terminal=False)
    assert code == 1 and "ParseError" in capsys.readouterr().err
    code, _ = _drive_repl(monkeypatch, tmp_path, ["R := relation(heading(a(int)) body())",
                                                  "project(R, (nosuch))"], terminal=False)
    assert code == 1 and "UnknownAttribute" in capsys.readouterr().err
    code, _ = _drive_repl(monkeypatch, tmp_path, ["R := relation(heading(a(int)) body())",
                                                  "R"], terminal=False)
    assert code == 0


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


# ------------------------------------------------------------------------------------ formats
def test_quick_start_example_file_is_shipped(capsys):
    from pathlib import Path
    example = Path(__file__).resolve().parent.parent / "examples" / "dbmsfile.csv"
    assert main(["eval", "project(R, (pagesize))", "--relvar", f"R={example}"]) == 0
    assert "3 tuples" in capsys.readouterr().out


def _quick_start_commands() -> list:
    """The README's quick-start commands after ``make`` (``.venv/bin/sira ...``), split."""
    import shlex
    from pathlib import Path
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    start = readme.index("## Quick start")
    section = readme[start:readme.index("\n## ", start + 1)]
    return [shlex.split(line)[1:] for line in section.splitlines()
            if line.startswith(".venv/bin/sira ")]


def test_every_quick_start_command_of_the_readme_works_from_the_checkout(monkeypatch, tmp_path,
                                                                      capsys):
    root = __import__("pathlib").Path(__file__).resolve().parent.parent
    monkeypatch.chdir(root)  # the commands name examples/dbmsfile.csv from the checkout
    commands = _quick_start_commands()
    assert [c[0] for c in commands] == ["eval", "eval", "repl"]
    for argv in commands:
        if argv[0] == "repl":
            code, _ = _drive_repl(monkeypatch, tmp_path, ["cardinality(DBMSFILE)", ":quit"], argv)
        else:
            code = main(argv)
        captured = capsys.readouterr()
        assert code == 0 and captured.err == "", (argv, captured.err)
        assert captured.out.strip(), argv


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".json", ".parquet", ".arrow"])
def test_eval_writes_every_file_format_and_reads_it_back(files, tmp_path, capsys, suffix):
    pytest.importorskip("pyarrow")
    out = tmp_path / f"result{suffix}"
    assert main(["eval", "restrict(D, gt(pagesize, 16384))", "-r", f"D={files['csv']}",
                 "--output", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert main(["eval", "cardinality(R)", "-r", f"R={out}"]) == 0
    assert capsys.readouterr().out.strip() == "3"
    assert main(["eval", "eq(R, restrict(D, gt(pagesize, 16384)))", "-r", f"R={out}",
                 "-r", f"D={files['csv']}"]) == 0
    assert capsys.readouterr().out.strip() == "True"


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet", "arrow", "text", "table"])
def test_format_option_decides_the_file_content(files, tmp_path, capsys, fmt):
    pytest.importorskip("pyarrow")
    out = tmp_path / "result.out"
    assert main(["eval", "D", "-r", f"D={files['json']}", "--format", fmt, "-o", str(out)]) == 0
    if fmt in ("csv", "json", "parquet", "arrow"):
        reader = {"csv": sira.read_csv, "json": sira.read_json,
                  "parquet": sira.read_parquet, "arrow": sira.read_arrow}[fmt]
        assert len(reader(out)) == 5
    elif fmt == "text":
        assert len(sira.evaluate(out.read_text())) == 5
    else:
        assert out.read_text().rstrip().endswith("5 tuples")


def test_format_csv_prints_a_typed_header(files, capsys):
    assert main(["eval", "project(D, (pagesize))", "-r", f"D={files['csv']}", "-f", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ["pagesize:int", "16384", "32768", "49152"]


def test_binary_format_without_output_is_a_usage_error(files, capsys):
    assert main(["eval", "D", "-r", f"D={files['csv']}", "-f", "parquet"]) == 2
    assert "--output" in capsys.readouterr().err


def test_a_scalar_cannot_be_written_as_parquet(files, tmp_path, capsys):
    assert main(["eval", "cardinality(D)", "-r", f"D={files['csv']}", "-f", "parquet",
                 "-o", str(tmp_path / "x.parquet")]) == 2
    assert "scalar" in capsys.readouterr().err


def test_format_json_writes_infinity_as_a_string(tmp_path, capsys):
    path = tmp_path / "f.csv"
    path.write_text("x:float\ninf\n-inf\n1.5\n")
    assert main(["eval", "R", "-r", f"R={path}", "-f", "json"]) == 0
    printed = capsys.readouterr().out
    assert "Infinity" in printed

    def refuse(token):
        raise AssertionError(f"invalid JSON token {token}")
    body = json.loads(printed, parse_constant=refuse)["body"]
    assert {row["x"] for row in body} == {"Infinity", "-Infinity", 1.5}


def test_relvar_with_nulls_is_refused_naming_the_relvar(tmp_path, capsys):
    path = tmp_path / "n.csv"
    path.write_text("a:int,b:string\n1,x\n,y\n")
    assert main(["eval", "R", "-r", f"Prices={path}"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("NullValue: relvar 'Prices': attribute 'a' holds NULL in 1 row")


def test_json_cell_with_an_expression_is_refused_not_evaluated(tmp_path, capsys):
    path = tmp_path / "e.json"
    path.write_text('{"heading": {"a": "int"}, "body": [{"a": "plus(2,3)"}]}')
    assert main(["eval", "R", "-r", f"R={path}"]) == 1
    assert capsys.readouterr().err.startswith("DataFormatError: ")


# ------------------------------------------------------------------------------------ no tracebacks
def test_deeply_nested_json_file_is_an_error_not_a_traceback(tmp_path, capsys):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert main(["eval", "R", "-r", f"R={path}"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("DataFormatError: ") and "Traceback" not in err


@pytest.mark.parametrize("fmt", ["table", "json", "text", "csv"])
def test_a_bigint_of_thousands_of_digits_is_printed_whole(tmp_path, capsys, fmt):
    digits = "9" * 5000
    path = tmp_path / "big.json"
    path.write_text('{"heading": {"n": "bigint"}, "body": [{"n": %s}]}' % digits)
    assert main(["eval", "R", "-r", f"R={path}", "-f", fmt]) == 0
    captured = capsys.readouterr()
    assert digits in captured.out and captured.err == ""
    assert sys.get_int_max_str_digits() != 0  # the limit is restored afterwards


def test_memory_error_is_one_line_and_exit_1(files, monkeypatch, capsys):
    def exhausted(*args, **kwargs):
        raise MemoryError()
    monkeypatch.setattr(sira, "evaluate", exhausted)
    assert main(["eval", "D", "-r", f"D={files['csv']}"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("MemoryError: out of memory") and "Traceback" not in err


def test_an_internal_error_is_one_line_and_exit_1(files, monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise IndexError("deque index out of range")
    monkeypatch.setattr(sira, "evaluate", broken)
    assert main(["eval", "D", "-r", f"D={files['csv']}"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("IndexError: deque index out of range") and "report it" in err
    assert err.count("\n") == 1


def test_ctrl_c_in_the_repl_cancels_the_query_and_keeps_the_session(monkeypatch, tmp_path,
                                                                     capsys):
    real_evaluate = sira.evaluate

    def interrupted_on_tclose(expr, *args, **kwargs):
        if "tclose" in repr(expr).lower():
            raise KeyboardInterrupt
        return real_evaluate(expr, *args, **kwargs)
    monkeypatch.setattr(sira, "evaluate", interrupted_on_tclose)
    code, _ = _drive_repl(monkeypatch, tmp_path, [
        "E := relation(heading(s(int) d(int)) body(tuple(s(1) d(2)) tuple(s(2) d(3))))",
        "tclose(E, (s, d))",
        "cardinality(E)",
        ":relvars",
    ])
    captured = capsys.readouterr()
    assert code == 0
    assert "KeyboardInterrupt: query cancelled" in captured.err
    assert "\n2\n" in captured.out  # the next query ran, on the relvar bound before
    assert "E  {d: INT, s: INT}  (2 tuples)" in captured.out


def test_repl_loads_parquet_and_prints_csv(monkeypatch, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    r = sira.Relation.from_rows({"a": sira.INT}, [(1,), (2,)])
    r.write_parquet(tmp_path / "r.parquet")
    code, _ = _drive_repl(monkeypatch, tmp_path, [
        f":load R={tmp_path / 'r.parquet'}", ":format csv", "R", ":quit"])
    out = capsys.readouterr().out
    assert code == 0 and "R := 2 tuples {a: INT}" in out
    assert "a:int\r\n1\r\n2" in out or "a:int\n1\n2" in out


# ------------------------------------------------------------------------------ limits
@pytest.fixture
def numbers_files(tmp_path):
    for name, attr in (("a", "a"), ("b", "b")):
        (tmp_path / f"{name}.csv").write_text(f"{attr}:int\n" + "".join(f"{i}\n"
                                                                       for i in range(300)))
    return tmp_path


def test_eval_prints_at_most_limit_tuples_and_says_how_many_it_left_out(numbers_files, capsys):
    a = numbers_files / "a.csv"
    assert main(["eval", "A", "-r", f"A={a}"]) == 0
    out = capsys.readouterr().out
    assert "... and 280 more tuples" in out and "300 tuples" in out
    assert main(["eval", "A", "-r", f"A={a}", "--limit", "2"]) == 0
    assert "... and 298 more tuples" in capsys.readouterr().out
    assert main(["eval", "A", "-r", f"A={a}", "--limit", "all"]) == 0
    assert "more tuples" not in capsys.readouterr().out
    assert main(["eval", "A", "-r", f"A={a}", "--format", "csv"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 301  # data formats are never cut


@pytest.mark.parametrize("engine", ["python", "duckdb"])
def test_eval_refuses_a_runaway_cartesian_product_on_every_engine(numbers_files, capsys,
                                                                  engine):
    a, b = numbers_files / "a.csv", numbers_files / "b.csv"
    argv = ["eval", "join(A, B)", "-r", f"A={a}", "-r", f"B={b}", "--engine", engine,
            "--max-tuples", "1000"]
    assert main(argv) == 1
    assert "TooManyTuples: JOIN" in capsys.readouterr().err


def test_eval_memory_limit_goes_to_duckdb_and_only_to_duckdb(numbers_files, capsys):
    a = numbers_files / "a.csv"
    assert main(["eval", "count(A)", "-r", f"A={a}", "--engine", "duckdb",
                 "--memory-limit", "300MB"]) == 0
    assert capsys.readouterr().out.strip() == "300"
    assert main(["eval", "count(A)", "-r", f"A={a}", "--memory-limit", "300MB"]) == 2
    assert "--engine duckdb" in capsys.readouterr().err
