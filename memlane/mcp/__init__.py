"""memlane's MCP server: the spec §6 tools (memory, recall, listProjects, memory-graph, whoAmI)
plus documentation sets and project memory, defined once and served over stdio (`memlane mcp`,
backed by a memlane HTTP API or a local data directory) and over Streamable HTTP (`POST /mcp` on
the resolver, as the caller of that request)."""
