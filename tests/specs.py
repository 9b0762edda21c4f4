"""Loading and running the conformance cases in ``specs/`` (format: specs/README.md)."""

from __future__ import annotations

import pathlib

import attrs

import sira
from sira import errors as sira_errors
from sira.syntax import cst
from sira.syntax.builder import build_cst
from sira.syntax.parser import parse_header, parse_script

SPECS = pathlib.Path(__file__).resolve().parent.parent / "specs"


@attrs.frozen
class Case:
    path: pathlib.Path
    header: dict
    text: str

    @property
    def id(self) -> str:
        return str(self.path.relative_to(SPECS).with_suffix(""))

    def notimpl(self, engine: str):
        """The reason this case is not implemented on ``engine``, or None."""
        for line in self.header.get("notimpl", []):
            name, _, reason = line.partition(" ")
            if name.strip().lower() == engine:
                return reason.strip() or "not implemented"
        return None


def all_cases() -> list:
    return [Case(p, parse_header(p.read_text()), p.read_text())
            for p in sorted(SPECS.rglob("*.sira"))]


def _field_matches(actual, expected_text: str) -> bool:
    if isinstance(actual, (tuple, list)):
        return expected_text in [str(a) for a in actual]
    return str(actual).lower() == expected_text.lower()


def run_case(case: Case, engine: str) -> None:
    """Run one case on one engine; AssertionError when the result differs."""
    try:
        statements = parse_script(case.text)
    except sira.ParseError as err:
        statements = None
        parse_failure = err
    expected_error = None
    if statements is not None:
        expected_error = next((s for s in statements if isinstance(s, cst.ExpectError)), None)
    else:
        # a deliberately malformed case: the error statement is read from the raw text
        marker = [ln for ln in case.text.splitlines() if ln.startswith("error ")]
        assert marker, f"{case.id}: the case file does not parse: {parse_failure}"
        assert marker[0].split()[1].split("(")[0] == "ParseError", str(parse_failure)
        return
    try:
        relvars: dict = {}
        query = expect = None
        for s in statements:
            if isinstance(s, cst.Bind):
                node = build_cst(s.value, relvars, relvars)
                relvars[s.name.lower()] = sira.evaluate(node, relvars)
            elif isinstance(s, cst.Query):
                query = build_cst(s.value, relvars, relvars)
            elif isinstance(s, cst.Expect):
                expect = s.value
        assert query is not None, f"{case.id}: no query"
        result = sira.evaluate(query, relvars, engine=engine)
    except sira.SiraError as err:
        if expected_error is None:
            raise
        cls = getattr(sira_errors, expected_error.cls, None)
        assert cls is not None, f"{case.id}: unknown error class {expected_error.cls}"
        assert isinstance(err, cls), f"{case.id}: expected {expected_error.cls}, got {err!r}"
        for key, value in expected_error.fields:
            assert _field_matches(getattr(err, key, None), value), \
                f"{case.id}: {key} is {getattr(err, key, None)!r}, expected {value!r}"
        return
    assert expected_error is None, \
        f"{case.id}: expected {expected_error.cls}, but got a result:\n{result}"
    wanted = sira.evaluate(build_cst(expect, relvars, relvars), relvars)
    if isinstance(wanted, sira.Relation):
        assert isinstance(result, sira.Relation), f"{case.id}: got {result!r}"
        assert result.heading == wanted.heading, \
            f"{case.id}: heading {result.heading} but expected {wanted.heading}"
        missing = wanted.body - result.body
        extra = result.body - wanted.body
        assert not missing and not extra, (
            f"{case.id}: result differs\nexpected:\n{wanted}\ngot:\n{result}\n"
            f"missing: {sira.Relation(wanted.heading, missing)!r}\n"
            f"unexpected: {sira.Relation(wanted.heading, extra)!r}")
    else:
        assert result == wanted and type(result) is type(wanted), \
            f"{case.id}: got {result!r}, expected {wanted!r}"
