"""Base helpers every room may use: argument checks, array helpers, size limits and the memory budget."""
