"""The documentation stays true: the operator reference is generated from the library and up to
date (the tutorial runs as a doctest, see pyproject.toml)."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

from sira.expressions.library import LIBRARY

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture(scope="module")
def generator():
    spec = importlib.util.spec_from_file_location("make_operators", DOCS / "make_operators.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_operator_reference_is_up_to_date(generator):
    committed = (DOCS / "operators.md").read_text(encoding="utf-8")
    assert committed == generator.render(), \
        "docs/operators.md is out of date: run .venv/bin/python docs/make_operators.py"


def test_every_library_operator_has_an_example_and_a_row(generator):
    page = generator.render()
    rows = {line.split("|")[1] for line in page.splitlines() if line.startswith("| `")}
    for name in LIBRARY:
        assert any(f"`{name}`" in row for row in rows), name


def test_every_example_calls_the_operator_it_documents(generator):
    import sira
    for name, text in generator.EXAMPLES.items():
        assert text.startswith(f"{name}("), (name, text)
        if name not in generator.EXAMPLE_TUPLES:
            sira.parse(text)  # well typed


def test_signatures_come_from_the_library(generator):
    lines, mixes = generator.signature_lines(LIBRARY["the_begin"])
    assert lines == ("(T) → P for T any interval type, P its point type",)
    lines, mixes = generator.signature_lines(LIBRARY["plus"])
    assert lines == ("(T, T) → T for T INT, LONG, BIGINT, FLOAT, AVERAGE",) and mixes
    lines, _ = generator.signature_lines(LIBRARY["eq"])
    assert lines == ("(T, T) → BOOLEAN for T any type",)


def test_the_check_mode_fails_on_a_stale_file(generator, tmp_path, monkeypatch):
    stale = tmp_path / "operators.md"
    stale.write_text("# Scalar operators\n\n...\n", encoding="utf-8")
    monkeypatch.setattr(generator, "OUTPUT", stale)
    assert generator.main(["--check"]) == 1
    assert generator.main([]) == 0
    assert generator.main(["--check"]) == 0
