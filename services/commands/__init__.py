"""The command path: load a table, decide, append, retry (docs/store.md, "The command handler")."""
