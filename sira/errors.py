"""The SiraError tree.

Every error sira raises on bad input is a ``SiraError`` with structured fields, so that
programs (and the spec cases) match errors by class and fields, never by message text::

    >>> from sira.errors import UnknownAttribute
    >>> err = UnknownAttribute(attribute="nosuch", operator="PROJECT", available=("a", "b"))
    >>> str(err)
    "PROJECT: unknown attribute 'nosuch' (the heading has a, b)"
    >>> err.attribute
    'nosuch'
"""

from __future__ import annotations

import sys
from contextlib import contextmanager


class SiraError(Exception):
    """Base class of every error sira raises on purpose.

    Subclasses set ``fields`` (the names of their structured fields); each is stored as an
    attribute and used to match errors in spec cases.
    """

    fields: tuple[str, ...] = ()

    def __init__(self, message: str | None = None, **fields):
        for name in self.fields:
            setattr(self, name, fields.pop(name, None))
        if fields:
            raise TypeError(f"{type(self).__name__} has no fields {sorted(fields)}")
        self.message = message if message is not None else self.default_message()
        super().__init__(self.message)

    def default_message(self) -> str:
        return type(self).__name__

    def field_values(self) -> dict:
        return {name: getattr(self, name) for name in self.fields}


def _prefix(operator) -> str:
    return f"{operator}: " if operator else ""


def closest_names(name: str, known, n: int = 3) -> tuple:
    """The known names closest to a misspelled ``name``, best first (for "did you mean").

        >>> closest_names("projct", ["project", "restrict", "join"])
        ('project',)
    """
    import difflib
    return tuple(difflib.get_close_matches(str(name).lower(), sorted(set(known)), n=n,
                                           cutoff=0.6))


def did_you_mean(suggestions) -> str:
    """``" (did you mean project?)"`` for a non-empty list of suggestions, else ``""``."""
    if not suggestions:
        return ""
    return f" (did you mean {' or '.join(suggestions)}?)"


class HeadingError(SiraError):
    """A heading does not fit the operator."""


class UnknownAttribute(HeadingError, KeyError):
    """A name that is not an attribute of the heading at hand; ``suggestions`` are the closest
    names of that heading."""

    fields = ("attribute", "operator", "available", "suggestions")

    def __init__(self, message: str | None = None, **fields):
        if fields.get("suggestions") is None and fields.get("attribute") and \
                fields.get("available"):
            fields["suggestions"] = closest_names(fields["attribute"], fields["available"])
        super().__init__(message, **fields)

    def default_message(self):
        available = ", ".join(self.available or ())
        return (f"{_prefix(self.operator)}unknown attribute '{self.attribute}'"
                f"{did_you_mean(self.suggestions)}"
                f" (the heading has {available or 'no attributes'})")

    def __str__(self):  # KeyError would quote the message
        return self.message


class DuplicateAttribute(HeadingError):
    fields = ("attribute", "operator")

    def default_message(self):
        return f"{_prefix(self.operator)}attribute '{self.attribute}' would appear twice"


class HeadingMismatch(HeadingError):
    fields = ("operator", "left", "right")

    def default_message(self):
        return (f"{self.operator} needs equal headings; left has {self.left},"
                f" right has {self.right}")


class SiraTypeError(SiraError, TypeError):
    """A value or expression has the wrong type: ``'maximumlength' must be INT (got 'abc', a STRING)``."""

    fields = ("operator", "expected", "got")

    def default_message(self):
        return f"{_prefix(self.operator)}expected {self.expected}, got {self.got}"


def scalar_not_a_relation(expr, operator: str | None = None) -> SiraTypeError:
    """The error for a scalar expression given where only a relation will do (the DataFrame,
    table or SQL query of ``plus(1, 2)``): the engines' ``evaluate`` gives a scalar's value.

        >>> err = scalar_not_a_relation("plus(1, 2)", "dataframe")
        >>> str(err).startswith("dataframe: expected a relational expression, got plus(1, 2)")
        True
        >>> err.got
        'plus(1, 2) (a scalar: evaluate() gives its value)'
    """
    return SiraTypeError(operator=operator, expected="a relational expression",
                         got=f"{expr} (a scalar: evaluate() gives its value)")


class SiraValueError(SiraError, ValueError):
    """A value is of the right type but not acceptable (a malformed date, an inverted interval...)."""

    fields = ("operator", "value")


class IntervalError(SiraValueError):
    """An interval that cannot be: empty, inverted, or not one interval."""


class ArithmeticFault(SiraError, ArithmeticError):
    """Arithmetic went wrong while evaluating an expression for a tuple."""

    fields = ("operator", "tuple")


class IntOverflow(ArithmeticFault):
    fields = ("operator", "tuple", "type", "value")

    def default_message(self):
        where = f" for tuple {self.tuple}" if self.tuple else ""
        value = int_text(self.value) if isinstance(self.value, int) else self.value
        return f"{_prefix(self.operator)}{value} does not fit {self.type}{where}"


class DivisionByZero(ArithmeticFault):
    def default_message(self):
        where = f" for tuple {self.tuple}" if self.tuple else ""
        return f"{_prefix(self.operator)}division by zero{where}"


class FloatOverflow(ArithmeticFault):
    """A FLOAT operation on finite operands whose exact result is beyond the largest FLOAT
    (IEEE overflow): an error, as integer overflow is, never a silent infinity. ``operands``
    are the finite values the operator was applied to."""

    fields = ("operator", "tuple", "operands")

    def default_message(self):
        where = f" for tuple {self.tuple}" if self.tuple else ""
        args = f" of {', '.join(_short(v) for v in self.operands)}" if self.operands else ""
        return f"{_prefix(self.operator)}the result{args} is too large for a FLOAT{where}"


def _short(value, limit: int = 40) -> str:
    """A value for a message, never longer than ``limit`` characters (a BIGINT of thousands of
    digits is named by its size)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


class UnknownOperator(SiraError):
    """A name in operator position that is not an operator; ``suggestions`` are the closest
    known names (``did you mean project?``)."""

    fields = ("operator", "suggestions")

    def default_message(self):
        return f"unknown operator '{self.operator}'{did_you_mean(self.suggestions)}"


class UnknownRelvar(SiraError, KeyError):
    """A name in relation position that is not a relvar; ``suggestions`` are the closest known
    relvar names."""

    fields = ("relvar", "available", "suggestions")

    def __init__(self, message: str | None = None, **fields):
        if fields.get("suggestions") is None and fields.get("relvar") and \
                fields.get("available"):
            fields["suggestions"] = closest_names(fields["relvar"], fields["available"])
        super().__init__(message, **fields)

    def default_message(self):
        available = ", ".join(self.available or ())
        return (f"unknown relvar '{self.relvar}'{did_you_mean(self.suggestions)}"
                f" (known: {available or 'none'})")

    def __str__(self):
        return self.message


class UnboundedClosure(SiraError):
    """GTCLOSE whose computed attributes grow without end around a cycle."""

    fields = ("operator", "node")

    def default_message(self):
        return (f"{_prefix(self.operator)}the closure grows without end around a cycle"
                f" through {self.node}")


class TooManyTuples(SiraError):
    """An operator would produce more tuples than the limit the caller set."""

    fields = ("operator", "limit")

    def default_message(self):
        return (f"{_prefix(self.operator)}the result would hold more than {self.limit} tuples "
                f"(raise max_tuples to allow it)")


class NullValue(SiraValueError):
    """Data entering sira holds NULLs or NaNs (sira has no nulls): names the relvar (or file),
    the attribute and how many rows, unless the caller asked for a policy (``nulls="drop"``)."""

    fields = ("operator", "value", "relvar", "attribute", "count")

    def default_message(self):
        where = f"relvar '{self.relvar}': " if self.relvar else ""
        kind = self.value or "NULL"
        rows = "1 row" if self.count == 1 else f"{self.count} rows"
        return (f"{where}attribute '{self.attribute}' holds {kind} in {rows}; sira has no "
                f"nulls (pass nulls='drop' to leave those rows out)")


class CheckpointError(SiraError):
    """A checkpoint file that cannot be loaded: truncated, corrupted, tampered with, of another
    format version, or not a sira checkpoint at all. Nothing is executed while loading."""

    fields = ("path", "reason")

    def default_message(self):
        return f"checkpoint '{self.path}': {self.reason}"


class ParseError(SiraError, SyntaxError):
    """Malformed text. Carries ``line`` and ``col`` (1-based) and shows the line with a caret."""

    fields = ("line", "col", "source_line", "expected")

    def __init__(self, message: str | None = None, **fields):
        super().__init__(message, **fields)
        if self.line is not None:
            caret = ""
            if self.source_line is not None:
                caret = f"\n  {self.source_line}\n  {' ' * max((self.col or 1) - 1, 0)}^"
            self.message = f"{self.message} at line {self.line}, col {self.col}{caret}"
            self.args = (self.message,)

    def __str__(self):
        return self.message


class EngineUnavailable(SiraError):
    """An engine that cannot run here: its library or runtime is missing (``install`` says what
    to install), or its session was stopped."""

    fields = ("engine", "reason", "install")

    def default_message(self):
        hint = f"; install {self.install}" if self.install else ""
        return f"the {self.engine} engine is not available: {self.reason}{hint}"


class DataSourceError(SiraError):
    """Data a relvar (or a reader) was given cannot be read: a missing file or table, an
    unreadable or corrupt file. Names the relvar, the source and the cause."""

    fields = ("relvar", "source", "reason")

    def default_message(self):
        where = f"relvar '{self.relvar}': " if self.relvar else ""
        return f"{where}cannot read {self.source}: {self.reason}"


class NotSupportedOnSpark(SiraError):
    fields = ("node",)

    def default_message(self):
        return f"{self.node} has no Spark translation"


class ExecutionError(SiraError):
    """An engine failed while running a node; names the node."""

    fields = ("node",)


class DataFormatError(SiraValueError):
    """A data file or object whose content is not a relation of the declared types: a cell
    that is not a literal of its attribute's type, a malformed header, an unterminated quote,
    a duplicate JSON key. Names the source, the line (or row) and the attribute."""

    fields = ("operator", "value", "source", "line", "attribute")


class MissingExtra(SiraError, ImportError):
    """An optional dependency is not installed; says which extra installs it
    (``pip install 'sira[io]'``)."""

    fields = ("package", "extra", "feature")

    def default_message(self):
        return (f"{self.feature} needs {self.package}, which is not installed: "
                f"pip install 'sira[{self.extra}]'")


def int_text(value: int) -> str:
    """The decimal digits of any integer, however long (Python's ``str`` refuses integers of
    more than 4,300 digits unless a process-wide limit is lifted; ``Decimal`` converts
    exactly and has no such limit).

        >>> len(int_text(10 ** 5000))
        5001
    """
    if -10 ** 4000 < value < 10 ** 4000:
        return str(value)
    import decimal
    return str(decimal.Decimal(value))


@contextmanager
def deep_recursion(limit: int = 20000):
    """Allow the deep (but parser-bounded) recursion that walking a nested tree needs; a tree
    nested deeper still is a ``SiraError``, never a bare ``RecursionError``."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    try:
        yield
    except RecursionError:
        raise SiraError("the expression is nested too deeply to evaluate") from None
    finally:
        sys.setrecursionlimit(old)
