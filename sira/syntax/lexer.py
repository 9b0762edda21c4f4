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
_NAME = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")  # s.val: a field of a tuple-valued s
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_DATE_PREFIX = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?")
_PARENS = re.compile(r"[()]")
_AFTER_LITERAL = re.compile(r"[\w.]")  # a literal must not run into these

_OPERATORS = {
    "||": "||", "<>": "<>", "!=": "<>", "<=": "<=", ">=": ">=",
    "=": "=", "<": "<", ">": ">", "+": "+", "-": "-", "*": "*", "/": "/",
}


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
        c = text[pos]
        if c == "(":
            self.pos = pos + 1
            return Token(LPAREN, "(", pos, pos + 1)
        if c == ")":
            self.pos = pos + 1
            return Token(RPAREN, ")", pos, pos + 1)
        if c == ",":
            self.pos = pos + 1
            return Token(COMMA, ",", pos, pos + 1)
        if c == "'":
            return self._quoted(pos)
        if c == ":" and text.startswith(":=", pos):
            self.pos = pos + 2
            return Token(ASSIGN, ":=", pos, pos + 2)
        two = text[pos:pos + 2]
        if two in _OPERATORS:
            self.pos = pos + 2
            return Token(OP, _OPERATORS[two], pos, pos + 2)
        if c in _OPERATORS:
            self.pos = pos + 1
            return Token(OP, _OPERATORS[c], pos, pos + 1)
        if "0" <= c <= "9":
            return self._number(pos)
        m = _NAME.match(text, pos)
        if m:
            end = m.end()
            word = m.group()
            func = word.lower()
            if func in RAW_FUNCS and text.startswith("(", end):
                return self._raw(pos, func, end)
            self.pos = end
            return Token(NAME, word, pos, end)
        raise self.source.error(f"unexpected character {c!r}", pos, "a token")

    def _number(self, pos: int) -> Token:
        text = self.text
        if _DATE_PREFIX.match(text, pos):
            m = _TIMESTAMP.match(text, pos)
            kind = TIMESTAMP
            if not m or _AFTER_LITERAL.match(text, m.end()):
                m = _DATE_PREFIX.match(text, pos)
                kind = DATE
            if _AFTER_LITERAL.match(text, m.end()):
                raise self.source.error("malformed date or timestamp literal", pos,
                                        "a date (YYYY-MM-DD) or timestamp (YYYY-MM-DDThh:mm:ss)")
            self.pos = m.end()
            return Token(kind, m.group(), pos, m.end())
        m = _NUMBER.match(text, pos)
        if _AFTER_LITERAL.match(text, m.end()):
            raise self.source.error("malformed number", pos, "a number")
        self.pos = m.end()
        return Token(NUMBER, m.group(), pos, m.end())

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
