"""Random window queries on DuckDB against the Python engine (issue 18: the sequential families
DuckDB computes in SQL, by lifting, by chains and by epochs, each with its own formulation):
seeded SPL policies (every tumbling and sliding eviction and trigger, partitioned or not, with
partitionage, partitioncount or tuplecount, arrival order or none), WINDOWBY queries (sliding and
tumbling, START and END conditions on neighbours, positions and values, LABEL frames, ``only``)
and CQL windows with the operators over them, over small streams with ties, negative and large
times. Each query gives the same relation on both engines, or the same error class. The lists in
the engines' own test modules pin chosen cases; these find the combinations nobody listed."""

from __future__ import annotations

import random

import pytest

import sira
from sira import BOOLEAN, FLOAT, INT, LONG, STRING, Relation
from sira.errors import SiraError

from conftest import duckdb_available

pytestmark = pytest.mark.skipif(not duckdb_available(), reason="DuckDB is not available here")

#: seeds per test item: items spread over the test workers, each a few seconds
BLOCK = 100


def outcome(run):
    """The relation ``run()`` gives, or the class name of the sira error it raises."""
    try:
        return run()
    except SiraError as err:
        return type(err).__name__


def agree(text: str, relvars: dict) -> bool | None:
    """Whether DuckDB gives the Python engine's relation or error class for ``text``; None when
    the text is refused before it runs (the generators may combine options a window refuses)."""
    try:
        node = sira.parse(text, relvars)
    except SiraError:
        return None
    expected = outcome(lambda: sira.evaluate(node, relvars))
    got = outcome(lambda: sira.evaluate(text, relvars, engine="duckdb"))
    assert got == expected, f"{text}\n{relvars}\npython:\n{expected}\nduckdb:\n{got}"
    return True


def agree_on_block(block: int, name: str, stream, query) -> None:
    """Every seed of ``block``: a relvar ``name`` from ``stream(rng)`` and a query from
    ``query(rng)`` agree; nine in ten at least run."""
    ran = 0
    for seed in range(block * BLOCK, (block + 1) * BLOCK):
        rng = random.Random(seed)
        relvar = stream(rng)
        ran += bool(agree(query(rng), {name: relvar}))
    assert ran > BLOCK * 0.9


# ---------------------------------------------------------------------------------- SPL

SPL_HEADING = {"ts": LONG, "seq": LONG, "k": STRING, "i": INT, "p": BOOLEAN, "f": FLOAT}

#: FLOAT values whose differences round differently from their sums (0.1 summed n times)
TENTHS = [sum([0.1] * n) for n in range(8)] + [-0.1, -0.2, -0.30000000000000004]


def spl_stream(rng) -> Relation:
    """Up to 30 tuples: ts over a short or long span (ties or gaps) from 0, -50 or 10**6."""
    span, base = rng.choice([3, 10, 30, 100]), rng.choice([0, -50, 10 ** 6])
    keys = rng.choice(["a", "ab", "abc", "abcdef"])
    return Relation.from_rows(SPL_HEADING, [
        {"ts": base + rng.randrange(span), "seq": seq, "k": rng.choice(keys),
         "i": rng.randrange(-6, 7), "p": rng.random() < 0.2, "f": rng.choice(TENTHS)}
        for seq in range(rng.randrange(0, 30))])


def spl_policy(rng) -> str:
    def delta_of(most):
        attr = rng.choice(["ts", "i", "f"])
        amount = rng.choice([0.1, 0.2, 0.3]) if attr == "f" else rng.randrange(0, most)
        return f"delta({attr}, {amount})"
    count, time_ = f"count({rng.randrange(1, 5)})", f"time({rng.randrange(1, 6)})"
    delta = delta_of(5)
    if rng.random() < 0.5:
        text = "tumbling, " + rng.choice([count, time_, delta, "punct(p)"])
    else:
        trigger = rng.choice(["", f" trigger(count({rng.randrange(1, 4)}))",
                              f" trigger(time({rng.randrange(1, 6)}))",
                              f" trigger({delta_of(4)})"])
        text = "sliding, " + rng.choice([count, time_, delta]) + trigger
    text += rng.choice(["", "", " partitioned(k)",
                        f" partitioned(k, partitionage({rng.randrange(1, 8)}))",
                        f" partitioned(k, partitioncount({rng.randrange(1, 4)}))",
                        f" partitioned(k, tuplecount({rng.randrange(1, 8)}))"])
    return text + rng.choice(["", " arrival(seq)"])


@pytest.mark.parametrize("block", range(4))
def test_random_spl_windows_agree(block):
    agree_on_block(block, "s", spl_stream, lambda rng: f"splwindow(s, ts, {spl_policy(rng)})")


# ------------------------------------------------------------------------------ WINDOWBY

WB_HEADING = {"k": STRING, "t": LONG, "v": INT}


def wb_stream(rng) -> Relation:
    """Up to 25 tuples, t unique within each key (the order)."""
    keys = rng.choice(["a", "ab", "abc"])
    rows = {}
    for _ in range(rng.randrange(0, 25)):
        k, t = rng.choice(keys), rng.randrange(0, 40)
        rows[(k, t)] = {"k": k, "t": t, "v": rng.randrange(0, 10)}
    return Relation.from_rows(WB_HEADING, list(rows.values()))


def wb_query(rng) -> str:
    n, x = rng.randrange(0, 5), rng.randrange(0, 10)
    part = rng.choice(["", "partition(k) "])
    kind = rng.choice(["sliding", "tumbling"])
    if kind == "sliding" and rng.random() < 0.25:
        body = (f"label(as(l) at(lp) when(l.v > {x})), "
                f"start(at(sp) when(lp - sp = {rng.randrange(0, 3)})), "
                f"end(at(ep) when(ep - lp = {rng.randrange(0, 3)}))")
    else:
        start = rng.choice(["", f" when(s.v < {x})", f" when(s.v > {x} and ps.v <= {x})",
                            " when(mod(s.v, 3) = 0)", " when(is_missing(ps) or ps.v <> s.v)",
                            f" when(not(s.v = {x}))"])
        end = rng.choice([f"ep - sp = {n}", f"ep - sp >= {n}", f"en.v >= {x} or e.v >= {x}",
                          f"is_missing(en) or en.t - e.t > {n}", "e.v > s.v",
                          f"e.t - s.t >= {3 * n}", f"en.v > {x}"])
        body = f"start(as(s) at(sp) prev(ps){start}), end(as(e) at(ep) next(en) when({end}))"
    return f"windowby(r, {part}order(t) {kind}, {body}{rng.choice(['', ', only'])})"


@pytest.mark.parametrize("block", range(2))
def test_random_windowby_queries_agree(block):
    agree_on_block(block, "r", wb_stream, wb_query)


# ----------------------------------------------------------------------------------- CQL

CQL_HEADING = {"ts": LONG, "k": STRING, "v": INT, "seq": LONG}


def cql_stream(rng) -> Relation:
    base, span = rng.choice([0, -20, 10 ** 9]), rng.choice([5, 30])
    return Relation.from_rows(CQL_HEADING, [
        {"ts": base + rng.randrange(0, span), "k": rng.choice("ab"), "v": rng.randrange(0, 6),
         "seq": seq} for seq in range(rng.randrange(0, 25))])


def cql_query(rng) -> str:
    c, d = rng.randrange(1, 6), rng.randrange(1, 6)
    w = "window(s, ts, " + rng.choice([
        "now", f"range({c})", f"range({c + d}) slide({d})", f"rows({c})",
        f"rows({c}) slide({d})", "range(unbounded)", f"partition(k) rows({c})",
        f"range({c}) on(v)", f"partition(k) rows({c}) range({c + d})"]) + ")"
    return rng.choice([
        w, f"istream(project({w}, (k, v, during)), at)",
        f"dstream(project({w}, (k, v, during)), at)",
        f"changes(summarizebyusing({w}, (k, during), (t(plus(v))), (during)), at)",
        f"summarizebyusing({w}, (during), (m(max(v)), n(plus(1))), (during))",
        f"summarizeby(tumble(s, ts, size({c})), (k, window_start, window_end), (t(plus(v))))",
        f"summarizeby(hop(s, ts, size({c + d}) slide({d})), (k, window_start, window_end), "
        f"(t(plus(v))))",
        f"summarizeby(cumulate(s, ts, step({d}) size({d * c})), (k, window_start, window_end), "
        f"(t(plus(v))))",
        f"summarizeby(session(s, ts, gap({c}) partition(k)), (k, window_start, window_end), "
        f"(t(plus(v))))",
        f"session(s, ts, gap({c}))"])


@pytest.mark.parametrize("block", range(2))
def test_random_cql_windows_and_window_tables_agree(block):
    agree_on_block(block, "s", cql_stream, cql_query)


def framed_stream(rng) -> Relation:
    """Streams with many ties on ts; seq grows with ts (so ``arrival(seq)`` is in order) or,
    one time in four, goes down once (the window's out-of-order error on both engines)."""
    base, span = rng.choice([0, -20, 10 ** 9]), rng.choice([3, 8, 30])
    times = sorted(base + rng.randrange(0, span) for _ in range(rng.randrange(0, 30)))
    rows = [{"ts": t, "k": rng.choice("ab"), "v": rng.randrange(-3, 6), "seq": i}
            for i, t in enumerate(times)]
    if rows and rng.random() < 0.25:
        j = rng.randrange(len(rows))
        rows[j]["seq"] = -1 - j  # arrives before the earlier ones: out of order when ts grew
    return Relation.from_rows(CQL_HEADING, rows)


def framed_query(rng) -> str:
    """SUMMARIZEBYUSING straight over a ``rows(N)`` window, BY its partition and period (the
    plan of ``sira_duckdb.aggregation._rows_framed``), and near misses that take other plans
    (a range beside the rows, a BY without the partition, a formula that may fail)."""
    n = rng.randrange(1, 5)
    part = rng.choice(["", "partition(k) "])
    arrival = rng.choice(["", " arrival(seq)"])
    extra = rng.choice(["", "", "", f" range({n + 2})"])
    w = f"window(s, ts, {part}rows({n}){extra}{arrival})"
    by = rng.choice(["(k, during)", "(during)"]) if part else "(during)"
    specs = rng.sample(["m(max(v))", "l(min(v))", "t(plus(v))", "n(plus(1))",
                        "a(and(gt(v, 0)))", "o(or(eq(v, 2)))", "q(max(div(6, v)))"],
                       rng.randrange(1, 4))
    return f"summarizebyusing({w}, {by}, ({', '.join(specs)}), (during))"


@pytest.mark.parametrize("block", range(2))
def test_random_summaries_over_rows_windows_agree(block):
    agree_on_block(block, "s", framed_stream, framed_query)
