"""Shared helpers for the hunt drivers. The reference is the Python engine WITHOUT the rewrite
pass; ``engine`` is evaluated with the rewrite (its default), so both a wrong engine and a wrong
rewrite show up. engine "python" compares the Python engine with and without the rewrite."""
import sira


def _outcome(tree, relvars, engine, **kw):
    try:
        return sira.evaluate(tree, relvars, engine=engine, **kw), None
    except sira.SiraError as err:
        return None, err


def assert_engines_agree(tree, relvars=None, engine="duckdb", rewrite=True):
    relvars = relvars or {}
    expected, py_err = _outcome(tree, relvars, "python", rewrite=False)
    got, other_err = _outcome(tree, relvars, engine, rewrite=rewrite)
    context = f"tree: {tree!r}\nrelvars: {relvars!r}"
    if py_err is not None:
        assert other_err is not None, \
            f"python raised {py_err!r} but {engine} returned\n{got}\n{context}"
        assert type(other_err) is type(py_err), \
            f"python raised {py_err!r}, {engine} raised {other_err!r}\n{context}"
        return
    assert other_err is None, f"{engine} raised {other_err!r}, python gave\n{expected}\n{context}"
    assert got.heading == expected.heading, f"{got.heading} != {expected.heading}\n{context}"
    assert got == expected, (f"engines differ\n{context}\npython:\n{expected}\n{engine}:\n{got}\n"
                             f"only python: {expected.body - got.body}\n"
                             f"only {engine}: {got.body - expected.body}")
