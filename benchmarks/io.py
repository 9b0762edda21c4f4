"""I/O benchmark: converting Arrow tables to relations and back, beside pyarrow's own
conversions to and from Python rows on the same data, in one run.

    python benchmarks/io.py               # 1,000,000 rows, best of 2
    python benchmarks/io.py --n 100000    # scaled down

Two tables of n rows (every row distinct, so the relation has n tuples):

1. scalars    id int64 (LONG), k int32 (INT), x float64 (FLOAT), name string (STRING),
              flag bool (BOOLEAN), day date32 (DATE), ts timestamp[us] (TIMESTAMP)
2. intervals  id int64, during struct<begin: int32, end: int32> (INTINTERVAL, one row in ten
              unbounded), n decimal128(38, 0) (BIGINT)

Per table and direction:

    in    sira.from_arrow(table)                  beside  table.to_pylist()
    out   sira.to_arrow(relation)                 beside  pa.Table.from_pylist(rows, schema)
    out   sira.to_arrow(relation, ordered=False)  (the same, rows in no particular order)

sira does more than the baseline in both directions (in: NULL/NaN checks, a relation built as
a set of tuples; out: by default the rows sorted into canonical order), and the results are
checked to hold the same values. The ratio is sira / pyarrow; the target is <= 1.5. The
script always exits 0.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pyarrow as pa  # noqa: E402

import sira  # noqa: E402
from benchmarks._common import best_time_pair  # noqa: E402
from sira.io import from_arrow, to_arrow  # noqa: E402

TARGET = 1.5
_EPOCH = datetime.datetime(2020, 1, 1)


def scalar_table(n: int, rng: random.Random):
    days = [datetime.date(2020, 1, 1) + datetime.timedelta(days=rng.randrange(3650))
            for _ in range(n)]
    stamps = [_EPOCH + datetime.timedelta(microseconds=rng.randrange(10 ** 14))
              for _ in range(n)]
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "k": pa.array([rng.randrange(1000) for _ in range(n)], pa.int32()),
        "x": pa.array([rng.random() for _ in range(n)], pa.float64()),
        "name": pa.array([f"name{rng.randrange(10 ** 6)}" for _ in range(n)], pa.string()),
        "flag": pa.array([rng.random() < 0.5 for _ in range(n)], pa.bool_()),
        "day": pa.array(days, pa.date32()),
        "ts": pa.array(stamps, pa.timestamp("us")),
    })


def interval_table(n: int, rng: random.Random):
    begins = [rng.randrange(10 ** 6) for _ in range(n)]
    during = [{"begin": b, "end": None if rng.randrange(10) == 0 else b + rng.randrange(1, 100)}
              for b in begins]
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "during": pa.array(during, pa.struct([pa.field("begin", pa.int32(), False),
                                              pa.field("end", pa.int32())])),
        "n": pa.array([rng.randrange(-10 ** 30, 10 ** 30) for _ in range(n)],
                      pa.decimal128(38, 0)),
    })


def same_values(table, relation, back, rng: random.Random) -> bool:
    """A sample of rows, looked up by id, holds the same values in the source table, in the
    relation and in the table written back (which must also have every row)."""
    if len(relation) != table.num_rows or back.num_rows != table.num_rows:
        return False
    sample = sorted(rng.sample(range(table.num_rows), min(200, table.num_rows)))
    source = {row["id"]: row for row in table.take(sample).to_pylist()}
    written = {row["id"]: row for row in back.to_pylist() if row["id"] in source}
    names = relation.heading.names
    held = {}
    for row in relation.body:
        values = dict(zip(names, row))
        if values["id"] in source:
            held[values["id"]] = values
    for key, row in source.items():
        value = held[key]
        if "during" in row:
            value = dict(value, during={"begin": value["during"].begin,
                                        "end": value["during"].end})
            row = dict(row, n=int(row["n"]))
            written[key] = dict(written[key], n=int(written[key]["n"]))
        if value != row or written[key] != row:
            return False
    return True


def run_case(label, table, repeat, rng):
    rows = table.to_pylist()
    schema = table.schema
    t_base_in, t_sira_in, _, relation = best_time_pair(
        table.to_pylist, lambda: from_arrow(table), repeat, gc_off=True)
    t_base_out, t_sira_out, _, back = best_time_pair(
        lambda: pa.Table.from_pylist(rows, schema=schema), lambda: to_arrow(relation),
        repeat, gc_off=True)
    _, t_unordered, _, loose = best_time_pair(
        lambda: None, lambda: to_arrow(relation, ordered=False), repeat, gc_off=True)
    ok = same_values(table, relation, back, rng) and same_values(table, relation, loose, rng)
    return [(label, "in  Arrow -> rows / Relation", t_base_in, t_sira_in, ok),
            (label, "out rows / Relation -> Arrow", t_base_out, t_sira_out, ok),
            (label, "out ... ordered=False", t_base_out, t_unordered, ok)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="rows per table")
    parser.add_argument("--repeat", type=int, default=2, help="best of this many runs")
    args = parser.parse_args(argv)
    rng = random.Random(20240611)
    print(f"sira {sira.__version__}, pyarrow {pa.__version__}, Python "
          f"{platform.python_version()}, n = {args.n:,} rows, best of {args.repeat}")
    results = []
    for label, make in (("scalars", scalar_table), ("intervals", interval_table)):
        table = make(args.n, rng)
        results.extend(run_case(label, table, args.repeat, rng))
        del table
    print(f"{'table':<10} {'direction':<30} {'pyarrow s':>10} {'sira s':>8} {'ratio':>6}  "
          f"{'same values':<11}")
    for label, direction, base, mine, ok in results:
        ratio = mine / base
        flag = "" if ratio <= TARGET else f"  (above the {TARGET} target)"
        print(f"{label:<10} {direction:<30} {base:>10.3f} {mine:>8.3f} {ratio:>6.2f}  "
              f"{'yes' if ok else 'NO':<11}{flag}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
