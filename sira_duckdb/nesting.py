"""DuckDB translations of GROUP (a sorted, distinct list of structs per key: a relation value's
canonical form) and UNGROUP (``unnest``: a tuple whose relation is empty disappears)."""

from __future__ import annotations

from sira.algebra.nesting import Group, Ungroup

from .compiler import translates
from .guards import counted, limited
from .sql import column_list, ident, struct_pack


@translates(Group)
def _group(node, children, c):
    (child,) = children
    key = [ident(k) for k in node.key_names]
    lists = [f"list_sort(list(DISTINCT {struct_pack([(n, ident(n)) for n in sorted(names)])}), "
             f"'ASC', 'NULLS FIRST') AS {ident(rva)}" for rva, names in node.specs]
    items = ", ".join(key + lists)
    nested = " UNION ALL ".join(
        f"SELECT 1 FROM (SELECT DISTINCT {', '.join(key + [ident(n) for n in names])} "
        f"FROM {child}) AS d" for _, names in node.specs)
    checked = f"WHERE {counted(c, node, nested)}"  # max_tuples: the tuples it nests
    if key:
        return f"SELECT {items} FROM {child} {checked} GROUP BY {', '.join(key)}"
    # a global aggregation yields one row even for an empty input, which GROUP must not
    return f"SELECT {items} FROM {child} {checked} HAVING count(*) > 0"


@translates(Ungroup)
def _ungroup(node, children, c):
    (child,) = children
    h = node.source.heading
    row = c.helper("row")
    source = c.define(f"SELECT *, TRUE AS {row} FROM {child}", "ungroup")  # never no column
    for rva in node.names:
        sub = h.type_of(rva).heading
        fields = "".join(f", ({row}).{ident(n)} AS {ident(n)}" for n in sub.names)
        exploded = (f"SELECT * EXCLUDE ({ident(rva)}, {row}), unnest({ident(rva)}) AS {row} "
                    f"FROM {source}")
        source = c.define(f"SELECT *{fields} FROM ({exploded}) AS u", "ungroup")
    result = f"SELECT DISTINCT {column_list(node.heading)} FROM {source}"
    return f"SELECT * FROM {limited(c, node, result, 'ungroup')}"  # max_tuples
