"""Which files of a tree are indexed: ignore rules, content types, safe reads."""
