"""Index a set of chunks two ways (lexical and dense) and keep them on disk."""
