"""Event-set (SES) patterns with match windows (Cadonna, Gamper, Böhlen)."""
