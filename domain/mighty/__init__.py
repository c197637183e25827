"""Mighty (docs/rules/mighty.md): every table size of the Korean trick-taking game."""
