"""memlane's MCP server (`memlane mcp`): the spec §6 tools (memory, recall, listProjects,
memory-graph, whoAmI) plus documentation sets and project memory, over stdio, backed either by a
memlane HTTP API (MEMLANE_API_URL) or directly by a local data directory."""
