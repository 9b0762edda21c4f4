"""Relations printed as tables with their heading, as the seed shows them.

Relation-valued attributes print as nested tables inside their cell; TABLE_DEE and TABLE_DUM,
which have no columns to draw, are named.

    >>> from sira.values import TABLE_DEE
    >>> print(format_table(TABLE_DEE))
    TABLE_DEE (no attributes, one tuple: the empty tuple)
"""

from __future__ import annotations

from .types import RelationType, TupleType


def _cell_lines(t, value) -> list:
    if isinstance(t, RelationType):
        return format_table(value, footer=False).split("\n")
    if isinstance(t, TupleType):
        return [", ".join(f"{n.upper()}: {_cell_lines(ty, v)[0]}"
                          for (n, ty), v in zip(value.heading.attributes, value.values))]
    return [t.format(value)]


def format_table(relation, footer: bool = True) -> str:
    """The relation as a text table: names, types, then one row per tuple in sorted order."""
    heading = relation.heading
    count = len(relation)
    if heading.degree == 0:
        return ("TABLE_DEE (no attributes, one tuple: the empty tuple)" if count
                else "TABLE_DUM (no attributes, no tuples)")
    names = [n.upper() for n in heading.names]
    type_names = [("RELATION" if isinstance(t, RelationType) else
                   "TUPLE" if isinstance(t, TupleType) else t.name) for t in heading.types]
    rows = [[_cell_lines(t, v) for t, v in zip(heading.types, row)]
            for row in relation.sorted_body()]
    widths = [max([len(names[i]), len(type_names[i])]
                  + [len(line) for row in rows for line in row[i]]) for i in range(len(names))]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(cells):
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"

    out = [rule, line(names), line(type_names), rule]
    for row in rows:
        height = max(len(cell) for cell in row)
        for k in range(height):
            out.append(line([cell[k] if k < len(cell) else "" for cell in row]))
    out.append(rule)
    if footer:
        out.append(f"{count} tuple" + ("" if count == 1 else "s"))
    return "\n".join(out)
