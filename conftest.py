"""Repository-level pytest configuration: sira_spark's doctests need Java and pyspark,
sira_duckdb's need duckdb and pyarrow."""

import importlib.util
import shutil

collect_ignore_glob = []
if shutil.which("java") is None or importlib.util.find_spec("pyspark") is None:
    collect_ignore_glob.append("sira_spark/*")
if importlib.util.find_spec("duckdb") is None or importlib.util.find_spec("pyarrow") is None:
    collect_ignore_glob.append("sira_duckdb/*")
