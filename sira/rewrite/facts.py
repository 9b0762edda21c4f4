"""What the rules need to know about trees and expressions: which expressions cannot fail,
which attributes are interval-typed, how a node's result is packed. The facts about scalar
expressions alone (``is_total``, ``conjuncts`` ...) live in :mod:`sira.expressions.facts`, where the
algebra can import them too.

A rule may make an expression run on more tuples than before (a restriction pushed below a
join sees tuples that join nothing). That must never turn a result into an error, so it only
does so with *total* expressions: ones that cannot raise on any tuple (comparisons, boolean
connectives, attribute references, literals, string predicates, interval comparisons).

    >>> from sira import parse
    >>> packed_on(parse("pack(relation(heading(x(intinterval)) body()), (x))"))
    ('x',)
"""

from __future__ import annotations

from ..algebra.basic import Extend, Rename, Restrict
from ..algebra.packing import interval_names
from ..expressions.facts import is_plain
from ..expressions.nodes import attributes_used


def reads_intervals(expr, heading) -> bool:
    """Whether ``expr`` reads an interval-typed attribute of ``heading``."""
    return bool(attributes_used(expr) & set(interval_names(heading)))


def reads_only(expr, heading) -> bool:
    """Whether every attribute ``expr`` reads is in ``heading`` (and it reads no relation)."""
    return attributes_used(expr) <= set(heading.names) and is_plain(expr)


def packed_on(node):
    """The list a node's result is guaranteed to be packed on (in that order), or None when
    nothing is known. A relation without interval attributes is packed on ``()``.

    Operators that pack give their ``pack_list``; RESTRICT and EXTEND keep their input's pack
    state (a restriction removes whole tuples; a new attribute computed from a tuple can only
    tell tuples further apart), and RENAME keeps it under the new names.
    """
    if not interval_names(node.heading):
        return ()
    if node.packs:
        return tuple(node.pack_list)
    if isinstance(node, (Restrict, Extend)):
        return packed_on(node.source)
    if isinstance(node, Rename):
        inner = packed_on(node.source)
        if inner is None:
            return None
        mapping = dict(node.pairs)
        return tuple(mapping.get(n, n) for n in inner)
    return None
