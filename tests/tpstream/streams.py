"""Random TPStream queries and streams for the property tests.

Predicates combine atoms over two small integer attributes with ``and``/``or``; every
atom is false when both attributes are -1, so :func:`closed` can end every situation
going on by one last event per partition (a situation still going on at the end of the
input is not derived: docs/semantics.md, "Situations").
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

ATOMS = (
    "S.x >= {c}",
    "S.x = {c}",
    "S.y > {c}",
    "S.y <= {c} and S.y >= 0",
    "S.x / S.y > 1",
    "S.x % 3 = {p}",
)
SYMBOLS = ("A", "B", "C", "D")
RELATIONS = (
    "before",
    "after",
    "meets",
    "met-by",
    "overlaps",
    "overlapped-by",
    "starts",
    "started-by",
    "during",
    "contains",
    "finishes",
    "finished-by",
    "equals",
)


@st.composite
def predicates(draw: st.DrawFn) -> str:
    atoms = [
        draw(st.sampled_from(ATOMS)).format(c=draw(st.integers(0, 3)), p=draw(st.integers(0, 1)))
        for _ in range(draw(st.integers(1, 2)))
    ]
    joiner = draw(st.sampled_from([" or ", " and "]))
    return joiner.join(f"({a})" for a in atoms)


@st.composite
def durations(draw: st.DrawFn) -> str:
    low, high = sorted(draw(st.lists(st.integers(0, 6), min_size=2, max_size=2)))
    return draw(
        st.sampled_from(["", f" AT LEAST {low}", f" AT MOST {high}", f" BETWEEN {low} AND {high}"])
    )


@st.composite
def queries(draw: st.DrawFn, max_symbols: int = 4) -> str:
    """A query over 2..max_symbols symbols: a random spanning chain or star of
    constraints, each with 1-3 alternative relations, optionally more constraints."""
    n = draw(st.integers(2, max_symbols))
    symbols = SYMBOLS[:n]
    defines = ", ".join(f"{s} AS {draw(predicates())}{draw(durations())}" for s in symbols)
    pairs = [(symbols[draw(st.integers(0, k - 1))], symbols[k]) for k in range(1, n)]
    extra = [(a, b) for k, a in enumerate(symbols) for b in symbols[k + 1 :]]
    extra = [p for p in extra if p not in pairs]
    if extra and draw(st.booleans()):
        pairs.append(draw(st.sampled_from(extra)))
    constraints = []
    for a, b in pairs:
        names = draw(st.lists(st.sampled_from(RELATIONS), min_size=1, max_size=3, unique=True))
        constraints.append("; ".join(f"{a} {r} {b}" for r in names))
    window = draw(st.integers(4, 40))
    returns = ", ".join(
        f"{f}({s}{'.x' if f in ('first', 'last', 'min', 'max', 'avg', 'sum') else ''}) AS r{k}"
        for k, (f, s) in enumerate(
            draw(
                st.lists(
                    st.tuples(
                        st.sampled_from(
                            ["first", "last", "min", "max", "avg", "sum", "count", "start", "end"]
                        ),
                        st.sampled_from(symbols),
                    ),
                    max_size=3,
                )
            )
        )
    )
    text = (
        f"FROM S PARTITION BY k DEFINE {defines} PATTERN {' AND '.join(constraints)} "
        f"WITHIN {window}"
    )
    return text + (f" RETURN {returns}" if returns else "")


@st.composite
def events(draw: st.DrawFn, max_size: int = 24) -> list[dict[str, Any]]:
    """Events of two partitions, timestamps strictly increasing (gaps of 1-3)."""
    n = draw(st.integers(0, max_size))
    time = draw(st.integers(0, 3))
    out = []
    for _ in range(n):
        time += draw(st.integers(1, 3))
        out.append(
            {
                "timestamp": time,
                "k": draw(st.integers(0, 1)),
                "x": draw(st.integers(0, 4)),
                "y": draw(st.integers(0, 4)),
            }
        )
    return out


def closed(stream: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stream with one last event per partition that fails every predicate."""
    time = stream[-1]["timestamp"] if stream else 0
    return stream + [{"timestamp": time + 1 + k, "k": k, "x": -1, "y": -1} for k in (0, 1)]
