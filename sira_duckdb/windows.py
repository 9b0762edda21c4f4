"""DuckDB translations of the CQL windows (being written: WINDOW, ISTREAM, DSTREAM, RSTREAM
have no translation yet and raise NotSupportedOnDuckDB)."""


def summarize_window(node, c):
    """A direct plan for a windowed SUMMARIZEBY; None: the family's own translation."""
    return None
