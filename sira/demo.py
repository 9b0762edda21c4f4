"""``sira demo``: a tour of the relational operators on the seed's catalog relations, then of
intervals, stream windows and a live query.

Seed 004 ("Relational Algebra") explains every operator of SIRA_PRISE's algebra with relations
taken from SIRA_PRISE's own catalog: DBMSFILE, STORAGESPACE, VIRTUALRELVARREFERENCES,
KEYATTRIBUTES... This module holds those relations (and the seeds' world records and CQL stream)
as literals in sira's text syntax (so the demo also exercises the parser) and one step per
operator: the operator, the seed's sentence about it, the expression, and its result.

    >>> relvars = catalog()
    >>> sorted(relvars)[:3]
    ['arg', 'attrs', 'categories']
    >>> STEPS[0].operator
    'RESTRICT'
"""

from __future__ import annotations

import sys
import time

import attrs

# The seed's relations, as relation literals in the text syntax. Keys are the display names.
RELATIONS = {
    "ATTRS": """\
relation(heading(maximumlength(int) attributename(string))
    body(tuple(maximumlength(124) attributename(string(CLIENTID)))
         tuple(maximumlength(2147483647) attributename(string(OPERANDSIGNATURE)))
         tuple(maximumlength(1022) attributename(string(CONSTRAINTLABEL)))
         tuple(maximumlength(786428) attributename(string(SP_EXPRESSION)))
         tuple(maximumlength(252) attributename(string(TYPESIZEHINT)))
         tuple(maximumlength(126) attributename(string(SPECIESNAME)))
         tuple(maximumlength(786428) attributename(string(RELVARPREDICATE)))
         tuple(maximumlength(126) attributename(string(NLSPECIESNAME)))
         tuple(maximumlength(786428) attributename(string(CONSTRAINTMESSAGETEXT)))
         tuple(maximumlength(1048572) attributename(string(CERTIFICATE)))))""",

    "DBMSFILE": """\
relation(heading(filename(string) pagesize(int))
    body(tuple(filename(string(DATABASECATALOG.SPDB)) pagesize(32768))
         tuple(filename(string(BW_SPECIES.SPDB)) pagesize(32768))
         tuple(filename(string(BW_SPOTSXSPNAME.SPDB)) pagesize(49152))
         tuple(filename(string(BW_POSSIBLESPECIES.SPDB)) pagesize(16384))
         tuple(filename(string(BW_SPOTS.SPDB)) pagesize(16384))))""",

    "STORAGESPACE": """\
relation(heading(storagespaceid(int) pagecount(int) filename(string))
    body(tuple(storagespaceid(1) pagecount(2250) filename(string(BW_SPOTS.SPDB)))
         tuple(storagespaceid(2) pagecount(23) filename(string(DATABASECATALOG.SPDB)))
         tuple(storagespaceid(17) pagecount(30) filename(string(DATABASECATALOG.SPDB)))
         tuple(storagespaceid(51) pagecount(412) filename(string(DATABASECATALOG.SPDB)))
         tuple(storagespaceid(3) pagecount(650) filename(string(BW_SPOTSXSPNAME.SPDB)))
         tuple(storagespaceid(117) pagecount(8) filename(string(DATABASECATALOG.SPDB)))
         tuple(storagespaceid(3) pagecount(605) filename(string(DATABASECATALOG.SPDB)))
         tuple(storagespaceid(10) pagecount(191) filename(string(DATABASECATALOG.SPDB)))
         tuple(storagespaceid(1) pagecount(50) filename(string(BW_POSSIBLESPECIES.SPDB)))
         tuple(storagespaceid(52) pagecount(43) filename(string(DATABASECATALOG.SPDB)))
         tuple(storagespaceid(145) pagecount(57) filename(string(DATABASECATALOG.SPDB)))
         tuple(storagespaceid(21) pagecount(610) filename(string(DATABASECATALOG.SPDB)))
         tuple(storagespaceid(65) pagecount(150) filename(string(DATABASECATALOG.SPDB)))
         tuple(storagespaceid(1) pagecount(2850) filename(string(BW_SPECIES.SPDB)))
         tuple(storagespaceid(15) pagecount(24) filename(string(DATABASECATALOG.SPDB)))
         tuple(storagespaceid(54) pagecount(14) filename(string(DATABASECATALOG.SPDB)))
         tuple(storagespaceid(22) pagecount(14) filename(string(DATABASECATALOG.SPDB)))))""",

    "CATEGORIES": """\
relation(heading(category(string) pagesize(int))
    body(tuple(category(string(big)) pagesize(32768))))""",

    "FILES1": """\
relation(heading(filename(string) pagesize(int))
    body(tuple(filename(string(DATABASECATALOG.SPDB)) pagesize(32768))
         tuple(filename(string(BW_SPOTSXSPNAME.SPDB)) pagesize(49152))
         tuple(filename(string(BW_POSSIBLESPECIES.SPDB)) pagesize(16384))
         tuple(filename(string(BW_SPOTS.SPDB)) pagesize(16384))))""",

    "FILES2": """\
relation(heading(filename(string) pagesize(int))
    body(tuple(filename(string(DATABASECATALOG.SPDB)) pagesize(32768))
         tuple(filename(string(BW_SPECIES.SPDB)) pagesize(32768))
         tuple(filename(string(BW_POSSIBLESPECIES.SPDB)) pagesize(16384))))""",

    "CONSTRAINTRELVARS1": """\
relation(heading(relvarname(string))
    body(tuple(relvarname(string(CONSTRAINTMESSAGETEXT)))
         tuple(relvarname(string(INDEXATTRIBUTE)))))""",

    "CONSTRAINTRELVARS2": """\
relation(heading(relvarname(string))
    body(tuple(relvarname(string(DATABASECONSTRAINTCHECK)))
         tuple(relvarname(string(SYSTEMDEFINEDCONSTRAINT)))
         tuple(relvarname(string(ASSIGNMENTCONSTRAINT)))
         tuple(relvarname(string(ASSIGNMENTCONSTRAINTCHECK)))
         tuple(relvarname(string(CONSTRAINTMESSAGETEXT)))
         tuple(relvarname(string(ATTRIBUTELENGTHCONSTRAINT)))
         tuple(relvarname(string(DATABASECONSTRAINT)))
         tuple(relvarname(string(CONSTRAINTINVOLVESRELVAR)))
         tuple(relvarname(string(TUPLECONSTRAINT)))))""",

    "VIRTUALRELVARREFERENCES": """\
relation(heading(referencedrelvarname(string) relvarname(string))
    body(tuple(referencedrelvarname(string(POSSREPCOMPONENT)) relvarname(string(TYPEDIRECTLYREFERENCEDBY)))
         tuple(referencedrelvarname(string(UDTPHYSICALPOSSREPCOMPONENT)) relvarname(string(TYPEDIRECTLYREFERENCEDBY)))
         tuple(referencedrelvarname(string(INTERVALTYPE)) relvarname(string(TYPESUPERTYPES)))
         tuple(referencedrelvarname(string(DATAACTIONREFERENCES)) relvarname(string(RELVARCLUSTER)))
         tuple(referencedrelvarname(string(DATABASECONSTRAINTCHECK)) relvarname(string(RELVARCLUSTER)))
         tuple(referencedrelvarname(string(JAVABACKEDTYPE)) relvarname(string(TYPESUPERTYPES)))
         tuple(referencedrelvarname(string(ASSIGNMENTCONSTRAINTCHECK)) relvarname(string(RELVARCLUSTER)))
         tuple(referencedrelvarname(string(TRIGGEREDDATAACTION)) relvarname(string(RELVARCLUSTER)))
         tuple(referencedrelvarname(string(INTERVALTYPE)) relvarname(string(TYPEDIRECTLYREFERENCEDBY)))
         tuple(referencedrelvarname(string(USERDEFINEDTYPE)) relvarname(string(TYPESUPERTYPES)))
         tuple(referencedrelvarname(string(KEYATTRIBUTE)) relvarname(string(RELVARKEYDEFS)))
         tuple(referencedrelvarname(string(VIRTUALRELVARREFERENCES)) relvarname(string(VIRTUALRELVARDEPENDENCYGRAPH)))
         tuple(referencedrelvarname(string(TYPEDIRECTLYREFERENCEDBY)) relvarname(string(TYPEDEPENDENCYGRAPH)))
         tuple(referencedrelvarname(string(KEY)) relvarname(string(RELVARKEYDEFS)))
         tuple(referencedrelvarname(string(CONSTRAINEDTYPE)) relvarname(string(TYPESUPERTYPES)))
         tuple(referencedrelvarname(string(CONSTRAINTINVOLVESRELVAR)) relvarname(string(RELVARCLUSTER)))
         tuple(referencedrelvarname(string(CONSTRAINEDTYPE)) relvarname(string(TYPEDIRECTLYREFERENCEDBY)))
         tuple(referencedrelvarname(string(VIRTUALRELVARREFERENCES)) relvarname(string(RELVARCLUSTER)))))""",

    "KEYATTRIBUTES": """\
relation(heading(errorcode(int) attributename(string))
    body(tuple(errorcode(245) attributename(string(RELVARNAME)))
         tuple(errorcode(258) attributename(string(STORAGESPACEID)))
         tuple(errorcode(244) attributename(string(RELVARNAME)))
         tuple(errorcode(274) attributename(string(RECORDTYPENAME)))
         tuple(errorcode(274) attributename(string(ORDINAL)))
         tuple(errorcode(242) attributename(string(TYPENAME)))
         tuple(errorcode(256) attributename(string(ATTRIBUTENAME)))
         tuple(errorcode(245) attributename(string(RECORDTYPENAME)))
         tuple(errorcode(244) attributename(string(RECORDTYPENAME)))
         tuple(errorcode(250) attributename(string(RELVARNAME)))
         tuple(errorcode(254) attributename(string(RELVARID)))
         tuple(errorcode(242) attributename(string(COMPONENTNAME)))
         tuple(errorcode(246) attributename(string(ERRORCODE)))
         tuple(errorcode(248) attributename(string(ATTRIBUTENAME)))
         tuple(errorcode(268) attributename(string(ERRORCODE)))
         tuple(errorcode(258) attributename(string(FILENAME)))
         tuple(errorcode(245) attributename(string(ORDINAL)))
         tuple(errorcode(248) attributename(string(RELVARNAME)))
         tuple(errorcode(256) attributename(string(RELVARNAME)))
         tuple(errorcode(244) attributename(string(ATTRIBUTENAME)))
         tuple(errorcode(255) attributename(string(RELVARNAME)))
         tuple(errorcode(274) attributename(string(RELVARNAME)))))""",

    "OPERATORS": """\
relation(heading(opinvnm(string) return(string) operandsignature(relation(heading(typename(string) ordinal(int)))))
    body(tuple(opinvnm(string(PI)) return(string(FLOAT)) operandsignature(relation(heading(typename(string) ordinal(int)) body())))
         tuple(opinvnm(string(PLUS)) return(string(AVERAGE)) operandsignature(relation(heading(typename(string) ordinal(int)) body(tuple(typename(string(AVERAGE)) ordinal(2)) tuple(typename(string(AVERAGE)) ordinal(1))))))
         tuple(opinvnm(string(PRIORDATE)) return(string(DATE)) operandsignature(relation(heading(typename(string) ordinal(int)) body(tuple(typename(string(DATE)) ordinal(1))))))
         tuple(opinvnm(string(PLUS)) return(string(INT)) operandsignature(relation(heading(typename(string) ordinal(int)) body(tuple(typename(string(INT)) ordinal(2)) tuple(typename(string(INT)) ordinal(1))))))
         tuple(opinvnm(string(PRIORINT)) return(string(INT)) operandsignature(relation(heading(typename(string) ordinal(int)) body(tuple(typename(string(INT)) ordinal(1))))))))""",

    "CUSTOMERS": """\
relation(heading(custno(int) name(string))
    body(tuple(custno(1) name(string(Ann)))
         tuple(custno(2) name(string(Bob)))
         tuple(custno(3) name(string(Cid)))
         tuple(custno(4) name(string(Dan)))))""",

    "POLICIES": """\
relation(heading(custno(int) type(string))
    body(tuple(custno(1) type(string(AUTO)))
         tuple(custno(1) type(string(HOME)))
         tuple(custno(1) type(string(LIFE)))
         tuple(custno(2) type(string(AUTO)))
         tuple(custno(2) type(string(HOME)))
         tuple(custno(4) type(string(AUTO)))
         tuple(custno(4) type(string(HOME)))
         tuple(custno(4) type(string(LIFE)))
         tuple(custno(4) type(string(TRAVEL)))))""",

    "POLICYTYPES": """\
relation(heading(type(string))
    body(tuple(type(string(AUTO)))
         tuple(type(string(HOME)))
         tuple(type(string(LIFE)))))""",

    "ARG": """\
relation(heading(x(intinterval) y(intinterval))
    body(tuple(x(intinterval(begin(1)end(10))) y(intinterval(begin(1)end(10))))
         tuple(x(intinterval(begin(7)end(24))) y(intinterval(begin(8)end(34))))))""",

    "LONGJUMP": """\
relation(heading(name(string) during(dateinterval))
    body(tuple(name(string(Bob Beamon)) during(dateinterval(begin(1968-07-24)end(1998-06-18))))))""",

    "SPRINT100M": """\
relation(heading(name(string) during(dateinterval))
    body(tuple(name(string(Bob Beamon)) during(dateinterval(begin(1968-02-24)end(1969-05-05))))))""",

    "S": """\
stream(
  schema: c1 int, c2 float
  Timestamp   Tuple
    1000      10,0.1
    1002      15,0.14
    5000      33,4.4
    8000      23,56.33
   10000      34,4.4
  200000      20,0.2
  209000      45,23.44
  400000      30,0.3
  h 800000
)""",
}


@attrs.frozen
class Step:
    """One stop of the tour: an operator, what the seed says about it, and an expression."""

    operator: str
    sentence: str
    expression: str
    note: str = ""


STEPS = (
    Step("RESTRICT",
         "The restrict operator takes a relation as input, plus a boolean expression, and yields "
         "a relation consisting of all and exactly those tuples of the input relation for which "
         "the boolean expression evaluates to 'true'.",
         "restrict(ATTRS, gt(maximumlength, 256))",
         "The attributes whose defined maximal length exceeds 256."),
    Step("PROJECT",
         "It is important to remember that the projection operator of the algebra always "
         "\"eliminates duplicates\" in its result.",
         "project(DBMSFILE, (pagesize))",
         "Five files, three page sizes."),
    Step("PROJECT",
         "Projection on no attributes at all is supported.",
         "project(DBMSFILE, ())",
         "The nilary relation with one tuple: TABLE_DEE. "
         "(eq(TABLE_DEE, project(DBMSFILE, ())) is true.)"),
    Step("EXTEND",
         "For each tuple in the relation argument, every expression in the set of extension "
         "specifications is evaluated.",
         "extend(DBMSFILE, (namelength(length(filename))))"),
    Step("RENAME",
         "SIRA_PRISE's RENAME is \"parallel\" [...] This facilitates \"swapping\" of attribute "
         "names.",
         "rename(DBMSFILE, (filename, pagesize, pagesize, filename))",
         "FILENAME now holds the page sizes and PAGESIZE the names."),
    Step("TRANSFORM",
         "The needed combination of invocations of these three [PROJECT/EXTEND/RENAME] can be "
         "combined into a single invocation of TRANSFORM.",
         "transform(DBMSFILE, (pagesize, name(lowercase(the_string(filename)))))"),
    Step("UNION",
         "The union operator of the RA takes two relations as argument, and yields a relation "
         "that contains all and exactly those tuples that appear in either of the two input "
         "relations.",
         "union(FILES1, FILES2)"),
    Step("INTERSECT",
         "It takes two relations as input value, and yields a relation containing all and "
         "exactly those tuples that appear in both arguments.",
         "intersect(FILES1, FILES2)"),
    Step("MINUS",
         "The relational difference operator takes two relation values as argument, and yields "
         "a relation containing all and exactly those tuples which do appear in the first "
         "argument (the minuend), but do not appear in the second (the subtrahend).",
         "minus(FILES1, FILES2)"),
    Step("JOIN",
         "A tuple will appear in the resulting relation if (and only if) : (A) a tuple "
         "{a1, ..., m1, n1} appears in the one argument of the join, and (B) a tuple "
         "{m1, n1, ..., x1} appears in the other argument of the join.",
         "join(restrict(STORAGESPACE, gt(pagecount, 500)), DBMSFILE)",
         "The natural join on FILENAME, of the storage spaces over 500 pages with their files."),
    Step("SEMIJOIN",
         "The result of the semijoin of two arguments is the same as if the join of the two "
         "arguments were computed, and that result projected back again to just the attributes "
         "of the first argument of the join.",
         "semijoin(DBMSFILE, CATEGORIES)"),
    Step("SEMIMINUS",
         "The result of the semidifference operator is equal to the (relational) difference of "
         "the first argument and the semijoin of the two arguments.",
         "semiminus(DBMSFILE, CATEGORIES)"),
    Step("LEFTJOIN",
         "LEFTJOIN(R1,R2,attrvalues) is thus semantically equivalent to "
         "UNION(JOIN(R1,R2),EXTEND(SEMIMINUS(R1,R2),attrvalues)).",
         "leftjoin(DBMSFILE, CATEGORIES, (category(string(unknown))))"),
    Step("XMINUS",
         "Symmetric difference will yield a relation that holds all the tuples that appear in "
         "exactly one of the two arguments.",
         "xminus(CONSTRAINTRELVARS1, CONSTRAINTRELVARS2)"),
    Step("DIVIDEBY",
         "For each such tuple (e.g. each customer), it looks up (in the intersection relation) "
         "a \"complete\" set of information relating to that subject tuple [...] and then checks "
         "if that \"complete\" set of information is a superset of the target.",
         "divideby(CUSTOMERS, POLICIES, POLICYTYPES)",
         "The customers who have all types of insurance policy."),
    Step("TCLOSE",
         "If its resulting relation shows the existence of a path from any node1 to any node2, "
         "as well as the existence of a path from that same node2 to any node3, then it should "
         "also show the existence of a path from node1 to node3.",
         "tclose(VIRTUALRELVARREFERENCES, (relvarname, referencedrelvarname))",
         "Every relvar each virtual relvar depends on, directly or indirectly."),
    Step("GTCLOSE",
         "Quite often, we also want to know certain \"properties\" of the path that connects one "
         "node with another. One very popular case in point is the count of edges on such a "
         "path. GTCLOSE can provide us with such information.",
         "gtclose(extend(VIRTUALRELVARREFERENCES, (edgecnt(int(1)) path(string()))), "
         "(relvarname, referencedrelvarname), "
         "(edgecnt(plus(__L__edgecnt, __R__edgecnt)) "
         "path(concat(__L__path, concat(string(,), concat(the_string(__R__relvarname), "
         "concat(string(,), __R__path)))))))",
         "EDGECNT counts the edges of a path, PATH lists its intermediate nodes."),
    Step("GROUP",
         "GROUP takes as its first argument a relation value, and as its second argument a "
         "\"grouping specification\" [...] an attribute name for the relation that the GROUP "
         "operator will produce, and a set of attribute names that appear in the input relation.",
         "group(KEYATTRIBUTES, (attributenames(attributename)))",
         "Each key (ERRORCODE) with the relation of the attributes that make it up."),
    Step("UNGROUP",
         "UNGROUP must, however, be able to deal with such relations [an empty relation as an "
         "RVA value]. In particular, it will do so by not including a corresponding tuple in its "
         "result.",
         "ungroup(OPERATORS, operandsignature)",
         "PI has an empty OPERANDSIGNATURE: it disappears from the result."),
    Step("AGGREGATE",
         "Each aggregation specification consists of an attributename for the relation produced "
         "by the operator, the name of an associative operator that will produce the aggregated "
         "attribute value in the resulting relation, and an expression defining the value to be "
         "aggregated.",
         "aggregate(DBMSFILE, (silly(plus(pagesize)) silly2(mult(tofloat(pagesize))) "
         "count(plus(int(1)))))"),
    Step("AGGREGATE",
         "To do averaging, SIRA_PRISE requires the use of the PLUS operator, which operates, not "
         "on any number type, but on the special-purpose type AVERAGE.",
         "aggregate(DBMSFILE, (avgpagesize(plus(average(count(1)value(tofloat(pagesize)))))))",
         "147456 / 5: the seed prints 29491.199999999997 too (a running combination of "
         "averages)."),
    Step("AGGREGATE",
         "Aggregation on empty inputs yields the aggregation operator's identity element, if "
         "that exists.",
         "aggregate(restrict(DBMSFILE, false), (longestpagesize(max(pagesize)) "
         "shortestpagesize(min(pagesize)) totalpagesize(plus(pagesize))))"),
    Step("SUMMARIZEBY",
         "Summarization takes three arguments : a relation R to be summarized, a set of "
         "attributenames A defining which \"groups of tuples\" of R will be summarized together, "
         "and a set of summarization specs S which are completely identical in nature to the "
         "aggregation specs.",
         "summarizeby(STORAGESPACE, (filename), (storagespacecount(plus(int(1))) "
         "pagecount(plus(pagecount))))",
         "Storage space counts and page counts per DBMS file."),
    # time: intervals (seed 004's interval chapter) and stream windows (seed 000, Oracle CQL)
    Step("PACK",
         "PACK can possibly _increase_ the cardinality of the result, compared to the input.",
         "pack(ARG, (y, x))",
         "Unpack on both attributes, pack on Y, then on X: three tuples from two."),
    Step("MINUS",
         "Which athletes have been (and during which period have they been) world-record holder "
         "for the 100m, but not for the long-jump ?",
         "minus(SPRINT100M, LONGJUMP)",
         "Interval attributes are treated pointwise: the difference of the periods, never "
         "unpacked day by day."),
    Step("WINDOW",
         "So if two tuples arrive between the time period n*T2 and (n+1)*T2, both of them will "
         "be visible (enter the window) only at (n+1)*T2 and will expire from the window at "
         "(n+1)*T2+T1.",
         "window(S, ts, unit(millisecond) range(10 seconds) slide(5 seconds))",
         "S[range 10 seconds slide 5 seconds] (Example 4-9): each element with the interval "
         "DURING in which it is in the window relation."),
    Step("ISTREAM",
         "Istream (for \"Insert stream\") applied to a relation R contains (s,t) whenever tuple "
         "s is in R(t) - R(t-1), that is, whenever s is inserted into R at time t.",
         "istream(restrict(project(window(S, ts, unit(millisecond) range(10 seconds)), "
         "(c1, c2, during)), c2 > 1.0), at)",
         "IStream(select c1, c2 from S[range 10 seconds] where c2 > 1.0): the query between "
         "window and ISTREAM is ordinary algebra, applied pointwise in time."),
)


def catalog() -> dict:
    """The demo's relvars: name (lowercase) -> Relation, each parsed from its literal text."""
    import sira
    out = {}
    for name, text in RELATIONS.items():
        out[name.lower()] = sira.evaluate(sira.parse(text))
    return out


def _wrap(text: str, width: int = 96, indent: str = "  ") -> str:
    import textwrap
    return textwrap.fill(text, width=width, initial_indent=indent, subsequent_indent=indent)


def _relvars_used(node) -> list:
    """The relvar names an algebra tree reads, in order of first appearance."""
    from .algebra.basic import RelvarRef
    seen = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, RelvarRef):
            if n.name not in seen:
                seen.append(n.name)
        stack.extend(reversed(n.children))
    return seen


def run(out=None, show_arguments: bool = True) -> int:
    """Print the tour on ``out`` (default stdout); returns 0.

    Args:
        out: a text stream.
        show_arguments: print each relvar as a table the first time a step uses it.
    Returns:
        the exit code, 0.
    Raises:
        SiraError: if an expression fails (a bug: the demo is expected to run cleanly).
    """
    import sira
    out = out or sys.stdout
    started = time.perf_counter()
    relvars = catalog()
    display = {name.lower(): name for name in RELATIONS}
    shown: set = set()

    def write(text=""):
        print(text, file=out)

    write("sira demo: the operators of the relational algebra, on the relations of seed 004")
    write("(SIRA_PRISE's own catalog), then intervals and Oracle CQL's stream windows.")
    write("Expressions are in sira's text syntax; names are case-insensitive.")
    operators = []
    for number, step in enumerate(STEPS, 1):
        node = sira.parse(step.expression, relvars)
        write()
        title = f"== {number}. {step.operator} "
        write(title + "=" * max(0, 96 - len(title)))
        write(_wrap(f"\"{step.sentence}\""))
        if show_arguments:
            for name in _relvars_used(node):
                if name not in shown:
                    shown.add(name)
                    write()
                    write(f"{display.get(name, name.upper())} :=")
                    write(relvars[name].to_table(limit=None))
        write()
        if step.note:
            write(_wrap(step.note, indent=""))
        write(f">>> {step.expression}")
        write(sira.evaluate(node, relvars).to_table(limit=None))
        if step.operator not in operators:
            operators.append(step.operator)
    _live(write)
    elapsed = time.perf_counter() - started
    write()
    write(f"{len(STEPS)} expressions, {len(operators)} operators "
          f"({', '.join(operators)}) and one live query in {elapsed:.2f} s on the embedded "
          f"Python engine.")
    write("Try your own: sira repl   (or: sira eval 'project(R, (a))' --relvar R=file.csv)")
    return 0


def _live(write) -> None:
    """The last stop: a continuous query on a live stream, results leaving as bounds allow."""
    import sira
    from .streams import StreamEngine
    write()
    title = "== LIVE "
    write(title + "=" * (96 - len(title)))
    write(_wrap("\"Rowtime bounds never change the results of a query, but they do help the "
                "system provide results sooner.\" (seed 002, SQLstream)"))
    write()
    text = ("changes(summarizebyusing(window(trades, ts, range(3)), (ticker, during), "
            "(n(plus(1))), (during)), at)")
    write(f">>> {text}   (registered on the live stream TRADES)")
    engine = StreamEngine()
    trades = engine.create_stream("trades", {"ticker": sira.STRING})
    query = engine.register(text)
    query.subscribe(lambda row, bound: write(
        f"      result {row['kind']} {row['ticker']} n={row['n']} at {row['at']}"))
    seen = []  # the rows the stream lets out, for the batch comparison at the end
    trades.subscribe(lambda row, bound: row and seen.append(row))
    producer = trades.attach("feed")
    for ticker, t in (("ORCL", 1001), ("IBM", 1002), ("ORCL", 1003)):
        write(f"    insert {ticker} at {t}")
        producer.insert({"ticker": ticker}, t)
    write("    bound 1010 (no row before 1010 will come)")
    producer.bound(1010)
    engine.finish()
    batch = sira.evaluate(text, {"trades": sira.Relation.from_rows(trades.heading, seen)})
    write(f"  The live results equal the batch algebra on the same rows: "
          f"{query.relation() == batch}")
