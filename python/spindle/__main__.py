"""`python -m spindle gen|check|inspect|compile|run ...`: the `spindle` CLI.

The commands are the C++ executable's own code, linked into the extension
and run in this process (no subprocess, no `spindle` binary needed): the same
options, diagnostics and exit codes (0 success, 1 errors in the input or
usage, 2 internal error). See `python -m spindle --help`.
"""

from __future__ import annotations

import sys
from typing import Optional, Sequence


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the CLI with `argv` (default: sys.argv[1:]); returns the exit status."""
    from . import _spindle

    args = list(sys.argv[1:] if argv is None else argv)
    # The commands print through C stdio; Python's buffered output goes first.
    sys.stdout.flush()
    sys.stderr.flush()
    return _spindle._cli(args)


if __name__ == "__main__":
    sys.exit(main())
