// @memlane/client: memlane's HTTP API for TypeScript (Node 20+, browsers): the types generated from
// the server's /openapi.json, and MemlaneClient over fetch. The Vercel AI SDK tools are a subpath of
// their own, @memlane/client/ai, so this entry never imports `ai`.
export * from './types.js'
export * from './client.js'
export { API_VERSION, OPENAPI_SHA256 } from './version.js'
export { MCP_TOOLS, mcpTool } from './mcp-tools.js'
export type { McpToolDefinition } from './mcp-tools.js'
