"""The Spark compiler: one translation per algebra node, children compiled first.

A translation receives the node, its children's DataFrames (columns = the child heading's
attribute names, in sorted order) and the compiler, and returns the node's DataFrame in the same
form. After it, the compiler packs the result on the node's ``pack_list`` (when it has one), so
the pack state matches the Python engine's exactly, unless the translation returns ``Packed(df)``
(a result it packed itself). Nodes without a native translation are
lowered to their derived definition (``LOWERED``); the rest raise NotSupportedOnSpark.

    >>> from sira import parse
    >>> sorted(n.__name__ for n in LOWERED)
    ['Changes', 'DivideBy']
"""

from __future__ import annotations

import re

from sira.algebra.derived import lower_changes, lower_divideby
from sira.algebra.joins import DivideBy
from sira.algebra.windows import Changes
from sira.errors import (DivisionByZero, ExecutionError, IntOverflow, NotSupportedOnSpark,
                         SiraError)
from sira.expressions.nodes import Expr
from sira import errors as sira_errors
from sira.values import Heading

TRANSLATIONS: dict = {}
LOWERED = {DivideBy: lower_divideby, Changes: lower_changes}


def translates(node_class):
    """Register the Spark translation of one node class."""
    def register(fn):
        TRANSLATIONS[node_class] = fn
        return fn
    return register


def _load_families():
    from . import (aggregation, basic, closure, joins, nesting, packing, setops,  # noqa: F401
                   spl, windowby, windows, windowtables)


class Packed:
    """What a translation returns when its result is already packed on the node's pack_list
    (a sweep line packs as it goes), so the compiler does not pack it again."""

    def __init__(self, df):
        self.df = df


def ordered(df, heading: Heading):
    """The DataFrame's columns in the heading's order (the invariant every translation keeps)."""
    return df.select(*[f"`{n}`" for n in heading.names])


class Compiler:
    """Compiles one tree for one engine and set of relvars."""

    def __init__(self, engine, relvars: dict, options: dict | None = None):
        _load_families()
        self.engine = engine
        self.spark = engine.spark
        self.relvars = relvars
        self.options = options or {}
        self._memo: dict = {}

    def compile(self, node):
        """The DataFrame of ``node`` (not collected)."""
        try:
            return self._memo[node]
        except KeyError:
            pass
        lower = LOWERED.get(type(node))
        if lower is not None:
            df = self.compile(lower(node))
        else:
            fn = TRANSLATIONS.get(type(node))
            if fn is None:
                raise NotSupportedOnSpark(node=node.operator_name)
            children = [self.compile(c) for c in node.children]
            df = fn(node, children, self)
            if isinstance(df, Packed):
                df = df.df
            elif node.packs and node.pack_list:
                from .packing import pack_dataframe
                df = pack_dataframe(df, node.heading, node.pack_list)
        df = ordered(df, node.heading)
        self._memo[node] = df
        return df

    def evaluate(self, node):
        """Run ``node`` and collect its result (a Relation, or a scalar for an expression)."""
        from .convert import to_relation
        if isinstance(node, Expr):
            from sira.expressions.evaluate import infer_type
            from .functions import column
            t = infer_type(node, Heading())
            df = self.spark.range(1).select(column(node, Heading(), self).alias("v"))
            from sira.values import Relation
            value = self._run(node, lambda: to_relation(df, Heading.of({"v": t})))
            (row,) = value.body
            return row[0]
        df = self.compile(node)
        return self._run(node, lambda: to_relation(df, node.heading))

    def _run(self, node, action):
        try:
            return action()
        except SiraError:
            raise
        except Exception as err:  # a Spark/Java failure: say which sira node was running
            raise translate_failure(err, self.failing_node(node)) from None

    def failing_node(self, node):
        """The lowest node whose plan fails (re-running sub-plans, on the error path only)."""
        from sira.algebra.node import Node
        if not isinstance(node, Node):
            return node
        for child in node.children:
            try:
                self.compile(child).write.format("noop").mode("overwrite").save()
            except Exception:
                return self.failing_node(child)
        return node


_SIRA_RAISED = re.compile(r"SIRA\|(\w+)\|([^\n]*?)(?: SQLSTATE|\n|$)")


def translate_failure(err: Exception, node) -> SiraError:
    """A sira error for a Spark failure: arithmetic errors keep their sira class."""
    text = str(err)
    where = node.operator_name if hasattr(node, "operator_name") else repr(node)
    m = _SIRA_RAISED.search(text)
    if m:
        cls = getattr(sira_errors, m.group(1), SiraError)
        return cls(f"{m.group(2)} (in {where} on Spark)")
    if "DIVIDE_BY_ZERO" in text:
        return DivisionByZero(f"{where}: division by zero (on Spark)", operator=where)
    if "ARITHMETIC_OVERFLOW" in text or "CAST_OVERFLOW" in text or "NUMERIC_VALUE_OUT_OF_RANGE" \
            in text:
        return IntOverflow(f"{where}: a value does not fit its type (on Spark)", operator=where)
    first = text.strip().splitlines()[0] if text.strip() else type(err).__name__
    return ExecutionError(f"Spark failed while running {where}: {first}", node=where)
