"""Stateful, surface-independent services: which repository a request names, and warm indexes for it.

Surfaces (MCP server, CLI) stay thin: they parse arguments and call into here.
"""
