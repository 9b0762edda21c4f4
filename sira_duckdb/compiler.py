"""The DuckDB compiler: one translation per algebra node, children compiled first.

A translation receives the node, its children's names (each a common table expression whose
columns are the child heading's attribute names, in sorted order) and the compiler, and returns
the SQL of a SELECT computing the node. The compiler names it as the next common table
expression, keeping only the heading's columns in order; before that it packs the result on
the node's ``pack_list`` (when it has one), so the pack state matches the Python engine's
exactly, unless the translation returns ``Packed(sql)`` (a result it packed itself). Nodes
without a native translation are lowered to their derived definition (``LOWERED``); the rest
raise NotSupportedOnDuckDB. A relation without attributes is one dummy BOOLEAN column (one row
for TABLE_DEE, none for TABLE_DUM).

A few operators need to look at their data before the rest of the plan can be written (UNPACK
counts its tuples first, closures iterate to their fixpoint): they run the plan so far and keep
results in temporary tables, never in Python.

    >>> sorted(n.__name__ for n in LOWERED)
    ['Changes', 'DivideBy']
"""

from __future__ import annotations

import itertools
import re

import duckdb

from sira import errors as sira_errors
from sira.algebra.derived import lower_changes, lower_divideby
from sira.algebra.joins import DivideBy
from sira.algebra.windows import Changes
from sira.engine.guards import kept_for_reuse
from sira.errors import (DivisionByZero, ExecutionError, IntOverflow, SiraError,
                         scalar_not_a_relation)
from sira.expressions.nodes import Aggregated, Call, Expr, FieldOf, RelationArg
from sira.types import RelationType, TupleType
from sira.values import Heading

from .sql import column_list, ident

TRANSLATIONS: dict = {}
LOWERED = {DivideBy: lower_divideby, Changes: lower_changes}


class NotSupportedOnDuckDB(SiraError):
    """A node or operator the DuckDB engine has no translation for."""

    fields = ("node",)

    def default_message(self):
        return f"{self.node} has no DuckDB translation"


def translates(node_class):
    """Register the DuckDB translation of one node class."""
    def register(fn):
        TRANSLATIONS[node_class] = fn
        return fn
    return register


_LOADED = []


def load_families():
    if _LOADED:
        return
    _LOADED.append(True)
    from . import (aggregation, basic, closure, joins, nesting, packing, setops,  # noqa: F401
                   spl, windowby, windows, windowtables)


class Packed:
    """What a translation returns when its result is already packed on the node's pack_list,
    so the compiler does not pack it again. A packed result holds each tuple once (one per
    island of each rest), so the final result needs no DISTINCT when it is one."""

    def __init__(self, sql: str):
        self.sql = sql


_NAMES = itertools.count(1)


#: DuckDB 2's way to lend a Python object to a connection without a view (None before 2.0)
_LEND = getattr(getattr(duckdb, "_seam", None), "register_source", None)


def fresh_name(hint: str) -> str:
    """A new quoted name for a common table expression, view or temporary table."""
    return ident(f"__sira_{next(_NAMES)}_{hint}")


def helper_prefix(root) -> str:
    """A prefix no attribute name in the tree starts with: helper columns and lambda
    parameters are named with it, so they never meet a user's attribute."""
    names = set()
    for heading in _headings(root):
        _collect_names(heading, names)
    prefix = "__s"
    while any(n.startswith(prefix) for n in names):
        prefix += "_"
    return prefix


def _collect_names(heading, out: set) -> None:
    for n, t in heading.attributes:
        out.add(n)
        if isinstance(t, (RelationType, TupleType)):
            _collect_names(t.heading, out)


def _headings(root):
    seen = set()
    stack = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, Expr):
            stack.extend(_expr_nodes(item))
            continue
        if id(item) in seen:
            continue
        seen.add(id(item))
        yield item.heading
        stack.extend(item.children)
        for value in vars(item).values():
            stack.extend(_exprs_in(value))


def _exprs_in(value):
    if isinstance(value, Expr):
        yield value
    elif isinstance(value, tuple):
        for v in value:
            yield from _exprs_in(v)
    elif hasattr(value, "__attrs_attrs__") and not hasattr(value, "heading"):
        for a in value.__attrs_attrs__:
            yield from _exprs_in(getattr(value, a.name))


def _expr_nodes(expr):
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, RelationArg):
            yield e.node
        elif isinstance(e, Call):
            stack.extend(e.args)
        elif isinstance(e, (FieldOf, Aggregated)):
            stack.append(e.source)


def _distinct_rows(node) -> bool:
    """True when ``node``'s translation yields distinct rows whatever its operands hold (so the
    final DISTINCT is not needed): a PROJECT dropping attributes (SELECT DISTINCT), a plain
    SUMMARIZEBY (GROUP BY its BY attributes), TCLOSE (a recursive UNION). Conservative: False
    for anything else and a lowered operator; a packed result is known by name
    (``Compiler.distinct``)."""
    from sira.algebra.aggregation import SummarizeBy
    from sira.algebra.basic import Project
    from sira.algebra.closure import TClose
    if type(node) in LOWERED or (node.packs and node.pack_list):
        return False
    if isinstance(node, Project):
        return node.heading.degree < node.source.heading.degree
    if isinstance(node, SummarizeBy):
        return node.using is None
    return isinstance(node, TClose)


class Compiler:
    """Compiles one tree for one engine and set of relvars into one SQL query (common table
    expressions, one per node) and the temporary objects it reads."""

    def __init__(self, engine, relvars: dict, options: dict | None = None):
        load_families()
        self.engine = engine
        self.con = engine.connection
        self.catalog: dict = {}  # relvar value -> its table's constraints (relvars.py)
        self.relvars = relvars or {}
        self.options = options or {}
        self.ctes: list = []
        self.recursive = False
        self.materialized: set = set()  # names of the expressions computed once
        self.lowering: list = []  # the derived operators being compiled as their definition
        # the relvars whose duplicates could change the result (sira.algebra.duplicates); a
        # relvar read without DISTINCT sets ``undeduped``: the final result is made distinct
        self.need_distinct: frozenset | None = None  # None (before ``start``): every relvar
        self.undeduped = False
        self.distinct: set = set()  # names of expressions holding no duplicate row (packed)
        self.resources: list = []  # ("view" | "table", name) or ("handle", lent object's
        # handle): dropped after evaluate
        self._memo: dict = {}
        self._loaded: dict = {}
        self.prefix = "__s"
        self.checks: dict = {}  # per-evaluation memo of data checks (window orders...)
        self.packs: dict = {}  # (source name, interval attribute) -> its packed CTE
        self._lambdas = 0

    # ------------------------------------------------------------------ names
    def helper(self, name: str) -> str:
        """A quoted helper column name (never an attribute of the tree)."""
        return ident(self.prefix + name)

    def start(self, root, every_distinct: bool = False) -> None:
        """Ready to compile ``root``: helper names, and which relvars are read with DISTINCT
        (``every_distinct``: all of them; else those whose duplicates could change the
        result)."""
        from sira.algebra.duplicates import relvars_needing_distinct
        self.prefix = helper_prefix(root)
        self.need_distinct = None if every_distinct else relvars_needing_distinct(root)

    def lambda_name(self) -> str:
        """A new lambda parameter name (quoted; never an attribute of the tree)."""
        self._lambdas += 1
        return ident(f"{self.prefix}l{self._lambdas}")

    def relation_value(self, node):
        """The value of a relational operand, computed now (for an expression DuckDB must
        evaluate inside a lambda, where no subquery may appear: it becomes a literal)."""
        from .convert import to_relation
        name = self.compile(node)
        sql = f"{self.with_clause(name)}SELECT {column_list(node.heading)} FROM {name}"
        return to_relation(self._run(node, lambda: self.con.sql(sql).to_arrow_table()),
                           node.heading)

    # ------------------------------------------------------------------ relvars
    def relvar_scan(self, name: str):
        """How to read relvar ``name`` (registered and checked once per compilation)."""
        key = name.lower()
        if key not in self._loaded:
            from sira.errors import UnknownRelvar, closest_names

            from .relvars import scan
            values = {k.lower(): v for k, v in self.relvars.items()}
            if key not in values:
                raise UnknownRelvar(relvar=key, available=tuple(sorted(values)),
                                    suggestions=closest_names(key, values))
            self._loaded[key] = scan(self, key, values[key])
        return self._loaded[key]

    # ------------------------------------------------------------------ building
    def define(self, sql: str, hint: str = "q", materialized: bool = False) -> str:
        """Name ``sql`` as the next common table expression; returns its quoted name
        (``materialized``: computed once, whoever reads it)."""
        name = fresh_name(hint)
        self.ctes.append((name, sql))
        if materialized:
            self.materialized.add(name)
        return name

    def define_recursive(self, name: str, sql: str) -> str:
        self.recursive = True
        self.ctes.append((name, sql))
        return name

    def with_clause(self, upto: str | None = None) -> str:
        """``WITH ...`` naming every expression defined so far (or up to the one named
        ``upto``)."""
        ctes = self.ctes
        if upto is not None:
            names = [n for n, _ in ctes]
            ctes = ctes[:names.index(upto) + 1] if upto in names else ctes
        if not ctes:
            return ""
        head = "WITH RECURSIVE " if self.recursive else "WITH "
        return head + ",\n".join(
            f"{n} AS {'MATERIALIZED ' if n in self.materialized else ''}(\n{sql}\n)"
            for n, sql in ctes) + "\n"

    def compile(self, node) -> str:
        """The name of the common table expression computing ``node``."""
        try:
            return self._memo[node]
        except KeyError:
            pass
        lower = LOWERED.get(type(node))
        if lower is not None:
            for child in node.children:  # its operands keep their own names in errors
                self.compile(child)
            self.lowering.append(node)
            try:
                name = self.compile(lower(node))
            finally:
                self.lowering.pop()
        else:
            fn = TRANSLATIONS.get(type(node))
            if fn is None:
                raise NotSupportedOnDuckDB(node=node.operator_name)
            children = [self.compile(c) for c in node.children]
            out = self._run_translation(fn, node, children)
            packed = isinstance(out, Packed)
            if packed:
                sql = out.sql
            else:
                sql = out
                if node.packs and node.pack_list:
                    from .packing import pack_sql
                    sql = pack_sql(self, self.define(sql, "unpacked"), node.heading,
                                   node.pack_list, node)
                    packed = True
            name = self.define(f"SELECT {column_list(node.heading)} FROM ({sql}) AS q",
                               _hint(node))
            if packed:  # one tuple per island of each rest: a set whatever its inputs held
                self.distinct.add(name)
        if kept_for_reuse(node, self.lowering):
            self._memo[node] = name
        return name

    def _run_translation(self, fn, node, children):
        try:
            return fn(node, children, self)
        except SiraError:
            raise
        except duckdb.Error as err:  # an action the translation ran failed
            raise translate_failure(err, node) from None

    def query(self, node) -> str:
        """The whole SQL query computing ``node`` (distinct: relvars whose duplicates could not
        change it were read as they are)."""
        if isinstance(node, Expr):  # a scalar has no table of its own
            raise scalar_not_a_relation(node)
        name = self.compile(node)
        distinct = "DISTINCT " if self.undeduped and not _distinct_rows(node) and \
            name not in self.distinct else ""
        return f"{self.with_clause()}SELECT {distinct}{column_list(node.heading)} FROM {name}"

    # ------------------------------------------------------------------ running
    def fetch(self, sql: str, node=None) -> list:
        """Run ``sql`` (a SELECT over the expressions defined so far) and fetch its rows."""
        try:
            return self.con.sql(self.with_clause() + sql).fetchall()
        except duckdb.Error as err:
            raise translate_failure(err, node) from None

    def fetch_arrow(self, sql: str, node=None):
        """Run ``sql`` (a SELECT over the expressions defined so far) as an Arrow table."""
        try:
            return self.con.sql(self.with_clause() + sql).to_arrow_table()
        except duckdb.Error as err:
            raise translate_failure(err, node) from None

    def materialize(self, sql: str, hint: str = "t", node=None) -> str:
        """Run ``sql`` into a new temporary table (dropped after the evaluation); its name."""
        name = fresh_name(hint)
        try:
            self.con.execute(f"CREATE TEMPORARY TABLE {name} AS {self.with_clause()}{sql}")
        except duckdb.Error as err:
            raise translate_failure(err, node) from None
        self.resources.append(("table", name))
        return name

    def register(self, value, hint: str = "rel") -> str:
        """Register a Python object (an Arrow table, a DataFrame...) for this evaluation; the
        name a query reads it by.

        DuckDB 2 lends a Python object to a connection for as long as a handle to it lives
        (``duckdb._seam.register_source``, what ``con.from_arrow`` uses): about 10 µs, where a
        view (``con.register``, then ``unregister``) costs about 0.5 ms, a quarter of a small
        query's fixed cost. Older DuckDB releases, and objects it does not lend that way, get
        a view.
        """
        lend = _LEND
        if lend is not None and not isinstance(value, duckdb.DuckDBPyRelation):
            try:
                handle = lend(self.con, value)
            except (duckdb.Error, TypeError, AttributeError):
                handle = None
            if handle is not None:
                self.resources.append(("handle", handle))  # released by dropping it
                return ident(handle.name)
        name = fresh_name(hint)
        raw = name[1:-1].replace('""', '"')
        self.con.register(raw, value)
        self.resources.append(("view", raw))
        return name

    def release(self) -> None:
        """Drop the views and temporary tables this compilation made."""
        for kind, name in reversed(self.resources):
            try:
                if kind == "handle":
                    continue  # the object goes back when the list drops the handle
                if kind == "view":
                    self.con.unregister(name)
                else:
                    self.con.execute(f"DROP TABLE IF EXISTS {name}")
            except duckdb.Error:
                pass
        self.resources = []

    def evaluate(self, node):
        """Run ``node`` and collect its result (a Relation, or a scalar for an expression)."""
        from .convert import from_duckdb_value, to_relation
        if isinstance(node, Expr):
            from sira.expressions.evaluate import infer_type

            from .functions import expression
            t = infer_type(node, Heading())
            sql = f"SELECT {expression(node, Heading(), self)} AS v"
            (value,), = self._run(node, lambda: self.con.sql(self.with_clause() + sql)
                                  .fetchall())
            return from_duckdb_value(t, value)
        table = self.arrow(node)
        return to_relation(table, node.heading)

    def arrow(self, node):
        """The result of ``node`` as an Arrow table."""
        sql = self.query(node)
        return self._run(node, lambda: self.con.sql(sql).to_arrow_table())

    def _run(self, node, action):
        try:
            return action()
        except duckdb.Error as err:  # say which sira node was running
            raise translate_failure(err, self.failing_node(node)) from None

    def failing_node(self, node):
        """The lowest node whose plan fails (re-running sub-plans, on the error path only)."""
        from sira.algebra.node import Node
        if not isinstance(node, Node):
            return node
        for child in node.children:
            name = self._memo.get(child)
            if name is None:
                continue
            try:
                self.con.sql(f"{self.with_clause(name)}SELECT count(*), max(hash(t)) "
                             f"FROM {name} AS t").fetchall()
            except duckdb.Error:
                return self.failing_node(child)
        return node


def _hint(node) -> str:
    return re.sub(r"\W", "", getattr(node, "operator_name", "expr").lower()) or "node"


_SIRA_RAISED = re.compile(r"SIRA\|(\w+)\|([^|\n]*)\|([^\n]*)")


def translate_failure(err: Exception, node) -> SiraError:
    """A sira error for a DuckDB failure: arithmetic errors keep their sira class, errors
    raised by sira's own checks (``SIRA|Class|operator|message``) theirs; the message names
    the node."""
    text = str(err)
    where = getattr(node, "operator_name", None) or (repr(node) if node is not None else "?")
    m = _SIRA_RAISED.search(text)
    if m:
        cls = getattr(sira_errors, m.group(1), SiraError)
        operator = m.group(2) or where
        message = f"{m.group(3)} (in {where} on DuckDB)"
        fields = {"operator": operator} if "operator" in cls.fields else {}
        limit = re.search(r"more than (\d+) tuples", m.group(3))
        if "limit" in cls.fields and limit:
            fields["limit"] = int(limit.group(1))
        return cls(message, **fields)
    low = text.lower()
    if "division by zero" in low:
        return DivisionByZero(f"{where}: division by zero (on DuckDB)", operator=where)
    if isinstance(err, (duckdb.OutOfRangeException, duckdb.ConversionException)) and (
            "overflow" in low or "out of range" in low):
        return IntOverflow(f"{where}: a value does not fit its type (on DuckDB: "
                           f"{_first_line(text)})", operator=where)
    if isinstance(err, duckdb.OutOfMemoryException):
        return ExecutionError(f"DuckDB ran out of memory while running {where} (raise its "
                              f"memory limit: DuckDBEngine(memory_limit='8GB'), sira eval "
                              f"--memory-limit 8GB; what does not fit spills to its "
                              f"temp_directory): {_first_line(text)}", node=where)
    return ExecutionError(f"DuckDB failed while running {where}: {_first_line(text)}",
                          node=where)


def _first_line(text: str) -> str:
    text = text.strip()
    return text.splitlines()[0] if text else "?"
