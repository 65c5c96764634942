"""The computation-state vector V of a run (SIGMOD 2008, section 5.2.1).

Each column of V holds one value a later edge formula (or the RETURN clause, or a
negation check) needs: an attribute of a single variable, of a Kleene array's first or
last element, or a running aggregate (sum, count, min, max) over the array so far. The
layout is fixed at compile time; V itself is an immutable tuple so a run splits for free.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# A slot is one of:
#   ("attr", var, "single" | "first" | "last", attr)
#   ("sum" | "min" | "max", var, attr)
#   ("count", var)
Slot = tuple[str, ...]


@dataclass(frozen=True)
class SlotLayout:
    slots: tuple[Slot, ...]
    _index: dict[Slot, int] = field(init=False, repr=False, compare=False)
    _by_var: dict[str, list[tuple[int, Slot]]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_var: dict[str, list[tuple[int, Slot]]] = {}
        for i, s in enumerate(self.slots):
            by_var.setdefault(s[1], []).append((i, s))
        object.__setattr__(self, "_index", {s: i for i, s in enumerate(self.slots)})
        object.__setattr__(self, "_by_var", by_var)

    def index(self, slot: Slot) -> int:
        return self._index[slot]

    def for_var(self, var: str) -> list[tuple[int, Slot]]:
        return list(self._by_var.get(var, ()))

    def describe(self) -> list[str]:
        """Human-readable names of the columns, for ``explain()``."""
        out = []
        for slot in self.slots:
            if slot[0] == "attr":
                _, var, which, attr = slot
                where = {"single": var, "first": f"{var}[1]", "last": f"{var}[{var}.LEN]"}
                out.append(f"{where[which]}.{attr}")
            elif slot[0] == "count":
                out.append(f"{slot[1]}.LEN")
            else:
                out.append(f"{slot[0]}({slot[1]}[].{slot[2]})")
        return out
