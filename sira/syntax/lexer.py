"""The lexer of sira's text syntax.

Tokens are produced on demand (``Lexer.next_token``) so that the parser can rescan raw text
(the fields of ``error Class(key=value)``). Every step consumes input, and each regular
expression is anchored and free of nested repetition, so lexing is linear in the input size.
"""

from __future__ import annotations

import bisect
import re

from sira.errors import ParseError

# Token kinds
NAME = "NAME"
NUMBER = "NUMBER"
DATE = "DATE"
TIMESTAMP = "TIMESTAMP"
RAW = "RAW"
LPAREN = "LPAREN"
RPAREN = "RPAREN"
COMMA = "COMMA"
OP = "OP"
ASSIGN = "ASSIGN"
EOF = "EOF"

RAW_FUNCS = frozenset({"string", "date", "timestamp", "stream", "deltas"})

_WS = re.compile(r"\s+")
_PARENS = re.compile(r"[()]")

_OPERATORS = {
    "||": "||", "<>": "<>", "!=": "<>", "<=": "<=", ">=": ">=",
    "=": "=", "<": "<", ">": ">", "+": "+", "-": "-", "*": "*", "/": "/",
}

# The tokenizer: one regular expression, one named group per token kind (tried in this order);
# ``m.lastgroup`` says which matched. Literals are atomic groups followed by a look-ahead, so a
# literal running into a letter, digit or dot (``12a``, ``1.5.3``, ``2015-07-301``) is never
# read as a shorter literal: it matches BADNUMBER / BADDATE, which are errors.
_TOKEN = re.compile(r"""
      (?P<LPAREN>\()
    | (?P<RPAREN>\))
    | (?P<COMMA>,)
    | (?P<QUOTE>')
    | (?P<ASSIGN>:=)
    | (?P<OP>\|\||<>|!=|<=|>=|[=<>+\-*/])
    | (?P<TIMESTAMP>(?>[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}
                      (?::[0-9]{2}(?:\.[0-9]{1,9})?)?))(?![\w.])
    | (?P<DATE>(?>[0-9]{4}-[0-9]{2}-[0-9]{2}))(?![\w.])
    | (?P<BADDATE>[0-9]{4}-[0-9]{2}-[0-9]{2})
    | (?P<NUMBER>(?>[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?))(?![\w.])
    | (?P<BADNUMBER>[0-9])
    | (?P<NAME>[^\W\d]\w*(?:\.[^\W\d]\w*)*)   # s.val: a field of a tuple-valued s
""", re.VERBOSE)
_SIMPLE_KINDS = frozenset({"LPAREN", "RPAREN", "COMMA", "ASSIGN", "TIMESTAMP", "DATE", "NUMBER"})


class Token:
    """One token. ``value`` is the normalised operator for OP, ``(func, text)`` for RAW and the
    text as written otherwise; ``pos``/``end`` are offsets into the source."""

    __slots__ = ("kind", "value", "pos", "end")

    def __init__(self, kind, value, pos, end):
        self.kind = kind
        self.value = value
        self.pos = pos
        self.end = end

    def __repr__(self):
        return f"Token({self.kind}, {self.value!r}, {self.pos})"


class Source:
    """The text with a line index, to turn offsets into (line, col) and source lines."""

    def __init__(self, text: str):
        self.text = text
        self.line_starts = [0]
        find = text.find
        i = find("\n")
        while i != -1:
            self.line_starts.append(i + 1)
            i = find("\n", i + 1)

    def line_col(self, pos: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.line_starts, pos) - 1
        return index + 1, pos - self.line_starts[index] + 1

    def line_text(self, line: int) -> str:
        start = self.line_starts[line - 1]
        end = self.text.find("\n", start)
        if end == -1:
            end = len(self.text)
        return self.text[start:end].rstrip("\r")

    def error(self, message: str, pos: int, expected: str | None) -> ParseError:
        line, col = self.line_col(pos)
        return ParseError(message, line=line, col=col, source_line=self.line_text(line),
                          expected=expected)


def describe(token: Token, source: Source) -> str:
    """How a token reads in an error message: ``'foo'``, ``')'``, ``end of input``."""
    if token.kind == EOF:
        return "end of input"
    text = source.text[token.pos:token.end]
    if len(text) > 40 or "\n" in text:
        text = text[:40].split("\n", 1)[0] + "..."
    return repr(text) if "'" not in text else f'"{text}"'


class Lexer:
    """Produces tokens from ``source.text`` starting at ``pos``; lines whose first non-blank
    character is ``#`` are comments (when ``comments`` is true)."""

    def __init__(self, source: Source, comments: bool = True):
        self.source = source
        self.text = source.text
        self.pos = 0
        self.comments = comments
        stripped = self.text.rstrip()
        self.eof_pos = len(stripped)

    def _at_line_start(self, pos: int) -> bool:
        start = self.text.rfind("\n", 0, pos) + 1
        return self.text[start:pos].strip() == ""

    def _skip(self):
        text = self.text
        n = len(text)
        while self.pos < n:
            m = _WS.match(text, self.pos)
            if m:
                self.pos = m.end()
                continue
            if self.comments and text[self.pos] == "#" and self._at_line_start(self.pos):
                nl = text.find("\n", self.pos)
                self.pos = n if nl == -1 else nl + 1
                continue
            break

    def next_token(self) -> Token:
        self._skip()
        text = self.text
        pos = self.pos
        if pos >= len(text):
            return Token(EOF, None, max(min(self.eof_pos, len(text)), 0), len(text))
        m = _TOKEN.match(text, pos)
        if m is None:
            raise self.source.error(f"unexpected character {text[pos]!r}", pos, "a token")
        kind = m.lastgroup
        end = m.end()
        if kind in _SIMPLE_KINDS:
            self.pos = end
            return Token(kind, m.group(), pos, end)
        if kind == NAME:
            word = m.group()
            if word.lower() in RAW_FUNCS and text.startswith("(", end):
                return self._raw(pos, word.lower(), end)
            self.pos = end
            return Token(NAME, word, pos, end)
        if kind == OP:
            self.pos = end
            return Token(OP, _OPERATORS[m.group()], pos, end)
        if kind == "QUOTE":
            return self._quoted(pos)
        if kind == "BADDATE":
            raise self.source.error("malformed date or timestamp literal", pos,
                                    "a date (YYYY-MM-DD) or timestamp (YYYY-MM-DDThh:mm:ss)")
        raise self.source.error("malformed number", pos, "a number")  # BADNUMBER

    def _quoted(self, pos: int) -> Token:
        """``'it''s'``: a CQL-style quoted STRING literal (a doubled quote is one quote)."""
        text = self.text
        parts = []
        i = pos + 1
        while True:
            j = text.find("'", i)
            if j < 0:
                raise self.source.error("unterminated string literal: expected ' but found end "
                                        "of input", pos, "'")
            parts.append(text[i:j])
            if text.startswith("''", j):
                parts.append("'")
                i = j + 2
                continue
            self.pos = j + 1
            return Token(RAW, ("string", "".join(parts)), pos, j + 1)

    def _raw(self, pos: int, func: str, open_pos: int) -> Token:
        """``string(...)``: everything up to the balancing parenthesis is raw text."""
        end = scan_balanced(self.text, open_pos)
        if end < 0:
            raise self.source.error(
                f"unbalanced parenthesis in {func}(...) literal: expected ')' but found end of input",
                open_pos, "')'")
        self.pos = end + 1
        return Token(RAW, (func, self.text[open_pos + 1:end]), pos, end + 1)


def scan_balanced(text: str, open_pos: int) -> int:
    """The offset of the ``)`` balancing the ``(`` at ``open_pos``, or -1. Linear."""
    depth = 0
    pos = open_pos
    n = len(text)
    find_any = _PARENS.search
    while pos < n:
        m = find_any(text, pos)
        if m is None:
            return -1
        pos = m.start()
        if text[pos] == "(":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return pos
        pos += 1
    return -1
