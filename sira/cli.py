"""The ``sira`` command: ``sira eval``, ``sira repl`` and ``sira demo``.

::

    sira eval 'restrict(dbmsfile, gt(pagesize, 16384))' --relvar dbmsfile=dbmsfile.csv
    sira eval @query.sira --relvar DBMSFILE=dbmsfile.json --format json
    sira eval 'project(DBMSFILE, (pagesize))' --relvar DBMSFILE=dbmsfile.sira --explain
    sira repl --relvar DBMSFILE=dbmsfile.csv
    sira demo

Relvar files (``--relvar NAME=FILE``; a bare ``FILE`` is named after its stem). The format is
chosen by the file's extension (``.csv``, ``.json``, ``.sira`` or ``.rel``), else by its first
character (``{`` JSON, ``r`` relation literal, anything else CSV):

CSV
    The header cells are ``name:type``, the types as in the text syntax: ``int long bigint float
    string boolean date timestamp`` (also ``average``, interval types such as ``intinterval``, and
    ``relation(heading(...))`` / ``tuple(heading(...))``). Cells: integers, floats, raw text for
    strings (quote them CSV-style when they hold commas), ``true``/``false``, ISO dates
    (``2015-07-30``) and timestamps (``2015-07-30T12:00:00``); a cell of any other type is a value
    in the text syntax (``intinterval(from(4)to(7))``). There are no nulls: an empty cell is
    the empty string for a STRING attribute and an error otherwise. Example::

        filename:string,pagesize:int
        DATABASECATALOG.SPDB,32768
        BW_SPOTS.SPDB,16384

JSON
    ``{"heading": {"filename": "string", "pagesize": "int"}, "body": [{"filename":
    "BW_SPOTS.SPDB", "pagesize": 16384}, ...]}``. Numbers, strings and booleans are JSON values,
    dates and timestamps ISO strings, a relation-valued attribute a nested ``{"heading", "body"}``
    object, and any other value a string in the text syntax. ``--format json`` prints results in
    the same form, so its output can be read back as a relvar file.

Relation literal (``.sira``, ``.rel``)
    Any expression in the text syntax that needs no relvar, usually a relation literal:
    ``relation(heading(filename(string) pagesize(int))
    body(tuple(filename(string(A)) pagesize(1))))``.

Exit codes: 0 success, 1 a sira error (printed as ``ErrorClass: message`` on stderr, no
traceback), 2 a usage error (bad arguments, an unreadable file).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import json
import os
import pathlib
import re
import sys

import sira
from .errors import SiraError, SiraValueError
from .types import (BOOLEAN, DATE, FLOAT, STRING, TIMESTAMP, IntegerType, RelationType,
                    Type)
from .values import Heading, Relation, type_text

__all__ = ["main", "load_relvar", "relation_to_json", "relation_from_json", "explain_steps"]

_FORMATS_HELP = """\
relvar files (--relvar NAME=FILE, or just FILE: named after its stem):
  .csv        header cells name:type, e.g.  filename:string,pagesize:int
              types: int long bigint float string boolean date timestamp (and average,
              intinterval ..., relation(heading(...)): cells in the text syntax)
  .json       {"heading": {"filename": "string", "pagesize": "int"},
               "body": [{"filename": "BW_SPOTS.SPDB", "pagesize": 16384}, ...]}
  .sira .rel  a relation literal: relation(heading(a(int)) body(tuple(a(1)) tuple(a(2))))

exit codes: 0 ok, 1 a sira error (ErrorClass: message on stderr), 2 a usage error
"""


class UsageError(Exception):
    """Bad arguments or an unreadable file: exit code 2."""


# ------------------------------------------------------------------------------- relvar files
def _heading_from_pairs(pairs, where: str) -> Heading:
    """A heading from (name, type text) pairs, the types read by sira's own parser."""
    if not pairs:
        return Heading()
    for name, type_name in pairs:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name or ""):
            raise SiraValueError(f"{where}: '{name}' is not an attribute name")
        if not type_name or not re.fullmatch(r"[A-Za-z0-9_() ]+", type_name):
            raise SiraValueError(f"{where}: '{type_name}' is not a type (attribute '{name}')")
    text = "relation(heading(" + " ".join(f"{n}({t})" for n, t in pairs) + ") body())"
    try:
        return sira.parse(text).heading
    except SiraError as err:
        raise SiraValueError(f"{where}: cannot read the heading "
                             f"{', '.join(f'{n}:{t}' for n, t in pairs)}: "
                             f"{err.message.splitlines()[0]}") from None


def _text_value(t: Type, text: str, where: str):
    """A value written in the text syntax (intervals, AVERAGE, RVAs...), checked against t."""
    try:
        value = sira.evaluate(sira.parse(text))
        return t.check(value)
    except SiraError as err:
        raise SiraValueError(f"{where}: cannot read {text!r} as {t.name}: "
                             f"{err.message.splitlines()[0]}") from None


def _cell_value(t: Type, cell: str, where: str):
    """One CSV cell as a value of type t."""
    text = cell.strip()
    try:
        if t == STRING:
            return cell
        if not text:
            raise ValueError("an empty cell (sira has no nulls)")
        if isinstance(t, IntegerType):
            return t.check(int(text))
        if t == FLOAT:
            return t.check(float(text))
        if t == BOOLEAN:
            low = text.lower()
            if low in ("true", "1"):
                return True
            if low in ("false", "0"):
                return False
            raise ValueError("expected true or false")
        if t == DATE:
            return datetime.date.fromisoformat(text)
        if t == TIMESTAMP:
            return t.check(datetime.datetime.fromisoformat(text))
    except (ValueError, OverflowError) as err:
        raise SiraValueError(f"{where}: cannot read {cell!r} as {t.name} ({err})") from None
    except SiraError as err:
        raise SiraValueError(f"{where}: cannot read {cell!r} as {t.name} "
                             f"({err.message})") from None
    return _text_value(t, text, where)


def relation_from_csv(text: str, source: str = "<csv>") -> Relation:
    """A relation from CSV text whose header cells are ``name:type``.

    Args:
        text: the CSV text.
        source: the file name, for messages.
    Returns:
        the relation (duplicate rows collapse into one tuple).
    Raises:
        SiraValueError: a malformed header or a cell that does not fit its type.
    """
    rows = list(csv.reader(io.StringIO(text)))
    while rows and not any(c.strip() for c in rows[-1]):
        rows.pop()
    if not rows:
        raise SiraValueError(f"{source}: empty CSV file (the first line must be the heading, "
                             f"e.g. filename:string,pagesize:int)")
    pairs = []
    for cell in rows[0]:
        name, sep, type_name = cell.partition(":")
        if not sep:
            raise SiraValueError(f"{source}, line 1: header cell {cell!r} must be name:type "
                                 f"(e.g. pagesize:int)")
        pairs.append((name.strip(), type_name.strip()))
    heading = _heading_from_pairs(pairs, f"{source}, line 1")
    names = [n.lower() for n, _ in pairs]
    body = []
    for number, row in enumerate(rows[1:], 2):
        if not row:
            continue
        if len(row) != len(names):
            raise SiraValueError(f"{source}, line {number}: {len(row)} cells for "
                                 f"{len(names)} attributes")
        body.append({n: _cell_value(heading[n], cell, f"{source}, line {number}, "
                                                      f"attribute '{n}'")
                     for n, cell in zip(names, row)})
    return Relation.from_rows(heading, body)


def _json_value(t: Type, value, where: str):
    """A JSON value as a value of type t (the inverse of :func:`_to_json`)."""
    if isinstance(t, RelationType) and isinstance(value, dict):
        inner = relation_from_json(value, where)
        return t.check(inner)
    if t in (DATE, TIMESTAMP) and isinstance(value, str):
        try:
            parsed = (datetime.date.fromisoformat(value) if t == DATE
                      else datetime.datetime.fromisoformat(value))
        except ValueError as err:
            raise SiraValueError(f"{where}: cannot read {value!r} as {t.name} ({err})") from None
        return t.check(parsed)
    if isinstance(value, str) and t != STRING:
        return _text_value(t, value, where)
    try:
        return t.check(value)
    except SiraError as err:
        raise SiraValueError(f"{where}: {err.message}") from None


def relation_from_json(data, source: str = "<json>") -> Relation:
    """A relation from ``{"heading": {name: type}, "body": [{name: value}, ...]}``.

    Raises:
        SiraValueError: the object does not have that shape, or a value does not fit its type.
    """
    if not isinstance(data, dict) or not isinstance(data.get("heading"), dict):
        raise SiraValueError(f'{source}: expected {{"heading": {{name: type, ...}}, '
                             f'"body": [{{name: value, ...}}, ...]}}')
    heading = _heading_from_pairs([(str(k), str(v)) for k, v in data["heading"].items()],
                                  f"{source}, heading")
    body = data.get("body", [])
    if not isinstance(body, list):
        raise SiraValueError(f'{source}: "body" must be a list of objects')
    rows = []
    for number, row in enumerate(body, 1):
        if not isinstance(row, dict):
            raise SiraValueError(f"{source}, tuple {number}: expected an object, got {row!r}")
        given = {str(k).lower(): v for k, v in row.items()}
        extra = sorted(set(given) - set(heading.names))
        missing = [n for n in heading.names if n not in given]
        if extra or missing:
            raise SiraValueError(f"{source}, tuple {number}: "
                                 + (f"unknown attribute '{extra[0]}'" if extra
                                    else f"no value for '{missing[0]}' (sira has no nulls)"))
        rows.append({n: _json_value(heading[n], given[n], f"{source}, tuple {number}, "
                                                            f"attribute '{n}'")
                     for n in heading.names})
    return Relation.from_rows(heading, rows)


def load_relvar(path) -> Relation:
    """Read a relvar file (CSV, JSON or a relation literal; see the module docstring).

    Raises:
        UsageError: the file cannot be read.
        SiraError: its content is not a relation.
    """
    path = pathlib.Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"cannot read relvar file {str(path)!r}: "
                         f"{getattr(err, 'strerror', None) or err}") from None
    suffix = path.suffix.lower()
    stripped = text.lstrip()
    if suffix not in (".csv", ".json", ".sira", ".rel"):
        suffix = (".json" if stripped.startswith("{") else
                  ".sira" if stripped[:8].lower() == "relation" else ".csv")
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise SiraValueError(f"{path}: not JSON ({err})") from None
        return relation_from_json(data, str(path))
    if suffix in (".sira", ".rel"):
        value = sira.evaluate(sira.parse(text))
        if not isinstance(value, Relation):
            raise SiraValueError(f"{path}: the expression is not a relation")
        return value
    return relation_from_csv(text, str(path))


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
    relvars, display = {}, {}
    for spec in specs or ():
        name, file = _relvar_spec(spec)
        relvars[name.lower()] = load_relvar(file)
        display[name.lower()] = name
    return relvars, display


# ------------------------------------------------------------------------------- output
def _to_json(t: Type, value):
    if isinstance(value, Relation):
        return relation_to_json(value)
    if isinstance(value, bool) or isinstance(value, (int, float, str)):
        return value
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return t.literal(value)


def relation_to_json(relation: Relation) -> dict:
    """``{"heading": {name: type}, "body": [{name: value}, ...]}`` (tuples in sorted order)."""
    heading = relation.heading
    return {"heading": {n: type_text(t) for n, t in heading.attributes},
            "body": [{n: _to_json(t, v) for (n, t), v in zip(heading.attributes, row)}
                     for row in relation.sorted_body()]}


def _scalar_type(expr):
    from .expressions.evaluate import infer_type
    return infer_type(expr, Heading())


def render(value, fmt: str = "table", value_type: Type | None = None) -> str:
    """A result (a relation or a scalar) as ``table``, ``json`` or ``text``."""
    if isinstance(value, Relation):
        if fmt == "json":
            return json.dumps(relation_to_json(value), indent=2)
        if fmt == "text":
            return value.literal()
        return value.to_table(limit=None)
    if value_type is None:
        from .types import type_of_python
        value_type = type_of_python(value)
    if fmt == "json":
        return json.dumps(_to_json(value_type, value))
    if fmt == "text":
        return value_type.literal(value)
    return value_type.format(value)


# ------------------------------------------------------------------------------- explain
def explain_steps(expr, relvars: dict, engine="python", display: dict | None = None,
                  fmt: str = "table") -> str:
    """Every sub-expression of ``expr`` bottom-up, each with its arguments and its result.

    The steps of :func:`sira.explain` (one block per operator, ARG / SPEC / RESULT, as the seed
    presents its examples), with every table whole and a scalar result printed in ``fmt``.

    Args:
        expr: an algebra node or a scalar expression (``eq(TABLE_DEE, project(R, ()))``).
        relvars: name -> Relation.
        engine: passed to :func:`sira.evaluate`.
        display: name -> the name to print (defaults to the upper-cased name).
        fmt: ``table``, ``json`` or ``text``, for a scalar result.
    Returns:
        the text of the blocks.
    """
    from .explain import evaluate_steps, steps_text
    steps = evaluate_steps(expr, relvars, engine=engine, display=display)
    return steps_text(steps, limit=None,
                      render_scalar=lambda value, value_type: render(value, fmt, value_type))


# ------------------------------------------------------------------------------- commands
def _error_text(err: BaseException) -> str:
    message = getattr(err, "message", None) or str(err)
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


def cmd_eval(args) -> int:
    text = _read_expression(args.expression)
    relvars, display = load_relvars(args.relvar)
    expr = sira.parse(text, relvars)
    if args.explain:
        print(explain_steps(expr, relvars, engine=args.engine, display=display, fmt=args.format))
        if args.format == "table":
            return 0
        print()
    value = sira.evaluate(expr, relvars, engine=args.engine)
    value_type = None if isinstance(value, Relation) else _scalar_type(expr)
    print(render(value, args.format, value_type))
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
  :load NAME=FILE     load a relvar file (.csv, .json, .sira)
  :drop NAME          forget a relvar
  :format FORMAT      print results as table (default), json or text
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

    def __init__(self, relvars=None, display=None, engine="python", out=None, err=None):
        self.relvars = dict(relvars or {})
        self.display = dict(display or {})
        self.engine = engine
        self.format = "table"
        self.out = out or sys.stdout
        self.err = err or sys.stderr

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
            print(_error_text(err), file=self.err)
        except UsageError as err:
            print(f"error: {err}", file=self.err)
        except RecursionError as err:
            print(_error_text(err), file=self.err)
        except Exception as err:  # a bug in sira: report it, keep the session alive
            print(f"{_error_text(err)}  (an internal error: please report it)", file=self.err)
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
                                       self.format))
            elif command == "load":
                name, file = _relvar_spec(rest)
                self.bind(name, load_relvar(file))
            elif command == "drop":
                key = rest.lower()
                if key not in self.relvars:
                    raise sira.UnknownRelvar(relvar=rest, available=tuple(sorted(self.relvars)))
                del self.relvars[key]
                self.display.pop(key, None)
                self.say(f"dropped {rest}")
            elif command == "format":
                if rest not in ("table", "json", "text"):
                    raise UsageError(":format takes table, json or text")
                self.format = rest
            else:
                raise UsageError(f"unknown command ':{command}' (:help lists them)")
            return True
        match = _BIND.match(text)
        if match:
            name, body = match.groups()
            expr = sira.parse(body, self.relvars)
            value = sira.evaluate(expr, self.relvars, engine=self.engine)
            if not isinstance(value, Relation):
                raise SiraValueError(f"only relations can be bound to a relvar; {body.strip()} "
                                     f"is a {_scalar_type(expr).name}")
            self.bind(name, value)
            return True
        expr = sira.parse(text, self.relvars)
        value = sira.evaluate(expr, self.relvars, engine=self.engine)
        value_type = None if isinstance(value, Relation) else _scalar_type(expr)
        self.say(render(value, self.format, value_type))
        return True

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
    repl = Repl(relvars, display, engine=args.engine)
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
    return 0


# ------------------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sira",
        description="sira: a relational algebra engine in the style of Tutorial D and "
                    "SIRA_PRISE.",
        epilog=_FORMATS_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"sira {sira.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{eval,repl,demo}")

    relvar_help = ("bind relvar NAME to the relation in FILE (.csv with name:type headers, "
                   ".json, .sira); repeatable")
    engine_help = "the engine: python (default, embedded) or spark"

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
    p_eval.add_argument("--format", "-f", choices=("table", "json", "text"), default="table",
                        help="table (default), json ({heading, body}) or text (a relation "
                             "literal)")
    p_eval.add_argument("--engine", default="python", help=engine_help)
    p_eval.set_defaults(handler=cmd_eval)

    p_repl = sub.add_parser(
        "repl", help="an interactive session", epilog=_FORMATS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="An interactive session (history in ~/.sira_history).\n\n" + REPL_HELP)
    p_repl.add_argument("--relvar", "-r", action="append", default=[], metavar="NAME=FILE",
                        help=relvar_help)
    p_repl.add_argument("--engine", default="python", help=engine_help)
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
        the exit code: 0 ok, 1 a sira error, 2 a usage error.
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
    except ImportError as err:
        if getattr(args, "engine", "python") == "python":
            raise
        print(f"sira: error: the {args.engine} engine is not available ({err})",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:  # `sira demo | head`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
