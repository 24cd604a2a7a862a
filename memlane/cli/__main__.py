"""`python -m memlane.cli`."""

from memlane.cli import main

raise SystemExit(main())
