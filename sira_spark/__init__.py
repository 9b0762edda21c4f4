"""Spark backend for sira (compiles algebra trees to DataFrame plans)."""
