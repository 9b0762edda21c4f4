"""The Python engine against plain-Python programs (issue 14's table), in one run.

The plain programs are written the way a Python programmer would write them: tuples of ints,
dicts, sets and ``list.sort``, with none of sira's costs (no ``Interval`` objects, no heading,
no frozenset of results unless the program itself needs a set). Each case builds its data once
(not timed) from the same integer rows: the plain program reads those rows, sira reads a
``Relation`` built from them with the trusted constructor. Only ``sira.evaluate(tree,
relvars)`` (the rewrite pass included) and the plain program are timed. Both results are mapped
to sets of int tuples (not timed) and checked equal by count and by checksum; the ratio is
sira / plain.

By default the plain program reads its rows in random order, as a relation's tuples come: a
relation is a set, iterated in hash order, so sira cannot profit from rows arriving grouped by
key. ``--order grouped`` gives the plain program its rows as generated (key by key, path by
path): its dict lookups then hit the processor's cache, which makes it several times faster on
PACK and SUMMARIZEBY; that gap is the price of keeping bodies as sets, not of the engine.

    python benchmarks/plain.py                       # 1,000,000 tuples, best of 3, wall clock
    python benchmarks/plain.py --n 100000 --clock process --repeat 1

Cases (n = 1,000,000 by default; the others scale with n):

1. PACK          R{k, during} (n tuples, about n/10 keys): per key a walk of intervals that
                 overlap, meet or leave a gap (about 0.55 n results). Plain: group (b, e) pairs
                 per key in a dict of lists, sort, sweep.
2. JOIN+PROJECT  project(join(R, S), (c, s)) with R{k, s, e} (n tuples, n/50 keys, e unique)
                 and S{k, c} (about n/50 keys, some with two c values): the join holds about
                 1.1 n tuples, the projection about 0.23 n. Plain: index S (k -> list of c),
                 probe it with every row of R, add (c, s) to a set.
3. SUMMARIZEBY   summarizeby(R, (k), (t(plus(v)))) with R{k, i, v} (n tuples, n/10 keys).
                 Plain: a dict of running sums.
4. TCLOSE        tclose(E) with E{a, b}: n edges in small components (paths of 2 to 5 nodes,
                 one in ten closed into a cycle), closure about 2 n pairs. Plain: semi-naive
                 loop over sets of pairs with a successor dict.
5. FROM_ROWS     ``Relation.from_rows`` of n dicts {k, s, e} and of n tuples in written order:
                 rows per second (target: at least 1,000,000). The plain load (a set of tuples
                 from the dicts, and from the tuples) is shown beside it.
6. PARSE         ``sira.parse`` of a relation literal of n/10 tuples {k INT, s STRING, during
                 INTINTERVAL}: MB of text per second (target: at least 1).

Targets: PACK, JOIN+PROJECT, SUMMARIZEBY and TCLOSE at most 2x plain. The script always exits
0: it is a report (``--only pack,join`` runs a subset).
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import sira  # noqa: E402
from sira import INT, INTINTERVAL, Heading, Interval, Relation, attr  # noqa: E402

RATIO_TARGET = 2.0
ROWS_PER_SECOND_TARGET = 1_000_000
MB_PER_SECOND_TARGET = 1.0
CHECKSUM_MODULUS = (1 << 61) - 1


# --- timing and checking ----------------------------------------------------------------------

CLOCKS = {"wall": time.perf_counter, "process": time.process_time}


def timed(fn, repeat: int, clock):
    """(best seconds over ``repeat`` runs, the last run's result). The cyclic GC is paused
    while timing, on both sides (the Python engine pauses it itself, and a plain program over
    millions of tuples would do the same)."""
    best, result = math.inf, None
    for _ in range(repeat):
        result = None
        gc.collect()
        gc.disable()
        try:
            t0 = clock()
            result = fn()
            best = min(best, clock() - t0)
        finally:
            gc.enable()
    return best, result


def checksum(rows) -> tuple:
    """(count, a checksum) of a collection of distinct int tuples: equal sets give equal pairs,
    whatever their order."""
    total = 0
    for row in rows:
        total += hash(row)
    return len(rows), total % CHECKSUM_MODULUS


def same(label: str, sira_rows, plain_rows) -> tuple:
    """Check that the two results hold the same tuples; return their (count, checksum)."""
    mine, theirs = checksum(sira_rows), checksum(set(plain_rows))
    if mine != theirs:
        raise AssertionError(f"{label}: sira and plain disagree: {mine} vs {theirs}")
    if len(plain_rows) != theirs[0]:
        raise AssertionError(f"{label}: the plain program made duplicates")
    return mine


# --- data --------------------------------------------------------------------------------------

def interval_walk(rng: random.Random, start: int, count: int) -> list:
    """``count`` (begin, end) pairs with strictly increasing begins, each overlapping the
    intervals before it (a third of the time), meeting them (a sixth) or leaving a gap."""
    out, reach, prev = [], start, start - 1
    for i in range(count):
        length = rng.randint(1, 20)
        draw = rng.random()
        if i == 0:
            begin = start
        elif draw < 1 / 3 and reach > prev + 1:
            begin = rng.randint(prev + 1, reach - 1)  # overlaps
        elif draw < 1 / 2:
            begin = max(reach, prev + 1)  # meets (or, after a nested interval, overlaps)
        else:
            begin = reach + rng.randint(1, 10)  # a gap
        out.append((begin, begin + length))
        prev, reach = begin, max(reach, begin + length)
    return out


def pack_rows(n: int, rng: random.Random) -> list:
    """n rows (k, begin, end), key by key: about n/10 keys with walks of 1 to 19 intervals."""
    rows, k = [], 0
    while len(rows) < n:
        size = min(rng.randint(1, 19), n - len(rows))
        start = rng.randrange(1_000_000)
        rows.extend((k, b, e) for b, e in interval_walk(rng, start, size))
        k += 1
    return rows


def join_rows(n: int, rng: random.Random):
    """R rows (k, s, e) and S rows (k, c)."""
    keys = max(1, n // 50)
    r_rows = [(i % keys, rng.randrange(1000), i) for i in range(n)]
    s_rows = [(k, rng.randrange(230)) for k in range(keys)]
    s_rows += [(k, (c + 1 + rng.randrange(229)) % 230)  # one key in ten has a second c
               for k, c in s_rows[::10]]
    return r_rows, s_rows


def summarize_rows(n: int, rng: random.Random) -> list:
    """n rows (k, i, v): about n/10 keys, i numbering the rows, v small."""
    keys = max(1, n // 10)
    return [(rng.randrange(keys), i, rng.randrange(1000)) for i in range(n)]


def graph_edges(n: int, rng: random.Random) -> list:
    """About n edges (a, b), path by path: paths of 2 to 5 nodes, one in ten closed into a
    cycle."""
    edges, node = [], 0
    while len(edges) < n:
        size = rng.randint(2, 5)
        path = list(range(node, node + size))
        edges.extend(zip(path, path[1:]))
        if rng.random() < 0.1:
            edges.append((path[-1], path[0]))
        node += size
    return edges


def arranged(rows: list, rng: random.Random, order: str) -> list:
    """The rows in the order the plain program reads them: ``random`` (shuffled, as a
    relation's tuples come) or ``grouped`` (as generated: key by key, path by path)."""
    if order == "random":
        rng.shuffle(rows)
    return rows


def relation(heading: dict, rows) -> Relation:
    """A relation of already-typed rows in the written order of ``heading`` (not timed)."""
    h = Heading.of(heading)
    where = {name: i for i, name in enumerate(heading)}
    order = [where[name] for name in h.names]
    return Relation(h, frozenset(tuple(row[i] for i in order) for row in rows))


# --- the cases: each returns (label, input tuples, sira_fn, plain_fn, to_ints) ------------------
# to_ints maps sira's result body to int tuples in the plain program's layout.

def case_pack(n: int, rng: random.Random, order: str):
    rows = arranged(pack_rows(n, rng), rng, order)
    r = relation({"k": INT, "during": INTINTERVAL},
                 [(k, Interval(b, e)) for k, b, e in rows])
    tree = sira.relvar("r", r.heading).pack("during")

    def plain():
        groups = {}
        for k, b, e in rows:
            found = groups.get(k)
            if found is None:
                groups[k] = [(b, e)]
            else:
                found.append((b, e))
        out = []
        for k, spans in groups.items():
            spans.sort()
            cb, ce = spans[0]
            for b, e in spans:
                if b <= ce:
                    if e > ce:
                        ce = e
                else:
                    out.append((k, cb, ce))
                    cb, ce = b, e
            out.append((k, cb, ce))
        return out

    def to_ints(body):  # body tuples are (during, k)
        return {(k, iv.begin, iv.end) for iv, k in body}

    return "PACK", n, lambda: sira.evaluate(tree, {"r": r}).body, plain, to_ints


def case_join(n: int, rng: random.Random, order: str):
    r_rows, s_rows = (arranged(rows, rng, order) for rows in join_rows(n, rng))
    r = relation({"k": INT, "s": INT, "e": INT}, r_rows)
    s = relation({"k": INT, "c": INT}, s_rows)
    tree = sira.relvar("r", r.heading).join(sira.relvar("s", s.heading)).project("c", "s")

    def plain():
        index = {}
        for k, c in s_rows:
            found = index.get(k)
            if found is None:
                index[k] = [c]
            else:
                found.append(c)
        out = set()
        add = out.add
        for k, s_, _ in r_rows:
            for c in index.get(k, ()):
                add((c, s_))
        return out

    return ("JOIN+PROJECT", n, lambda: sira.evaluate(tree, {"r": r, "s": s}).body, plain,
            lambda body: body)  # body tuples are (c, s)


def case_summarizeby(n: int, rng: random.Random, order: str):
    rows = arranged(summarize_rows(n, rng), rng, order)
    r = relation({"k": INT, "i": INT, "v": INT}, rows)
    tree = sira.relvar("r", r.heading).summarizeby(("k",), t=("plus", attr("v")))

    def plain():
        sums = {}
        get = sums.get
        for k, _, v in rows:
            sums[k] = get(k, 0) + v
        return list(sums.items())

    return ("SUMMARIZEBY", n, lambda: sira.evaluate(tree, {"r": r}).body, plain,
            lambda body: body)  # body tuples are (k, t)


def case_tclose(n: int, rng: random.Random, order: str):
    edges = arranged(graph_edges(n, rng), rng, order)
    r = relation({"a": INT, "b": INT}, edges)
    tree = sira.relvar("e", r.heading).tclose(("a", "b"))

    def plain():
        successors = {}
        for a, b in edges:
            successors.setdefault(a, []).append(b)
        closure = set(edges)
        delta = closure
        while delta:
            fresh = set()
            for a, b in delta:
                for c in successors.get(b, ()):
                    if (a, c) not in closure:
                        fresh.add((a, c))
            closure |= fresh
            delta = fresh
        return closure

    return ("TCLOSE", len(edges), lambda: sira.evaluate(tree, {"e": r}).body, plain,
            lambda body: body)  # body tuples are (a, b)


RATIO_CASES = (case_pack, case_join, case_summarizeby, case_tclose)


def from_rows_cases(n: int, rng: random.Random):
    """[(label, sira_fn, plain_fn)] building the same relation from dicts and from tuples."""
    rows = [(rng.randrange(n), rng.randrange(1000), i) for i in range(n)]
    dicts = [{"k": k, "s": s, "e": e} for k, s, e in rows]
    heading = {"k": INT, "s": INT, "e": INT}
    return [
        ("from_rows (dicts)", lambda: Relation.from_rows(heading, dicts),
         lambda: {(d["k"], d["s"], d["e"]) for d in dicts}),
        ("from_rows (tuples)", lambda: Relation.from_rows(heading, rows),
         lambda: set(rows)),
    ]


def parse_text(n: int, rng: random.Random) -> str:
    """A relation literal of n tuples {k INT, s STRING, during INTINTERVAL}."""
    parts = []
    for k in range(n):
        b = rng.randrange(1_000_000)
        parts.append(f"tuple(k({k}) s('name{rng.randrange(1000)}') "
                     f"during(intinterval(from({b})to({b + rng.randint(0, 50)}))))")
    return ("relation(heading(k(int) s(string) during(intinterval)) body("
            + " ".join(parts) + "))")


# --- the report --------------------------------------------------------------------------------

def run_ratio_case(case, n, rng, repeat, clock, order):
    case(min(n, 200), random.Random(0), order)[2]()  # warm-up: import the engine's modules
    label, size, run_sira, run_plain, to_ints = case(n, rng, order)
    sira_s, body = timed(run_sira, repeat, clock)
    plain_s, plain_out = timed(run_plain, repeat, clock)
    count, _ = same(label, to_ints(body), plain_out)
    ratio = sira_s / plain_s if plain_s > 0 else math.inf
    verdict = "PASS" if ratio <= RATIO_TARGET else "OVER"
    return (f"{label:<20} {size:>10,} {count:>10,} {plain_s:>9.3f} {sira_s:>9.3f} "
            f"{ratio:>6.2f} {'<= ' + format(RATIO_TARGET, 'g'):>7}  {verdict}")


def run_from_rows(n, rng, repeat, clock) -> list:
    lines = []
    for label, run_sira, run_plain in from_rows_cases(n, rng):
        sira_s, rel = timed(run_sira, repeat, clock)
        plain_s, plain_out = timed(run_plain, repeat, clock)
        same(label, {(k, s_, e) for e, k, s_ in rel.body}, plain_out)  # body: (e, k, s)
        rate = n / sira_s if sira_s > 0 else math.inf
        verdict = "PASS" if rate >= ROWS_PER_SECOND_TARGET else "UNDER"
        lines.append(f"{label:<20} {n:>10,} {len(rel):>10,} {plain_s:>9.3f} {sira_s:>9.3f} "
                     f"{rate:>12,.0f} rows/s (>= {ROWS_PER_SECOND_TARGET:,})  {verdict}")
    return lines


def run_parse(n, rng, repeat, clock) -> list:
    tuples = max(1, n // 10)
    text = parse_text(tuples, rng)
    megabytes = len(text.encode()) / 1e6
    sira_s, node = timed(lambda: sira.parse(text), repeat, clock)
    assert len(node.value) == tuples, "the parsed literal lost tuples"
    rate = megabytes / sira_s if sira_s > 0 else math.inf
    verdict = "PASS" if rate >= MB_PER_SECOND_TARGET else "UNDER"
    return [f"{'parse literal':<20} {tuples:>10,} {megabytes:>9.2f} MB {sira_s:>9.3f} s "
            f"{rate:>8.2f} MB/s (>= {MB_PER_SECOND_TARGET:g})  {verdict}"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000,
                        help="tuples per input relation (default 1,000,000)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per measurement; the best is reported (default 3)")
    parser.add_argument("--seed", type=int, default=14, help="random seed for the data")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                        help="wall (perf_counter, default) or process (CPU time of this "
                             "process: steadier on a loaded machine)")
    parser.add_argument("--order", choices=("random", "grouped"), default="random",
                        help="the order of the plain program's rows: random (default, as a "
                             "relation's tuples come) or grouped (as generated, key by key: "
                             "faster for the plain program, whose dict lookups then hit the "
                             "cache; sira's bodies are sets and cannot keep such an order)")
    parser.add_argument("--only", default=None,
                        help="comma-separated subset: pack,join,summarizeby,tclose,from_rows,"
                             "parse")
    parser.add_argument("--no-gc", action="store_true", help="accepted for run_all.py; the "
                        "cyclic GC is always paused while timing")
    args = parser.parse_args(argv)
    n, repeat, clock = max(1, args.n), max(1, args.repeat), CLOCKS[args.clock]
    only = None if args.only is None else {s.strip().lower() for s in args.only.split(",")}

    print(f"sira {sira.__version__} against plain Python: n={n:,}, best of {repeat}, "
          f"{args.clock} clock, plain rows in {args.order} order")
    print(f"Python {platform.python_version()} ({platform.python_implementation()}), "
          f"{platform.platform()}, cpu count {os.cpu_count()}")
    print()
    header = (f"{'work':<20} {'n':>10} {'results':>10} {'plain s':>9} {'sira s':>9} "
              f"{'ratio':>6} {'target':>7}  verdict")
    print(header)
    print("-" * len(header))
    rng = random.Random(args.seed)
    for case in RATIO_CASES:
        name = case.__name__.removeprefix("case_")
        if only is None or name in only:
            print(run_ratio_case(case, n, rng, repeat, clock, args.order), flush=True)
            gc.collect()
    if only is None or "from_rows" in only:
        for line in run_from_rows(n, rng, repeat, clock):
            print(line, flush=True)
    if only is None or "parse" in only:
        for line in run_parse(n, rng, repeat, clock):
            print(line, flush=True)
    print()
    print("ratio: sira seconds / plain seconds; each pair of results checked equal by count and "
          "checksum in this run.")
    return 0


if __name__ == "__main__":
    main()
    sys.exit(0)
