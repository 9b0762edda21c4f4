"""Result-size guards: every operator that can make far more tuples than it reads counts them
against ``max_tuples`` as it goes and raises TooManyTuples (naming the operator and the limit)
as soon as the limit is passed, without building the whole result first."""

from __future__ import annotations

import datetime
import io
import tracemalloc

import pytest

import sira
from sira import INT, INTINTERVAL, LONG, LONGINTERVAL, TIMESTAMP, Interval, Relation
from sira.cli import main
from sira.engine.guards import DEFAULT_MAX_TUPLES
from sira.engine.packing import split_relations
from sira.errors import SiraTypeError, SiraValueError, TooManyTuples, UnboundedClosure
from sira.intervals import FLOATINTERVAL

from conftest import ENGINES

GUARDED_ENGINES = ENGINES
#: the slow Spark splits are checked once (MINUS); every split on the other engines
SPLIT_ENGINES = [e for e in ENGINES if e != "spark"]

MB = 1 << 20


def chain(n: int) -> Relation:
    """Edges i -> i+1 for i < n: its closure holds n(n+1)/2 pairs."""
    return Relation.from_rows({"a": INT, "b": INT}, [(i, i + 1) for i in range(n)])


def keyed(n: int, keys: int, other: str) -> Relation:
    """n tuples {k, other} spread over ``keys`` join keys."""
    return Relation.from_rows({"k": INT, other: INT}, [(i % keys, i) for i in range(n)])


def numbers(name: str, n: int) -> Relation:
    return Relation.from_rows({name: INT}, [(i,) for i in range(n)])


def peak_memory(fn) -> int:
    """The peak of Python allocations (bytes) while ``fn()`` runs; what it raised, or None."""
    tracemalloc.start()
    try:
        fn()
        raised = None
    except TooManyTuples as err:
        raised = err
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak, raised


def assert_refused(text, relvars, operator, limit, engine="python"):
    with pytest.raises(TooManyTuples) as info:
        sira.evaluate(text, relvars, engine=engine, max_tuples=limit)
    assert info.value.operator == operator
    assert info.value.limit == limit
    assert f"{operator}: " in str(info.value) and str(limit) in str(info.value)
    return info.value


def assert_limit_is_exact(text, relvars, engine="python"):
    """The result passes with max_tuples equal to its size and is refused one below it."""
    full = sira.evaluate(text, relvars)
    assert sira.evaluate(text, relvars, engine=engine, max_tuples=len(full)) == full
    with pytest.raises(TooManyTuples):
        sira.evaluate(text, relvars, engine=engine, max_tuples=len(full) - 1)
    return full


# ------------------------------------------------------------------------------ the option

def test_the_default_limit_is_fifty_million():
    assert DEFAULT_MAX_TUPLES == 50_000_000
    with pytest.raises(TooManyTuples) as info:  # 20,000 x 20,000 / 2 keys = 200 M tuples
        sira.evaluate("join(R, S)", {"R": keyed(20_000, 2, "a"), "S": keyed(20_000, 2, "b")})
    assert info.value.limit == 50_000_000


@pytest.mark.parametrize("bad, error", [("1000", SiraTypeError), (1.5, SiraTypeError),
                                         (True, SiraTypeError), (-1, SiraValueError)])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_max_tuples_that_is_not_a_count_is_refused(bad, error, engine):
    with pytest.raises(error) as info:
        sira.evaluate("unpack(R, (x))", {"R": Relation.from_rows(
            {"x": LONGINTERVAL}, [(Interval(0, 3),)])}, engine=engine, max_tuples=bad)
    assert "max_tuples" in str(info.value)


# ------------------------------------------------------------------------------ closures

def test_tclose_of_a_10000_edge_chain_stops_at_the_limit_quickly_in_bounded_memory():
    edges = {"G": chain(10_000)}  # the whole closure would hold 50,005,000 pairs
    peak, err = peak_memory(lambda: sira.evaluate("tclose(G, (a, b))", edges,
                                                  max_tuples=100_000))
    assert isinstance(err, TooManyTuples)
    assert (err.operator, err.limit) == ("TCLOSE", 100_000)
    assert peak < 64 * MB, f"peak {peak / MB:.0f} MB"  # ~100 k pairs, not 50 M (no timing:
    # how fast is for benchmarks; the memory shows the closure stopped at the limit)


def test_tclose_on_attribute_pairs_is_guarded_too():
    g = Relation.from_rows({"a": INT, "b": INT, "c": INT, "d": INT},
                           [(i, 0, i + 1, 0) for i in range(300)])
    assert_refused("tclose(G, (a, c, b, d))", {"G": g}, "TCLOSE", 1_000)


def test_tclose_under_the_limit_is_unchanged_and_the_limit_is_exact():
    closure = assert_limit_is_exact("tclose(G, (a, b))", {"G": chain(60)})
    assert len(closure) == 60 * 61 // 2


def test_gtclose_on_a_long_chain_stops_at_the_limit():
    g = Relation.from_rows({"a": INT, "b": INT, "n": INT}, [(i, i + 1, 1) for i in range(2_000)])
    err = assert_refused("gtclose(G, (a, b), (n(plus(__L__n, __R__n))))", {"G": g},
                         "GTCLOSE", 20_000)
    assert "cycle" not in str(err)  # a chain has none


def test_gtclose_under_the_limit_is_unchanged_and_the_limit_is_exact():
    g = Relation.from_rows({"a": INT, "b": INT, "n": INT}, [(i, i + 1, 1) for i in range(40)])
    result = assert_limit_is_exact("gtclose(G, (a, b), (n(plus(__L__n, __R__n))))", {"G": g})
    assert len(result) == 40 * 41 // 2


def test_gtclose_over_the_limit_on_a_growing_cycle_names_the_cycle():
    # a 3-cycle with 60 parallel weights per edge: every round makes many new values for the
    # same node pairs, so the limit comes long before the cycle is proved unbounded
    rows = [(a, b, w) for a, b in ((0, 1), (1, 2), (2, 0)) for w in range(1, 61)]
    g = Relation.from_rows({"a": INT, "b": INT, "n": INT}, rows)
    err = assert_refused("gtclose(G, (a, b), (n(plus(__L__n, __R__n))))", {"G": g},
                         "GTCLOSE", 3_000)
    assert "cycle through" in str(err)


def test_gtclose_on_a_small_growing_cycle_is_still_unbounded():
    g = Relation.from_rows({"a": INT, "b": INT, "n": INT}, [(0, 1, 1), (1, 0, 1)])
    with pytest.raises(UnboundedClosure):
        sira.evaluate("gtclose(G, (a, b), (n(plus(__L__n, __R__n))))", {"G": g})


# ------------------------------------------------------------------------------ joins

def test_a_careless_self_join_is_refused_before_it_is_built():
    r = keyed(20_000, 2, "a")  # joined with itself on k: 2 x 10,000^2 = 200 M tuples
    relvars = {"R": r}
    text = "join(R, rename(R, (a, b)))"
    peak, err = peak_memory(lambda: sira.evaluate(text, relvars, max_tuples=1_000_000))
    assert isinstance(err, TooManyTuples)
    assert (err.operator, err.limit) == ("JOIN", 1_000_000)
    assert peak < 32 * MB, f"peak {peak / MB:.0f} MB"  # 1 M result tuples would take > 100 MB


def test_a_cartesian_product_is_refused_before_it_is_built():
    peak, err = peak_memory(lambda: sira.evaluate(
        "join(A, B)", {"A": numbers("a", 10_000), "B": numbers("b", 10_000)},
        max_tuples=1_000_000))
    assert isinstance(err, TooManyTuples) and err.operator == "JOIN"
    assert peak < 16 * MB


@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_a_join_under_the_limit_is_unchanged_and_the_limit_is_exact(engine):
    r, s = keyed(300, 7, "a"), keyed(200, 5, "b")
    result = assert_limit_is_exact("join(R, S)", {"R": r, "S": s}, engine=engine)
    expected = {(a, b, k1) for a, k1 in r.body for b, k2 in s.body if k1 == k2}  # (a, k) order
    assert set(result.body) == expected


@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_a_many_way_join_counts_every_step(engine):
    relvars = {"A": numbers("a", 100), "B": numbers("b", 100), "C": numbers("c", 100)}
    assert_refused("join(A, B, C)", relvars, "JOIN", 50_000, engine=engine)  # A x B fits, then x C does not
    assert len(sira.evaluate("join(A, B, C)", relvars, max_tuples=1_000_000, engine=engine)) == 1_000_000


@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_a_leftjoin_counts_its_matched_and_unmatched_tuples(engine):
    r = keyed(100, 10, "a")
    s = Relation.from_rows({"k": INT, "b": INT}, [(k, b) for k in range(5) for b in range(10)])
    text = "leftjoin(R, S, (b(int(-1))))"
    result = assert_limit_is_exact(text, {"R": r, "S": s}, engine=engine)
    assert len(result) == 50 * 10 + 50  # keys 0..4 match 10 tuples each, 5..9 get the default
    assert_refused(text, {"R": r, "S": s}, "LEFTJOIN", 100, engine=engine)


@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_divideby_names_itself_when_its_cartesian_product_is_too_large(engine):
    subject, target = numbers("s", 1_000), numbers("t", 1_000)
    pairs = Relation.from_rows({"s": INT, "t": INT}, [(i, i) for i in range(1_000)])
    relvars = {"S": subject, "P": pairs, "T": target}
    err = assert_refused("divideby(S, P, T)", relvars, "DIVIDEBY", 100_000, engine=engine)
    assert "JOIN" in str(err)
    assert len(sira.evaluate("divideby(S, P, T)", relvars, max_tuples=1_000_000, engine=engine)) == 0


@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_an_operator_inside_divideby_keeps_its_own_name(engine):
    relvars = {"A": numbers("s", 400), "B": numbers("x", 400),
               "P": Relation.from_rows({"s": INT, "t": INT}, [(0, 0)]), "T": numbers("t", 1)}
    assert_refused("divideby(join(A, B), P, T)", relvars, "JOIN", 100_000, engine=engine)


# ------------------------------------------------------------------------------ intervals

def staggered(n: int) -> Relation:
    """n tuples {k, a, x}, x = [i, i+n), in one join group k: split together on x, each tuple
    is cut into up to n pieces, all distinct (they keep their own a)."""
    return Relation.from_rows({"k": INT, "a": INT, "x": LONGINTERVAL},
                              [(0, i, Interval(i, i + n)) for i in range(n)])


def squares(n: int) -> Relation:
    """n tuples {k, x, y}, x = y = [i, i+n): split on both, cut into up to n x n cells."""
    return Relation.from_rows({"k": INT, "x": LONGINTERVAL, "y": LONGINTERVAL},
                              [(0, Interval(i, i + n), Interval(i, i + n)) for i in range(n)])


@pytest.mark.parametrize("text, operator", [
    ("minus(Q, P)", "MINUS"),
    ("intersect(Q, P)", "INTERSECT"),
    ("xminus(Q, P)", "XMINUS"),
    ("join(R, rename(S, (a, b)))", "JOIN"),
    ("joinusing(R, rename(S, (a, b)), (x))", "JOINUSING"),
    ("semiminus(R, rename(S, (a, b)))", "SEMIMINUS"),
    # a FLOAT product is folded in order of its values: split, not swept
    ("summarizebyusing(R, (k, x), (c(mult(tofloat(a)))), (x))", "SUMMARIZEBYUSING"),
])
@pytest.mark.parametrize("engine", SPLIT_ENGINES)
def test_a_pointwise_split_is_refused_as_it_grows(text, operator, engine):
    relvars = {"R": staggered(600), "S": staggered(7), "Q": squares(120), "P": squares(3)}
    if operator in ("JOIN", "JOINUSING"):
        # joined by a sweep over the packed inputs (sira.engine.joins.overlap_join, and
        # sira_duckdb.joins.overlap_join): no pieces, only the 70 overlapping pairs
        out = sira.evaluate(text, relvars, max_tuples=10_000, engine=engine)
        assert len(out) == 70 and out == sira.evaluate(text, relvars)
        with pytest.raises(TooManyTuples, match=operator):
            sira.evaluate(text, relvars, max_tuples=50, engine=engine)
        return
    if engine in ("python", "duckdb") and operator == "SEMIMINUS":  # one pointwise attribute
        # by coverage (sira.engine.coverage) or an overlap join with what the right side covers
        # (sira.algebra.derived.semi_as_overlap_join): no pieces
        out = sira.evaluate(text, relvars, max_tuples=10_000, engine=engine)
        assert out == sira.evaluate(text, relvars) and len(out) < 1_000
        return
    err = assert_refused(text, relvars, operator, 10_000, engine=engine)
    assert "splitting the intervals" in str(err)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_swept_summary_makes_no_pieces_and_is_not_refused(engine):
    """An integer sum over one USING attribute is swept (sira.engine.aggregation.sweep_summary
    and its DuckDB and Spark translations): its cost is the input and the output, never the
    overlaps."""
    text = "summarizebyusing(R, (k, x), (c(plus(int(1)))), (x))"
    relvars = {"R": staggered(600)}
    out = sira.evaluate(text, relvars, max_tuples=10_000, engine=engine)
    assert len(out) == 1199 and out == sira.evaluate(text, relvars)


@pytest.mark.skipif("spark" not in ENGINES, reason="Spark is not available here")
def test_spark_joins_pointwise_on_one_interval_make_no_pieces():
    """600 intervals of one key, each overlapping all the others: the split cut them into
    about 180,000 pieces; the overlap join (sira_spark.joins.overlap_join) finds the 70
    overlapping pairs, and counts them for max_tuples before it runs."""
    relvars = {"R": staggered(600), "S": staggered(7)}
    for text in ("join(R, rename(S, (a, b)))", "semiminus(R, rename(S, (a, b)))"):
        out = sira.evaluate(text, relvars, max_tuples=10_000, engine="spark")
        assert out == sira.evaluate(text, relvars), text
        assert len(out) == 70 or text.startswith("semiminus")
    with pytest.raises(TooManyTuples, match="JOIN"):
        sira.evaluate("join(R, rename(S, (a, b)))", relvars, max_tuples=50, engine="spark")


@pytest.mark.skipif("spark" not in ENGINES, reason="Spark is not available here")
def test_a_pointwise_split_is_refused_as_it_grows_on_spark():
    relvars = {"Q": squares(60), "P": squares(3)}
    err = assert_refused("minus(Q, P)", relvars, "MINUS", 1_000, "spark")
    assert "splitting the intervals" in str(err)


@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_pack_on_two_attributes_counts_its_split(engine):
    rows = [(0, Interval(i, i + 60), Interval(i, i + 60)) for i in range(60)]
    r = Relation.from_rows({"k": INT, "x": LONGINTERVAL, "y": LONGINTERVAL}, rows)
    err = assert_refused("pack(R, (x, y))", {"R": r}, "PACK", 10_000, engine=engine)
    assert "splitting" in str(err)
    assert len(sira.evaluate("pack(R, (x, y))", {"R": r}, engine=engine)) > 0


@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_a_join_one_of_whose_operands_adds_no_attribute_is_not_counted(engine):
    # a semijoin of the wider operand, which makes no more tuples than that operand holds: the
    # Python engine never counted it; DuckDB and Spark refused join(R, S) of 3 tuples at 2
    r = Relation.from_rows({"a": INT, "b": INT}, [(i, i) for i in range(3)])
    s = Relation.from_rows({"a": INT}, [(i,) for i in range(3)])
    relvars = {"R": r, "S": s, "T": Relation.from_rows({"b": INT, "c": INT}, [(0, 0), (0, 1)])}
    for text in ("join(R, S)", "join(S, R)", "join(R, R)", "join(TABLE_DEE, R)"):
        assert sira.evaluate(text, relvars, engine=engine, max_tuples=2) == r, text
    assert_refused("join(S, R, T)", relvars, "JOIN", 1, engine=engine)  # T adds c: counted


@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_a_pointwise_semiminus_counts_the_pieces_it_keeps_not_those_it_drops(engine):
    # DuckDB and Spark compute it as the left operand minus its join with what the right
    # covers; they counted that join too (5 tuples here), and refused at 1 what the Python
    # engine computes (its result is one piece)
    left = Relation.from_rows({"k": INT, "x": INTINTERVAL}, [
        (0, Interval(6, None)), (1, Interval(6, 7)), (2, Interval(0, 3)), (2, Interval(7, 9)),
        (3, Interval(2, 3))])
    right = Relation.from_rows({"x": INTINTERVAL}, [
        (Interval(1, 3),), (Interval(1, None),), (Interval(7, 9),)])
    # a left operand with an interval attribute of its own (the result packed on x and y):
    # DuckDB and Spark split both operands there, and counted the right one's pieces
    wide = Relation.from_rows({"k": INT, "x": INTINTERVAL, "y": INTINTERVAL},
                              [(1, Interval(7, 8), Interval(2, None))])
    relvars = {"L": left, "R": right, "W": wide}
    for text, operator in (("semiminus(L, R)", "SEMIMINUS"), ("semijoin(L, R)", "SEMIJOIN"),
                           ("semijoin(W, R)", "SEMIJOIN")):
        full = sira.evaluate(text, relvars)
        assert sira.evaluate(text, relvars, engine=engine, max_tuples=len(full)) == full
        err = assert_refused(text, relvars, operator, len(full) - 1, engine=engine)
        assert "the result would hold" in str(err)


@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_a_pointwise_semi_the_split_would_cut_counts_its_result_only(engine):
    # two shapes DuckDB and Spark split both operands for, counting the pieces (more than the
    # results hold here), while the Python engine reads the right operand's coverage: a second
    # shared interval attribute y, matched by equality under USING (x); FLOAT points
    n = 6
    rows = [(0, i, Interval(i, i + n)) for i in range(n)]
    left = Relation.from_rows({"k": INT, "x": INTINTERVAL, "y": INTINTERVAL},
                              [(0, Interval(0, 40), Interval(0, 1)),
                               (0, Interval(0, 40), Interval(0, 2))])
    right = Relation.from_rows({"k": INT, "w": INT, "x": INTINTERVAL, "y": INTINTERVAL},
                               [(k, w, x, Interval(0, 1)) for k, w, x in rows] +
                               [(0, 9, Interval(20, 30), Interval(0, 2))])  # y differs: no match
    floats = Relation.from_rows({"k": INT, "w": INT, "x": FLOATINTERVAL},
                                [(k, w, Interval(x.begin / 2, x.end / 2)) for k, w, x in rows])
    float_left = Relation.from_rows({"k": INT, "x": FLOATINTERVAL},
                                    [(0, Interval(-1.0, 20.0)), (1, Interval(0.5, 1.5))])
    relvars = {"L": left, "R": right, "F": floats, "G": float_left}
    cases = (("semijoinusing(L, R, (x))", "SEMIJOINUSING", 2),
             ("semiminususing(L, R, (x))", "SEMIMINUSUSING", 3),
             ("semijoin(G, F)", "SEMIJOIN", 1), ("semiminus(G, F)", "SEMIMINUS", 3))
    if engine == "spark":  # one of each shape: Spark's queries are slow
        cases = cases[1:3]
    for text, operator, size in cases:
        full = sira.evaluate(text, relvars)
        assert len(full) == size, text
        assert sira.evaluate(text, relvars, engine=engine, max_tuples=size) == full, text
        err = assert_refused(text, relvars, operator, size - 1, engine=engine)
        assert "the result would hold" in str(err)


@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_a_join_equal_to_the_one_a_semi_is_lowered_to_is_counted_where_written(engine):
    # DuckDB and Spark compile a pointwise SEMIMINUS as L minus joinusing(L, project(R, ...)),
    # that join uncounted; the user's equal JOIN, compiled after it, was handed the same
    # uncounted plan, and the query ran at 9 where the Python engine refuses the JOIN's 10
    left = Relation.from_rows({"k": INT, "x": INTINTERVAL}, [(k, Interval(0, 10))
                                                             for k in range(10)])
    right = Relation.from_rows({"k": INT, "w": INT, "x": INTINTERVAL},
                               [(k, 1, Interval(0, 10)) for k in range(10)])
    relvars = {"L": left, "R": right}
    text = "union(semiminus(L, R), joinusing(L, project(R, (k, x)), (x)))"
    assert sira.evaluate(text, relvars, engine=engine, max_tuples=10) == left
    assert_refused(text, relvars, "JOINUSING", 9, engine=engine)


def overlapping_squares(n: int) -> Relation:
    """n tuples of one key whose x and y run from i to i + n: cut at the key's 2n boundaries,
    each tuple makes n x n pieces (n**3 in all), and pieces of different tuples coincide."""
    return Relation.from_rows({"k": INT, "x": LONGINTERVAL, "y": LONGINTERVAL},
                              [(0, Interval(i, i + n), Interval(i, i + n)) for i in range(n)])


@pytest.mark.parametrize("engine, text", [
    *[(e, "pack(R, (x, y))") for e in GUARDED_ENGINES],
    *[(e, "unionusing(R, R, (y, x))") for e in SPLIT_ENGINES]])  # on Spark: the PACK above
def test_a_split_counts_its_distinct_pieces(engine, text):
    # 1,728 pieces, 397 distinct: the split relation's tuples are what max_tuples counts (DuckDB
    # and Spark counted the pieces of PACK on several attributes with their repeats)
    r = overlapping_squares(12)
    (pieces,) = split_relations([r], ["x", "y"], ["k"])
    assert len(pieces) == 397
    full = sira.evaluate(text, {"R": r})
    assert sira.evaluate(text, {"R": r}, engine=engine, max_tuples=397) == full
    err = assert_refused(text, {"R": r}, text[:text.index("(")].upper(), 396, engine=engine)
    assert "splitting" in str(err)


@pytest.mark.parametrize("engine", SPLIT_ENGINES)
def test_a_split_under_the_limit_gives_the_same_result(engine):
    relvars = {"R": staggered(40), "S": staggered(7), "Q": squares(20), "P": squares(3)}
    for text in ("minus(Q, P)", "joinusing(R, rename(S, (a, b)), (x))",
                 "summarizebyusing(R, (k, x), (c(plus(int(1)))), (x))"):
        assert sira.evaluate(text, relvars, max_tuples=10_000, engine=engine) == sira.evaluate(text, relvars, engine=engine)


def test_unpack_counts_points_covered_twice_once():
    r = Relation.from_rows({"x": LONGINTERVAL}, [(Interval(0, 100),), (Interval(1, 101),)])
    result = assert_limit_is_exact("unpack(R, (x))", {"R": r})  # 101 points, not 200
    assert len(result) == 101
    assert_refused("unpack(R, (x))", {"R": r}, "UNPACK", 100)


def test_unpack_of_a_huge_interval_is_refused_without_unpacking():
    r = Relation.from_rows({"x": LONGINTERVAL}, [(Interval(0, 10 ** 12),)])
    peak, err = peak_memory(lambda: sira.evaluate("unpack(R, (x))", {"R": r}))
    assert isinstance(err, TooManyTuples) and err.limit == DEFAULT_MAX_TUPLES
    assert peak < 4 * MB


# ------------------------------------------------------------------------------ nesting

@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_ungroup_of_two_rvas_counts_their_product(engine):
    g = sira.evaluate("group(group(join(A, B), (as(a))), (bs(b)))",
                      {"A": numbers("a", 300), "B": numbers("b", 300)}, engine=engine)
    assert len(g) == 1  # one tuple: 300 a's, 300 b's... once ungrouped, 300 x 300
    relvars = {"G": g}
    err = assert_refused("ungroup(G, (as, bs))", relvars, "UNGROUP", 50_000, engine=engine)
    assert err.limit == 50_000
    assert len(assert_limit_is_exact("ungroup(G, (as, bs))", relvars, engine=engine)) == 90_000


@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_ungroup_of_many_large_rvas_counts_as_it_goes(engine):
    g = sira.evaluate("group(R, (vs(a)))", {"R": keyed(5_000, 50, "a")}, engine=engine)
    assert_refused("ungroup(G, (vs))", {"G": g}, "UNGROUP", 1_000, engine=engine)
    assert len(assert_limit_is_exact("ungroup(G, (vs))", {"G": g}, engine=engine)) == 5_000


@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_group_counts_the_tuples_it_nests(engine):
    r = Relation.from_rows({"k": INT, "a": INT, "b": INT},
                           [(i % 3, i, -i) for i in range(3_000)])
    text = "group(R, (as(a), bs(b)))"  # two RVAs: 6,000 nested tuples from 3,000
    assert_refused(text, {"R": r}, "GROUP", 5_999, engine=engine)
    assert len(sira.evaluate(text, {"R": r}, max_tuples=6_000, engine=engine)) == 3


# ------------------------------------------------------------------------------ windows

def ticks(n: int) -> Relation:
    return Relation.from_rows({"ts": LONG, "v": INT}, [(i, i) for i in range(n)])


@pytest.mark.parametrize("text, operator", [
    ("hop(R, ts, size(1000) slide(1))", "HOP"),
    ("cumulate(R, ts, step(1) size(1000))", "CUMULATE"),
])
@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_window_tables_that_multiply_rows_are_refused_as_they_grow(text, operator, engine):
    relvars = {"R": ticks(200)}
    assert_refused(text, relvars, operator, 10_000, engine=engine)
    assert_limit_is_exact(text, relvars, engine=engine)


@pytest.mark.parametrize("text, operator", [
    ("hop(R, ts, size(1000000000000) slide(1))", "HOP"),
    ("cumulate(R, ts, step(1) size(1000000000000))", "CUMULATE"),
    ("hop(R, ts, unit(microsecond) size(3 day) slide(1))", "HOP"),
    ("cumulate(R, ts, unit(microsecond) step(1) size(3 day))", "CUMULATE"),
])
@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_an_element_in_billions_of_windows_is_refused_before_they_are_made(
        text, operator, engine):
    # a slide far shorter than the size: each element is in a trillion (or 2.6e11) windows;
    # the Python engine made 50,000,000 of them before refusing (a MemoryError first),
    # DuckDB and Spark failed on a list's size, or ran out of memory
    if "unit" in text:
        t0 = datetime.datetime(2020, 1, 1)
        r = Relation.from_rows({"ts": TIMESTAMP, "v": INT},
                               [(t0 + datetime.timedelta(seconds=i), i) for i in range(3)])
    else:
        r = Relation.from_rows({"ts": LONG, "v": INT}, [(0, 1), (5, 2), (999_999, 3)])
    assert_refused(text, {"R": r}, operator, 1_000, engine=engine)
    exact = text.replace("1000000000000", "300").replace("3 day", "300")
    assert_limit_is_exact(exact, {"R": r}, engine=engine)


@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_rstream_counts_the_instants_it_reads(engine):
    w = Relation.from_rows({"v": INT, "during": LONGINTERVAL},
                           [(i, Interval(i, i + 1_000)) for i in range(100)])
    instants = Relation.from_rows({"at": LONG}, [(i,) for i in range(2_000)])
    relvars = {"W": w, "T": instants}
    assert_refused("rstream(W, at, T)", relvars, "RSTREAM", 10_000, engine=engine)
    assert len(assert_limit_is_exact("rstream(W, at, T)", relvars, engine=engine)) == 100_000


def held(result, column: str) -> int:
    """The tuples the relation-valued ``column`` of ``result`` holds, all windows together."""
    i = result.heading.index(column)
    return sum(len(t[i]) for t in result.body)


#: window operators whose windows nest their tuples: (query, operator, relation-valued attribute)
NESTING_WINDOWS = [
    ("splwindow(R, ts, sliding, count(50))", "SPLWINDOW", "tuples"),
    ("splwindow(R, ts, sliding, time(40) trigger(count(3)))", "SPLWINDOW", "tuples"),
    ("splwindow(R, ts, sliding, count(30) trigger(delta(v, 5)))", "SPLWINDOW", "tuples"),
    ("splwindow(R, ts, sliding, count(30) trigger(time(7)))", "SPLWINDOW", "tuples"),
    ("splwindow(R, ts, tumbling, count(7))", "SPLWINDOW", "tuples"),
    ("splwindow(R, ts, timeinterval, intervalduration(60) creationperiod(5))", "SPLWINDOW",
     "tuples"),
    ("windowby(R, order(ts) sliding, start(as(a) when(eq(mod(a.v, int(3)), int(0)))), "
     "end(as(e) when(eq(minus(e.v, a.v), int(40)))), result(w))", "WINDOWBY", "w"),
]


@pytest.mark.parametrize("text, operator, column", NESTING_WINDOWS)
@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_windows_count_the_tuples_they_hold_and_the_limit_is_exact(text, operator, column,
                                                                    engine):
    relvars = {"R": ticks(200)}
    full = sira.evaluate(text, relvars)
    total = held(full, column)
    assert total > 2 * len(full)  # sliding: each tuple held by several windows
    assert sira.evaluate(text, relvars, engine=engine, max_tuples=total) == full
    err = assert_refused(text, relvars, operator, total - 1, engine=engine)
    assert "its windows would hold" in str(err)


def test_a_runaway_sliding_window_is_refused_as_its_windows_grow():
    # 20,000 windows of up to 10,000 tuples: about 150 million held, refused near the limit
    relvars = {"R": ticks(20_000)}
    peak, raised = peak_memory(lambda: sira.evaluate(
        "splwindow(R, ts, sliding, count(10000))", relvars, max_tuples=200_000))
    assert isinstance(raised, TooManyTuples) and raised.operator == "SPLWINDOW"
    assert peak < 64 * MB


@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_a_time_trigger_over_a_quiet_stretch_is_refused_before_its_ticks_are_made(engine):
    # a count eviction keeps two tuples through a trillion ticks of time(1): each tick emits them
    r = Relation.from_rows({"ts": LONG, "v": INT}, [(0, 1), (1, 2), (10 ** 12, 3)])
    assert_refused("splwindow(R, ts, sliding, count(2) trigger(time(1)))", {"R": r},
                   "SPLWINDOW", 1_000, engine=engine)


@pytest.mark.parametrize("cap", ["partitioncount(2)", "tuplecount(5)"])
@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_a_quiet_stretch_under_partition_eviction_is_refused_as_it_ticks(engine, cap):
    # partitioncount and tuplecount couple the keys: the engines scan the stream in order with
    # the reference's state machine, which must count what its windows hold after every tick
    # (a trillion ticks of time(1) each emit the two partitions still held), not make them all
    r = Relation.from_rows({"ts": LONG, "k": INT}, [(0, 1), (1, 2), (2, 3), (10 ** 12, 3)])
    text = f"splwindow(R, ts, sliding, count(2) trigger(time(1)) partitioned(k, {cap}))"
    assert_refused(text, {"R": r}, "SPLWINDOW", 1_000, engine=engine)
    small = Relation.from_rows({"ts": LONG, "k": INT}, [(0, 1), (1, 2), (2, 3), (40, 3)])
    full = sira.evaluate(text, {"R": small})
    total = held(full, "tuples")
    assert sira.evaluate(text, {"R": small}, engine=engine, max_tuples=total) == full
    assert_refused(text, {"R": small}, "SPLWINDOW", total - 1, engine=engine)


@pytest.mark.parametrize("policy", [
    "count(1000000000)",  # no window past a key's last tuple: 1,000 windows per tuple at most
    "count(1000000000) trigger(count(7)) partitioned(k)",
    "count(1000000000) trigger(delta(ts, 3)) partitioned(k)",
    "delta(ts, 1000000000) trigger(count(2))",
    "time(1000000000) trigger(count(3))",
])
@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_sliding_windows_longer_than_the_stream_are_counted_before_they_are_made(
        policy, engine):
    # DuckDB and Spark made each tuple's windows up to its position plus the count, a billion
    # each, before dropping those that never fire (out of memory on DuckDB, Spark's JVM died),
    # where the Python engine answers in a tenth of a second; the windows each tuple is in are
    # now counted first, exactly
    r = Relation.from_rows({"ts": LONG, "k": INT}, [(i, i % 3) for i in range(200)])
    text = f"splwindow(R, ts, sliding, {policy})"
    full = sira.evaluate(text, {"R": r})
    total = held(full, "tuples")
    assert total > 900
    assert sira.evaluate(text, {"R": r}, engine=engine, max_tuples=total) == full
    assert_refused(text, {"R": r}, "SPLWINDOW", total - 1, engine=engine)


@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_a_tuple_in_billions_of_panes_is_refused_before_they_are_made(engine):
    # a creation period far shorter than the duration: each tuple is in 10**12 panes, each
    # emitted holding it; the Python engine looped over them, DuckDB ran out of memory and
    # Spark's JVM died (10**8 panes), instead of refusing them as the windows they make
    r = Relation.from_rows({"ts": LONG, "k": INT}, [(0, 1), (1, 2), (5, 1)])
    text = "splwindow(R, ts, timeinterval, intervalduration({}) creationperiod(1))"
    assert_refused(text.format(10 ** 12), {"R": r}, "SPLWINDOW", 1_000, engine=engine)
    late = Relation.from_rows({"ts": LONG, "k": INT, "a": LONG},
                              [(0, 1, 0), (9, 2, 1), (3, 1, 2), (12, 1, 3)])
    for rel, query in ((r, text.format(7)), (late, text.format(7).replace(
            "creationperiod(1)", "creationperiod(1) discardage(20) arrival(a)"))):
        full = sira.evaluate(query, {"R": rel})
        total = held(full, "tuples")
        assert total >= 21
        assert sira.evaluate(query, {"R": rel}, engine=engine, max_tuples=total) == full
        assert_refused(query, {"R": rel}, "SPLWINDOW", total - 1, engine=engine)


@pytest.mark.parametrize("policy", [
    "count(2) trigger(time(1))",  # the windows never change over the quiet stretch
    "time(5) trigger(time(1))",  # time eviction empties them part of the way
    "count(3) trigger(time(2)) partitioned(k, partitionage(7))",  # a partition ages out
])
@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_a_quiet_stretch_is_counted_exactly(policy, engine):
    # a quiet stretch of 38 ticks: the Python engine refuses it before its first tick (every
    # tick up to a possible eviction emits the same windows), only when they pass the limit
    r = Relation.from_rows({"ts": LONG, "k": INT}, [(0, 1), (1, 2), (2, 1), (40, 2), (41, 1)])
    text = f"splwindow(R, ts, sliding, {policy})"
    full = sira.evaluate(text, {"R": r})
    total = held(full, "tuples")
    assert total >= 10
    assert sira.evaluate(text, {"R": r}, engine=engine, max_tuples=total) == full
    assert_refused(text, {"R": r}, "SPLWINDOW", total - 1, engine=engine)


def test_a_quiet_stretch_past_the_limit_is_refused_before_its_ticks(monkeypatch):
    # 2**64 ticks of time(1) over two tuples: refused before they are made (tick by tick, the
    # 25 million ticks up to the default limit took about a minute)
    from sira.engine.spl import SplScanner
    made = []
    real = SplScanner._tick
    monkeypatch.setattr(SplScanner, "_tick", lambda self, t, out: made.append(t) or
                        real(self, t, out))
    top = 2 ** 63 - 1
    r = Relation.from_rows({"ts": LONG, "v": INT}, [(-top, 1), (-top + 1, 2), (top, 3)])
    assert_refused("splwindow(R, ts, sliding, count(2) trigger(time(1)))", {"R": r},
                   "SPLWINDOW", DEFAULT_MAX_TUPLES)
    assert len(made) == 1  # the tick at the second tuple, before the stretch


def test_windows_with_aggregates_hold_no_tuples_and_are_not_counted():
    text = ("windowby(R, order(ts) sliding, start(as(a) when(eq(mod(a.v, int(3)), int(0)))), "
            "end(as(e) when(eq(minus(e.v, a.v), int(40)))), aggregates(t(sum(w, v))))")
    result = sira.evaluate(text, {"R": ticks(200)}, max_tuples=100)
    assert len(result) > 50


def test_rstream_of_one_unbounded_tuple_is_refused_before_it_is_read():
    w = Relation.from_rows({"v": INT, "during": LONGINTERVAL}, [(1, Interval(0, None))])
    instants = Relation.from_rows({"at": LONG}, [(i,) for i in range(5_000)])
    assert_refused("rstream(W, at, T)", {"W": w, "T": instants}, "RSTREAM", 4_999)


# ------------------------------------------------------------------------------ both engines

@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_tclose_over_the_limit_raises_on_every_engine(engine):
    assert_refused("tclose(G, (a, b))", {"G": chain(64)}, "TCLOSE", 100, engine)  # one round
    under = sira.evaluate("tclose(G, (a, b))", {"G": chain(2)}, engine=engine, max_tuples=3)
    assert len(under) == 3


@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_gtclose_over_the_limit_raises_on_every_engine(engine):
    g = Relation.from_rows({"a": INT, "b": INT, "n": INT}, [(i, i + 1, 1) for i in range(30)])
    assert_refused("gtclose(G, (a, b), (n(plus(__L__n, __R__n))))", {"G": g}, "GTCLOSE", 50,
                   engine)  # 30 + 29 after one round


@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_unpack_limit_is_exact_on_every_engine(engine):
    r = Relation.from_rows({"x": LONGINTERVAL}, [(Interval(0, 100),), (Interval(1, 101),)])
    assert len(sira.evaluate("unpack(R, (x))", {"R": r}, engine=engine, max_tuples=101)) == 101
    assert_refused("unpack(R, (x))", {"R": r}, "UNPACK", 100, engine)


# ------------------------------------------------------------------------------ the CLI

def test_cli_max_tuples_prints_the_error_without_a_traceback(tmp_path, capsys):
    (tmp_path / "g.csv").write_text("a:int,b:int\n" + "".join(f"{i},{i + 1}\n"
                                                              for i in range(2_000)))
    code = main(["eval", "tclose(G, (a, b))", "--relvar", f"G={tmp_path / 'g.csv'}",
                 "--max-tuples", "5000"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("TooManyTuples: TCLOSE: ") and "5000" in err
    assert "Traceback" not in err


def test_cli_max_tuples_must_be_a_count(capsys):
    assert main(["eval", "TABLE_DEE", "--max-tuples", "many"]) == 2
    assert main(["eval", "TABLE_DEE", "--max-tuples", "-3"]) == 2


def test_repl_set_max_tuples_applies_to_the_next_queries(monkeypatch, capsys):
    lines = iter(["A := relation(body(tuple(a(1)) tuple(a(2)) tuple(a(3))))",
                  "B := rename(A, (a, b))",
                  ":set max_tuples 8",
                  "join(A, B)",
                  ":set max_tuples 9",
                  "C := join(A, B)",
                  ":set max_tuples",
                  ":quit"])

    def fake_input(prompt=""):
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None
    monkeypatch.setattr("builtins.input", fake_input)
    monkeypatch.setattr("sira.cli._setup_readline", lambda: None)
    terminal = io.StringIO()  # typed at a terminal: the refused join does not fail the session
    terminal.isatty = lambda: True
    monkeypatch.setattr("sys.stdin", terminal)
    assert main(["repl"]) == 0
    out, err = capsys.readouterr()
    assert "TooManyTuples: JOIN: the result would hold more than 8 tuples" in err
    assert "C := 9 tuples" in out
    assert "max_tuples 9" in out  # :set without a value shows the setting


# ------------------------------------------------------------------------------ DuckDB, Spark
@pytest.mark.parametrize("engine", GUARDED_ENGINES)
def test_a_runaway_cartesian_product_is_refused_before_it_runs_on_every_engine(engine):
    relvars = {"A": numbers("a", 100_000), "B": numbers("b", 100_000)}  # 10 G tuples
    with pytest.raises(TooManyTuples) as info:  # built, it would not fit this machine
        sira.evaluate("join(A, B)", relvars, engine=engine)
    assert (info.value.operator, info.value.limit) == ("JOIN", DEFAULT_MAX_TUPLES)


MEMORY_PROBE = """
import resource, sys
import pyarrow as pa
import sira
from sira_duckdb import DuckDBEngine
engine = DuckDBEngine(memory_limit="100MB")
a = pa.table({"a": pa.array(range(2500), pa.int32())})
b = pa.table({"b": pa.array(range(4000), pa.int32())})
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
r = engine.evaluate("aggregate(join(A, B), (n(plus(long(1)))))", {"A": a, "B": b})
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base
print(r.to_rows()[0]["n"], grown // 1024)
"""


@pytest.mark.skipif("duckdb" not in ENGINES, reason="DuckDB is not available here")
def test_a_duckdb_process_stays_near_its_memory_limit():
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", MEMORY_PROBE], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    n, grown_mb = map(int, done.stdout.split())
    assert n == 10_000_000  # ten million joined tuples (and a guard holding them), spilled
    assert grown_mb < 100 + 100, f"grew {grown_mb} MB past a 100 MB memory_limit"
