"""What the clients take from the server, generated (`make types` runs `python -m codegen`):
the OpenAPI document (openapi.py), the TypeScript client's types, version and MCP tool list
(typescript.py) and the Python client's models and MCP tool schemas (python.py). A tool of this
repository, never shipped: it imports memlane, and the clients never do.
tests/unit/test_generated_clients.py fails when a generated file is out of date."""
