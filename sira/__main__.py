"""``python -m sira``: the command line (see sira.cli)."""

if __name__ == "__main__":
    from sira.cli import main

    raise SystemExit(main())
