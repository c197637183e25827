"""Mitigati, the second game: a three-player Italian tarot game (rules/mitigati.md, with
the exact procedure of rules/mitigati-hand-file.md). Its own decider beside Mighty's."""
