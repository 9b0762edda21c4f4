"""Relations shown to people: text tables, notebook HTML and a bounded ``repr``.

A relation prints as the seed shows it, a table with its heading (names, then types) and one row
per tuple in the canonical (sorted) order. Relation-valued attributes print as nested tables inside
their cell; TABLE_DEE and TABLE_DUM, which have no columns to draw, are named.

Large relations are cut the same way everywhere: the first :data:`DEFAULT_LIMIT` tuples in the
canonical order, then ``... and M more tuples``, then the cardinality. ``limit=None`` shows every
tuple (``print(r.to_table(limit=None))``). The cut applies to nested relations too.

    >>> from sira.values import TABLE_DEE, Relation
    >>> print(format_table(TABLE_DEE))
    TABLE_DEE (no attributes, one tuple: the empty tuple)
    >>> r = Relation.from_rows({"n": "int"}, [(i,) for i in range(5)])
    >>> print(format_table(r, limit=2))
    +-----+
    | N   |
    | INT |
    +-----+
    | 0   |
    | 1   |
    +-----+
    ... and 3 more tuples
    5 tuples
    >>> relation_repr(r, limit=2)
    'relation(heading(n(int)) body(tuple(n(0)) tuple(n(1)) ... and 3 more tuples))'
"""

from __future__ import annotations

import heapq
import html
import unicodedata

from .errors import SiraValueError
from .types import RelationType, TupleType

DEFAULT_LIMIT = 20
"""How many tuples ``str``, ``repr``, ``_repr_html_`` and explain views show before cutting."""

_DEE_TEXT = "TABLE_DEE (no attributes, one tuple: the empty tuple)"
_DUM_TEXT = "TABLE_DUM (no attributes, no tuples)"


def check_limit(limit) -> int | None:
    """``limit`` itself if it is a non-negative int or None; SiraValueError otherwise."""
    if limit is None or (isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0):
        return limit
    raise SiraValueError(f"limit must be a non-negative integer or None (got {limit!r})",
                         operator="limit", value=limit)


def first_tuples(relation, limit: int | None) -> tuple[list, int]:
    """The first ``limit`` body tuples in the canonical order, and how many were left out.

    Only the shown tuples are sorted (a heap selection), so showing the start of a large
    relation costs one pass over it, not a full sort.
    """
    count = len(relation)
    if limit is None or count <= limit:
        return relation.sorted_body(), 0
    key = relation.heading.sort_key_function()
    return heapq.nsmallest(limit, relation.body, key=key), count - limit


def tuples_text(count: int) -> str:
    """``1 tuple``, ``5 tuples``."""
    return f"{count} tuple" + ("" if count == 1 else "s")


def more_text(left_out: int, ellipsis: str = "...") -> str:
    """``... and 3 more tuples`` (or ``1 more tuple``)."""
    return f"{ellipsis} and {left_out} more tuple" + ("" if left_out == 1 else "s")


def _nilary_text(relation) -> str:
    return _DEE_TEXT if relation else _DUM_TEXT


def _type_name(t) -> str:
    if isinstance(t, RelationType):
        return "RELATION"
    if isinstance(t, TupleType):
        return "TUPLE"
    return t.name


# ------------------------------------------------------------------------------- text tables
def visible(text: str) -> str:
    """``text`` with its control characters shown as Unicode's control pictures (``␊`` for a
    line feed, ``␉`` for a tab, ``␀`` for NUL; others, such as the line separator, as
    ``<U+2028>``), so that no value can break the table it is drawn in, and a line feed is
    never drawn like a backslash followed by ``n``; ``repr`` gives the exact value::

        >>> print(visible("a\\tb\\nc\\\\n"))
        a␉b␊c\\n
    """
    if text.isprintable():
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if ch.isprintable() or unicodedata.category(ch) not in ("Cc", "Zl", "Zp"):
            out.append(ch)
        elif code < 0x20:
            out.append(chr(0x2400 + code))
        else:
            out.append("\u2421" if code == 0x7F else f"<U+{code:04X}>")
    return "".join(out)


def width(text: str) -> int:
    """The columns ``text`` takes in a terminal: East Asian wide and full-width characters
    take two, combining marks, format characters and emoji skin tones none::

        >>> width("abc"), width("漢字"), width("e\\u0301")
        (3, 4, 1)
    """
    if text.isascii():
        return len(text)
    n = 0
    for ch in text:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf") \
                or 0x1F3FB <= ord(ch) <= 0x1F3FF:
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


def _cell_lines(t, value, limit) -> list:
    if isinstance(t, RelationType):
        return format_table(value, footer=False, limit=limit).split("\n")
    if isinstance(t, TupleType):
        return [", ".join(f"{n.upper()}: {_cell_lines(ty, v, limit)[0]}"
                          for (n, ty), v in zip(value.heading.attributes, value.values))]
    return [visible(t.format(value))]


def format_table(relation, footer: bool = True, limit: int | None = DEFAULT_LIMIT) -> str:
    """The relation as a text table: names, types, then one row per tuple in canonical order.

    Args:
        relation: the relation to draw.
        footer: end with the cardinality (``5 tuples``).
        limit: how many tuples to draw at most (None: all); the others are counted in a
            ``... and M more tuples`` line below the table.
    Returns:
        the table's text, lines separated by newlines.
    Raises:
        SiraValueError: ``limit`` is neither a non-negative integer nor None.
    """
    limit = check_limit(limit)
    heading = relation.heading
    if heading.degree == 0:
        return _nilary_text(relation)
    shown, left_out = first_tuples(relation, limit)
    names = [n.upper() for n in heading.names]
    type_names = [_type_name(t) for t in heading.types]
    rows = [[_cell_lines(t, v, limit) for t, v in zip(heading.types, row)] for row in shown]
    widths = [max([width(names[i]), len(type_names[i])]
                  + [width(line) for row in rows for line in row[i]])
              for i in range(len(names))]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(cells):
        return "| " + " | ".join(c + " " * (w - width(c)) for c, w in zip(cells, widths)) + " |"

    out = [rule, line(names), line(type_names), rule]
    for row in rows:
        height = max(len(cell) for cell in row)
        for k in range(height):
            out.append(line([cell[k] if k < len(cell) else "" for cell in row]))
    out.append(rule)
    if left_out:
        out.append(more_text(left_out))
    if footer:
        out.append(tuples_text(len(relation)))
    return "\n".join(out)


# ------------------------------------------------------------------------------- repr
def _value_text(t, value, limit) -> str:
    if isinstance(t, RelationType):
        return relation_repr(value, limit)
    if isinstance(t, TupleType):
        return _tuple_text(value.heading, value.values, limit)
    return t.literal(value)


def _tuple_text(heading, values, limit) -> str:
    return "tuple(" + " ".join(f"{n}({_value_text(t, v, limit)})"
                               for (n, t), v in zip(heading.attributes, values)) + ")"


def relation_repr(relation, limit: int | None = DEFAULT_LIMIT) -> str:
    """The relation in the text syntax, cut after ``limit`` tuples.

    While no relation in it (nested ones included) has more than ``limit`` tuples this is the
    relation literal, and ``sira.parse`` gives the value back. Beyond that, the tuples after the
    first ``limit`` are replaced by ``... and M more tuples``, which the parser refuses, so a cut
    text is never mistaken for the value. ``Relation.literal()`` always gives the whole text.
    """
    limit = check_limit(limit)
    shown, left_out = first_tuples(relation, limit)
    parts = [_tuple_text(relation.heading, row, limit) for row in shown]
    if left_out:
        parts.append(more_text(left_out))
    return f"relation({relation.heading.literal()} body({' '.join(parts)}))"


# ------------------------------------------------------------------------------- HTML
_TABLE_STYLE = "border-collapse: collapse; text-align: left"
_CELL_STYLE = "text-align: left; vertical-align: top; padding: 1px 6px; white-space: pre"


def _html_cell(t, value, limit) -> str:
    if isinstance(t, RelationType):
        return html_table(value, limit=limit, footer=False)
    if isinstance(t, TupleType):
        return ", ".join(f"{html.escape(n.upper())}: {_html_cell(ty, v, limit)}"
                         for (n, ty), v in zip(value.heading.attributes, value.values))
    return html.escape(visible(t.format(value)))


def html_table(relation, limit: int | None = DEFAULT_LIMIT, footer: bool = True) -> str:
    """The relation as an HTML table (for notebooks): the heading with types, the first
    ``limit`` tuples in canonical order, ``… and M more tuples``, then the cardinality.

    Every value is escaped: a STRING holding ``<script>`` shows as that text.

        >>> from sira.values import Relation
        >>> text = html_table(Relation.from_rows({"s": "string"}, [("<b>",)]))
        >>> "&lt;b&gt;" in text and "<b>" not in text
        True

    Raises:
        SiraValueError: ``limit`` is neither a non-negative integer nor None.
    """
    limit = check_limit(limit)
    heading = relation.heading
    if heading.degree == 0:
        return f"<div class=\"sira-relation\"><em>{_nilary_text(relation)}</em></div>"
    shown, left_out = first_tuples(relation, limit)
    head_names = "".join(f"<th style=\"{_CELL_STYLE}\">{html.escape(n.upper())}</th>"
                         for n in heading.names)
    head_types = "".join(
        f"<th style=\"{_CELL_STYLE}; font-weight: normal; font-style: italic\" "
        f"title=\"{html.escape(str(t))}\">{html.escape(_type_name(t))}</th>"
        for t in heading.types)
    body = ["<tr>" + "".join(f"<td style=\"{_CELL_STYLE}\">{_html_cell(t, v, limit)}</td>"
                             for t, v in zip(heading.types, row)) + "</tr>"
            for row in shown]
    if left_out:
        body.append(f"<tr><td colspan=\"{heading.degree}\" style=\"{_CELL_STYLE}; "
                    f"font-style: italic\">{more_text(left_out, '…')}</td></tr>")
    parts = ["<div class=\"sira-relation\">",
             f"<table style=\"{_TABLE_STYLE}\">",
             f"<thead><tr>{head_names}</tr><tr>{head_types}</tr></thead>",
             "<tbody>" + "".join(body) + "</tbody>",
             "</table>"]
    if footer:
        parts.append(f"<small>{tuples_text(len(relation))}</small>")
    parts.append("</div>")
    return "".join(parts)
