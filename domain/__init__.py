"""The pure rules of Mighty: no I/O, no clock, no randomness (see docs/architecture.md)."""
