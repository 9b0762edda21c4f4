"""The ``sira`` command: ``sira eval``, ``sira repl`` and ``sira demo``.

::

    sira eval 'restrict(dbmsfile, gt(pagesize, 16384))' --relvar dbmsfile=dbmsfile.csv
    sira eval @query.sira --relvar DBMSFILE=dbmsfile.json --format json
    sira eval 'project(R, (pagesize))' --relvar R=data.parquet --format csv --output out.csv
    sira eval 'project(DBMSFILE, (pagesize))' --relvar DBMSFILE=dbmsfile.sira --explain
    sira repl --relvar DBMSFILE=dbmsfile.csv
    sira demo

Relvar files (``--relvar NAME=FILE``; a bare ``FILE`` is named after its stem) are read by
:mod:`sira.io`, the format chosen by the file's extension: ``.csv`` (``.tsv``), ``.json``,
``.parquet``, ``.arrow`` (also ``.feather``), or ``.sira``/``.rel`` for an expression in the
text syntax; a file with another extension by its first character (``{`` JSON, ``relation`` a
relation literal, anything else CSV). Cells are always read as literals of their attribute's
type, never evaluated; NULLs and NaNs are refused (``NullValue``). In short:

CSV
    A header line of ``name:type`` cells (the types as in the text syntax: ``int long bigint
    float string boolean date timestamp``, ``average``, interval types such as
    ``intinterval``, ``relation(heading(...))``, ``tuple(heading(...))``) or bare names, whose
    types are inferred. Cells: integers, numbers, raw text (quoted CSV-style when it holds
    commas), ``true``/``false``, ISO dates and timestamps (an offset is converted to UTC), and
    literals in the text syntax for the other types (``intinterval(from(4)to(7))``). Example::

        filename:string,pagesize:int
        DATABASECATALOG.SPDB,32768
        BW_SPOTS.SPDB,16384

JSON
    ``{"heading": {"filename": "string", "pagesize": "int"}, "body": [{"filename":
    "BW_SPOTS.SPDB", "pagesize": 16384}, ...]}``; intervals are ``{"begin", "end"}`` objects,
    relation-valued attributes lists of objects (see :mod:`sira.io.jsonfile`).

Parquet and Arrow
    One column per attribute, the types as in :mod:`sira.io.mapping`.

Relation literal (``.sira``, ``.rel``)
    Any expression in the text syntax that needs no relvar, usually a relation literal:
    ``relation(heading(filename(string) pagesize(int))
    body(tuple(filename(string(A)) pagesize(1))))``.

Results print as a table (default), ``csv``, ``json`` (the JSON relvar form, so output can be
read back; infinite floats are the strings ``"Infinity"``/``"-Infinity"``, never invalid
tokens) or ``text`` (a relation literal); ``--output FILE`` writes them to a file instead, in
the format of ``--format`` or else of the file's extension, and ``parquet``/``arrow`` need it.

Exit codes: 0 success, 1 an error (printed as ``ErrorClass: message`` on stderr, never a
traceback: sira's own errors, ``MemoryError``, ``RecursionError``...), 2 a usage error (bad
arguments, a file that does not exist), 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import pathlib
import re
import sys

import sira
from sira.types import article
from . import io as sio
from .errors import SiraError, SiraValueError
from .io._support import unlimited_int_digits
from .io.csvfile import cell_text
from .io.jsonfile import dumps, relation_from_json, relation_to_json, value_to_json
from .types import Type
from .values import Heading, Relation

__all__ = ["main", "load_relvar", "relation_to_json", "relation_from_json", "explain_steps"]

_FORMATS_HELP = """\
relvar files (--relvar NAME=FILE, or just FILE: named after its stem):
  .csv .tsv   header cells name:type (e.g. filename:string,pagesize:int) or bare names
              (types inferred); types: int long bigint float string boolean date
              timestamp (and average, intinterval ..., relation(heading(...)))
  .json       {"heading": {"filename": "string", "pagesize": "int"},
               "body": [{"filename": "BW_SPOTS.SPDB", "pagesize": 16384}, ...]}
  .parquet .arrow  one column per attribute
  .sira .rel  a relation literal: relation(heading(a(int)) body(tuple(a(1)) tuple(a(2))))
cells are literals, never expressions; NULL and NaN are refused

exit codes: 0 ok, 1 an error (ErrorClass: message on stderr), 2 a usage error, 130 Ctrl-C
"""

RESULT_FORMATS = ("table", "csv", "json", "parquet", "arrow", "text")
_BINARY_FORMATS = ("parquet", "arrow")


class UsageError(Exception):
    """Bad arguments or a missing file: exit code 2."""


# ------------------------------------------------------------------------------- relvar files
def load_relvar(path, name: str | None = None) -> Relation:
    """Read a relvar file (CSV, JSON, Parquet, Arrow or a relation literal; see above).

    Args:
        path: the file.
        name: the relvar's name, for messages (``NullValue`` names it).
    Raises:
        UsageError: the file does not exist or cannot be opened.
        SiraError: its content is not a relation.
    """
    path = pathlib.Path(path)
    if not path.is_file() or not os.access(path, os.R_OK):
        reason = "no such file" if not path.exists() else "not a readable file"
        raise UsageError(f"cannot read relvar file {str(path)!r}: {reason}")
    suffix = path.suffix.lower()
    if suffix in (".sira", ".rel"):
        return _relation_literal_file(path)
    if sio.format_of(path) is None and suffix != ".tsv":
        start = path.read_bytes()[:64].decode("utf-8-sig", "replace").lstrip()
        if start.startswith("{"):
            return sio.read_json(path, name=name)
        if start[:8].lower() == "relation":
            return _relation_literal_file(path)
        return sio.read_csv(path, name=name)
    return sio.read_file(path, name=name)


def _relation_literal_file(path: pathlib.Path) -> Relation:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"cannot read relvar file {str(path)!r}: "
                         f"{getattr(err, 'strerror', None) or err}") from None
    value = sira.evaluate(sira.parse(text))
    if not isinstance(value, Relation):
        raise SiraValueError(f"{path}: the expression is not a relation")
    return value


def _relvar_spec(spec: str):
    name, sep, file = spec.partition("=")
    if not sep:
        file, name = spec, pathlib.Path(spec).stem
    name = name.strip()
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise UsageError(f"--relvar {spec!r}: {name!r} is not a relvar name (use NAME=FILE)")
    return name, file


def load_relvars(specs) -> tuple:
    """``(relvars, display names)`` from ``NAME=FILE`` specs (keys are lowercase)."""
    relvars, display, given = {}, {}, {}
    for spec in specs or ():
        name, file = _relvar_spec(spec)
        if name.lower() in given:  # (names are case-insensitive)
            raise UsageError(f"relvar {name!r} is given twice (--relvar "
                             f"{given[name.lower()]!r} and --relvar {spec!r}); give it once")
        given[name.lower()] = spec
        relvars[name.lower()] = load_relvar(file, name)
        display[name.lower()] = name
    return relvars, display


# ------------------------------------------------------------------------------- output

def _scalar_type(expr):
    from .expressions.evaluate import infer_type
    return infer_type(expr, Heading())


#: how many tuples ``sira eval`` prints as a table unless ``--limit`` says otherwise (as
#: ``print`` of a relation)
DEFAULT_LIMIT = 20


def render(value, fmt: str = "table", value_type: Type | None = None,
           limit: int | None = None) -> str:
    """A result (a relation or a scalar) as text: ``table`` (the first ``limit`` tuples, then
    how many were left out; None: all), ``csv``, ``json`` or ``text``.

    Raises:
        UsageError: a binary format (``parquet``, ``arrow``), which needs ``--output``.
    """
    if fmt in _BINARY_FORMATS:
        raise UsageError(f"--format {fmt} writes a file: add --output FILE")
    with unlimited_int_digits():  # print BIGINTs of any size
        return _render_text(value, fmt, value_type, limit)


def _render_text(value, fmt: str, value_type: Type | None, limit: int | None = None) -> str:
    if isinstance(value, Relation):
        if fmt == "json":
            return dumps(relation_to_json(value))
        if fmt == "csv":
            buffer = io.StringIO()
            sio.write_csv(value, buffer)
            return buffer.getvalue().rstrip("\r\n")
        if fmt == "text":
            return value.literal()
        return value.to_table(limit=limit)
    if value_type is None:
        from .types import type_of_python
        value_type = type_of_python(value)
    if fmt == "json":
        return dumps(value_to_json(value_type, value), indent=None)
    if fmt == "csv":
        buffer = io.StringIO()
        csv.writer(buffer).writerow([cell_text(value_type, value)])
        return buffer.getvalue().rstrip("\r\n")
    if fmt == "text":
        return value_type.literal(value)
    return value_type.format(value)


def emit(value, fmt: str | None, output: str | None, value_type: Type | None = None,
         limit: int | None = None) -> None:
    """Print a result (a table of at most ``limit`` tuples; every tuple in the other formats),
    or write it whole to ``output`` in ``fmt`` (by default the format of the file's extension,
    else a table).

    Raises:
        UsageError: a scalar asked for as parquet or arrow, or a file that cannot be written.
    """
    if output is None:
        print(render(value, fmt or "table", value_type, limit))
        return
    fmt = fmt or sio.format_of(output) or "table"
    try:
        if isinstance(value, Relation) and fmt in sio.WRITERS:
            sio.write_file(value, output, fmt)
            return
        if fmt in _BINARY_FORMATS:
            raise UsageError(f"the result is a scalar, not a relation: it cannot be written "
                             f"as {fmt}")
        with open(output, "w", encoding="utf-8", newline="") as f:
            f.write(render(value, fmt, value_type) + "\n")
    except OSError as err:
        raise UsageError(f"cannot write {output!r}: {err.strerror or err}") from None


# ------------------------------------------------------------------------------- explain
def explain_steps(expr, relvars: dict, engine="python", display: dict | None = None,
                  fmt: str = "table", **options) -> str:
    """Every sub-expression of ``expr`` bottom-up, each with its arguments and its result.

    The steps of :func:`sira.explain` (one block per operator, ARG / SPEC / RESULT, as the seed
    presents its examples), with every table whole and a scalar result printed in ``fmt``.

    Args:
        expr: an algebra node or a scalar expression (``eq(TABLE_DEE, project(R, ()))``).
        relvars: name -> Relation.
        engine: passed to :func:`sira.evaluate`.
        display: name -> the name to print (defaults to the upper-cased name).
        fmt: ``table``, ``json`` or ``text``, for a scalar result.
        options: passed to :func:`sira.evaluate` for every step (``max_tuples=``).
    Returns:
        the text of the blocks.
    """
    from .explain import evaluate_steps, steps_text
    steps = evaluate_steps(expr, relvars, engine=engine, display=display, **options)
    with unlimited_int_digits():
        return steps_text(steps, limit=None,
                          render_scalar=lambda value, value_type: render(value, fmt, value_type))


# ------------------------------------------------------------------------------- commands
_PLAIN_MESSAGES = {
    MemoryError: "out of memory (a result or an intermediate relation is too large)",
    RecursionError: "nested too deeply to evaluate",
    KeyboardInterrupt: "interrupted",
}


def _error_text(err: BaseException) -> str:
    """``ErrorClass: message``, the message never empty."""
    message = getattr(err, "message", None) or str(err) or next(
        (text for cls, text in _PLAIN_MESSAGES.items() if isinstance(err, cls)), "no message")
    return f"{type(err).__name__}: {message}"


def _read_expression(text: str) -> str:
    if text == "@-":
        return sys.stdin.read()
    if text.startswith("@"):
        try:
            return pathlib.Path(text[1:]).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as err:
            raise UsageError(f"cannot read expression file {text[1:]!r}: "
                             f"{getattr(err, 'strerror', None) or err}") from None
    return text


def _evaluate(expr, relvars, args):
    """Evaluate with the options the command line gave."""
    return sira.evaluate(expr, relvars, engine=_engine(args), **_limits(args.max_tuples))


def _engine(args):
    """The engine the command line names: its name, or a DuckDB engine with the
    ``--memory-limit`` it gave."""
    memory = getattr(args, "memory_limit", None)
    if memory is None:
        return args.engine
    if args.engine != "duckdb":
        raise UsageError("--memory-limit is DuckDB's memory_limit: use it with --engine duckdb")
    try:
        from sira_duckdb import DuckDBEngine
    except ImportError:
        raise UsageError("--engine duckdb needs duckdb: pip install 'sira[duckdb]'") from None
    return DuckDBEngine(memory_limit=memory)


def _row_limit(text: str):
    """A ``--limit`` value: a non-negative number of tuples, or ``all``."""
    if text.strip().lower() in ("all", "none"):
        return None
    return _tuple_count(text)


def _limits(max_tuples) -> dict:
    """The evaluation options for a ``--max-tuples`` value (None: the default limit)."""
    return {} if max_tuples is None else {"max_tuples": max_tuples}


def _tuple_count(text: str) -> int:
    """A ``--max-tuples`` value: a non-negative integer (``50000000`` or ``50_000_000``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of tuples, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number of tuples, got {text!r}")
    return value


def cmd_eval(args) -> int:
    text = _read_expression(args.expression)
    relvars, display = load_relvars(args.relvar)
    expr = sira.parse(text, relvars)
    if args.explain:
        shown = args.format if args.format in ("json", "text", "csv") else "table"
        print(explain_steps(expr, relvars, engine=_engine(args), display=display, fmt=shown,
                            **_limits(args.max_tuples)))
        if args.format in (None, "table") and args.output is None:
            return 0
        print()
    value = _evaluate(expr, relvars, args)
    value_type = None if isinstance(value, Relation) else _scalar_type(expr)
    emit(value, args.format, args.output, value_type, args.limit)
    return 0


def cmd_demo(args) -> int:
    from . import demo
    return demo.run(sys.stdout)


REPL_HELP = """\
Type an expression in the text syntax to evaluate it, e.g.  project(DBMSFILE, (pagesize))
Input continues on the next line while parentheses are unbalanced.
  NAME := expr        evaluate expr and bind the result to the relvar NAME
  :explain expr       show every step of expr bottom-up (ARG / SPEC / RESULT)
  :relvars            list the relvars with their headings and cardinalities
  :load NAME=FILE     load a relvar file (.csv, .json, .parquet, .arrow, .sira)
  :drop NAME          forget a relvar
  :format FORMAT      print results as table (default), csv, json or text
  :set max_tuples N   refuse results of more than N tuples (TooManyTuples; default 50000000)
Ctrl-C cancels the running query; the session and its relvars stay.
  :help               this text
  :quit               leave (also Ctrl-D)
Names are case-insensitive; TABLE_DEE and TABLE_DUM are always there."""

_BIND = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*:=\s*(.*)\Z", re.S)


def _balance(text: str) -> int:
    """Open minus closed parentheses, ignoring ``#`` comment lines."""
    depth = 0
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        depth += line.count("(") - line.count(")")
    return depth


class Repl:
    """The state of an interactive session: relvars, their display names, the output format."""

    def __init__(self, relvars=None, display=None, engine="python", out=None, err=None,
                 max_tuples=None):
        self.relvars = dict(relvars or {})
        self.display = dict(display or {})
        self.engine = engine
        self.max_tuples = max_tuples
        self.format = "table"
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.failures = 0  # inputs that ended in an error

    def say(self, text=""):
        print(text, file=self.out)

    def run_line(self, text: str) -> bool:
        """Run one complete input; returns False when the session should end."""
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            return True
        try:
            return self._dispatch(stripped)
        except SiraError as err:
            message = _error_text(err)
        except UsageError as err:
            message = f"error: {err}"
        except KeyboardInterrupt:  # Ctrl-C cancels the query, not the session
            message = "KeyboardInterrupt: query cancelled (the relvars are kept)"
        except (RecursionError, MemoryError) as err:
            message = _error_text(err)
        except Exception as err:  # a bug in sira: report it, keep the session alive
            message = f"{_error_text(err)}  (an internal error: please report it)"
        self.failures += 1
        print(message, file=self.err)
        return True

    def _dispatch(self, text: str) -> bool:
        if text.startswith(":"):
            command, _, rest = text[1:].partition(" ")
            command, rest = command.lower(), rest.strip()
            if command in ("q", "quit", "exit"):
                return False
            if command in ("h", "help", "?"):
                self.say(REPL_HELP)
            elif command == "relvars":
                self.show_relvars()
            elif command == "explain":
                if not rest:
                    raise UsageError(":explain needs an expression")
                expr = sira.parse(rest, self.relvars)
                self.say(explain_steps(expr, self.relvars, self.engine, self.display,
                                       self.format, **_limits(self.max_tuples)))
            elif command == "load":
                name, file = _relvar_spec(rest)
                self.bind(name, load_relvar(file, name))
            elif command == "drop":
                key = rest.lower()
                if key not in self.relvars:
                    raise sira.UnknownRelvar(relvar=rest, available=tuple(sorted(self.relvars)))
                del self.relvars[key]
                self.display.pop(key, None)
                self.say(f"dropped {rest}")
            elif command == "format":
                if rest not in ("table", "csv", "json", "text"):
                    raise UsageError(":format takes table, csv, json or text")
                self.format = rest
            elif command == "set":
                self.set_option(rest)
            else:
                raise UsageError(f"unknown command ':{command}' (:help lists them)")
            return True
        match = _BIND.match(text)
        if match:
            name, body = match.groups()
            expr = sira.parse(body, self.relvars)
            value = self.evaluate(expr)
            if not isinstance(value, Relation):
                raise SiraValueError(f"only relations can be bound to a relvar; {body.strip()} "
                                     f"is {article(_scalar_type(expr).name)}")
            self.bind(name, value)
            return True
        expr = sira.parse(text, self.relvars)
        value = self.evaluate(expr)
        value_type = None if isinstance(value, Relation) else _scalar_type(expr)
        self.say(render(value, self.format, value_type))
        return True

    def evaluate(self, expr):
        """Evaluate a parsed expression with the session's relvars and options."""
        return sira.evaluate(expr, self.relvars, engine=self.engine,
                             **_limits(self.max_tuples))

    def set_option(self, text: str):
        """``:set max_tuples N`` (``:set max_tuples default`` restores the default); without a
        value, show it."""
        from .engine.guards import DEFAULT_MAX_TUPLES
        name, _, value = text.partition(" ")
        if name.lower() not in ("max_tuples", "max-tuples"):
            raise UsageError(":set takes max_tuples N")
        value = value.strip()
        if value.lower() == "default":
            self.max_tuples = None
        elif value:
            try:
                self.max_tuples = _tuple_count(value.replace(",", ""))
            except argparse.ArgumentTypeError as err:
                raise UsageError(f":set max_tuples: {err}") from None
        shown = DEFAULT_MAX_TUPLES if self.max_tuples is None else self.max_tuples
        self.say(f"max_tuples {shown}{' (the default)' if self.max_tuples is None else ''}")

    def bind(self, name: str, value: Relation):
        self.relvars[name.lower()] = value
        self.display[name.lower()] = name
        count = len(value)
        self.say(f"{name} := {count} tuple{'' if count == 1 else 's'} {value.heading}")

    def show_relvars(self):
        if not self.relvars:
            self.say("no relvars (bind one with NAME := relation(...), or :load NAME=FILE)")
            return
        width = max(len(self.display.get(k, k)) for k in self.relvars)
        for key in sorted(self.relvars):
            value = self.relvars[key]
            self.say(f"{self.display.get(key, key.upper()).ljust(width)}  {value.heading}  "
                     f"({len(value)} tuple{'' if len(value) == 1 else 's'})")


def _history_file() -> str:
    return os.path.join(os.path.expanduser("~"), ".sira_history")


def _setup_readline():
    """readline with history in ~/.sira_history; returns a function saving it (or None)."""
    try:
        import readline
    except ImportError:  # Windows, or a Python built without it
        return None
    path = _history_file()
    try:
        readline.read_history_file(path)
    except Exception:
        pass
    try:
        readline.set_history_length(1000)
    except Exception:
        pass

    def save():
        try:
            readline.write_history_file(path)
        except Exception:
            pass
    return save


def cmd_repl(args) -> int:
    relvars, display = load_relvars(args.relvar)
    repl = Repl(relvars, display, engine=_engine(args), max_tuples=args.max_tuples)
    save_history = _setup_readline()
    repl.say(f"sira {sira.__version__} repl: :help for help, :quit to leave")
    if relvars:
        repl.show_relvars()
    buffer = []
    try:
        while True:
            try:
                line = input("....> " if buffer else "sira> ")
            except EOFError:
                repl.say()
                if buffer:  # an unfinished expression at the end of the input: its error
                    repl.run_line("\n".join(buffer))
                break
            except KeyboardInterrupt:
                repl.say("^C")
                buffer = []
                continue
            buffer.append(line)
            text = "\n".join(buffer)
            if _balance(text) > 0 and not text.lstrip().startswith(":q"):
                continue
            buffer = []
            if not repl.run_line(text):
                break
    finally:
        if save_history:
            save_history()
    # a script piped in fails when one of its inputs did (a person at a terminal saw each)
    return 1 if repl.failures and not sys.stdin.isatty() else 0


# ------------------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sira",
        description="sira: a relational algebra engine in the style of Tutorial D and "
                    "SIRA_PRISE.",
        epilog=_FORMATS_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"sira {sira.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{eval,repl,demo}")

    relvar_help = ("bind relvar NAME to the relation in FILE (.csv, .tsv, .json, .parquet, "
                   ".arrow, .sira); repeatable")
    engine_help = "the engine: python (default, embedded), spark or duckdb"
    max_tuples_help = ("refuse (TooManyTuples) any JOIN, TCLOSE, UNPACK... that would make "
                       "more than N tuples (default 50000000)")

    p_eval = sub.add_parser(
        "eval", help="evaluate one expression", epilog=_FORMATS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Evaluate an expression in sira's text syntax and print its result.")
    p_eval.add_argument("expression", metavar="EXPR",
                        help="the expression, or @FILE to read it from a file (@- stdin)")
    p_eval.add_argument("--relvar", "-r", action="append", default=[], metavar="NAME=FILE",
                        help=relvar_help)
    p_eval.add_argument("--explain", action="store_true",
                        help="show every sub-expression bottom-up: its spec, its arguments and "
                             "its result")
    p_eval.add_argument("--format", "-f", choices=RESULT_FORMATS, default=None,
                        help="table (default), csv (name:type header), json ({heading, body}), "
                             "parquet or arrow (with --output), or text (a relation literal)")
    p_eval.add_argument("--output", "-o", metavar="FILE", default=None,
                        help="write the result to FILE (in --format, else in the format of "
                             "FILE's extension)")
    p_eval.add_argument("--engine", default="python", help=engine_help)
    p_eval.add_argument("--max-tuples", type=_tuple_count, default=None, metavar="N",
                        help=max_tuples_help)
    p_eval.add_argument("--limit", type=_row_limit, default=DEFAULT_LIMIT, metavar="N",
                        help=f"print at most N tuples of a table and say how many were left "
                             f"out (default {DEFAULT_LIMIT}; 'all' prints every tuple; other "
                             f"formats and --output get every tuple)")
    p_eval.add_argument("--memory-limit", default=None, metavar="SIZE",
                        help="with --engine duckdb: DuckDB's memory_limit (e.g. 2GB; default "
                             "half of the machine's memory), beyond which it spills to disk")
    p_eval.set_defaults(handler=cmd_eval)

    p_repl = sub.add_parser(
        "repl", help="an interactive session", epilog=_FORMATS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="An interactive session (history in ~/.sira_history).\n\n" + REPL_HELP)
    p_repl.add_argument("--relvar", "-r", action="append", default=[], metavar="NAME=FILE",
                        help=relvar_help)
    p_repl.add_argument("--engine", default="python", help=engine_help)
    p_repl.add_argument("--max-tuples", type=_tuple_count, default=None, metavar="N",
                        help=max_tuples_help)
    p_repl.add_argument("--memory-limit", default=None, metavar="SIZE",
                        help="with --engine duckdb: DuckDB's memory_limit (e.g. 2GB)")
    p_repl.set_defaults(handler=cmd_repl)

    p_demo = sub.add_parser("demo", help="a tour of the operators on the seed's relations",
                            description="A tour of the relational operators on the relations "
                                        "of SIRA_PRISE's catalog (seed 004).")
    p_demo.set_defaults(handler=cmd_demo)
    return parser


def main(argv=None) -> int:
    """Run the ``sira`` command.

    Args:
        argv: the arguments (without the program name); ``sys.argv[1:]`` when None.
    Returns:
        the exit code: 0 ok, 1 an error (``ErrorClass: message`` on stderr, never a traceback),
        2 a usage error, 130 interrupted.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 2
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.handler(args)
    except UsageError as err:
        print(f"sira: error: {err}", file=sys.stderr)
        return 2
    except SiraError as err:
        print(_error_text(err), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:  # `sira demo | head`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except ImportError as err:
        if getattr(args, "engine", "python") != "python":
            print(f"sira: error: the {args.engine} engine is not available ({err})",
                  file=sys.stderr)
            return 2
        print(f"{_error_text(err)}  (an internal error: please report it)", file=sys.stderr)
        return 1
    except (MemoryError, RecursionError) as err:
        print(_error_text(err), file=sys.stderr)
        return 1
    except Exception as err:  # a bug in sira: one line, not a traceback
        print(f"{_error_text(err)}  (an internal error: please report it)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
