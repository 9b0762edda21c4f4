"""Quoting and small SQL builders: the only places where names and text reach SQL.

Relvar names, attribute names and string values are never pasted into SQL as they are:
identifiers go through :func:`ident` (double quotes, an embedded one doubled) and strings
through :func:`string` (single quotes, an embedded one doubled); DuckDB treats no other
character specially inside either, so a name like ``'; DROP TABLE x; --`` stays a name.

    >>> ident('we"ird')
    '"we""ird"'
    >>> string("it's")
    "'it''s'"
    >>> and_all([])
    'TRUE'
"""

from __future__ import annotations

#: the one column of a relation without attributes (TABLE_DEE: one row; TABLE_DUM: none), and
#: the one field of a tuple or relation value without attributes; a heading without attributes
#: has no other name it could clash with
DEE = '"__dee__"'
DEE_NAME = "__dee__"


def ident(name: str) -> str:
    """A quoted SQL identifier for any name."""
    return '"' + str(name).replace('"', '""') + '"'


def string(text: str) -> str:
    """A quoted SQL string literal for any text."""
    return "'" + str(text).replace("'", "''") + "'"


def qualified(alias: str | None, name: str) -> str:
    """``alias."name"`` (alias an already quoted or plain SQL alias), or ``"name"``."""
    return ident(name) if alias is None else f"{alias}.{ident(name)}"


def columns(heading, alias: str | None = None) -> list:
    """The SQL columns holding a relation of ``heading``, in its (sorted) order."""
    if heading.degree == 0:
        return [DEE if alias is None else f"{alias}.{DEE}"]
    return [qualified(alias, n) for n in heading.names]


def column_list(heading, alias: str | None = None) -> str:
    return ", ".join(columns(heading, alias))


def and_all(conditions) -> str:
    conditions = list(conditions)
    return " AND ".join(f"({c})" for c in conditions) if conditions else "TRUE"


def or_any(conditions) -> str:
    conditions = list(conditions)
    return " OR ".join(f"({c})" for c in conditions) if conditions else "FALSE"


def struct_pack(fields) -> str:
    """``struct_pack("a" := ..., ...)`` from (name, SQL) pairs (the dummy field when none)."""
    fields = list(fields)
    if not fields:
        return f"struct_pack({DEE} := TRUE)"
    return "struct_pack(" + ", ".join(f"{ident(n)} := {v}" for n, v in fields) + ")"


def field(value_sql: str, name: str) -> str:
    """A field of a struct value: ``(v)."name"``."""
    return f"({value_sql}).{ident(name)}"


def sira_error(cls: str, operator: str | None, message: str) -> str:
    """An SQL expression that fails the query with a sira error when evaluated.

    The message travels as ``SIRA|Class|operator|message`` and the engine raises ``Class``
    (see ``compiler.translate_failure``).
    """
    return f"error({string(_carried(cls, operator, message))})"


def sira_error_expr(cls: str, operator: str | None, message_sql: str) -> str:
    """As :func:`sira_error`, the message computed by an SQL expression."""
    return f"error({string(_carried(cls, operator, ''))} || ({message_sql}))"


def _carried(cls: str, operator: str | None, message: str) -> str:
    return "|".join(("SIRA", cls, operator or "", message))
