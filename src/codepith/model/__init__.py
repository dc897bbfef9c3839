"""The static embedding model: the bundled default, local folders and hub ids."""
