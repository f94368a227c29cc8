"""`python -m kseq.cli`: the `kseq` command (the package treats it as the console script)."""

import sys

from kseq.cli import main

sys.exit(main())
