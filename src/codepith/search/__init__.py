"""Turn a query into ranked chunks: retrieve, fuse, re-rank."""
