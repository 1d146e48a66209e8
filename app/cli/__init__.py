"""The `starroute` command line: a thin shell over the pipeline stages, the engine and the server; one module per
group of commands (`preprocess`, `serve`, `query`), the grammar in `parser`, the entry point in `main`."""

from app.cli.common import Stopped, version
from app.cli.main import main, run
from app.cli.parser import parser

__all__ = ["Stopped", "main", "parser", "run", "version"]
