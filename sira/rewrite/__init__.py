"""The rewrite pass: pure rules over the immutable algebra tree, run in a fixed order before
any engine evaluates it. A rule never changes a result (nor turns one into an error): the
property test ``tests/test_rewrite.py`` evaluates random trees with and without it on every
engine.

The pipeline, in order (each rule applied bottom-up to the whole tree, the pipeline repeated
until nothing changes):

1. ``merge_renames``: adjacent RENAMEs compose into one; a RENAME renaming nothing goes;
2. ``merge_restricts``: adjacent RESTRICTs become one conjunction;
3. ``push_restrict``: conjuncts move below RENAME, PACK, PROJECT, UNION, EXTEND and into the
   operands of JOIN, INTERSECT, MINUS, SEMIJOIN, SEMIMINUS;
4. ``merge_extends``: adjacent EXTENDs become one;
5. ``prune_project``: nested and identity PROJECTs, unused EXTEND formulas;
6. ``push_project``: the operands of a projected JOIN or UNION are narrowed first;
7. ``drop_pack``: PACKs of results already packed on their list.

    >>> from sira import parse
    >>> from sira.values import Heading
    >>> h = {"r": Heading.of({"k": "int", "s": "int", "e": "int"}),
    ...      "s": Heading.of({"k": "int", "c": "int"})}
    >>> optimize(parse("restrict(project(join(r, s), (c, s)), gt(s, 3))", h))
    project(join(project(restrict(r,gt(s,3)),(k,s)),s),(c,s))
"""

from __future__ import annotations

from ..errors import deep_recursion
from .merge import merge_extends, merge_renames, merge_restricts
from .packs import drop_pack
from .project import prune_project, push_project
from .push_restrict import push_restrict
from .tree import transform

#: the rules, in the order they run
RULES = (merge_renames, merge_restricts, push_restrict, merge_extends, prune_project,
         push_project, drop_pack)

#: the pipeline is repeated at most this many times (it normally settles in two or three)
MAX_ROUNDS = 10


def rewrite_steps(node) -> list:
    """``[(rule name, tree after it)]`` for every rule application that changed the tree, in
    order (``sira.explain`` shows them)."""
    steps = []
    with deep_recursion():
        for _ in range(MAX_ROUNDS):
            changed = False
            for rule in RULES:
                new = transform(node, rule)
                if new is not node and new != node:
                    steps.append((rule.__name__, new))
                    changed = True
                node = new
            if not changed:
                break
    return steps


def optimize(node):
    """The tree after the whole pipeline (the same tree when no rule applies).

    Args:
        node: an algebra tree (a scalar expression is returned as it is).
    Returns:
        an equivalent algebra tree: the same relation, or the same error, on every engine.
    """
    from ..algebra.node import Node
    if not isinstance(node, Node):
        return node
    steps = rewrite_steps(node)
    return steps[-1][1] if steps else node


__all__ = ["RULES", "optimize", "rewrite_steps", "drop_pack", "merge_extends", "merge_renames",
           "merge_restricts", "prune_project", "push_project", "push_restrict"]
