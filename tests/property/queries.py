"""Hypothesis strategies for random small streams and random valid queries."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

TYPES = ("A", "B", "C", "D")
ATTRS = ("x", "y")
OPS = ("=", "!=", "<", "<=", ">", ">=")


@st.composite
def streams(
    draw: Any, types: tuple[str, ...] = TYPES, max_events: int = 12
) -> list[dict[str, Any]]:
    n = draw(st.integers(0, max_events))
    events = []
    time = 0
    for i in range(n):
        time += draw(st.integers(0, 3))
        events.append(
            {
                "type": draw(st.sampled_from(types)),
                "timestamp": time,
                "id": f"e{i}",
                "x": draw(st.integers(0, 3)),
                "y": draw(st.integers(0, 2)),
            }
        )
    return events


@st.composite
def components(
    draw: Any, groups: bool = False, min_size: int = 2
) -> list[tuple[str, str, bool, bool]]:
    """(type, var, kleene, negated) tuples with at least one positive component; with
    ``groups``, also the members g0, g1(, g2) of one group ``SEQ(...)+`` somewhere."""
    n = draw(st.integers(min_size, 4))
    n_types = draw(st.integers(2, 4))
    comps = []
    for i in range(n):
        negated = draw(st.booleans()) if n > 2 else False
        kleene = not negated and draw(st.integers(0, 2)) == 0
        comps.append((draw(st.sampled_from(TYPES[:n_types])), f"v{i}", kleene, negated))
    if all(c[3] for c in comps) or sum(not c[3] for c in comps) == 0:
        comps[0] = (comps[0][0], comps[0][1], False, False)
    negated = [i for i, c in enumerate(comps) if c[3]]
    if negated and draw(st.booleans()):  # a partner, for a negated sequence
        i = draw(st.sampled_from(negated))
        comps.insert(i + 1, (draw(st.sampled_from(TYPES[:n_types])), f"v{n}", False, True))
    if groups:
        size = draw(st.integers(2, 3))
        at = draw(st.integers(0, len(comps)))
        comps[at:at] = [
            (draw(st.sampled_from(TYPES[:n_types])), f"g{k}", True, False) for k in range(size)
        ]
    return comps


def _group(comps: list[tuple[str, str, bool, bool]]) -> list[str]:
    """The members of the positive group SEQ(...)+, if any."""
    return [c[1] for c in comps if c[1].startswith("g")]


def _negated_runs(comps: list[tuple[str, str, bool, bool]]) -> list[list[int]]:
    """Indices of maximal runs of consecutive negated components."""
    runs: list[list[int]] = []
    for i, c in enumerate(comps):
        if c[3] and runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        elif c[3]:
            runs.append([i])
    return runs


def _pattern_text(draw: Any, comps: list[tuple[str, str, bool, bool]]) -> tuple[str, list[str]]:
    """The SEQ text, where runs of negated components may become ``~SEQ(...)``
    (SIGMOD 2014, section 2.1), and conditions relating the members of each."""
    parts = {i: _component_text(c) for i, c in enumerate(comps)}
    group = [i for i, c in enumerate(comps) if c[1] in _group(comps)]
    if group:
        members = ", ".join(f"{comps[i][0]} {comps[i][1]}" for i in group)
        parts[group[0]] = f"SEQ({members})+"
        for i in group[1:]:
            del parts[i]
    related: list[str] = []
    for run in _negated_runs(comps):
        if len(run) < 2 or not draw(st.booleans()):
            continue
        members = [comps[i] for i in run]
        parts[run[0]] = "~SEQ(" + ", ".join(f"{c[0]} {c[1]}" for c in members) + ")"
        for i in run[1:]:
            del parts[i]
        if draw(st.booleans()):
            a, b = draw(st.permutations(members))[:2]
            op = draw(st.sampled_from(OPS))
            attr = draw(st.sampled_from(ATTRS))
            related.append(f"{a[1]}.{attr} {op} {b[1]}.{attr}")
    return ", ".join(parts[i] for i in sorted(parts)), related


def _component_text(comp: tuple[str, str, bool, bool]) -> str:
    etype, var, kleene, negated = comp
    if negated:
        return f"~({etype} {var})"
    return f"{etype}+ {var}[]" if kleene else f"{etype} {var}"


def _value_ref(draw: Any, comp: tuple[str, str, bool, bool], *, whole: bool) -> str:
    """A reference to a value of an earlier (or completed) variable."""
    _, var, kleene, _ = comp
    attr = draw(st.sampled_from(ATTRS))
    if not kleene:
        return f"{var}.{attr}"
    choices = [f"{var}[1].{attr}"]
    if whole:
        choices += [
            f"{var}[{var}.LEN].{attr}",
            f"max({var}[].{attr})",
            f"min({var}[].{attr})",
            f"sum({var}[].{attr})",
            f"{var}.LEN",
        ]
    return draw(st.sampled_from(choices))


def _predicate(draw: Any, comps: list[tuple[str, str, bool, bool]], i: int, kind: int) -> str:
    """One condition on component i; ``kind`` picks its shape (same kind, same rules)."""
    positive = [c for c in comps if not c[3]]
    _, var, kleene, negated = comps[i]
    group = _group(comps)
    mates = group if var in group else []
    earlier = [c for c in positive if comps.index(c) < i and c[1] not in mates]
    op = draw(st.sampled_from(OPS))
    attr = draw(st.sampled_from(ATTRS))
    if mates and kind <= 3:
        return _group_predicate(draw, mates, mates.index(var), kind, op, attr)
    if negated:
        rhs = (
            _value_ref(draw, draw(st.sampled_from(positive)), whole=True)
            if kind % 2
            else str(draw(st.integers(0, 3)))
        )
        return f"{var}.{attr} {op} {rhs}"
    if kleene:
        if kind == 0:
            return f"{var}[i].{attr} {op} {var}[i-1].{attr}"
        if kind == 1:
            agg = draw(st.sampled_from(("avg", "max", "min", "sum", "count")))
            return f"{var}[i].{attr} {op} {agg}({var}[..i-1].{attr})"
        if kind == 2 and earlier:
            other = _value_ref(draw, draw(st.sampled_from(earlier)), whole=True)
            return f"{var}[i].{attr} {op} {other}"
        if kind == 3:
            return f"{_value_ref(draw, comps[i], whole=True)} {op} {draw(st.integers(0, 4))}"
        return f"{var}[i].{attr} {op} {draw(st.integers(0, 3))}"
    if kind <= 1 and earlier:
        rhs = _value_ref(draw, draw(st.sampled_from(earlier)), whole=True)
        if kind == 1:
            rhs = f"{rhs} + {draw(st.integers(-1, 1))}"
        return f"{var}.{attr} {op} {rhs}"
    if kind == 2:
        return f"({var}.x + {var}.y) % 2 {op} {draw(st.integers(0, 1))}"
    return f"{var}.{attr} {op} {draw(st.integers(0, 3))}"


def _group_predicate(draw: Any, group: list[str], k: int, kind: int, op: str, attr: str) -> str:
    """A condition on iteration i of the group, relating member k to the others."""
    var = group[k]
    if kind == 0 and k > 0:  # checked at var[i], the earlier member's i-th event known
        return f"{var}[i].{attr} {op} {group[k - 1]}[i].{attr}"
    if kind == 1 and k < len(group) - 1:  # the later member's previous iteration
        return f"{var}[i].{attr} {op} {group[k + 1]}[i-1].{attr}"
    if kind == 2:
        return f"{var}[i].{attr} {op} {group[0]}[1].{attr} + {draw(st.integers(-1, 1))}"
    if kind == 3:
        agg = draw(st.sampled_from(("avg", "max", "min", "sum", "count")))
        return f"{var}[i].{attr} {op} {agg}({group[-1]}[..i-1].{attr})"
    return f"{var}[i].{attr} {op} {var}[i-1].{attr}"


@st.composite
def predicates(
    draw: Any, comps: list[tuple[str, str, bool, bool]], chain: bool = False
) -> list[str]:
    preds: list[str] = []
    for _ in range(draw(st.integers(0, 3))):
        i = draw(st.integers(0, len(comps) - 1))
        kind = draw(st.integers(0, 4))
        pred = _predicate(draw, comps, i, kind)
        shape = draw(st.integers(0, 7))
        if shape == 0:  # a disjunction, put in CNF by the compiler
            pred = f"({pred} or {_predicate(draw, comps, i, kind)})"
        elif shape == 1:
            pred = f"not ({pred})"
        elif shape == 2:
            pred = f"not ({pred} and {_predicate(draw, comps, i, kind)})"
        preds.append(pred)
    if draw(st.integers(0, 3)) == 0:
        preds.append(f"[{draw(st.sampled_from(ATTRS))}]")
    if chain or draw(st.integers(0, 2)) == 0:
        preds += _equality_chain(draw, comps)
    return preds


def _equality_chain(draw: Any, comps: list[tuple[str, str, bool, bool]]) -> list[str]:
    """Equalities of one attribute tying every positive variable: no partition, but a
    hash key (docs/semantics.md, "Partitions"). Each variable is tied to an earlier one
    as it is selected, or sometimes to the last variable instead, so that its value is
    compared only when the last arrives (then no hash key under skip till next match)."""
    positive = [c for c in comps if not c[3]]
    if _group(comps) or len(positive) < 2:
        return []
    attr = draw(st.sampled_from(ATTRS))
    last = positive[-1][1] + ("[i]" if positive[-1][2] else "")
    out: list[str] = []
    late = False
    for k, (_, var, kleene, _) in enumerate(positive):
        if kleene:
            out.append(f"{var}[i].{attr} = {var}[i-1].{attr}")
        mine = var + (draw(st.sampled_from(("[1]", "[i]"))) if kleene else "")
        if 0 < k < len(positive) - 1 and draw(st.integers(0, 2)) == 0:
            late = True
            out.append(f"{last}.{attr} = {var}{'[1]' if kleene else ''}.{attr}")
        elif k:
            j = 0 if late and k == len(positive) - 1 else draw(st.integers(0, k - 1))
            other = positive[j][1]
            if positive[j][2]:
                other += draw(st.sampled_from(("[1]", f"[{other}.LEN]")))
            out.append(f"{mine}.{attr} = {other}.{attr}")
    return out


@st.composite
def returns(draw: Any, comps: list[tuple[str, str, bool, bool]]) -> list[str]:
    positive = [c for c in comps if not c[3]]
    items = []
    for k in range(draw(st.integers(0, 2))):
        ref = _value_ref(draw, draw(st.sampled_from(positive)), whole=True)
        items.append(f"{ref} AS r{k}")
    return items


@st.composite
def queries(draw: Any, groups: bool = False, chain: bool = False) -> str:
    """With ``chain``, the WHERE clause ties one attribute across every positive
    variable by equalities (see :func:`_equality_chain`)."""
    comps = draw(components(groups, 3 if chain else 2))  # a chain can skip the middle
    preds = draw(predicates(comps, chain))
    pattern, related = _pattern_text(draw, comps)
    preds += related
    text = f"PATTERN SEQ({pattern})"
    text += f"\nWHERE skip_till_any_match {{ {' and '.join(preds)} }}"
    return text + draw(window_and_returns(comps, 10))


@st.composite
def window_and_returns(draw: Any, comps: list[Any], max_window: int) -> str:
    """An optional WITHIN and an optional RETURN clause, each on its own line."""
    text = ""
    window = draw(st.one_of(st.none(), st.integers(1, max_window)))
    if window is not None:
        text += f"\nWITHIN {window}"
    items = draw(returns(comps))
    if items:
        text += "\nRETURN " + ", ".join(items)
    return text


@st.composite
def cases(draw: Any, groups: bool = False, chain: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """A query and a stream whose events mostly have the query's types; with
    ``groups``, the query has one group SEQ(...)+ (under skip till any match); with
    ``chain``, equalities tie an attribute across every positive variable."""
    text = draw(queries(groups, chain))
    used = sorted({t for t in TYPES if any(f"{t}{s}" in text for s in (" v", "+ v", " g"))})
    types = (*used, "E") if draw(st.booleans()) else tuple(used)
    return text, draw(streams(types=types))
