"""Allowlisted test runs: detect the runner, run a fixed argument vector in its own process group, parse
the structured results and reply with only what explains a failure."""
