"""`python -m codegen` (`make types`): regenerate both clients' generated files."""

from __future__ import annotations

import sys

from codegen import python, typescript


def main() -> int:
    typescript.main()
    python.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
