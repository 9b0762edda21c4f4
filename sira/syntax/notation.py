"""The seeds' stream listings as relations.

A stream listing (Oracle CQL's "Timestamp Tuple" tables) becomes a relation with the element's
timestamp ``ts`` (LONG), its arrival position ``seq`` (LONG, from 1) and the schema's attributes;
``h T`` heartbeat lines are kept apart (a batch relation does not need them)::

    stream(
      schema: c1 int, c2 float
      Timestamp   Tuple
        1000      10,0.1
      h 800000
    )

A relation-output listing ("Timestamp Tuple Kind Tuple") becomes a relation with ``at``, ``kind``
('+' or '-') and the schema's attributes::

    deltas(
      schema: c1 int, c2 float
       5000:     +           10,0.1
    )

    >>> r = parse_stream("schema: c1 int, c2 float\\n 1000 10,0.1\\n 1002 15,0.14\\n h 2000")
    >>> r.to_rows()[1]
    {'c1': 15, 'c2': 0.14, 'seq': 2, 'ts': 1002}
"""

from __future__ import annotations

import datetime
import re

from ..errors import ParseError, SiraValueError
from ..types import article, LONG, STRING, type_named
from ..values import Heading, Relation

_TYPE_ALIASES = {"integer": "int", "char": "string", "varchar": "string", "double": "float",
                 "bigint": "long", "number": "float"}


def _schema(line: str, lineno: int):
    body = line.split(":", 1)[1]
    pairs = []
    for part in body.split(","):
        words = part.split()
        if len(words) != 2:
            raise ParseError(f"expected 'name type' in the schema, found '{part.strip()}'",
                             line=lineno, col=1, source_line=line, expected="name type")
        name, tname = words
        tname = re.sub(r"\(.*\)", "", tname.lower())
        pairs.append((name.lower(), type_named(_TYPE_ALIASES.get(tname, tname))))
    return pairs


def _value(t, text: str, lineno: int, line: str):
    text = text.strip()
    if text.startswith('"') and text.endswith('"'):
        text = text[1:-1]
    try:
        if t.name in ("INT", "LONG", "BIGINT"):
            return t.check(int(text))
        if t.name == "FLOAT":
            return t.check(float(text))
        if t.name == "BOOLEAN":
            if text.lower() not in ("true", "false"):
                raise ValueError(text)
            return text.lower() == "true"
        if t.name == "TIMESTAMP":
            for fmt in ("%m/%d/%Y %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"):
                try:
                    return datetime.datetime.strptime(text, fmt)
                except ValueError:
                    pass
            raise ValueError(text)
        if t.name == "DATE":
            return datetime.date.fromisoformat(text)
        return STRING.check(text)
    except (ValueError, SiraValueError):
        raise ParseError(f"'{text}' is not {article(t.name)}", line=lineno, col=1, source_line=line,
                         expected=t.name) from None


def _split_values(text: str, lineno: int, line: str) -> list:
    out, cur, quoted = [], [], False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if quoted:
        raise ParseError("unterminated quoted value", line=lineno, col=1, source_line=line,
                         expected='a closing "')
    out.append("".join(cur))
    return out


def _listing(text: str):
    """The schema of a listing and its data lines ``(lineno, raw, stripped)``; the schema line
    comes first and once (a listing of no elements still has its schema's attributes)."""
    schema, lines = None, []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.lower().startswith("timestamp"):
            continue
        if line.lower().startswith("schema:"):
            if schema is not None:
                raise ParseError("a listing has one 'schema:' line", line=lineno, col=1,
                                 source_line=raw, expected="a data line")
            schema = _schema(line, lineno)
            continue
        if schema is None:
            raise ParseError("a stream listing starts with 'schema: name type, ...'",
                             line=lineno, col=1, source_line=raw, expected="schema:")
        lines.append((lineno, raw, line))
    if schema is None:
        raise ParseError("a stream listing starts with 'schema: name type, ...'", line=1,
                         col=1, source_line=text.splitlines()[0] if text.strip() else "",
                         expected="schema:")
    return schema, lines


def parse_stream(text: str) -> Relation:
    """A stream listing as a relation {ts, seq, ...schema}."""
    rows = []
    seq = 0
    schema, lines = _listing(text)
    for lineno, raw, line in lines:
        if line.lower().startswith("h "):
            continue  # a heartbeat: no element
        stamp, _, rest = line.partition(" ")
        values = _split_values(rest.strip(), lineno, raw)
        if len(values) != len(schema):
            raise ParseError(f"expected {len(schema)} values, found {len(values)}", line=lineno,
                             col=1, source_line=raw, expected=f"{len(schema)} values")
        seq += 1
        row = {"ts": _value(LONG, stamp, lineno, raw), "seq": seq}
        for (name, t), v in zip(schema, values):
            row[name] = _value(t, v, lineno, raw)
        rows.append(row)
    heading = Heading.of([("ts", LONG), ("seq", LONG)] + list(schema))
    return Relation.from_rows(heading, rows)


def parse_deltas(text: str) -> Relation:
    """A relation-output listing as a relation {at, kind, ...schema}."""
    rows = []
    schema, lines = _listing(text)
    for lineno, raw, line in lines:
        m = re.match(r"(\d+)\s*:?\s*([+-])\s*(.*)$", line)
        if not m:
            raise ParseError("expected 'time: + values' or 'time: - values'", line=lineno,
                             col=1, source_line=raw, expected="time: +|- values")
        values = _split_values(m.group(3), lineno, raw)
        if len(values) != len(schema):
            raise ParseError(f"expected {len(schema)} values, found {len(values)}", line=lineno,
                             col=1, source_line=raw, expected=f"{len(schema)} values")
        row = {"at": int(m.group(1)), "kind": m.group(2)}
        for (name, t), v in zip(schema, values):
            row[name] = _value(t, v, lineno, raw)
        rows.append(row)
    heading = Heading.of([("at", LONG), ("kind", STRING)] + list(schema))
    return Relation.from_rows(heading, rows)
