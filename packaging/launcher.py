"""Entry script of the frozen app: the same `main` as the `assistant` command."""

import sys

from assistant.cli import main

if __name__ == "__main__":
    sys.exit(main())
