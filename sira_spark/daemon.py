"""The Python worker daemon of the Spark sessions sira starts (``spark.python.daemon.module``):
PySpark's own (:mod:`pyspark.daemon`), except that a worker whose task the JVM abandoned exits
without printing a traceback.

When a task fails (an overflow in a formula, say), Spark abandons the other tasks of its stage
and closes their sockets. Their Python workers then find no reader for their rows
(``BrokenPipeError``, or ``ConnectionResetError``), and PySpark's daemon printed each such
traceback on the console, under the sira error that said what had happened. The worker exits
with the same status as before; only the print is gone. Every other error of a worker is
printed and reported as PySpark does.

This module and the package ``__init__`` it is imported with import nothing but PySpark's
daemon: the daemon forks a worker per task, and a library that starts threads when imported
(numpy, pyarrow) must not be loaded before a fork. Spark runs it as ``python -m
sira_spark.daemon``; imported, it changes nothing::

    >>> import sira_spark.daemon, pyspark.daemon
    >>> pyspark.daemon.worker is sira_spark.daemon._PYSPARK_WORKER
    True
"""

from __future__ import annotations

import os

import pyspark.daemon

_PYSPARK_WORKER = pyspark.daemon.worker

#: what a worker meets when the JVM stopped reading its socket
_ABANDONED = (BrokenPipeError, ConnectionResetError)


def worker(sock, authenticated):
    """PySpark's worker loop for one task; a task the JVM abandoned ends the worker quietly,
    with status 1 as PySpark's daemon ends it after its traceback."""
    try:
        return _PYSPARK_WORKER(sock, authenticated)
    except _ABANDONED:
        os._exit(1)


if __name__ == "__main__":
    pyspark.daemon.worker = worker
    pyspark.daemon.manager()
