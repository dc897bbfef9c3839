"""The MCP surface, one module per job: schemas, argument checks, handlers, wire, fast front, SDK, serve."""
