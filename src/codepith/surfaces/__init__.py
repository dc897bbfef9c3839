"""The ways in: CLI and MCP server. They parse, call down, print; no logic of their own."""
