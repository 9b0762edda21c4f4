"""sira: a relational algebra engine in the style of Tutorial D and SIRA_PRISE.

Write an expression in SIRA_PRISE's text syntax or with the Python builder, and evaluate it::

    >>> import sira
    >>> dbmsfile = sira.Relation.from_rows(
    ...     {"filename": sira.STRING, "pagesize": sira.INT},
    ...     [("DATABASECATALOG.SPDB", 32768), ("BW_SPOTS.SPDB", 16384)])
    >>> r = sira.evaluate("restrict(dbmsfile, gt(pagesize, 16384))", {"dbmsfile": dbmsfile})
    >>> r.to_rows()
    [{'filename': 'DATABASECATALOG.SPDB', 'pagesize': 32768}]
    >>> q = sira.relvar("dbmsfile", dbmsfile.heading).project("pagesize")
    >>> len(sira.evaluate(q, {"dbmsfile": dbmsfile}))
    2
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import errors
from .algebra.basic import RelationLiteral, RelvarRef
from .algebra.node import Node
from .errors import (CheckpointError, DataFormatError, DataSourceError, DivisionByZero,
                     DuplicateAttribute, EngineUnavailable, FloatOverflow, HeadingMismatch,
                     IntOverflow, MissingExtra, NullValue, ParseError, SiraError, SiraTypeError,
                     SiraValueError, TooManyTuples, UnboundedClosure, UnknownAttribute,
                     UnknownOperator, UnknownRelvar)
from .explain import explain
from .expressions.nodes import Expr, attr, call, lit
from .intervals import (DATEINTERVAL, FLOATINTERVAL, INTINTERVAL, LONGINTERVAL,
                        TIMESTAMPINTERVAL, Interval)
from .types import (AVERAGE, BIGINT, BOOLEAN, DATE, FLOAT, INT, LONG, STRING, TIMESTAMP,
                    Average, RelationType, TupleType)
from .values import TABLE_DEE, TABLE_DUM, Heading, HeadingLike, Relation, Tuple
from .io import (ReadReport, from_arrow, from_pandas, read_arrow, read_csv, read_json,
                 read_parquet)
from .io import relations_of as _relations_of

__version__ = "0.1.0"


def relvar(name: str, heading: HeadingLike) -> RelvarRef:
    """A relvar reference for the builder API: ``relvar("dbmsfile", {"filename": STRING})``."""
    return RelvarRef(name, Heading.of(heading))


def literal(relation: Relation) -> RelationLiteral:
    """A relation value as a leaf of an expression tree: a Relation, or a pandas DataFrame or
    Arrow table (read as :func:`sira.from_pandas` / :func:`sira.from_arrow` read it).

        >>> literal(Relation.from_rows({"a": INT}, [(1,)])).heading
        Heading({a: INT})

    Raises:
        SiraTypeError: anything else.
    """
    if not isinstance(relation, Relation):
        from .io.arrowdata import foreign_relation
        converted = foreign_relation(relation, "literal")
        if not isinstance(converted, Relation):
            raise SiraTypeError(f"literal: a {type(relation).__name__} is not a relation (give "
                                f"a Relation, a pandas DataFrame or an Arrow table)",
                                expected="a relation", got=type(relation).__name__)
        relation = converted
    return RelationLiteral(relation)


def _catalog(relvars) -> dict:
    out = {}
    for name, value in (relvars or {}).items():
        try:
            out[name] = value.heading if isinstance(value, Relation) else Heading.of(value)
        except SiraTypeError as err:
            raise SiraTypeError(f"relvar '{name}': {err} (a relvar here is a Relation or a "
                                f"heading)", expected=err.expected, got=err.got) from None
    return out


def parse(text: str, relvars: Mapping[str, Any] | None = None) -> Node | Expr:
    """Parse text into an algebra tree (or a scalar expression tree).

    Args:
        text: SIRA_PRISE notation, e.g. ``"project(dbmsfile, (pagesize))"``.
        relvars: the relvars the text may name: a mapping name -> Relation or Heading (or a
            pandas DataFrame or Arrow table, converted by :mod:`sira.io`).
    Returns:
        a :class:`Node` (relational) or :class:`Expr` (scalar), type-checked.
    Raises:
        ParseError: malformed text (with ``.line`` and ``.col``).
        UnknownRelvar, UnknownAttribute, SiraTypeError, HeadingMismatch: the text is well formed
        but does not type-check.
    """
    from .syntax.builder import build_text
    from .engine.guards import check_relvars
    check_relvars(relvars)
    relvars = _relations_of(relvars)
    return build_text(text, _catalog(relvars), {k: v for k, v in (relvars or {}).items()
                                                  if isinstance(v, Relation)})


def evaluate(expr: str | Node | Expr, relvars: Mapping[str, Any] | None = None,
             engine: str | Any = "python", **options: Any) -> Relation | Any:
    """Evaluate an expression (text or tree) on an engine.

    Args:
        expr: text, an algebra :class:`Node`, or a scalar :class:`Expr`.
        relvars: mapping relvar name -> a Relation, a pandas or polars DataFrame, an Arrow
            table, a DuckDB relation, a Spark DataFrame, or a file ``"csv:PATH"``,
            ``"parquet:PATH"``, ``"json:PATH"``, ``"arrow:PATH"`` (read as :func:`read_csv`
            ... read them); on DuckDB and Spark also ``"table:NAME"`` (see
            :mod:`sira.io.intake`). Anything else is refused with ``SiraTypeError``.
        engine: ``"python"`` (the embedded engine), ``"spark"`` or ``"duckdb"``, or an engine
            object with an ``evaluate(node, relvars)`` method.
        rewrite: run the rewrite pass (:mod:`sira.rewrite`) on the tree first (default True;
            it never changes a result).
        max_tuples: the most tuples one JOIN, TCLOSE, GTCLOSE, UNPACK, pointwise split,
            GROUP/UNGROUP, window table or RSTREAM may make, or SPLWINDOW's and WINDOWBY's
            windows hold all together (default 50,000,000); past it they
            raise :class:`~sira.errors.TooManyTuples` before building the rest (on Spark:
            TCLOSE/GTCLOSE after each round and UNPACK before it runs; a Spark join is not
            counted). See :mod:`sira.engine.guards`.
        nulls: ``"error"`` (default: a NULL or NaN in a relvar that is not a Relation is refused
            with ``NullValue``) or ``"drop"`` (rows holding one are left out), on every engine.
    Returns:
        a :class:`Relation` for a relational expression, a Python value for a scalar one.
    Raises:
        SiraValueError: an unknown option (naming the closest one) or a bad ``nulls`` policy.
        SiraTypeError: a relvar value that is not a relation.
    """
    from .engine.guards import check_options, check_relvars, checked_expression
    from .errors import deep_recursion
    expr = checked_expression(expr)
    check_relvars(relvars)
    relvars = relvars or {}
    if isinstance(engine, str):
        check_options(options)
    if engine == "python":  # DataFrames, Arrow tables, files... as relvars (sira.io.intake)
        from .io.intake import relation_of
        relvars = {k: relation_of(v, k, nulls=options.get("nulls", "error"))
                   for k, v in relvars.items()}
    if isinstance(expr, str) and engine == "python":
        expr = parse(expr, relvars)
    rewrite = options.pop("rewrite", True)
    if rewrite and isinstance(expr, Node):
        from .rewrite import optimize
        expr = optimize(expr)  # never changes a result (sira.rewrite)
        rewrite = False
    if engine != "python":  # an engine parsing text itself rewrites the tree it gets
        options["rewrite"] = rewrite
    if isinstance(engine, str):
        if engine == "python":
            from . import engine as python_engine
            with deep_recursion():
                if isinstance(expr, Expr):
                    from .expressions.evaluate import compile_row, infer_type
                    infer_type(expr, Heading())
                    ctx = python_engine.Context(relvars, options)
                    python_engine._load_families()
                    return compile_row(expr, Heading(), ctx.eval)(())
                return python_engine.evaluate_node(expr, relvars, **options)
        if engine == "spark":
            try:
                from sira_spark import default_engine
            except ImportError as err:
                raise EngineUnavailable(engine="Spark", reason=str(err),
                                        install="pip install 'sira[spark]' (and Java 17+)") \
                    from None
            return default_engine().evaluate(expr, relvars, **options)
        if engine == "duckdb":
            try:
                from sira_duckdb import default_engine as duckdb_engine
            except ImportError as err:
                raise EngineUnavailable(engine="DuckDB", reason=str(err),
                                        install="pip install 'sira[duckdb]'") from None
            return duckdb_engine().evaluate(expr, relvars, **options)
        raise SiraError(f"unknown engine '{engine}' (python, spark or duckdb)")
    return engine.evaluate(expr, relvars, **options)


__all__ = [
    "AVERAGE", "BIGINT", "BOOLEAN", "DATE", "DATEINTERVAL", "FLOAT", "FLOATINTERVAL", "INT",
    "INTINTERVAL", "LONG", "LONGINTERVAL", "STRING", "TABLE_DEE", "TABLE_DUM", "TIMESTAMP",
    "TIMESTAMPINTERVAL", "Average", "DivisionByZero", "DuplicateAttribute", "Expr", "Heading",
    "HeadingMismatch", "IntOverflow", "Interval", "Node", "ParseError", "Relation",
    "RelationType", "SiraError", "SiraTypeError", "SiraValueError", "Tuple", "TupleType",
    "UnboundedClosure", "UnknownAttribute", "UnknownOperator", "UnknownRelvar", "attr", "call",
    "errors", "evaluate", "explain", "lit", "literal", "parse", "relvar",
    "ReadReport", "from_arrow", "from_pandas", "read_arrow", "read_csv", "read_json",
    "read_parquet", "CheckpointError", "DataFormatError", "DataSourceError",
    "EngineUnavailable", "FloatOverflow", "MissingExtra", "NullValue", "TooManyTuples",
]
