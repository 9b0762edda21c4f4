"""Helpers shared by the readers and writers: optional dependencies, attribute names taken
from files, the ``types=`` argument, opening sources, and printing integers of any size."""

from __future__ import annotations

import contextlib
import importlib
import os
import pathlib
import re
import sys

from ..errors import (DataFormatError, DataSourceError, DuplicateAttribute, MissingExtra,
                      SiraTypeError, UnknownAttribute)
from ..types import Type
from .literals import parse_type

_EXTRAS = {"pyarrow": "arrow", "pandas": "pandas"}
_NAME = re.compile(r"[^\W\d]\w*")


def require(package: str, feature: str):
    """Import an optional dependency or raise :class:`MissingExtra` naming the extra."""
    try:
        return importlib.import_module(package)
    except ImportError:
        raise MissingExtra(package=package.split(".")[0], feature=feature,
                           extra=_EXTRAS.get(package.split(".")[0], "io")) from None


def source_name(source) -> str:
    """A file name (or a description of a file object) for messages."""
    if isinstance(source, (str, os.PathLike)):
        return str(source)
    return str(getattr(source, "name", None) or f"<{type(source).__name__}>")


def open_text(source, mode: str = "r"):
    """A text file for ``source`` (a path, or an already open file, which is left open).

    Reading: a file that cannot be opened is :class:`DataSourceError`. Writing: ``OSError`` as
    Python's ``open`` raises it.
    """
    if not isinstance(source, (str, os.PathLike)):
        return contextlib.nullcontext(source)
    if mode != "r":
        return open(source, mode, encoding="utf-8", newline="")
    try:
        return open(source, "r", encoding="utf-8-sig", newline="")
    except OSError as err:
        raise DataSourceError(source=str(source), reason=err.strerror or str(err)) from None


def attribute_names(names, where: str) -> list:
    """Lowercased attribute names taken from a file or a DataFrame, in the order given;
    each must be a name the text syntax can use, and appear once (names are case-insensitive)."""
    out = []
    for name in names:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise DataFormatError(f"{where}: {name!r} is not an attribute name (letters, digits "
                                  f"and _, not starting with a digit); rename it",
                                  value=repr(name), source=where, attribute=str(name))
        key = name.lower()
        if key in out:
            raise DuplicateAttribute(f"{where}: attribute '{key}' appears twice (names are "
                                     f"case-insensitive)", attribute=key, operator=None)
        out.append(key)
    return out


@contextlib.contextmanager
def column_type_held(where: str, attribute: str):
    """Inside it, a :class:`SiraTypeError` (a column type sira cannot hold, as an engine's own
    source reports it) becomes the readers' :class:`DataFormatError` naming source and column.

    >>> from sira.errors import DataFormatError, SiraTypeError
    >>> try:
    ...     with column_type_held("t.parquet", "x"):
    ...         raise SiraTypeError("column 'x': BLOB has no sira type")
    ... except DataFormatError as err:
    ...     print(err.attribute)
    x
    """
    try:
        yield
    except SiraTypeError as err:
        raise DataFormatError(str(err), source=where, attribute=attribute) from None


def declared_types(types, names, where: str) -> dict:
    """``types=`` as {lowercased name: Type}; each name must be one of ``names``."""
    out = {}
    for name, t in (types.items() if hasattr(types, "items") else types or ()):
        key = str(name).lower()
        if names is not None and key not in names:
            raise UnknownAttribute(f"{where}: types= names '{key}', which is not a column "
                                   f"(the columns are {', '.join(names) or 'none'})",
                                   attribute=key, operator=None, available=tuple(names))
        out[key] = to_type(t, f"{where}: types= for '{key}'")
    return out


def to_type(t, where: str) -> Type:
    """A Type from a Type or its text: ``"int"``, ``"intinterval"``,
    ``"relation(heading(a(int)))"``."""
    if isinstance(t, Type):
        return t
    if isinstance(t, str):
        from ..errors import SiraError
        try:
            return parse_type(t)
        except SiraError as err:
            raise DataFormatError(f"{where}: {t!r} is not a type "
                                  f"({err.message.splitlines()[0]})", value=t) from None
    raise DataFormatError(f"{where}: {t!r} is not a type", value=repr(t))


@contextlib.contextmanager
def unlimited_int_digits():
    """Let ``str(int)`` print integers of any size (Python refuses more than 4,300 digits by
    default) while sira writes values out; the previous limit is restored afterwards."""
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(old)


def path_suffix(path) -> str:
    return pathlib.Path(path).suffix.lower()
