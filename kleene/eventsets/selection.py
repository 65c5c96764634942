"""Earliest and maximal matches among found ones (match-window paper, section 3).

Read as in docs/semantics.md, "Event-set patterns": γ is *earliest* when no single
binding ``v/~e`` can be replaced by a sequence starting earlier, but not before γ's first
event, with the result still a match; γ is *maximal* when no binding of a ``v+`` can be
extended by one event after γ's first event with the result still a match. Either
witness has the same first event as γ, so selecting among the matches of one match
window (those starting at its first event) is exact.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kleene.eventsets.model import SesMatch

OUTPUTS = ("all", "earliest", "maximal", "earliest-maximal")

_Key = tuple[tuple[str, tuple[int, ...]], ...]


def check_output(output: str) -> str:
    """``output`` in its canonical spelling; ValueError for an unknown one."""
    canonical = output.lower().replace("_", "-").replace("+", "-").replace(" ", "-")
    if canonical not in OUTPUTS:
        raise ValueError(f"unknown output {output!r}; expected one of: {', '.join(OUTPUTS)}")
    return canonical


def select(matches: Sequence[SesMatch], output: str) -> list[SesMatch]:
    """The matches the output keeps (``output`` canonical, see :func:`check_output`)."""
    if output == "all" or len(matches) < 2:  # a witness would be another match
        return list(matches)
    keep = list(matches)
    if output in ("earliest", "earliest-maximal"):
        later = _not_earliest(matches)
        keep = [m for m in keep if m.key() not in later]
    if output in ("maximal", "earliest-maximal"):
        extensible = _not_maximal(matches)
        keep = [m for m in keep if m.key() not in extensible]
    return keep


def _without(m: SesMatch, var: str) -> _Key:
    return tuple(item for item in m.key() if item[0] != var)


def _not_earliest(matches: Iterable[SesMatch]) -> set[_Key]:
    """Keys of matches with a binding another match (the same otherwise) starts earlier,
    but not before their first event."""
    matches = list(matches)
    starts: dict[tuple[str, _Key], list[int]] = {}
    for m in matches:
        for var, seq in m.bindings.items():
            starts.setdefault((var, _without(m, var)), []).append(seq[0])
    out: set[_Key] = set()
    for m in matches:
        first = m.first
        for var, seq in m.bindings.items():
            if any(first <= s < seq[0] for s in starts[(var, _without(m, var))]):
                out.add(m.key())
                break
    return out


def _not_maximal(matches: Iterable[SesMatch]) -> set[_Key]:
    """Keys of matches one of whose bindings another match extends by one event after
    their first event."""
    matches = list(matches)
    known = {m.key() for m in matches}
    out: set[_Key] = set()
    for bigger in matches:
        for var, seq in bigger.bindings.items():
            if len(seq) < 2:
                continue
            for k, event in enumerate(seq):
                smaller = SesMatch({**bigger.bindings, var: seq[:k] + seq[k + 1 :]})
                if event > smaller.first and smaller.key() in known:
                    out.add(smaller.key())
    return out
