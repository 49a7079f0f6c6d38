"""The ``aqmlab`` command (console script and ``python -m aqmlab``): see
:mod:`aqmlab._cli`, the same command tree as the ``aqmlab`` binary."""

from __future__ import annotations

import sys

from aqmlab._cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
