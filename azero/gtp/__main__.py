"""`python -m azero.gtp [options]`: the GTP engine without the rest of the CLI (faster start-up).

Same options and behaviour as `azero gtp` (azero.gtp.options, azero.gtp.engine).
"""

from __future__ import annotations

import argparse
import sys

from azero.gtp.options import add_arguments, run_from_args


def _user_errors() -> tuple[type, ...]:
    """Errors that mean bad input (reported in one line), not a bug (which keeps its traceback)."""
    errors: tuple[type, ...] = (ValueError, OSError)
    checkpoint = sys.modules.get("azero.train.checkpoint")  # imported only when a checkpoint is loaded
    return errors + ((checkpoint.CheckpointError,) if checkpoint is not None else ())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m azero.gtp", description="azero as a GTP v2 Go engine.")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_from_args(args)
    except Exception as e:
        if not isinstance(e, _user_errors()):
            raise
        print(f"azero gtp: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
