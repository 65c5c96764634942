"""``python -m kleene``: the same as the ``kleene`` command."""

from kleene.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
