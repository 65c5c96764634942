"""A literal interpreter of NFA^b runs (SIGMOD 2008, sections 3.1 and 3.2; SIGMOD 2014,
section 2.2 and the run table of Figure 3), as docs/semantics.md defines them.

Each run carries its complete list of selected events; nothing is shared between runs,
and a run splits into one copy per edge whose formula holds.

States: a single variable s has one state, a Kleene variable v two, ``v[1]`` and
``v[i]``; then F. Formulas, for the current event e:

* begin at s / ``v[1]``: e has the variable's type, e is within W of the run's first
  event, and every conjunct whose last identifier is this state holds — at ``v[1]`` that
  includes the ``v[i]`` conjuncts that apply from i = 1, checked at i = 1;
* take at ``v[i]``: the same for element i = v.LEN + 1 and the conjuncts placed on take;
* proceed at ``v[i]``: the conjuncts instantiated when v ends hold, and (step 6) e
  satisfies the begin formula of the next state, whose begin edge then takes e; for the
  last component the proceed edge is an epsilon move to F tried after every begin and
  take at ``v[1]``/``v[i]`` (one match per accepted prefix), and the run stays at ``v[i]``;
* ignore, at every state a run can be in: per strategy (strict contiguity: false;
  partition contiguity: e is not in the run's partition; skip till next match: not the
  state's begin/take formula; skip till any match: true), and e within W of the run's
  first event.

Step 6's "opportunistic" proceed when take and ignore are both false is not part of
the contract, so it is not modelled. A new run starts at every event that satisfies
the first state's begin formula.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kleene.lang import ast
from kleene.oracle._analysis import Phase, Plan, Selection
from kleene.oracle._partition import PartitionKey
from kleene.oracle._stream import Event


@dataclass(frozen=True)
class Run:
    """One NFA^b run: its state (component index and BEGIN for s / ``v[1]`` or TAKE for
    ``v[i]``), the events it selected per component, and its partition key."""

    component: int
    phase: Phase
    selected: Selection
    key: tuple[Any, ...] | None

    @property
    def first(self) -> Event:
        return self.selected[0][0]


class Automaton:
    """The NFA^b of a query's positive pattern under one event selection strategy."""

    def __init__(self, plan: Plan, strategy: ast.Strategy, key: PartitionKey) -> None:
        self.plan = plan
        self.strategy = strategy
        self.key = key
        self.last = len(plan.positive) - 1

    # --- formulas --------------------------------------------------------------------

    def _extend(self, selected: Selection, component: int, event: Event) -> Selection:
        if component == len(selected):
            return (*selected, (event,))
        return (*selected[:component], (*selected[component], event))

    def begin_formula(self, selected: Selection, component: int, event: Event) -> bool:
        target = self.plan.positive[component]
        if event.type != target.event_type:
            return False
        if selected and not self.plan.within(selected[0][0], event):
            return False
        scope = self.plan.scope(self._extend(selected, component, event))
        if not all(c.holds(scope) for c in self.plan.at(component, Phase.BEGIN)):
            return False
        return all(
            c.holds_at(scope, 1) for c in self.plan.at(component, Phase.TAKE) if c.first_index == 1
        )

    def take_formula(self, run: Run, event: Event) -> bool:
        component = run.component
        if event.type != self.plan.positive[component].event_type:
            return False
        if not self.plan.within(run.first, event):
            return False
        selected = self._extend(run.selected, component, event)
        index = len(selected[component])
        scope = self.plan.scope(selected)
        return all(
            c.holds_at(scope, index)
            for c in self.plan.at(component, Phase.TAKE)
            if index >= c.first_index
        )

    def end_formula(self, selected: Selection, component: int) -> bool:
        scope = self.plan.scope(selected)
        return all(c.holds(scope) for c in self.plan.at(component, Phase.END))

    def ignore_formula(self, run: Run, event: Event) -> bool:
        if not self.plan.within(run.first, event):
            return False
        strategy = self.strategy
        if strategy is ast.Strategy.STRICT_CONTIGUITY:
            return False
        if strategy is ast.Strategy.PARTITION_CONTIGUITY:
            if not self.key.classes:
                return False
            return self.key.of_event(event) != run.key
        if strategy is ast.Strategy.SKIP_TILL_NEXT_MATCH:
            if run.phase is Phase.TAKE:
                return not self.take_formula(run, event)
            return not self.begin_formula(run.selected, run.component, event)
        return True

    # --- moves -----------------------------------------------------------------------

    def _after_selecting(self, run: Run) -> Iterator[Run | Selection]:
        """A run that has just selected an event at ``run.component``: yields the run
        and, when it reaches F, its selection."""
        component = self.plan.positive[run.component]
        if not component.kleene:
            if run.component == self.last:
                yield run.selected
            else:
                yield Run(run.component + 1, Phase.BEGIN, run.selected, run.key)
            return
        yield run
        if run.component == self.last and self.end_formula(run.selected, run.component):
            yield run.selected

    def _begin(self, run: Run, component: int, event: Event) -> Iterator[Run | Selection]:
        selected = self._extend(run.selected, component, event)
        yield from self._after_selecting(Run(component, Phase.TAKE, selected, run.key))

    def start(self, event: Event) -> Iterator[Run | Selection]:
        """A new run at ``event`` if it satisfies the first state's begin formula."""
        if self.begin_formula((), 0, event):
            yield from self._begin(Run(0, Phase.BEGIN, (), self.key.of_event(event)), 0, event)

    def step(self, run: Run, event: Event) -> Iterator[Run | Selection]:
        """Every edge of ``run``'s state that ``event`` satisfies; a run with none dies."""
        if run.phase is Phase.BEGIN:
            if self.begin_formula(run.selected, run.component, event):
                yield from self._begin(run, run.component, event)
        else:
            if self.take_formula(run, event):
                taken = self._extend(run.selected, run.component, event)
                yield from self._after_selecting(Run(run.component, Phase.TAKE, taken, run.key))
            following = run.component + 1
            if (
                run.component < self.last
                and self.end_formula(run.selected, run.component)
                and self.begin_formula(run.selected, following, event)
            ):
                yield from self._begin(run, following, event)
        if self.ignore_formula(run, event):
            yield run


def nfa_matches(
    plan: Plan, stream: tuple[Event, ...], strategy: ast.Strategy, key: PartitionKey
) -> list[Selection]:
    """The selections of all runs that reach F, in the order they reach it."""
    automaton = Automaton(plan, strategy, key)
    runs: list[Run] = []
    matches: list[Selection] = []
    for event in stream:
        following: list[Run] = []
        outcomes = [o for run in runs for o in automaton.step(run, event)]
        outcomes.extend(automaton.start(event))
        for outcome in outcomes:
            if isinstance(outcome, Run):
                following.append(outcome)
            else:
                matches.append(outcome)
        runs = following
    return matches
