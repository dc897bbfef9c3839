"""Agent setup: `codepith install` / `uninstall` wire codepith into agent clients (MCP server entry,
instruction block, search sub-agent) with surgical, reversible edits of their config files."""
