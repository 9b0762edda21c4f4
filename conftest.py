"""Repository-level pytest configuration: sira_spark's doctests need Java and pyspark."""

import importlib.util
import shutil

collect_ignore_glob = []
if shutil.which("java") is None or importlib.util.find_spec("pyspark") is None:
    collect_ignore_glob.append("sira_spark/*")
