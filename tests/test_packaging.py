"""The source distribution: what it ships (the tests and what they need, the license, the README
as the long description) and what it leaves out."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys
import tarfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOT_SOURCES = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__",
                                     ".hypothesis", ".pytest_cache", "spark-warehouse",
                                     "metastore_db", "out", "*.pyc")


@pytest.fixture(scope="module")
def sdist(tmp_path_factory):
    """(member names relative to the archive's top folder, PKG-INFO text) of a fresh sdist built
    from a copy of this source tree with the installed setuptools (no network)."""
    if not (ROOT / "setup.cfg").exists():
        pytest.skip("not a source tree")
    tree = tmp_path_factory.mktemp("tree") / "sira"
    shutil.copytree(ROOT, tree, ignore=NOT_SOURCES)
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-c", "import setuptools; setuptools.setup()",
                           "-q", "sdist", "-d", str(out)], cwd=tree, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    (archive,) = out.glob("sira-*.tar.gz")
    with tarfile.open(archive) as tar:
        names = [m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name]
        top = tar.getmembers()[0].name.split("/")[0]
        pkg_info = tar.extractfile(f"{top}/PKG-INFO").read().decode()
    return set(names), pkg_info


def test_the_sdist_ships_what_its_tests_need(sdist):
    names, _ = sdist
    needed = ["conftest.py", "pyproject.toml", "tests/conftest.py", "tests/specs.py",
              "tests/strategies.py", "tests/interval_reference.py", "specs/README.md",
              "README.md", "LICENSE", "sira/py.typed", "sira_spark/session.py"]
    assert [n for n in needed if n not in names] == []
    tests = {p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").glob("*.py")}
    specs = {p.relative_to(ROOT).as_posix() for p in (ROOT / "specs").rglob("*.sira")}
    assert tests - names == set()
    assert specs - names == set()


def test_the_sdist_leaves_out_bytecode_and_local_state(sdist):
    names, _ = sdist
    assert [n for n in names if n.endswith(".pyc") or "__pycache__" in n or n.startswith(
        (".venv", ".git/", "benchmarks/out"))] == []


def test_the_metadata_has_the_readme_license_classifiers_and_urls(sdist):
    _, info = sdist
    assert "Description-Content-Type: text/markdown" in info
    assert "License: MIT" in info
    assert "Classifier: Programming Language :: Python :: 3.11" in info
    assert "Project-URL: Source, https://" in info
    assert "# sira" in info  # the README is the long description
