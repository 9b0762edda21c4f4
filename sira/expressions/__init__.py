"""Scalar expression trees, the operator library, typing and Python evaluation."""
