"""Streams: the seeds' stream notation, and (later) the incremental runtime."""
