"""The DuckDB engine as a user meets it: relvars given as Relations, DataFrames, Arrow tables,
DuckDB relations, files and tables; results as Relations, Arrow tables, DuckDB relations, SQL
text and plans; NULLs refused or dropped; failures reported as sira errors naming the node;
names and strings that look like SQL staying data; every node and operator translated."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sira
from sira import (INT, INTINTERVAL, STRING, TABLE_DEE, TABLE_DUM, Interval, Relation, attr,
                  call, lit)
from sira.errors import (DataSourceError, DivisionByZero, IntOverflow, NullValue, SiraTypeError,
                         SiraValueError, UnknownRelvar)

from conftest import ENGINES

pytestmark = pytest.mark.skipif("duckdb" not in ENGINES, reason="needs duckdb and pyarrow")

L = sira.literal

FILES = Relation.from_rows({"filename": STRING, "pagesize": INT},
                           [("DATABASECATALOG.SPDB", 32768), ("BW_SPOTS.SPDB", 16384),
                            ("BW_TEMP.SPDB", 16384)])
QUERY = "project(restrict(files, ge(pagesize, 16384)), (pagesize))"
EXPECTED = Relation.from_rows({"pagesize": INT}, [(32768,), (16384,)])


@pytest.fixture()
def engine():
    from sira_duckdb import DuckDBEngine
    e = DuckDBEngine()
    yield e
    e.close()


def files_frame(duplicates=True):
    """FILES as a pandas DataFrame with duplicate rows, upper-case names, columns out of order."""
    pd = pytest.importorskip("pandas")
    rows = [(r["pagesize"], r["filename"]) for r in FILES.to_rows()]
    if duplicates:
        rows = rows + rows[:2]
    return pd.DataFrame(rows, columns=["PAGESIZE", "FileName"]).astype({"PAGESIZE": "int32"})


# --------------------------------------------------------------------------- relvar kinds

@pytest.mark.parametrize("method", ["arrow", "relation", "sql", "explain"])
def test_a_table_of_a_scalar_expression_is_refused_by_name(engine, method):
    with pytest.raises(SiraTypeError, match=r"expected a relational expression, "
                                            r"got plus\(1, ?2\) \(a scalar"):
        getattr(engine, method)("plus(1, 2)")
    assert engine.evaluate("plus(1, 2)") == 3


def test_relvar_given_as_a_relation(engine):
    assert engine.evaluate(QUERY, {"files": FILES}) == EXPECTED
    assert sira.evaluate(QUERY, {"files": FILES}, engine="duckdb") == EXPECTED


@pytest.mark.parametrize("lend", [True, False], ids=["lent", "views"])
def test_python_objects_are_lent_for_one_query_and_given_back(engine, monkeypatch, lend):
    """Arrow tables, pandas DataFrames and Relations are lent to DuckDB for one evaluation (by
    a handle on DuckDB 2, by a view before it) and given back after it, also when it fails;
    what ``sql`` names stays readable until ``close``."""
    import sys

    import pyarrow as pa
    import sira_duckdb.compiler as compiler
    if not lend:
        monkeypatch.setattr(compiler, "_LEND", None)
    table = FILES.to_arrow()
    frame = files_frame()
    before = sys.getrefcount(table), sys.getrefcount(frame)
    for value in (table, frame, FILES):
        assert engine.evaluate(QUERY, {"files": value}) == EXPECTED
        with pytest.raises(DivisionByZero):
            engine.evaluate("extend(files, (x(div(pagesize, 0))))", {"files": value})
    assert (sys.getrefcount(table), sys.getrefcount(frame)) == before
    text = engine.sql(QUERY, {"files": table})
    assert sorted(engine.connection.sql(text).fetchall()) == [(16384,), (32768,)]
    assert sys.getrefcount(table) > before[0]
    engine.close()
    assert sys.getrefcount(table) == before[0]
    views = engine.connection.sql("SELECT count(*) FROM duckdb_views() WHERE NOT internal")
    assert views.fetchall() == [(0,)]
    assert isinstance(table, pa.Table)


def test_a_dataframe_with_duplicates_is_a_set(engine):
    df = files_frame()
    assert engine.evaluate("files", {"files": df}) == FILES
    assert engine.arrow("files", {"files": df}).num_rows == 3


def test_unique_relvars_skip_distinct(engine):
    from sira_duckdb import DuckDBEngine, unique
    df = files_frame()
    assert engine.arrow("files", {"files": unique(df)}).num_rows == 5  # asserted, not checked
    trusting = DuckDBEngine(connection=engine.connection, trust_unique=True)
    assert trusting.arrow("files", {"files": df}).num_rows == 5
    assert "DISTINCT" not in engine.sql("files", {"files": unique(files_frame(False))})


def test_arrow_tables_and_dataframes_are_scanned_in_place(engine, monkeypatch):
    """Neither a DataFrame nor an Arrow table relvar, nor an Arrow result, goes through Python
    tuples or sira values."""
    import sira_duckdb.convert as convert
    table = files_frame(False).to_arrow() if hasattr(files_frame(False), "to_arrow") else None
    import pyarrow as pa
    table = pa.Table.from_pandas(files_frame(False), preserve_index=False)

    def refuse(*args, **kwargs):
        raise AssertionError("converted through Python")
    monkeypatch.setattr(convert, "to_arrow", refuse)
    monkeypatch.setattr(convert, "to_relation", refuse)
    out = engine.arrow("join(a, b)", {"a": table, "b": files_frame()})
    assert out.num_rows == 3 and sorted(out.column_names) == ["filename", "pagesize"]


def test_relvar_given_as_a_duckdb_relation_table_parquet_and_csv(engine, tmp_path):
    con = engine.connection
    con.execute("CREATE TABLE files_table (filename VARCHAR, pagesize INTEGER)")
    con.execute("INSERT INTO files_table SELECT * FROM (VALUES ('DATABASECATALOG.SPDB', 32768),"
                " ('BW_SPOTS.SPDB', 16384), ('BW_TEMP.SPDB', 16384), ('BW_TEMP.SPDB', 16384))")
    parquet = tmp_path / "files.parquet"
    csv = tmp_path / "files.csv"
    con.execute(f"COPY files_table TO '{parquet}' (FORMAT PARQUET)")
    con.execute(f"COPY files_table TO '{csv}' (HEADER)")
    for value in ("table:files_table", f"parquet:{parquet}", f"csv:{csv}",
                  con.sql("SELECT * FROM files_table")):
        assert engine.evaluate(QUERY, {"files": value}) == EXPECTED, value


def test_relvars_of_every_kind_join_together(engine, tmp_path):
    sizes = Relation.from_rows({"pagesize": INT, "label": STRING},
                               [(16384, "small"), (32768, "big")])
    r = engine.evaluate("join(files, sizes)", {"files": files_frame(), "sizes": sizes})
    assert len(r) == 3 and r.heading.names == ("filename", "label", "pagesize")


def test_a_relvar_of_an_unknown_kind_is_a_type_error(engine):
    with pytest.raises(SiraTypeError, match="relvar 'files'"):
        engine.evaluate("files", {"files": 42})
    with pytest.raises(SiraTypeError):
        engine.evaluate("files", {"files": "excel:/tmp/x.xlsx"})


def test_a_missing_file_or_table_is_a_data_source_error(engine, tmp_path):
    for value in (f"parquet:{tmp_path / 'nosuch.parquet'}", "table:nosuch"):
        with pytest.raises(DataSourceError) as info:
            engine.evaluate("files", {"files": value})
        assert info.value.relvar == "files"


def test_an_unknown_relvar_suggests_the_closest_name(engine):
    with pytest.raises(UnknownRelvar) as info:
        engine.evaluate(sira.relvar("fils", FILES.heading), {"files": FILES})
    assert info.value.suggestions == ("files",)


def test_a_relvar_with_the_wrong_heading_for_the_tree_is_a_type_error(engine):
    tree = sira.relvar("files", {"filename": STRING})
    with pytest.raises(SiraTypeError):
        engine.evaluate(tree, {"files": files_frame()})


# --------------------------------------------------------------------------- NULL and NaN

def test_a_null_in_a_dataframe_is_refused_naming_relvar_attribute_and_count(engine):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"name": ["a", None, None, "d"], "size": [1, 2, 3, 4]})
    with pytest.raises(NullValue) as info:
        engine.evaluate("files", {"files": df})
    err = info.value
    assert (err.relvar, err.attribute, err.count, err.value) == ("files", "name", 2, "NULL")


def test_a_nan_is_refused_as_nan(engine):
    import pyarrow as pa
    pd = pytest.importorskip("pandas")
    for value in (pd.DataFrame({"x": [1.0, float("nan")]}),
                  pa.table({"x": pa.array([1.0, float("nan")])})):
        with pytest.raises(NullValue) as info:
            engine.evaluate("r", {"r": value})
        assert (info.value.attribute, info.value.count, info.value.value) == ("x", 1, "NaN")


def test_nulls_drop_leaves_those_rows_out(engine):
    from sira_duckdb import DuckDBEngine
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"name": ["a", None, "c"], "size": [1.0, 2.0, float("nan")]})
    expected = Relation.from_rows({"name": STRING, "size": sira.FLOAT}, [("a", 1.0)])
    assert engine.evaluate("r", {"r": df}, nulls="drop") == expected
    dropping = DuckDBEngine(connection=engine.connection, nulls="drop")
    assert dropping.evaluate("r", {"r": df}) == expected
    with pytest.raises(SiraValueError):
        engine.evaluate("r", {"r": df}, nulls="keep")


# --------------------------------------------------------------------------- results

def test_relation_sql_and_explain_do_not_collect(engine):
    import duckdb
    rel = engine.relation(QUERY, {"files": files_frame()})
    assert isinstance(rel, duckdb.DuckDBPyRelation)
    assert sorted(rel.fetchall()) == [(16384,), (32768,)]
    text = engine.sql(QUERY, {"files": files_frame()})
    assert text.startswith("WITH ") and "SELECT" in text
    plan = engine.explain("join(files, files2)", {"files": files_frame(),
                                                  "files2": files_frame()})
    assert "HASH_JOIN" in plan.upper().replace(" ", "_")


def test_a_result_relation_feeds_another_query(engine):
    rel = engine.relation(QUERY, {"files": FILES})
    r = engine.evaluate("extend(r, (double(plus(pagesize, pagesize))))", {"r": rel})
    assert {t["double"] for t in r.to_rows()} == {32768, 65536}


def test_evaluate_a_scalar_expression(engine):
    assert engine.evaluate(call("concat", lit("a"), lit("b"))) == "ab"
    assert sira.evaluate("eq(TABLE_DEE, project(relation(body(tuple(a(1)))), ()))",
                         engine="duckdb") is True


def test_settings_reach_duckdb(tmp_path):
    from sira_duckdb import DuckDBEngine
    e = DuckDBEngine(memory_limit="300MB", threads=1, temp_directory=str(tmp_path))
    (limit, threads, temp), = e.connection.sql(
        "SELECT current_setting('memory_limit'), current_setting('threads'), "
        "current_setting('temp_directory')").fetchall()
    assert threads == 1 and temp == str(tmp_path) and limit.startswith(("286", "300"))
    with pytest.raises(SiraValueError):
        DuckDBEngine(memory_limit="lots")


def test_the_cli_evaluates_on_duckdb(capsys):
    from sira.cli import main
    assert main(["eval", "--engine", "duckdb",
                 "summarizeby(relation(body(tuple(a(1) b(string(x))) tuple(a(2) b(string(x))))),"
                 " (b), (n(plus(a))))"]) == 0
    out = capsys.readouterr().out
    assert "| x" in out and "| 3" in out


# --------------------------------------------------------------------------- errors

def test_division_by_zero_names_the_node():
    r = Relation.from_rows({"a": INT, "b": INT}, [(1, 0)])
    with pytest.raises(DivisionByZero, match="EXTEND"):
        sira.evaluate(L(r).extend(q=attr("a") / attr("b")).project("q"), engine="duckdb")


def test_overflow_names_the_lowest_failing_node():
    r = Relation.from_rows({"a": INT}, [(2147483647,)])
    tree = L(r).extend(b=attr("a") + 1).project("b").union(L(Relation.from_rows({"b": INT}, [])))
    with pytest.raises(IntOverflow, match="EXTEND"):
        sira.evaluate(tree, engine="duckdb")


def test_a_condition_that_can_fail_is_not_evaluated_on_tuples_python_never_sees():
    """DuckDB would push ``a / b > 0`` below the join, onto the tuple with b = 0 that joins
    nothing; a barrier keeps it above, as the Python engine evaluates it."""
    r = Relation.from_rows({"k": INT, "a": INT, "b": INT}, [(1, 4, 2), (2, 1, 0)])
    s = Relation.from_rows({"k": INT}, [(1,)])
    tree = L(r).join(L(s)).restrict(attr("a") / attr("b") > 0)
    assert sira.evaluate(tree, engine="duckdb") == sira.evaluate(tree)
    extended = L(r).join(L(s)).extend(q=attr("a") / attr("b")).restrict(attr("q") > 0)
    assert sira.evaluate(extended, engine="duckdb") == sira.evaluate(extended)


def test_or_evaluates_its_second_operand_only_where_python_does():
    r = Relation.from_rows({"a": INT, "b": INT}, [(1, 0), (4, 2)])
    tree = L(r).restrict(attr("b").eq(0) | (attr("a") / attr("b") > 1))
    assert sira.evaluate(tree, engine="duckdb") == sira.evaluate(tree) == r


# --------------------------------------------------------------------------- values

def test_degree_zero_relations_behave():
    for tree, expected in [(L(TABLE_DEE).join(L(FILES)), FILES),
                           (L(TABLE_DUM).join(L(FILES)), Relation(FILES.heading)),
                           (L(FILES).project(), TABLE_DEE),
                           (L(TABLE_DEE).minus(L(TABLE_DEE)), TABLE_DUM),
                           (L(TABLE_DEE).union(L(TABLE_DUM)), TABLE_DEE),
                           (L(FILES).restrict(lit(False)).project(), TABLE_DUM)]:
        assert sira.evaluate(tree, engine="duckdb") == expected, tree


def test_join_on_a_relation_valued_attribute():
    r = Relation.from_rows({"a": INT, "b": STRING}, [(1, "x"), (2, "x"), (3, "y")])
    grouped = L(r).group(g=("a",))
    tree = grouped.join(grouped.rename(b="c")).ungroup("g")
    assert sira.evaluate(tree, engine="duckdb") == sira.evaluate(tree)


def test_intervals_round_trip_including_unbounded():
    r = Relation.from_rows({"x": INTINTERVAL, "k": INT},
                           [(Interval(1, 5), 1), (Interval(4, None), 1), (Interval(9, 10), 2)])
    assert sira.evaluate(L(r), engine="duckdb") == r
    assert sira.evaluate(L(r).pack("x"), engine="duckdb") == sira.evaluate(L(r).pack("x"))


# --------------------------------------------------------------------------- SQL-looking names

NASTY = ["'; DROP TABLE sentinel; --", 'a"b', "/* x */", "c;d", "e'f", "--"]


def _nasty_relations():
    n0, n1, n2, n3 = NASTY[:4]
    heading = {n0: STRING, n1: INT, n2: INTINTERVAL}
    rows = [{n0: NASTY[i % len(NASTY)], n1: i % 3, n2: Interval(i, i + 2)} for i in range(6)]
    r = Relation.from_rows(heading, rows)
    edges = Relation.from_rows({n0: INT, n3: INT}, [(1, 2), (2, 3), (3, 1)])
    return r, edges


def test_names_and_strings_that_look_like_sql_stay_data_through_every_operator(engine):
    engine.connection.execute("CREATE TABLE sentinel AS SELECT 1 AS x")
    n0, n1, n2, n3 = NASTY[:4]
    r, edges = _nasty_relations()
    relvar = sira.relvar(NASTY[4], r.heading)
    other = L(r).restrict(attr(n1) > 0)
    trees = [
        relvar.restrict(attr(n0).eq(NASTY[0]) | attr(n0).eq(NASTY[2])),
        relvar.project(n0, n1),
        relvar.extend(**{NASTY[5]: attr(n0).concat(lit(NASTY[1]))}),
        relvar.rename({n0: NASTY[3]}),
        relvar.transform(n1, **{NASTY[4]: call("length", attr(n0))}),
        relvar.union(other), relvar.intersect(other), relvar.minus(other), relvar.xminus(other),
        relvar.join(other.rename({n2: "y"})), relvar.semijoin(other), relvar.semiminus(other),
        relvar.project(n0, n1).leftjoin(L(Relation.from_rows({n1: INT, NASTY[5]: STRING},
                                                             [(1, NASTY[1])])),
                                        **{NASTY[5]: lit(NASTY[0])}),
        relvar.group(**{NASTY[3]: (n0, n2)}).ungroup(NASTY[3]),
        relvar.summarizeby((n0,), **{NASTY[5]: ("plus", attr(n1))}),
        relvar.aggregate(**{NASTY[3]: ("max", attr(n0))}),
        relvar.pack(n2), relvar.unpack(n2),
        L(edges).tclose(n0, n3),
        L(edges).extend(**{NASTY[5]: lit(1)}).gtclose(
            (n0, n3), **{NASTY[5]: attr("__l__" + NASTY[5]) + attr("__r__" + NASTY[5])}),
    ]
    _assert_as_python_and_sentinel_intact(engine, trees, {NASTY[4]: r})


def _assert_as_python_and_sentinel_intact(engine, trees, relvars):
    """Each tree gives the Python engine's relation (or error class) on DuckDB, and the
    ``sentinel`` table is still there afterwards."""
    for tree in trees:
        try:
            expected = sira.evaluate(tree, relvars)
        except sira.SiraError as err:
            with pytest.raises(type(err)):
                engine.evaluate(tree, relvars)
            continue
        assert engine.evaluate(tree, relvars) == expected, tree
    assert engine.connection.sql("SELECT x FROM sentinel").fetchall() == [(1,)]


def test_sql_looking_names_stay_data_through_the_interval_and_window_operators(engine):
    import attrs as _attrs

    from sira.algebra.joins import DivideBy, Join
    from sira.algebra.setops import Minus
    from sira.algebra.windows import Duration, IStream, Window, WindowSpec, WindowTable
    engine.connection.execute("CREATE OR REPLACE TABLE sentinel AS SELECT 1 AS x")
    n0, n1, n2, n3 = NASTY[:4]
    r, _ = _nasty_relations()
    relvar = sira.relvar(NASTY[4], r.heading)
    other = L(r).restrict(attr(n1) > 0)
    per_point = relvar.summarizeby((n0, n2), **{NASTY[5]: ("plus", attr(n1))})
    window = Window(relvar, n1, WindowSpec(kind="rows", rows=2, partition=(n0,)),
                    during=NASTY[3])
    trees = [
        Minus(relvar, other, using=(n2,)),
        Join((relvar, other.rename({n0: NASTY[5]})), using=(n2,)),
        _attrs.evolve(per_point, using=(n2,)),
        DivideBy(relvar.project(n0), relvar.project(n0, n1), L(r).project(n1)),
        IStream(window.project(n0, NASTY[3]), at=NASTY[5], during=NASTY[3]),
        WindowTable(relvar, n1, "tumble", size=Duration(2)).summarizeby(
            ("window_start", "window_end", n0), **{NASTY[5]: ("plus", attr(n1))}),
        WindowTable(relvar, n1, "hop", size=Duration(4), slide=Duration(2)).project(
            n0, "window_start"),
        WindowTable(relvar, n1, "session", size=Duration(1), partition=(n0,)).project(
            n0, "window_end"),
    ]
    _assert_as_python_and_sentinel_intact(engine, trees, {NASTY[4]: r})


# --------------------------------------------------------------------------- coverage

def _node_classes():
    from sira.algebra.node import Node
    classes = set()
    for info in pkgutil.iter_modules(importlib.import_module("sira.algebra").__path__):
        module = importlib.import_module(f"sira.algebra.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Node) and cls is not Node and "operator_name" in vars(cls) \
                    and hasattr(cls, "__attrs_attrs__"):
                classes.add(cls)
    return classes


def test_every_algebra_node_has_a_translation_or_a_lowering():
    from sira_duckdb.compiler import LOWERED, TRANSLATIONS, load_families
    load_families()
    missing = {c.__name__ for c in _node_classes()} - \
        {c.__name__ for c in set(TRANSLATIONS) | set(LOWERED)}
    assert missing == set()


def test_unsupported_operators_is_empty_and_honest():
    from sira.expressions.library import LIBRARY
    from sira_duckdb import unsupported_operators
    from sira_duckdb.functions import TRANSLATIONS
    assert unsupported_operators() == []
    assert set(TRANSLATIONS) >= set(LIBRARY)


def test_an_operator_without_translation_says_so(monkeypatch):
    from sira_duckdb import NotSupportedOnDuckDB, unsupported_operators
    from sira_duckdb.functions import TRANSLATIONS
    monkeypatch.delitem(TRANSLATIONS, "length")
    assert unsupported_operators() == ["length"]
    with pytest.raises(NotSupportedOnDuckDB, match="length"):
        sira.evaluate(L(FILES).extend(n=call("length", attr("filename"))), engine="duckdb")


def test_the_package_doctests_pass():
    import sira_duckdb
    for info in pkgutil.iter_modules(sira_duckdb.__path__):
        module = importlib.import_module(f"sira_duckdb.{info.name}")
        result = doctest.testmod(module)
        assert result.failed == 0, info.name


def test_a_csv_file_written_by_sira_reads_back_with_its_types(engine, tmp_path):
    r = Relation.from_rows({"name": STRING, "n": sira.LONG, "day": sira.DATE, "ok": sira.BOOLEAN},
                           [("a,b", 5, __import__("datetime").date(2020, 1, 2), True)])
    path = tmp_path / "r.csv"
    r.write_csv(path)
    assert engine.evaluate("r", {"r": f"csv:{path}"}) == r
    plain = tmp_path / "plain.csv"
    plain.write_text("k,v\n1,x\n2,y\n")
    got = engine.evaluate("r", {"r": f"csv:{plain}"})
    assert got.heading == sira.Heading.of({"k": INT, "v": STRING})  # narrowed as sira infers


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(1, 4), st.integers(0, 6),
                          st.integers(1, 4), st.integers(0, 1)), min_size=5, max_size=30))
def test_pack_on_two_attributes_after_a_split_with_twins_is_pythons(rows):
    """Splitting makes equal pieces of different tuples; PACK then sees twins, which must land
    in one island whatever order DuckDB's sorts give them."""
    r = Relation.from_rows({"x": INTINTERVAL, "y": INTINTERVAL, "k": INT},
                           [(Interval(a, a + n), Interval(b, b + m), k)
                            for a, n, b, m, k in rows])
    for tree in (L(r).pack("y", "x"), L(r).pack("x", "y"), L(r).project("x", "y").pack("x", "y")):
        assert sira.evaluate(tree, engine="duckdb") == sira.evaluate(tree), tree


def test_a_null_nested_in_a_tuple_or_relation_is_refused_and_an_open_end_is_not(engine):
    import pyarrow as pa
    iv = pa.struct([("begin", pa.int32()), ("end", pa.int32())])
    rva = pa.list_(pa.struct([("a", pa.int32())]))
    open_end = pa.table({"x": pa.array([{"begin": 1, "end": None}], iv)})
    assert engine.evaluate("r", {"r": open_end}).to_rows() == [{"x": Interval(1, None)}]
    for table in (pa.table({"x": pa.array([{"begin": None, "end": 3}], iv)}),
                  pa.table({"r": pa.array([[{"a": 1}, {"a": None}]], rva)})):
        with pytest.raises(NullValue) as info:
            engine.evaluate("r", {"r": table})
        assert info.value.count == 1
    assert len(engine.evaluate("r", {"r": table}, nulls="drop")) == 0


def test_trust_no_nulls_skips_the_check_and_a_call_can_still_drop(engine):
    from sira_duckdb import DuckDBEngine
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"name": ["a", "b"], "size": [1.0, 2.0]})
    trusting = DuckDBEngine(connection=engine.connection, trust_no_nulls=True)
    assert len(trusting.evaluate("r", {"r": df})) == 2
    with_null = pd.DataFrame({"name": ["a", None], "size": [1.0, 2.0]})
    assert trusting.arrow("r", {"r": with_null}).num_rows == 2  # not looked for: a broken promise
    assert len(trusting.evaluate("r", {"r": with_null}, nulls="drop")) == 1


def test_an_interval_ending_before_its_begin_is_refused_when_read(engine, tmp_path):
    """As the readers refuse it (DataFormatError): at any depth, from Arrow or Parquet, also
    when the query reads no value of the column. DuckDB read a nested one as the empty
    interval, and let a top-level one pass when it was projected away (its check was in the
    SELECT list, which DuckDB prunes)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from sira.errors import DataFormatError
    iv = pa.struct([("begin", pa.int32()), ("end", pa.int32())])
    inverted = pa.table({"x": pa.array([{"begin": 5, "end": 3}], iv)})
    with pytest.raises(DataFormatError, match="end is before its begin"):
        engine.evaluate("r", {"r": inverted})
    k = pa.array([1], pa.int32())
    pair = pa.struct([("a", pa.int32()), ("iv", iv)])
    tables = [pa.table({"k": k, "x": inverted["x"]}),
              pa.table({"k": k, "t": pa.array([{"a": 1, "iv": {"begin": 5, "end": 3}}], pair)}),
              pa.table({"k": k, "r": pa.array([[{"a": 1, "iv": {"begin": 2, "end": 4}},
                                                 {"a": 2, "iv": {"begin": 5, "end": 3}}]],
                                               pa.list_(pair))})]
    for i, table in enumerate(tables):
        pq.write_table(table, tmp_path / f"{i}.parquet")
        for source in (table, f"parquet:{tmp_path / f'{i}.parquet'}"):
            for text in ("r", "project(r, (k))"):
                for run in (sira.evaluate, engine.evaluate):
                    with pytest.raises(DataFormatError):
                        run(text, {"r": source})
    empty = pa.table({"x": pa.array([{"begin": 5, "end": 5}], iv)})
    assert engine.evaluate("r", {"r": empty}).to_rows() == [{"x": Interval(5, 5)}]


def test_running_out_of_memory_is_a_sira_error_and_the_engine_goes_on(tmp_path):
    import pyarrow as pa
    from sira_duckdb import DuckDBEngine
    engine = DuckDBEngine(memory_limit="16MB", temp_directory=str(tmp_path / "spill"))
    big = pa.table({"k": pa.array(range(3_000_000), pa.int64()),
                    "s": pa.array([f"text number {i}" for i in range(3_000_000)])})
    with pytest.raises(sira.SiraError) as info:
        engine.evaluate("group(r, (all(k, s)))", {"r": big})
    message = str(info.value)
    assert "ran out of memory while running" in message and "memory_limit" in message
    small = Relation.from_rows({"a": INT}, [(1,), (2,)])
    assert len(engine.evaluate("r", {"r": small})) == 2


def _awkward_inputs():
    """Arrow tables and pandas DataFrames the Python engine refuses or reads in a way of its
    own (names, mixed objects, missing values, index levels, narrow floats)."""
    pd, pa, np = pytest.importorskip("pandas"), pytest.importorskip("pyarrow"), \
        pytest.importorskip("numpy")
    return {
        "names differing in case": pa.table({"A": [1, 2], "a": [3, 4]}),
        "one name twice": pa.Table.from_arrays([pa.array([1]), pa.array([2])], ["x", "x"]),
        "an empty name": pa.table({"": [1]}),
        "a name with a space": pd.DataFrame({"a b": [1]}),
        "pandas names differing in case": pd.DataFrame([[1, 2]], columns=["K", "k"]),
        "ints and strings in one column": pd.DataFrame({"x": [1, "a"]}),
        "pd.NA in Int64": pd.DataFrame({"x": pd.array([1, None], dtype="Int64")}),
        "a named index level": pd.DataFrame({"x": [1, 2]}, index=pd.Index([5, 6], name="i")),
        "float16": pa.table({"x": pa.array(np.array([1.5], dtype=np.float16))}),
        "Int64 without NA": pd.DataFrame({"x": pd.array([1, 2], dtype="Int64")}),
        "nanoseconds": pa.table({"t": pa.array([1000, 1001], pa.timestamp("ns"))}),
        "whole microseconds in nanoseconds": pa.table({"t": pa.array([1000, 3000],
                                                                    pa.timestamp("ns"))}),
        "nanoseconds in a tuple": pa.table({"x": pa.array(
            [{"t": 1001}], pa.struct([("t", pa.timestamp("ns"))]))}),
        "zoned nanoseconds": pa.table({"t": pa.array([2000], pa.timestamp("ns", tz="UTC"))}),
        "pandas nanoseconds": pd.DataFrame({"t": pd.to_datetime([1001], unit="ns")}),
        "a binary column": pa.table({"x": pa.array([b"a"])}),
        "a map column": pa.table({"x": pa.array([[("a", 1)]], pa.map_(pa.string(),
                                                                        pa.int64()))}),
        # read as the int64 ordinals under its Arrow extension type (600 for 2020-01)
        "a pandas period column": pd.DataFrame({"p": pd.period_range("2020-01", periods=2,
                                                                     freq="M")}),
    }


@pytest.mark.parametrize("kind", sorted(["names differing in case", "one name twice",
                                         "an empty name", "a name with a space",
                                         "pandas names differing in case",
                                         "ints and strings in one column", "pd.NA in Int64",
                                         "a named index level", "float16",
                                         "Int64 without NA", "nanoseconds",
                                         "whole microseconds in nanoseconds",
                                         "nanoseconds in a tuple", "zoned nanoseconds",
                                         "pandas nanoseconds", "a binary column",
                                         "a map column", "a pandas period column"]))
def test_awkward_dataframes_give_what_the_python_engine_gives(engine, kind):
    """DuckDB registered these as they were, and DuckDB renamed or converted them on its own:
    `A` and `a` became `a` and `a_1`, an empty name `v0`, [1, 'a'] the strings '1' and 'a', a
    named index level was left out; pd.NA raised TypeError; a nanosecond timestamp lost its
    last digits (1,000 and 1,001 ns became one value). Each now gives the Python engine's
    relation, or its error class."""
    value = _awkward_inputs()[kind]
    try:
        expected = sira.evaluate("r", {"r": value})
    except sira.SiraError as err:
        with pytest.raises(type(err)):
            engine.evaluate("r", {"r": value})
    else:
        assert engine.evaluate("r", {"r": value}) == expected


def test_a_parquet_file_or_table_whose_column_is_no_attribute_name_is_refused(engine, tmp_path):
    """DuckDB read a Parquet column ``a b`` as an attribute ``a b``; the Python engine refuses
    the file (DataFormatError), and so does DuckDB now, for its tables too."""
    pa, pq = pytest.importorskip("pyarrow"), pytest.importorskip("pyarrow.parquet")
    from sira.errors import DataFormatError
    path = tmp_path / "ab.parquet"
    pq.write_table(pa.table({"a b": [1]}), path)
    with pytest.raises(DataFormatError, match="'a b' is not an attribute name"):
        sira.evaluate("r", {"r": f"parquet:{path}"})
    with pytest.raises(DataFormatError, match="'a b' is not an attribute name"):
        engine.evaluate("r", {"r": f"parquet:{path}"})
    engine.connection.sql('CREATE TABLE t ("a b" INT)')
    with pytest.raises(DataFormatError, match="'a b' is not an attribute name"):
        engine.evaluate("r", {"r": "table:t"})


def test_engine_settings_are_checked_where_they_are_given(tmp_path):
    # trust_unique="no" was true (duplicates kept as tuples); an unopenable database file was
    # DuckDB's own IOException
    from sira_duckdb import DuckDBEngine
    from sira.errors import DataSourceError, SiraTypeError
    for flag in ("trust_unique", "trust_no_nulls"):
        with pytest.raises(SiraTypeError, match=f"{flag} must be True or False .got 'no'"):
            DuckDBEngine(**{flag: "no"})
    missing = tmp_path / "no" / "such" / "dir" / "x.db"
    with pytest.raises(DataSourceError, match="cannot read .*x.db"):
        DuckDBEngine(database=str(missing))


def test_a_closed_connection_is_engine_unavailable_and_no_connection_a_type_error():
    # DuckDB's own ConnectionException came out of evaluate (or a relvar that "cannot be
    # read"), and a string given as the connection was an AttributeError
    import duckdb
    from sira_duckdb import DuckDBEngine
    from sira.errors import EngineUnavailable, SiraTypeError
    r = Relation.from_rows({"a": INT}, [(1,)])
    connection = duckdb.connect()
    engine = DuckDBEngine(connection=connection)
    assert engine.evaluate("r", {"r": r}) == r
    connection.close()
    for value in (r, {"a": [1]}):
        with pytest.raises(EngineUnavailable, match="its connection has been closed"):
            engine.evaluate("r", {"r": value})
    with pytest.raises(EngineUnavailable, match="closed"):
        DuckDBEngine(connection=connection)
    with pytest.raises(SiraTypeError, match="connection must be a DuckDB connection"):
        DuckDBEngine(connection="my.db")
    with pytest.raises(sira.UnknownAttribute):  # an open engine's errors are its own
        DuckDBEngine().evaluate("project(r, (zz))", {"r": r})


def test_a_duckdb_relation_with_names_differing_in_case_is_refused_as_a_dataframe_is(engine):
    """``SELECT 1 AS a, 2 AS "A"`` has two columns; DuckDB's ``SELECT *`` over it renamed the
    second ``A_1``, and sira read it so. Like a DataFrame's, its names are now checked first."""
    from sira.errors import DuplicateAttribute
    relation = engine.connection.sql('SELECT 1 AS a, 2 AS "A"')
    with pytest.raises(DuplicateAttribute, match="'a' appears twice"):
        engine.evaluate("r", {"r": relation})
    with pytest.raises(DuplicateAttribute, match="'a' appears twice"):
        sira.evaluate("r", {"r": relation})


def test_a_parquet_timestamp_with_nanoseconds_is_refused_as_the_python_engine_refuses_it(
        engine, tmp_path):
    """DuckDB cast a Parquet TIMESTAMP_NS column to TIMESTAMP, dropping what is finer than a
    microsecond (1,000 and 1,001 ns became one value); both engines now refuse it with
    DataFormatError, and read whole microseconds alike."""
    pa, pq = pytest.importorskip("pyarrow"), pytest.importorskip("pyarrow.parquet")
    from sira.errors import DataFormatError
    fine, whole = tmp_path / "fine.parquet", tmp_path / "whole.parquet"
    pq.write_table(pa.table({"t": pa.array([1000, 1001], pa.timestamp("ns")),
                             "k": pa.array([1, 2], pa.int32())}), fine)
    pq.write_table(pa.table({"t": pa.array([1000, 3000], pa.timestamp("ns"))}), whole)
    for run in (sira.evaluate, engine.evaluate):
        for text in ("r", "project(r, (k))"):  # also when no value of t is read
            with pytest.raises(DataFormatError):
                run(text, {"r": f"parquet:{fine}"})
    assert engine.evaluate("r", {"r": f"parquet:{whole}"}) == \
        sira.evaluate("r", {"r": f"parquet:{whole}"})


def test_a_float_minus_zero_is_read_as_zero_at_any_depth(engine, tmp_path):
    """sira's FLOAT has one zero (the readers read -0.0 as 0.0). DuckDB kept -0.0 from an
    Arrow table, a DataFrame or a Parquet file: its Arrow output showed it, and the one zero
    ``project(R, (f))`` kept was -0.0."""
    pa, pq = pytest.importorskip("pyarrow"), pytest.importorskip("pyarrow.parquet")
    iv = pa.struct([("begin", pa.float64()), ("end", pa.float64())])
    pair = pa.struct([("a", pa.float64()), ("iv", iv)])
    table = pa.table({"f": pa.array([-0.0, 0.0]),
                      "t": pa.array([{"a": -0.0, "iv": {"begin": -0.0, "end": 1.0}}] * 2, pair),
                      "r": pa.array([[{"a": -0.0, "iv": {"begin": -0.0, "end": None}},
                                      {"a": 0.0, "iv": {"begin": 0.0, "end": None}}]] * 2,
                                    pa.list_(pair))})
    pq.write_table(table, tmp_path / "z.parquet")
    for source in (table, table.to_pandas(), f"parquet:{tmp_path / 'z.parquet'}"):
        (row,) = engine.arrow("R", {"R": source}).to_pylist()
        assert repr(row["f"]) == "0.0" and repr(row["t"]["a"]) == "0.0"
        assert repr(row["t"]["iv"]["begin"]) == "0.0"
        assert [repr(e["a"]) for e in row["r"]] == ["0.0"]
