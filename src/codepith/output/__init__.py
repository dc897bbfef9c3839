"""Render results for agents and people: evidence packets, JSON, bounded reads, savings."""
