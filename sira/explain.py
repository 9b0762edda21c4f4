"""``explain``: the plan of an expression, or every step of it with its arguments and result.

Without relations, ``explain(node)`` is the plan: an indented tree, one operator per line with
its result heading (plan tests compare this text)::

    >>> from sira import parse
    >>> print(explain(parse("project(restrict(TABLE_DEE, true), ())")))
    PROJECT () -> {}
      RESTRICT true -> {}
        RELATION TABLE_DEE -> {}
    <BLANKLINE>
    the engines run it rewritten (prune_project):
    RESTRICT true -> {}
      RELATION TABLE_DEE -> {}

When the rewrite pass (:mod:`sira.rewrite`) changes the tree, as here (a projection on every
attribute of a relation without interval attributes changes nothing), the plan the engines run
follows, headed by the rules that changed it.

With relations, ``explain(text_or_tree, relvars)`` evaluates every sub-expression bottom-up and
shows each as the seed presents its examples: the operator's arguments (ARG), its own
specification (SPEC) and its RESULT. It prints as text, and a notebook shows it as the operator
tree with each node's ARG / SPEC / RESULT tables (``_repr_html_``)::

    >>> from sira import INT, Relation
    >>> r = Relation.from_rows({"pagesize": INT}, [(16384,), (32768,)])
    >>> print(explain("restrict(R, gt(pagesize, 20000))", {"R": r}))
    === step 1 of 1: RESTRICT ====================================================
    expression: restrict(r,gt(pagesize,20000))
    RESTRICT SPEC: gt(pagesize,20000)
    <BLANKLINE>
    ARG: relvar R
    +----------+
    | PAGESIZE |
    | INT      |
    +----------+
    | 16384    |
    | 32768    |
    +----------+
    2 tuples
    <BLANKLINE>
    RESULT of RESTRICT:
    +----------+
    | PAGESIZE |
    | INT      |
    +----------+
    | 32768    |
    +----------+
    1 tuple

The ``sira`` command's ``--explain`` and the REPL's ``:explain`` print the same steps.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping

import attrs

from .display import DEFAULT_LIMIT, check_limit, format_table, html_table

SCALAR = "SCALAR EXPRESSION"


# ------------------------------------------------------------------------------- the plan
def spec_text(node) -> str:
    """The node's own arguments in the text syntax, without its relational operands.

    ``gt(pagesize,16384)`` for ``restrict(R,gt(pagesize,16384))``; a leaf gives its whole text.
    """
    from .syntax.printer import print_node
    text = print_node(node)
    if not node.children:
        return text
    _, bracket, rest = text.partition("(")
    if not bracket or not rest.endswith(")"):
        return text
    rest = rest[:-1]
    for child in node.children:
        child_text = print_node(child)
        if rest.startswith(child_text):
            rest = rest[len(child_text):].lstrip(",")
    return rest


def step_spec(node) -> str:
    """The SPEC of a step: the node's own arguments (:func:`spec_text`), or, for the joins that
    have none, the attributes they match on (what the seed's examples leave implicit).

        >>> from sira import parse
        >>> step_spec(parse("join(relation(heading(a(int) b(int)) body()), "
        ...                 "relation(heading(b(int) c(int)) body()))"))
        'on the common attributes (b)'
    """
    from .algebra.joins import Join, SemiJoin, SemiMinus
    spec = spec_text(node)
    if spec or not isinstance(node, (Join, SemiJoin, SemiMinus)):
        return spec
    operands = node.sources if isinstance(node, Join) else (node.left, node.right)
    common = set(operands[0].heading.names)
    for operand in operands[1:]:
        common &= set(operand.heading.names)
    if len(operands) > 2:
        shared = sorted({n for i, a in enumerate(operands) for b in operands[i + 1:]
                         for n in a.heading.names if n in b.heading.names})
        return f"on the attributes they share ({', '.join(shared) or 'none: a product'})"
    if not common:
        return "no common attributes: every pair of tuples (a cartesian product)"
    return f"on the common attributes ({', '.join(sorted(common))})"


def plan_text(node) -> str:
    """The plan of an algebra tree as indented text, one operator per line."""
    from .errors import deep_recursion
    with deep_recursion():
        lines = []
        stack = [(node, 0)]
        while stack:
            current, depth = stack.pop()
            spec = spec_text(current)
            lines.append(f"{'  ' * depth}{current.operator_name}{' ' + spec if spec else ''}"
                         f" -> {current.heading}")
            stack.extend((child, depth + 1) for child in reversed(current.children))
        return "\n".join(lines)


# ------------------------------------------------------------------------------- the steps
@attrs.frozen
class Step:
    """One evaluated sub-expression: its ARG(s), SPEC and RESULT, as the seed shows them.

    ``spec`` is None for the final step of a scalar expression (it has no operator spec);
    ``args`` pairs a label (``relvar DBMSFILE``, ``the result of step 1 (RESTRICT)``) with
    the argument's value; ``inner`` are the numbers of the steps that computed arguments.
    """

    number: int
    title: str
    expression: str
    spec: str | None
    args: tuple
    result: object
    result_type: object
    inner: tuple = ()


def _relation_args(expr) -> list:
    """The relational operands inside a scalar expression tree (``eq(R1, R2)``...)."""
    from .expressions.nodes import Call, RelationArg
    out, stack = [], [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, RelationArg):
            out.append(e.node)
        elif isinstance(e, Call):
            stack.extend(reversed(e.args))
    return out


def evaluate_steps(expr, relvars: Mapping, engine="python",
                   display: Mapping | None = None, **options) -> tuple:
    """Every sub-expression of ``expr`` evaluated bottom-up, as a tuple of :class:`Step`.

    A relvar or relation literal is shown as an argument, not as a step of its own (unless it
    is the whole query). Each sub-expression is evaluated on its own with ``sira.evaluate`` (a
    teaching tool: nothing is shared between steps).

    Args:
        expr: an algebra node or a scalar expression (``eq(TABLE_DEE, project(R, ()))``).
        relvars: name -> Relation.
        engine: passed to :func:`sira.evaluate`.
        display: name -> the name to print (defaults to the upper-cased name).
        options: passed to :func:`sira.evaluate` (``max_tuples=``...).
    """
    import sira
    from .algebra.basic import RelationLiteral, RelvarRef
    from .algebra.node import Node
    from .values import Relation
    display = {str(name).lower(): shown for name, shown in (display or {}).items()}
    results: dict = {}  # node -> (step number or 0 for a leaf argument, result)
    steps: list = []

    def label(node) -> str:
        if isinstance(node, RelvarRef):
            return f"relvar {display.get(node.name, node.name.upper())}"
        if isinstance(node, RelationLiteral):
            if node.value.heading.degree == 0:
                return "TABLE_DEE" if node.value else "TABLE_DUM"
            return "a relation literal"
        number = results[node][0]
        return f"the result of step {number} ({node.operator_name})"

    def arguments(nodes) -> tuple:
        return tuple((label(n), results[n][1]) for n in nodes)

    def inner(nodes) -> tuple:
        return tuple(results[n][0] for n in nodes if results[n][0])

    def visit(node, top=False):
        if node in results:
            return
        for child in node.children:
            visit(child)
        result = sira.evaluate(node, relvars, engine=engine, **options)
        if not (node.children or top):  # a leaf is an argument, unless it is the query
            results[node] = (0, result)
            return
        number = len(steps) + 1
        results[node] = (number, result)
        steps.append(Step(number, node.operator_name, repr(node),
                          step_spec(node) if node.children else None,
                          arguments(node.children), result, None, inner(node.children)))

    if isinstance(expr, Node):
        visit(expr, top=True)
        return tuple(steps)
    operands = _relation_args(expr)
    for node in operands:
        visit(node)
    from .expressions.evaluate import infer_type
    from .values import Heading
    value = sira.evaluate(expr, relvars, engine=engine, **options)
    value_type = None if isinstance(value, Relation) else infer_type(expr, Heading())
    steps.append(Step(len(steps) + 1, SCALAR, repr(expr), None, arguments(operands), value,
                      value_type, inner(operands)))
    return tuple(steps)


def _format_value(value, value_type, limit) -> str:
    from .values import Relation
    if isinstance(value, Relation):
        return format_table(value, limit=limit)
    return value_type.format(value)


def steps_text(steps, limit: int | None = DEFAULT_LIMIT,
               render_scalar: Callable | None = None) -> str:
    """The steps as text blocks: a title line, the expression, the SPEC, each ARG, the RESULT.

    Args:
        steps: from :func:`evaluate_steps`.
        limit: how many tuples each table shows (None: all).
        render_scalar: ``(value, type) -> text`` for a scalar result (default: as in tables).
    """
    total = len(steps)
    blocks = []
    for step in steps:
        head = f"=== step {step.number} of {total}: {step.title} "
        lines = [head + "=" * max(3, 78 - len(head)), f"expression: {step.expression}"]
        if step.spec is not None:
            lines.append(f"{step.title} SPEC: {step.spec or '(none)'}")
        for i, (arg_label, value) in enumerate(step.args, 1):
            name = "ARG" if len(step.args) == 1 else f"ARG{i}"
            lines += ["", f"{name}: {arg_label}", format_table(value, limit=limit)]
        lines += ["", f"RESULT of {step.title}:" if step.spec is not None else "RESULT:"]
        if step.result_type is not None and render_scalar is not None:
            lines.append(render_scalar(step.result, step.result_type))
        else:
            lines.append(_format_value(step.result, step.result_type, limit))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


# ------------------------------------------------------------------------------- HTML
_CELL = "text-align: left; vertical-align: top; padding: 2px 8px; border: 1px solid #ccc"


def _html_value(value, value_type, limit) -> str:
    from .values import Relation
    if isinstance(value, Relation):
        return html_table(value, limit=limit)
    return f"<code>{html.escape(value_type.format(value))}</code>"


def _step_table(step, total, limit) -> str:
    """One step in the seed's layout: ARG columns, the SPEC column, the RESULT column."""
    heads, cells = [], []
    for i, (arg_label, value) in enumerate(step.args, 1):
        heads.append("ARG" if len(step.args) == 1 else f"ARG{i}")
        cells.append(f"<small>{html.escape(arg_label)}</small><br>"
                     f"{html_table(value, limit=limit)}")
    if step.spec is not None:
        heads.append(f"{step.title} SPEC")
        cells.append(f"<code>{html.escape(step.spec) or '(none)'}</code>")
    heads.append(step.title if step.spec is not None else "RESULT")
    cells.append(_html_value(step.result, step.result_type, limit))
    head_row = "".join(f"<th style=\"{_CELL}\">{html.escape(h)}</th>" for h in heads)
    cell_row = "".join(f"<td style=\"{_CELL}\">{c}</td>" for c in cells)
    return (f"<table style=\"border-collapse: collapse\"><tr>{head_row}</tr>"
            f"<tr>{cell_row}</tr></table>")


def steps_html(steps, limit: int | None = DEFAULT_LIMIT) -> str:
    """The steps as the operator tree (the last step at the top), each node with its
    ARG / SPEC / RESULT table and the steps that computed its arguments nested below it."""
    if not steps:
        return ""
    by_number = {step.number: step for step in steps}
    total = len(steps)

    def node(step) -> str:
        summary = (f"<b>step {step.number} of {total}: {html.escape(step.title)}</b> "
                   f"<code>{html.escape(step.expression)}</code>")
        children = "".join(node(by_number[n]) for n in step.inner)
        nested = (f"<div style=\"margin-left: 1.5em; border-left: 2px solid #ddd; "
                  f"padding-left: 0.5em\">{children}</div>") if children else ""
        return (f"<details open><summary>{summary}</summary>"
                f"{_step_table(step, total, limit)}{nested}</details>")

    return f"<div class=\"sira-explain\">{node(steps[-1])}</div>"


# ------------------------------------------------------------------------------- explain
class Explanation(str):
    """What :func:`explain` returns: its text (the plan, or the steps), which ``print`` shows
    and plan tests compare, plus ``steps`` (empty for a plan) and an HTML rendering for
    notebooks. Being a ``str``, it compares equal to its text.
    """

    steps: tuple
    limit: int | None

    def __new__(cls, text: str, steps: tuple = (), limit: int | None = DEFAULT_LIMIT):
        self = super().__new__(cls, text)
        self.steps = tuple(steps)
        self.limit = limit
        return self

    def __repr__(self) -> str:
        return str.__str__(self)

    def _repr_html_(self) -> str:
        if not self.steps:
            return f"<pre class=\"sira-plan\">{html.escape(str.__str__(self))}</pre>"
        return steps_html(self.steps, self.limit)


def _evaluates(relvars) -> bool:
    """Whether the relvars are data (evaluate the steps) rather than headings (plan only)."""
    from .types import Type
    from .values import Heading
    if relvars is None:
        return False
    for value in relvars.values():
        if isinstance(value, Heading) or (isinstance(value, Mapping) and all(
                isinstance(t, (Type, str)) for t in value.values())):
            return False
    return True


def rewrite_text(node) -> str:
    """What the rewrite pass (:mod:`sira.rewrite`) makes of a tree, as the plan of the tree the
    engines run, headed by the rules that changed it; ``""`` when no rule applies.

        >>> import sira
        >>> from sira.values import Heading
        >>> h = {"r": Heading.of({"a": "int", "b": "int"})}
        >>> print(rewrite_text(sira.parse("restrict(restrict(r, gt(a, 1)), gt(b, 2))", h)))
        the engines run it rewritten (merge_restricts):
        RESTRICT and(gt(a,1),gt(b,2)) -> {a: INT, b: INT}
          RELVAR r -> {a: INT, b: INT}
    """
    from .rewrite import rewrite_steps
    steps = rewrite_steps(node)
    if not steps:
        return ""
    rules = ", ".join(dict.fromkeys(name for name, _ in steps))
    return f"the engines run it rewritten ({rules}):\n{plan_text(steps[-1][1])}"


def explain(expr, relvars: Mapping | None = None, *, engine="python",
            display: Mapping | None = None, limit: int | None = DEFAULT_LIMIT,
            **options) -> Explanation:
    """The plan of an expression, or, given relations, every step of it with its result.

    Args:
        expr: text in the text syntax, an algebra node, or a scalar expression.
        relvars: name -> Relation: every sub-expression is evaluated and shown with its
            arguments and result (the seed's ARG / SPEC / RESULT). None, or name -> Heading:
            the plan only, nothing runs.
        engine: the engine that evaluates the steps (as in :func:`sira.evaluate`).
        display: name -> the name to print for a relvar (default: the upper-cased name).
        limit: how many tuples each table shows (None: all).
        options: passed to :func:`sira.evaluate` for every step (``max_tuples=``...).
    Returns:
        an :class:`Explanation`: a ``str`` (print it) that a notebook renders as the operator
        tree with each node's tables. When the rewrite pass changes the tree, the plan the
        engines run follows, headed by the rules that changed it.
    Raises:
        ParseError, UnknownRelvar, SiraTypeError...: the text does not parse or type-check.
        SiraValueError: ``limit`` is neither a non-negative integer nor None.
        SiraError: a step fails while it is evaluated.
    """
    import sira
    from .algebra.node import Node
    limit = check_limit(limit)
    if isinstance(expr, str):
        try:
            expr = sira.parse(expr, relvars)
        except sira.UnknownRelvar as err:
            if relvars:
                raise
            raise sira.UnknownRelvar(
                f"{err.message}; explaining a text needs the headings of the relvars it names "
                f"(for the plan) or their relations (for every step): sira.explain(text, "
                f"{{'{err.relvar}': relation_or_heading}}), a heading being a dict such as "
                f"{{'a': sira.INT}}", **err.field_values()) from None
    rewritten = rewrite_text(expr) if isinstance(expr, Node) else ""
    after = f"\n\n{rewritten}" if rewritten else ""
    if relvars is None or not _evaluates(relvars):
        if not isinstance(expr, Node):
            return Explanation(repr(expr))
        return Explanation(plan_text(expr) + after)
    steps = evaluate_steps(expr, relvars, engine=engine, display=display, **options)
    return Explanation(steps_text(steps, limit) + after, steps, limit)
