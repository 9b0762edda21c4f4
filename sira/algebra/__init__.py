"""Algebra trees: one frozen node class per relational operator, headings checked when built."""
