"""The ``marketframe`` command's entry point: outside the package, on purpose.

Importing ``marketframe`` takes about a second (numpy, pandas, pyarrow). An entry point inside
the package imports all that before any line of ours runs, so a Ctrl-C in that second ended
in Python's 30-line traceback. This module imports nothing but ``sys`` and ``signal`` before
it is ready for Ctrl-C: an interrupt at any moment ends with one line on stderr and exit
status 130, as the command's own handler (``marketframe.cli.run_command``) ends one later.
"""

from __future__ import annotations

import signal
import sys

#: the exit status of a command ended by Ctrl-C (128 + SIGINT), as the shell reports one
INTERRUPTED = 130


def main() -> int:
    """Run the ``marketframe`` command (``marketframe.cli.main``) on ``sys.argv``."""
    try:
        from marketframe.cli import main as run

        return run()
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C: no traceback either
        print("marketframe: interrupted", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
