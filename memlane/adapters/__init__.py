"""Adapters implement memlane.ports: `local` (SQLite, the embedded default), `aws`, `openai`."""
