"""The command path: load a table, decide, append, retry (DESIGN.md §4)."""
