"""Mitigati, the second game: a three-player Italian tarot game (docs/rules/mitigati.md, the
exact procedure; its hand files: docs/hand-files.md, "Mitigati files"). Its own decider beside Mighty's."""
