"""Structure: definitions, breadcrumbs, file outlines and the repository map."""
