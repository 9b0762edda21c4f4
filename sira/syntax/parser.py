"""The concrete-syntax parser of sira's text syntax.

Three entry points:

- ``parse_expression(text)``: exactly one item (an expression) -> a CST node;
- ``parse_script(text)``: a case file -> a tuple of statements (``Bind``, ``Query``,
  ``Expect``, ``ExpectError``);
- ``parse_header(text)``: the ``# key: value`` lines before the first statement.

Argument lists (of calls and parenthesised groups) separate items by commas or by plain
juxtaposition (``from(4)to(7)``); an item ends where no infix operator can continue it.

Infix expressions follow Oracle CQL's precedence, highest first: unary ``+ -``; ``* /``;
binary ``+ -`` and ``||``; comparisons ``= <> != < > <= >=`` (non-associative); prefix
``not``; ``and``; ``or``. ``not(x)``, ``and(a,b)``, ``or(a,b)`` are ordinary calls.

The parser is iterative (operator-precedence parsing with explicit stacks), so neither deep
parentheses nor long operator chains use Python's stack; nesting deeper than ``MAX_NESTING``
levels of parentheses/calls/unary operators, or a tree deeper than ``MAX_TREE_DEPTH``, is a
``ParseError``.
"""

from __future__ import annotations

import bisect
import re

from sira.errors import ParseError
from sira.syntax import cst
from sira.syntax.lexer import (
    ASSIGN, COMMA, DATE, EOF, LPAREN, NAME, NUMBER, OP, RAW, RPAREN, TIMESTAMP,
    Lexer, Source, Token, describe,
)

__all__ = ["parse_expression", "parse_script", "parse_header", "MAX_NESTING", "MAX_TREE_DEPTH"]

MAX_NESTING = 256
MAX_TREE_DEPTH = 512

_BINARY_PREC = {
    "or": 1, "and": 2,
    "=": 4, "<>": 4, "<": 4, ">": 4, "<=": 4, ">=": 4,
    "+": 5, "-": 5, "||": 5,
    "*": 6, "/": 6,
}
_NOT_PREC = 3
_COMPARISON_PREC = 4
_SIGN_PREC = 7

_ATOMS = {
    NUMBER: cst.Number,
    DATE: cst.DateLit,
    TIMESTAMP: cst.TimestampLit,
}


class _Frame:
    """An argument list (or the top level) being parsed: finished items, and the operand and
    operator stacks of the item in progress."""

    __slots__ = ("kind", "name", "token", "args", "operands", "ops", "after_comma")

    def __init__(self, kind, name=None, token=None):
        self.kind = kind  # "top", "call" or "group"
        self.name = name
        self.token = token
        self.args = []
        self.operands = []  # (node, depth)
        self.ops = []  # (op, prec, is_unary, token)
        self.after_comma = False


# ---------------------------------------------------------------- the fast path for tuples
#
# Relation literals are mostly ``tuple(name(value) ...)`` with plain values. The general loop
# below spends a dozen Python calls per token; a tuple whose items are all plain values
# (numbers, quoted or string(...) text, true/false, integer intervals) is read instead with one
# regular expression per item, giving exactly the CST (shapes and positions) the general loop
# gives. Anything else (nested calls, comments, odd spacing, errors) makes the fast path give up
# and the general loop read the tuple, so errors are reported exactly as before.

_NUM = r"[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_FAST_ITEM = re.compile(
    r"(?P<sep>\s*,?\s*)(?P<name>[^\W\d]\w*)\((?:"
    rf"(?P<neg>-)?(?P<num>{_NUM})(?![\w.])"
    r"|'(?P<quoted>(?:[^']|'')*)'"
    r"|(?P<raw>string)\((?P<rawtext>[^()]*)\)"
    r"|(?P<bool>(?i:true|false))(?![\w.(])"
    r"|(?P<itype>(?i:intinterval|longinterval))\((?P<lo_kw>(?i:from|begin))\("
    rf"(?P<lo_neg>-)?(?P<lo>[0-9]+)\)(?:(?P<hi_kw>(?i:to|end))\((?P<hi_neg>-)?(?P<hi>[0-9]+)\))?\)"
    r")\)")
_FAST_END = re.compile(r"\s*\)")
_NEXT_TUPLE = re.compile(r"\s*,?\s*(?P<name>(?i:tuple))\(")


class _FastTuples:
    """Reads ``tuple(...)`` bodies of plain values straight from the text (see above)."""

    def __init__(self, source: Source):
        self.text = source.text
        self.starts = source.line_starts
        self.line = 1  # the line of the last position asked for, and its bounds
        self.line_start = 0
        self.next_start = self.starts[1] if len(self.starts) > 1 else len(self.text) + 1

    def where(self, pos: int) -> dict:
        if not self.line_start <= pos < self.next_start:
            starts = self.starts
            self.line = line = bisect.bisect_right(starts, pos)
            self.line_start = starts[line - 1]
            self.next_start = starts[line] if line < len(starts) else len(self.text) + 1
        return {"line": self.line, "col": pos - self.line_start + 1}

    def number(self, m, sign: str, digits: str):
        """``Number`` (or ``UnaryOp('-', Number)``) for a number whose sign is group ``sign``."""
        number = cst.Number(m.group(digits), **self.where(m.start(digits)))
        if m.group(sign) is None:
            return number
        return cst.UnaryOp("-", number, **self.where(m.start(sign)))

    def value(self, m):
        kind = m.lastgroup
        if kind == "num":
            return self.number(m, "neg", "num")
        if kind == "quoted":
            return cst.Raw("string", m.group("quoted").replace("''", "'"),
                           **self.where(m.start("quoted") - 1))
        if kind == "rawtext":
            return cst.Raw("string", m.group("rawtext"), **self.where(m.start("raw")))
        if kind == "bool":
            return cst.Name(m.group("bool"), **self.where(m.start("bool")))
        bounds = [cst.Call(m.group("lo_kw"), (self.number(m, "lo_neg", "lo"),),
                           **self.where(m.start("lo_kw")))]
        if m.group("hi_kw") is not None:
            bounds.append(cst.Call(m.group("hi_kw"), (self.number(m, "hi_neg", "hi"),),
                                   **self.where(m.start("hi_kw"))))
        return cst.Call(m.group("itype"), tuple(bounds), **self.where(m.start("itype")))

    def read(self, name: Token, open_end: int):
        """(the ``tuple(...)`` call, the offset after its ``)``), or None to let the general
        parser read it."""
        text = self.text
        match = _FAST_ITEM.match
        where = self.where
        items = []
        pos = open_end
        m = match(text, pos)
        if m is None or "," in m.group("sep"):
            return None  # tuple(, a(1)): the general parser words the error
        while m is not None:
            items.append(cst.Call(m.group("name"), (self.value(m),), **where(m.start("name"))))
            pos = m.end()
            m = match(text, pos)
        end = _FAST_END.match(text, pos)
        if end is None:
            return None
        return cst.Call(name.value, tuple(items), **where(name.pos)), end.end()


class _Parser:
    def __init__(self, text: str):
        if not isinstance(text, str):
            raise TypeError(f"expected str, got {type(text).__name__}")
        self.source = Source(text)
        self.lexer = Lexer(self.source)
        self.buffer: list[Token] = []
        self.last: Token | None = None
        self.fast = _FastTuples(self.source)

    # -- tokens ----------------------------------------------------------------------------

    def peek(self, k: int = 0) -> Token:
        while len(self.buffer) <= k:
            if self.buffer and self.buffer[-1].kind == EOF:
                return self.buffer[-1]
            self.buffer.append(self.lexer.next_token())
        return self.buffer[k]

    def advance(self) -> Token:
        token = self.peek()
        if token.kind != EOF:
            self.buffer.pop(0)
        self.last = token
        return token

    def rewind_to(self, pos: int):
        self.buffer.clear()
        self.lexer.pos = pos

    def error(self, token: Token, expected: str, message: str | None = None) -> ParseError:
        if message is None:
            message = f"expected {expected} but found {describe(token, self.source)}"
        return self.source.error(message, token.pos, expected)

    def where(self, token: Token) -> dict:
        line, col = self.source.line_col(token.pos)
        return {"line": line, "col": col}

    def end_line(self) -> int:
        """The line on which the last consumed token ends."""
        if self.last is None:
            return 0
        return self.source.line_col(max(self.last.end - 1, self.last.pos))[0]

    def _is_binary(self, token: Token) -> bool:
        if token.kind == OP:
            return True
        if token.kind == NAME and token.value.lower() in ("and", "or"):
            nxt = self.peek(1)
            # and(a, b) / or(a, b) written directly against the parenthesis are calls
            return not (nxt.kind == LPAREN and nxt.pos == token.end)
        return False

    @staticmethod
    def _starts_item(token: Token) -> bool:
        return token.kind in (NAME, NUMBER, DATE, TIMESTAMP, RAW, LPAREN) or (
            token.kind == OP and token.value in ("+", "-"))

    # -- items -----------------------------------------------------------------------------

    def parse_item(self):
        """One expression; stops (without consuming) at the first token that cannot continue
        it. Iterative: every stack is explicit."""
        frames = [_Frame("top")]
        nesting = 0
        want_operand = True

        while True:
            frame = frames[-1]
            token = self.peek()

            if want_operand:
                kind = token.kind
                if kind == OP and token.value in ("+", "-"):
                    self.advance()
                    nesting += 1
                    if nesting > MAX_NESTING:
                        raise self._too_deep(token)
                    frame.ops.append((token.value, _SIGN_PREC, True, token))
                    continue
                if kind == NAME:
                    word = token.value.lower()
                    nxt = self.peek(1)
                    if word == "not" and not (nxt.kind == LPAREN and nxt.pos == token.end):
                        if frame.ops and frame.ops[-1][1] > _NOT_PREC:
                            before = frame.ops[-1][0]
                            raise self.error(
                                token, "an operand",
                                f"'not' binds more loosely than '{before}': expected an operand"
                                f" but found {describe(token, self.source)} (add parentheses)")
                        self.advance()
                        nesting += 1
                        if nesting > MAX_NESTING:
                            raise self._too_deep(token)
                        frame.ops.append(("not", _NOT_PREC, True, token))
                        continue
                    if nxt.kind == LPAREN:
                        if word == "tuple" and nxt.pos == token.end:
                            fast = self.fast.read(token, nxt.end)
                            if fast is not None:
                                node, end = self._fast_tuples(frame, fast)
                                self.rewind_to(end)
                                self.last = Token(RPAREN, ")", end - 1, end)
                                frame.operands.append((node, 4))
                                want_operand = False
                                continue
                        self.advance()
                        self.advance()
                        nesting += 1
                        if nesting > MAX_NESTING:
                            raise self._too_deep(token)
                        frames.append(_Frame("call", token.value, token))
                        continue
                    if word in ("and", "or"):
                        raise self.error(token, "an expression")
                    self.advance()
                    frame.operands.append((cst.Name(token.value, **self.where(token)), 1))
                    want_operand = False
                    continue
                if kind in _ATOMS:
                    self.advance()
                    frame.operands.append((_ATOMS[kind](token.value, **self.where(token)), 1))
                    want_operand = False
                    continue
                if kind == RAW:
                    self.advance()
                    func, text = token.value
                    frame.operands.append((cst.Raw(func, text, **self.where(token)), 1))
                    want_operand = False
                    continue
                if kind == LPAREN:
                    self.advance()
                    nesting += 1
                    if nesting > MAX_NESTING:
                        raise self._too_deep(token)
                    frames.append(_Frame("group", None, token))
                    continue
                if (kind == RPAREN and frame.kind != "top" and not frame.args
                        and not frame.ops and not frame.after_comma):
                    # empty list: f(), ()
                    self.advance()
                    nesting -= 1
                    node, depth = self._close(frames.pop(), token)
                    frames[-1].operands.append((node, depth))
                    want_operand = False
                    continue
                raise self.error(token, "an expression")

            # want an operator
            if self._is_binary(token):
                op = token.value if token.kind == OP else token.value.lower()
                prec = _BINARY_PREC[op]
                if prec == _COMPARISON_PREC:
                    nesting -= self._reduce(frame, prec + 1, token)
                    if frame.ops and frame.ops[-1][1] == _COMPARISON_PREC:
                        raise self.error(
                            token, "parentheses",
                            f"comparisons do not chain: found {describe(token, self.source)}"
                            f" after '{frame.ops[-1][0]}'; expected parentheses")
                else:
                    nesting -= self._reduce(frame, prec, token)
                self.advance()
                frame.ops.append((op, prec, False, token))
                want_operand = True
                continue

            # the item in progress ends here
            nesting -= self._reduce(frame, 0, token)
            (node, depth), = frame.operands
            frame.operands.clear()
            if frame.kind == "top":
                return node
            frame.args.append((node, depth))
            if token.kind == COMMA:
                self.advance()
                frame.after_comma = True
                want_operand = True
                continue
            frame.after_comma = False
            if token.kind == RPAREN:
                self.advance()
                nesting -= 1
                node, depth = self._close(frames.pop(), token)
                frames[-1].operands.append((node, depth))
                continue
            if self._starts_item(token):
                want_operand = True  # juxtaposition: the token starts the next item
                continue
            raise self.error(token, "')'")

    def _fast_tuples(self, frame: _Frame, first):
        """After a fast-read tuple that starts an item of a list, read the tuples that follow
        it in the same list as further items (a body of a thousand tuples is read in one
        go); returns the last one, left for the general loop to finish (a ``)``, an operator
        ...), and the offset after it."""
        node, end = first
        if frame.kind == "top" or frame.ops or frame.operands:
            return node, end
        text = self.source.text
        while True:
            m = _NEXT_TUPLE.match(text, end)
            if m is None:
                return node, end
            name = Token(NAME, m.group("name"), m.start("name"), m.end("name"))
            fast = self.fast.read(name, m.end())
            if fast is None:
                return node, end
            frame.args.append((node, 4))
            node, end = fast

    def _too_deep(self, token: Token) -> ParseError:
        return self.error(token, f"at most {MAX_NESTING} levels of nesting",
                          f"nesting deeper than {MAX_NESTING} levels")

    def _check_depth(self, depth: int, token: Token):
        if depth > MAX_TREE_DEPTH:
            raise self.error(token, f"an expression at most {MAX_TREE_DEPTH} levels deep",
                             f"expression tree deeper than {MAX_TREE_DEPTH} levels")

    def _reduce(self, frame: _Frame, min_prec: int, token: Token) -> int:
        """Apply the pending operators of precedence >= min_prec; returns how many unary
        operators were applied (they no longer count as open nesting)."""
        ops = frame.ops
        operands = frame.operands
        unary = 0
        while ops and ops[-1][1] >= min_prec:
            op, _prec, is_unary, op_token = ops.pop()
            if is_unary:
                operand, depth = operands.pop()
                depth += 1
                self._check_depth(depth, token)
                operands.append((cst.UnaryOp(op, operand, **self.where(op_token)), depth))
                unary += 1
            else:
                right, rdepth = operands.pop()
                left, ldepth = operands.pop()
                depth = max(ldepth, rdepth) + 1
                self._check_depth(depth, token)
                operands.append((cst.BinOp(op, left, right, **self.where(op_token)), depth))
        return unary

    def _close(self, frame: _Frame, token: Token):
        depth = max((d for _, d in frame.args), default=0) + 1
        self._check_depth(depth, token)
        args = tuple(node for node, _ in frame.args)
        where = self.where(frame.token)
        if frame.kind == "call":
            return cst.Call(frame.name, args, **where), depth
        return cst.Group(args, **where), depth

    # -- statements ------------------------------------------------------------------------

    def parse_statement(self):
        token = self.peek()
        where = self.where(token)
        if token.kind == NAME and self.peek(1).kind == ASSIGN:
            self.advance()
            self.advance()
            return cst.Bind(token.value, self.parse_item(), **where)
        if token.kind == NAME and token.value.lower() == "expect":
            self.advance()
            return cst.Expect(self.parse_item(), **where)
        if token.kind == NAME and token.value.lower() == "error":
            self.advance()
            return self._parse_error_statement(where)
        return cst.Query(self.parse_item(), **where)

    def _parse_error_statement(self, where):
        token = self.peek()
        text = self.source.text
        if token.kind == NAME:
            cls = token.value
            self.advance()
            nxt = self.peek()
            open_pos = nxt.pos if nxt.kind == LPAREN else None
            if open_pos is not None and "\n" in text[token.end:open_pos]:
                open_pos = None
        elif token.kind == RAW:  # error String(...) / Date(...): the lexer took it as raw
            cls = _word(token, self.source)
            self.advance()
            open_pos = token.pos + len(cls)
        else:
            raise self.error(token, "an error class name")
        if open_pos is None:
            return cst.ExpectError(cls, (), **where)
        fields, end = self._scan_fields(open_pos)
        self.rewind_to(end)
        self.last = Token(RPAREN, ")", end - 1, end)
        return cst.ExpectError(cls, fields, **where)

    def _scan_fields(self, open_pos: int):
        """``(key=value, ...)`` as raw text: values run to the next ``,`` or ``)`` outside
        parentheses and are stripped. Returns the fields and the offset after ``)``."""
        text = self.source.text
        n = len(text)
        pos = open_pos + 1
        fields = []
        ws = re.compile(r"\s*")
        key_re = re.compile(r"[^\W\d]\w*")
        pos = ws.match(text, pos).end()
        if pos < n and text[pos] == ")":
            return (), pos + 1
        while True:
            pos = ws.match(text, pos).end()
            m = key_re.match(text, pos)
            if not m:
                raise self._field_error(pos, "a field name")
            key = m.group()
            pos = ws.match(text, m.end()).end()
            if pos >= n or text[pos] != "=":
                raise self._field_error(pos, "'='")
            pos += 1
            start = pos
            depth = 0
            while pos < n:
                c = text[pos]
                if c == "(":
                    depth += 1
                elif c == ")":
                    if depth == 0:
                        break
                    depth -= 1
                elif c == "," and depth == 0:
                    break
                pos += 1
            if pos >= n:
                raise self.source.error(
                    "expected ')' but found end of input (unbalanced error fields)",
                    open_pos, "')'")
            fields.append((key, text[start:pos].strip()))
            if text[pos] == ")":
                return tuple(fields), pos + 1
            pos += 1

    def _field_error(self, pos: int, expected: str) -> ParseError:
        text = self.source.text
        if pos >= len(text):
            found = "end of input"
        else:
            found = repr(text[pos])
        return self.source.error(f"expected {expected} but found {found}", pos, expected)


def _word(token: Token, source: Source) -> str:
    """The identifier at the start of a NAME or RAW token, as written."""
    m = re.compile(r"[^\W\d]\w*").match(source.text, token.pos)
    return m.group() if m else ""


def parse_expression(text: str):
    """Parse exactly one expression; anything left over is a ParseError."""
    parser = _Parser(text)
    node = parser.parse_item()
    token = parser.peek()
    if token.kind != EOF:
        raise parser.error(token, "end of input")
    return node


def parse_script(text: str) -> tuple:
    """Parse a case file into statements: ``NAME := expr`` (Bind), ``expect expr`` (Expect),
    ``error Class(key=value, ...)`` (ExpectError), or an expression (Query). Lines whose first
    non-blank character is ``#`` are comments. A statement may span lines; the next one must
    start on a new line."""
    parser = _Parser(text)
    statements = []
    while True:
        token = parser.peek()
        if token.kind == EOF:
            return tuple(statements)
        if statements and parser.source.line_col(token.pos)[0] <= parser.end_line():
            raise parser.error(token, "a new line")
        statements.append(parser.parse_statement())


_HEADER_LINE = re.compile(r"#\s*([A-Za-z_][\w-]*)\s*:(.*)")


def parse_header(text: str) -> dict[str, list[str]]:
    """The ``# key: value`` lines before the first statement: keys lowercased, values stripped
    and kept in order (a key may repeat)."""
    header: dict[str, list[str]] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            break
        m = _HEADER_LINE.fullmatch(stripped)
        if m:
            header.setdefault(m.group(1).lower(), []).append(m.group(2).strip())
    return header
