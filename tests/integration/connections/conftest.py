"""Fixtures for the connection tests; the fake provider base and the memlane-side helpers live in
fake_provider.py and connection_world.py beside this file."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # fake_provider, connection_world, the provider fakes
