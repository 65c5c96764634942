"""Random queries of the shapes the vectorized engine takes (conjuncts on one element,
or on an element and the one just before it), with random streams."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.property.queries import ATTRS, OPS, TYPES, streams, window_and_returns

Comp = tuple[str, str, bool, bool]


def _element(draw: Any, comp: Comp, which: str) -> str:
    """A reference to component ``comp``'s first, current, previous or last element."""
    _, var, kleene, _ = comp
    attr = draw(st.sampled_from((*ATTRS, *ATTRS, "timestamp")))
    if not kleene:
        return f"{var}.{attr}"
    index = {"first": "1", "cur": "i", "prev": "i-1", "last": f"{var}.LEN"}[which]
    return f"{var}[{index}].{attr}"


def _predicate(draw: Any, comps: list[Comp], i: int, shape: int, which: str) -> str:
    """Conjuncts of one shape and ``which`` element of a Kleene component stay valid
    when combined with ``or``."""
    comp = comps[i]
    op = draw(st.sampled_from(OPS))
    const = draw(st.integers(0, 3))
    before = comps[i - 1] if i else None
    if shape == 0 and comp[2]:
        return f"{_element(draw, comp, 'cur')} {op} {_element(draw, comp, 'prev')}"
    if shape == 1 and before is not None:
        mine = _element(draw, comp, "first")
        theirs = _element(draw, before, "last")
        plus = draw(st.sampled_from(("", " + 1", " - 1", " * 2")))
        return f"{mine} {op} {theirs}{plus}"
    if shape == 2 and comp[2]:
        return f"{_element(draw, comp, 'last')} {op} {const}"
    if shape == 3:
        which = "cur" if comp[2] else "first"
        y = f"{comp[1]}{'[i]' if comp[2] else ''}.y"
        return f"({_element(draw, comp, which)} + {y}) % 2 {op} {const % 2}"
    return f"{_element(draw, comp, which)} {op} {const}"


def _first(comp: Comp, attr: str) -> str:
    return f"{comp[1]}[1].{attr}" if comp[2] else f"{comp[1]}.{attr}"


def _last(comp: Comp, attr: str) -> str:
    return f"{comp[1]}[{comp[1]}.LEN].{attr}" if comp[2] else f"{comp[1]}.{attr}"


@st.composite
def vector_queries(draw: Any) -> str:
    n = draw(st.integers(1, 4))
    n_types = draw(st.integers(1, 3))
    comps = [
        (draw(st.sampled_from(TYPES[:n_types])), f"v{i}", draw(st.integers(0, 2)) == 0, False)
        for i in range(n)
    ]
    preds = []
    for _ in range(draw(st.integers(0, 3))):
        i = draw(st.integers(0, n - 1))
        shape = draw(st.integers(0, 5))
        which = draw(st.sampled_from(("cur", "first"))) if comps[i][2] else "first"
        pred = _predicate(draw, comps, i, shape, which)
        combine = draw(st.integers(0, 5))
        if combine == 0:
            pred = f"({pred} or {_predicate(draw, comps, i, shape, which)})"
        elif combine == 1:
            pred = f"not ({pred})"
        preds.append(pred)
    if draw(st.integers(0, 2)) == 0:
        preds.append(f"[{draw(st.sampled_from(ATTRS))}]")
    if draw(st.integers(0, 2)) == 0:  # equalities between variables: a condition, no partition
        attr = draw(st.sampled_from(ATTRS))
        for i, (_, var, kleene, _) in enumerate(comps):
            if kleene:
                preds.append(f"{var}[i].{attr} = {var}[i-1].{attr}")
            if i:
                preds.append(f"{_first(comps[i], attr)} = {_last(comps[i - 1], attr)}")
    body = " and ".join(preds) or "true"
    text = (
        "PATTERN SEQ(" + ", ".join(f"{t}+ {v}[]" if k else f"{t} {v}" for t, v, k, _ in comps) + ")"
    )
    text += f"\nWHERE partition_contiguity {{ {body} }}"
    return text + draw(window_and_returns(comps, 8))


@st.composite
def vector_cases(draw: Any) -> tuple[str, list[dict[str, Any]]]:
    text = draw(vector_queries())
    used = sorted({t for t in TYPES if f"{t} v" in text or f"{t}+ v" in text})
    types = (*used, "E") if draw(st.booleans()) else tuple(used)
    return text, draw(streams(types=types, max_events=14))
