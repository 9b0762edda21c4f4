"""DuckDB translations of TCLOSE and GTCLOSE.

TCLOSE is one recursive query (``WITH RECURSIVE ... UNION``): DuckDB keeps every pair found so
far and feeds only the new ones to the next step, so the recursion is semi-naive and stops on
cycles. GTCLOSE extends paths by one input tuple per round, as the Python engine and the
seed's description do, with the rounds driven from Python over temporary tables (never
collecting tuples), and stops on cycles that keep producing new tuples with UnboundedClosure.
"""

from __future__ import annotations

from sira.algebra.closure import GTClose, TClose, closure_scope
from sira.engine.closure import EXTRA_ROUNDS  # the same stopping rule as Python
from sira.engine.guards import max_tuples
from sira.errors import TooManyTuples, UnboundedClosure

from .compiler import fresh_name, translates
from .guards import limited
from .functions import Scope, expression
from .sql import and_all, column_list, ident
from .types import equal


def _linked(heading, pairs, left="t", right="e") -> str:
    """Tuples chain when the left one's B attributes equal the right one's A attributes."""
    return and_all(equal(f"{left}.{ident(b)}", f"{right}.{ident(a)}", heading.type_of(a))
                   for a, b in pairs)


@translates(TClose)
def _tclose(node, children, c):
    (edges,) = children
    h = node.heading
    pairs = node.pair_list
    froms = {a for a, _ in pairs}
    name = fresh_name("tclose")
    step = ", ".join(f"{'t' if n in froms else 'e'}.{ident(n)}" for n in h.names)
    c.define_recursive(name, f"SELECT {column_list(h)} FROM {edges} UNION "
                             f"SELECT {step} FROM {name} AS t JOIN {edges} AS e "
                             f"ON {_linked(h, pairs)}")
    # computed once in the query and counted there: past max_tuples the query fails with
    # TooManyTuples (DuckDB spills what does not fit in memory)
    return f"SELECT * FROM {limited(c, node, f'SELECT * FROM {name}', 'tclose')}"


@translates(GTClose)
def _gtclose(node, children, c):
    (child,) = children
    h = node.heading
    pairs = node.pair_list
    froms = [a for a, _ in pairs]
    tos = [b for _, b in pairs]
    ends = [ident(n) for n in froms + tos]
    limit = max_tuples(c.options)
    scope_heading = closure_scope(h)
    scope = Scope({**{f"__l__{n}": f"l.{ident(n)}" for n in h.names},
                   **{f"__r__{n}": f"r.{ident(n)}" for n in h.names}})
    formulas = {n: expression(e, scope_heading, c, scope) for n, e in node.specs}
    cols = column_list(h)
    base = c.materialize(f"SELECT {cols} FROM {child}", "gtclose_base", node)
    result = c.materialize(f"SELECT {cols} FROM {base}", "gtclose", node)
    key_pairs = c.materialize(f"SELECT DISTINCT {', '.join(ends)} FROM {base}", "gtclose_pairs",
                              node)
    node_list = ", ".join(ident(a) for a in froms)
    renamed = ", ".join(f"{ident(b)} AS {ident(a)}" for a, b in pairs)
    (nodes,), = c.fetch(f"SELECT count(*) FROM (SELECT {node_list} FROM {base} UNION "
                        f"SELECT {renamed} FROM {base}) AS n", node)
    (size,), = c.fetch(f"SELECT count(*) FROM {result}", node)
    out = []
    for n in h.names:
        if n in froms:
            out.append(f"l.{ident(n)}")
        elif n in tos:
            out.append(f"r.{ident(n)}")
        else:
            out.append(f"{formulas[n]} AS {ident(n)}")
    delta = base
    quiet = 0
    while True:
        joined = (f"SELECT {', '.join(out)} FROM {delta} AS l JOIN {base} AS r "
                  f"ON {_linked(h, pairs, 'l', 'r')}")
        fresh = c.materialize(f"SELECT {cols} FROM ({joined}) AS j EXCEPT "
                              f"SELECT {cols} FROM {result}", "gtclose_delta", node)
        (fresh_count,), = c.fetch(f"SELECT count(*) FROM {fresh}", node)
        if fresh_count == 0:
            return f"SELECT * FROM {result}"
        new_pairs = c.materialize(f"SELECT DISTINCT {', '.join(ends)} FROM {fresh} EXCEPT "
                                  f"SELECT * FROM {key_pairs}", "gtclose_new", node)
        (new_count,), = c.fetch(f"SELECT count(*) FROM {new_pairs}", node)
        quiet = quiet + 1 if new_count == 0 else 0
        c.con.execute(f"INSERT INTO {key_pairs} SELECT * FROM {new_pairs}")
        c.con.execute(f"INSERT INTO {result} SELECT {cols} FROM {fresh}")
        size += fresh_count
        if quiet > nodes + EXTRA_ROUNDS or size > limit:
            if size > limit and quiet == 0:
                raise TooManyTuples(f"GTCLOSE: more than {limit} tuples", operator="GTCLOSE",
                                    limit=limit)
            loops = and_all(equal(ident(a), ident(b), h.type_of(a)) for a, b in pairs)
            first = c.fetch(f"SELECT {node_list} FROM {key_pairs} WHERE {loops} "
                            f"ORDER BY {node_list} LIMIT 1", node)
            text = ", ".join(str(v) for v in first[0]) if first else "?"
            raise UnboundedClosure(operator="GTCLOSE", node=text)
        delta = fresh

