"""`python -m app.cli ARGS`: the `starroute` command."""

import sys

from app.cli.main import main

sys.exit(main())
