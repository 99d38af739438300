"""`python -m assistant` runs the same entry point as the `assistant` command."""

import sys

from assistant.cli import main

sys.exit(main())
