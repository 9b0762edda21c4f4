"""The DuckDB engine object: a connection plus the compiler.

    >>> import sira
    >>> from sira_duckdb import DuckDBEngine
    >>> engine = DuckDBEngine()
    >>> r = sira.Relation.from_rows({"a": sira.INT}, [(1,), (2,)])
    >>> engine.evaluate("restrict(r, gt(a, 1))", {"r": r}).to_rows()
    [{'a': 2}]
    >>> engine.arrow("restrict(r, gt(a, 1))", {"r": r}).num_rows
    1

``evaluate`` gives a Relation (Python tuples); ``arrow`` an Arrow table and ``relation`` a
DuckDB relation, neither going through Python tuples; ``sql`` the SQL text and ``explain``
DuckDB's plan. Relvars may be Relations, pandas DataFrames, Arrow tables, DuckDB relations,
``"parquet:PATH"``, ``"csv:PATH"`` (and JSON, Arrow) and ``"table:NAME"`` (see ``relvars.py``).

With ``memory_limit`` (``"500MB"``) and ``temp_directory`` DuckDB spills what does not fit to
disk, so relations larger than memory can be packed and joined.
"""

from __future__ import annotations

import functools
import os

import duckdb

from sira.errors import DataSourceError, SiraValueError
from sira.expressions.nodes import Expr
from sira.values import Relation

from .compiler import Compiler
from .relvars import NULL_POLICIES, Unique, scan
from .sql import string

_DEFAULT = None


def _deep(method):
    """Let a method walk deeply nested trees (as the Python engine does); a failure on a
    connection that has been closed is ``EngineUnavailable`` saying so (it was DuckDB's own
    ConnectionException, or a relvar that "cannot be read")."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        from sira.errors import deep_recursion
        with deep_recursion():
            try:
                return method(self, *args, **kwargs)
            except Exception:
                self.require_open()
                raise
    return wrapper


def default_memory_limit() -> str:
    """Half of the machine's physical memory (DuckDB's own default, 80%, leaves too little for
    the Python process that reads the results), as DuckDB's ``memory_limit``."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return "4GB"
    return f"{max(total // 2 // (1 << 20), 256)}MB"


@functools.lru_cache(maxsize=None)
def default_temp_directory() -> str:
    """A directory of this process's own under the system's temporary directory, where DuckDB
    spills what does not fit its ``memory_limit`` (removed when the process ends)."""
    import atexit
    import shutil
    import tempfile
    path = tempfile.mkdtemp(prefix="sira-duckdb-")
    atexit.register(shutil.rmtree, path, True)
    return path


class DuckDBEngine:
    """Evaluates sira trees on DuckDB.

    Args:
        connection: a DuckDB connection to use (its tables become ``"table:NAME"`` relvars);
            when None a new one is opened on ``database``, with ``preserve_insertion_order``
            off (a relation has no order; DuckDB then needs less memory for large results).
        database: the database file for a connection opened here (``":memory:"``).
        memory_limit: DuckDB's ``memory_limit`` (``"500MB"``); beyond it DuckDB spills. A
            connection opened here defaults to half of the machine's memory
            (:func:`default_memory_limit`).
        threads: DuckDB's worker threads.
        temp_directory: where DuckDB spills; a connection opened here defaults to a directory
            of its own under the system's temporary directory.
        trust_unique: treat every DataFrame / Arrow / file / table relvar as duplicate-free
            (no DISTINCT when it is read); ``unique(value)`` says it for one relvar.
        nulls: ``"error"`` (a NULL or NaN in a relvar raises NullValue) or ``"drop"`` (rows
            holding one are left out); ``evaluate(..., nulls="drop")`` for one evaluation.
        trust_no_nulls: treat every DataFrame / Arrow / file / table relvar as free of NULL and
            NaN (no checking scan); a ``nulls=`` option of one call still applies. Data
            breaking that promise gives wrong answers.
    Raises:
        SiraValueError: a setting DuckDB refuses.
    """

    def __init__(self, connection=None, database: str = ":memory:", memory_limit=None,
                 threads=None, temp_directory=None, trust_unique: bool = False,
                 nulls: str = "error", trust_no_nulls: bool = False):
        if nulls not in NULL_POLICIES:
            raise SiraValueError(f"nulls must be one of {', '.join(NULL_POLICIES)} (got "
                                 f"{nulls!r})", operator="DUCKDB", value=nulls)
        from sira.engine.guards import check_flag
        check_flag("trust_unique", trust_unique, "DUCKDB")
        check_flag("trust_no_nulls", trust_no_nulls, "DUCKDB")
        own = connection is None
        if not own and not isinstance(connection, duckdb.DuckDBPyConnection):
            from sira.errors import SiraTypeError
            raise SiraTypeError(f"connection must be a DuckDB connection (got one of type "
                                f"{type(connection).__name__})", operator="DUCKDB",
                                expected="a DuckDBPyConnection", got=type(connection).__name__)
        try:
            self.connection = duckdb.connect(database) if own else connection
        except duckdb.Error as err:  # a database file that cannot be opened or made
            raise DataSourceError(source=str(database),
                                  reason=str(err).strip().splitlines()[0]) from None
        if own:  # relations are sets: no result needs DuckDB to keep an order (less memory)
            self.connection.execute("SET preserve_insertion_order = false")
            if memory_limit is None:
                memory_limit = default_memory_limit()
            if temp_directory is None:
                temp_directory = default_temp_directory()
        self.trust_unique = trust_unique
        self.nulls = nulls
        self.trust_no_nulls = trust_no_nulls
        self._kept: list = []
        self._set("memory_limit", memory_limit, string)
        self._set("threads", threads, lambda n: str(int(n)))
        self._set("temp_directory", temp_directory, string)
        from .udfs import install
        try:
            install(self.connection)
        except duckdb.ConnectionException:
            self.require_open()
            raise

    def require_open(self) -> None:
        """Raise ``EngineUnavailable`` when this engine's connection has been closed.

        Raises:
            EngineUnavailable: the connection is closed (make a new DuckDBEngine).
        """
        try:
            self.connection.execute("SELECT 1").fetchall()
        except duckdb.ConnectionException:
            from sira.errors import EngineUnavailable
            raise EngineUnavailable(engine="DuckDB", reason="its connection has been closed; "
                                    "make a new DuckDBEngine") from None
        except duckdb.Error:  # open, whatever else is wrong (the caller's error stands)
            return

    def _set(self, name, value, render):
        if value is None:
            return
        try:
            self.connection.execute(f"SET {name} = {render(value)}")
        except (duckdb.Error, ValueError, TypeError) as err:
            raise SiraValueError(f"DuckDB refuses {name}={value!r}: {err}", operator="DUCKDB",
                                 value=value) from None

    # ------------------------------------------------------------------ compiling
    def _prepare(self, expr, relvars, options, every_distinct: bool = False):
        import sira
        from sira.engine.guards import check_options, check_relvars, checked_expression
        from sira.rewrite import optimize
        check_options(options)
        check_relvars(relvars)
        expr = checked_expression(expr)
        options = dict(options)
        rewrite = options.pop("rewrite", True)
        c = Compiler(self, relvars or {}, options)
        try:
            node = expr
            if isinstance(expr, str):
                catalog = {k: c.relvar_scan(k).heading for k in (relvars or {})}
                node = sira.parse(expr, catalog)
            if rewrite and isinstance(node, sira.Node):
                node = optimize(node)  # never changes a result (sira.rewrite)
            if not isinstance(node, Expr):
                c.start(node, every_distinct)
        except BaseException:
            c.release()
            raise
        return c, node

    def heading_of(self, value, name: str = "relvar"):
        """The sira heading of a relvar value (a Relation, DataFrame, file, table...)."""
        if isinstance(value, Unique):
            value = value.value
        if isinstance(value, Relation):
            return value.heading
        c = Compiler(self, {name: value})
        try:
            return scan(c, name, value).heading
        finally:
            c.release()

    # ------------------------------------------------------------------ results
    @_deep
    def evaluate(self, expr, relvars=None, **options):
        """Evaluate on DuckDB and return the result as a Relation (or a scalar's value).

        Args:
            expr: text, an algebra node or a scalar expression.
            relvars: mapping relvar name -> value (see the module docstring).
            options: ``max_tuples`` (UNPACK, GTCLOSE), ``nulls``, ``rewrite`` (default True:
                the tree goes through :mod:`sira.rewrite` first).
        Raises:
            the sira error the Python engine raises on the same input (naming the node).
        """
        return self._result(expr, relvars, options, lambda c, node: c.evaluate(node))

    @_deep
    def arrow(self, expr, relvars=None, **options):
        """The result as a pyarrow Table (no Python tuples are made)."""
        return self._result(expr, relvars, options, lambda c, node: c.arrow(node))

    def _result(self, expr, relvars, options, action):
        """``action(compiler, node)`` run on the compiled query. A ``max_tuples`` guard counts
        the rows DuckDB makes; over relvars read without DISTINCT (their duplicates cannot change
        the result) those rows may repeat, so a refusal there is checked again over every relvar
        made distinct, and only a refusal of the sets stands."""
        from sira.errors import TooManyTuples
        c, node = self._prepare(expr, relvars, options)
        try:
            return action(c, node)
        except TooManyTuples:
            if not c.undeduped:
                raise
        finally:
            c.release()
        c, node = self._prepare(expr, relvars, options, every_distinct=True)
        try:
            return action(c, node)
        finally:
            c.release()

    @_deep
    def relation(self, expr, relvars=None, **options):
        """The result as a lazy DuckDB relation (run when read). The views and temporary
        tables it reads stay registered until :meth:`close`."""
        c, node = self._prepare(expr, relvars, options)
        try:
            rel = self.connection.sql(c.query(node))
        except BaseException:
            c.release()
            raise
        self._kept.append(c)
        return rel

    @_deep
    def sql(self, expr, relvars=None, **options) -> str:
        """The SQL text of the query computing ``expr`` on this connection. The views and
        temporary tables it names stay registered until :meth:`close`.

        The text reads a relvar without DISTINCT where its duplicates cannot change the result
        (``sira.algebra.duplicates``); a ``max_tuples`` guard in it then counts rows as DuckDB
        makes them, so over inputs holding duplicate rows it can refuse a result whose set is
        within the limit (:meth:`evaluate` and :meth:`arrow` check such a refusal again over
        the sets). Pass distinct inputs, or a larger ``max_tuples``, to run it yourself."""
        c, node = self._prepare(expr, relvars, options)
        self._kept.append(c)
        return c.query(node)

    @_deep
    def explain(self, expr, relvars=None, analyze: bool = False, **options) -> str:
        """DuckDB's physical plan for ``expr`` (``analyze=True``: run it and show timings)."""
        c, node = self._prepare(expr, relvars, options)
        try:
            kind = "EXPLAIN ANALYZE " if analyze else "EXPLAIN "
            rows = self.connection.sql(kind + c.query(node)).fetchall()
            return "\n".join(row[-1] for row in rows)
        finally:
            c.release()

    def close(self) -> None:
        """Drop what ``relation`` and ``sql`` results kept registered."""
        for c in self._kept:
            c.release()
        self._kept = []


def default_engine() -> DuckDBEngine:
    """One shared in-memory engine (created on first use; ``SIRA_DUCKDB_THREADS`` and
    ``SIRA_DUCKDB_MEMORY_LIMIT`` set its threads and memory limit)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = DuckDBEngine(threads=os.environ.get("SIRA_DUCKDB_THREADS") or None,
                                memory_limit=os.environ.get("SIRA_DUCKDB_MEMORY_LIMIT") or None)
    return _DEFAULT
