"""Connections: sync content from GitHub, Notion, Google Drive, Slack, X and local git repositories (spec §11)."""
