"""SASE++ postponing (SIGMOD 2014, sections 5.1-5.2): Kleene closure under skip till any
match in polynomial matching time, with results constructed afterwards."""

from kleene.runtime.postpone.core import PostponeCore

__all__ = ["PostponeCore"]
