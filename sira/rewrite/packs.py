"""PACKs that change nothing.

``pack(R, L)`` -> ``R`` when R's result is provably packed on L already (every operator but
RESTRICT, EXTEND, RENAME and UNPACK packs its result on its interval attributes in name
order; RESTRICT and EXTEND keep their input's packing, RENAME keeps it under the new names).

    >>> from sira import parse
    >>> from sira.values import Heading
    >>> h = {"r": Heading.of({"k": "int", "during": "intinterval"})}
    >>> drop_pack(parse("pack(project(r, (k, during)), (during))", h))
    project(r,(k,during))
    >>> drop_pack(parse("pack(r, (during))", h))  # a relvar may hold anything
    pack(r,(during))
"""

from __future__ import annotations

from ..algebra.packing import Pack
from .facts import packed_on


def drop_pack(node):
    """A PACK whose input is already packed on its list -> the input."""
    if isinstance(node, Pack) and packed_on(node.source) == tuple(node.on):
        return node.source
    return node
