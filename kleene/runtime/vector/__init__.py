"""Vectorized evaluation of contiguous patterns (SIGMOD 2008, sections 2, 3.1-3.2).

Under strict and partition contiguity the ignore edge of every NFA^b state is false
(section 3.2, step 3), so a run takes each next event of its partition: a match is a
block of consecutive events of one partition, cut into one piece per component. When
every conjunct reads one element, or one element and the element just before it
(``b[i].price < b[i-1].price``, ``c.price > b[b.LEN].price``), the begin, take and
proceed formulas of section 3.2 become boolean columns over (event, previous event)
pairs, computed with numpy after a stable sort by partition (:mod:`.masks`), and the
runs of section 5.2 become array entries moved one component at a time with cumulative
searches (:mod:`.search`). Only the matches are built as Python objects; RETURN values
come from replaying a match's edges to get its computation-state vector (section
5.2.1). Runs still alive at a batch's end are carried to the next batch as the tail of
their partition (:mod:`.core`). The compiler's shape pass (:mod:`kleene.compiler.shape`)
decides which plans this applies to and sorts their conjuncts; :func:`support` reads
its verdict.
"""

from kleene.compiler.plan import Plan
from kleene.runtime.vector.core import VectorCore

__all__ = ["VectorCore", "support"]


def support(plan: Plan) -> str | None:
    """None when the vectorized evaluation takes the plan, else why not."""
    return plan.shape.declined
