"""TPStream: situations derived from point events, matched by Allen-relation patterns
(EDBT 2018)."""
