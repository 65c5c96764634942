"""A brute-force oracle: query results straight from the definitions of docs/semantics.md.

It follows SIGMOD 2008 (SASE+, sections 2, 3.1, 3.2) and SIGMOD 2014 (section 2 and the
run table of Figure 3) and shares no code with the compiler or the runtime, so property
tests can hold the engine against it. Speed is no concern: inputs are a dozen events.

* Skip till any match: every valid selection, by exhaustive enumeration
  (:mod:`._selections`).
* The other strategies: NFA^b runs interpreted literally, each holding its complete
  list of events, splitting whenever several edges hold (:mod:`._nfa`).
* Then the negation filter (:mod:`._negation`), then the output format (``non-overlap``
  per inferred partition, :mod:`._output`), then RETURN values.

Readings taken where docs/semantics.md leaves room (the engine must agree):

* Errors. A conjunct is false when any part of it cannot be evaluated: division or
  modulo by zero, an ordering comparison of anything but two numbers or two strings,
  arithmetic on non-numbers, ``and``/``or``/``not`` on non-booleans, or a value that is
  not a boolean. ``and``/``or`` stop once their left operand decides, so
  ``b.y == 0 or a.x / b.y > 1`` holds when b.y is 0. Booleans are not numbers. A RETURN
  item that cannot be evaluated is None.
* Conjuncts are the CNF clauses of the WHERE clause (SIGMOD 2008, section 3.2, step 2):
  ``not`` is pushed inward by De Morgan and ``or`` distributed over ``and``; the iterator
  rule and the last-identifier placement apply per clause; a predicate whose normal form
  has more than 64 clauses stays one clause.
* An iterator conjunct whose references exist from i = 1 (it mentions ``v[i]`` but not
  ``v[i-1]``/``v[..i-1]``) is checked at i = 1 by the begin edge of ``v[1]``, which selects
  element 1, and at i = k by the take that selects element k. A conjunct that mentions
  ``v[..i-1]`` or ``v[i-1]`` without ``v[i]`` is an iterator conjunct too (from i = 2).
* A conjunct that mentions ``v[i]`` together with a variable after v (which the contract
  forbids) is not rejected: it is checked for every i once its last identifier is
  instantiated, which is what the valid-selection definition says.
* ``[x]`` is expanded against the first positive variable r of its scope:
  ``w.x == r.x`` for each other scope variable w (``w[i].x`` when Kleene; ``r[1].x`` when
  r is Kleene, which also gets ``r[i].x == r[1].x``). Each negated variable of the
  scope is thus tied to r, never to another negated variable.
* Step 6's opportunistic proceed (take and ignore both false) is not modelled: the
  proceed edge always requires the next state's begin formula.
* Under skip till next match the ignore formula at ``v[i]`` is ``not take``, so an event
  that satisfies the proceed formula but not the take formula splits the run (proceed
  and ignore).
* Partitions come from the equivalence tests alone (SIGMOD 2008, section 2): an
  equality between variables is a condition on the match, never a partition, under
  partition contiguity and for non-overlap output alike.
* Non-overlap is applied per inferred partition, after the negation filter; strict
  contiguity treats the whole stream as one partition (SIGMOD 2008, section 2).
* A group ``SEQ(T1 v1, ..., Tm vm)+`` (SIGMOD 2014, section 2.1) is enumerated straight
  from its definition: n >= 1 iterations interleaved in stream order, one event per
  member each, every member's ``[i]`` bound to the same iteration i. It is defined
  under skip till any match only.
* Matches come out ordered by (last position, first position, positions in pattern
  order); selections of the very same events split differently among Kleene variables
  are ordered by each variable's positions compared as tuples in pattern order (v=(0,),
  w=(1, 2) before v=(0, 1), w=(2,)), which decides which one non-overlap keeps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kleene.errors import QueryError
from kleene.lang import ast, expr_to_text
from kleene.oracle._analysis import Plan, Selection, analyse
from kleene.oracle._negation import survives_negation
from kleene.oracle._nfa import nfa_matches
from kleene.oracle._output import match_order, non_overlap, returned_values
from kleene.oracle._partition import PartitionKey, infer_key
from kleene.oracle._program import evaluate_program as _evaluate_program
from kleene.oracle._selections import valid_selections
from kleene.oracle._stream import load_stream

__all__ = ["OracleMatch", "evaluate", "evaluate_program", "partition_attributes"]


@dataclass(frozen=True)
class OracleMatch:
    """One match: per positive variable, the ids and stream positions of its events in
    order, and the RETURN values by name."""

    ids: dict[str, tuple[Any, ...]]
    positions: dict[str, tuple[int, ...]]
    values: dict[str, Any]


def _match(plan: Plan, selection: Selection, values: dict[str, Any]) -> OracleMatch:
    pairs = list(zip(plan.positive, selection, strict=True))
    return OracleMatch(
        ids={c.var: tuple(e.id for e in chosen) for c, chosen in pairs},
        positions={c.var: tuple(e.position for e in chosen) for c, chosen in pairs},
        values=values,
    )


def partition_attributes(query: ast.Query) -> tuple[str, ...]:
    """The partition's attribute names (its equivalence tests), () when there is none."""
    analyse(query)  # validates
    return infer_key(query).names


def evaluate(
    query: ast.Query,
    events: Sequence[Mapping[str, Any]],
    *,
    strategy: ast.Strategy | None = None,
    output: ast.OutputFormat | None = None,
    type_field: str = "type",
    time_field: str = "timestamp",
    id_field: str = "id",
) -> list[OracleMatch]:
    """All matches of ``query`` over ``events`` (well-formed dicts with numeric times).

    The strategy is the argument, else the query's, else the default; likewise the
    output format (default: all). Raises QueryError for a query the contract rejects.
    """
    strategy = strategy or query.strategy or ast.DEFAULT_STRATEGY
    output = output or query.output or ast.OutputFormat.ALL
    plan = analyse(query)
    key: PartitionKey = infer_key(query)
    stream = load_stream(events, type_field=type_field, time_field=time_field, id_field=id_field)
    if strategy is ast.Strategy.SKIP_TILL_ANY_MATCH:
        found = valid_selections(plan, stream)
    elif plan.group_root:
        raise QueryError("a SEQ(...)+ group is defined under skip_till_any_match only")
    else:
        found = nfa_matches(plan, stream, strategy, key)
    unique = {match_order(s): s for s in found}
    selections = sorted(unique.values(), key=match_order)
    selections = [s for s in selections if survives_negation(plan, stream, s)]
    if output is ast.OutputFormat.NON_OVERLAP:
        # strict contiguity treats the stream as one partition (SIGMOD 2008, section 2)
        single = strategy is ast.Strategy.STRICT_CONTIGUITY
        selections = non_overlap(selections, PartitionKey(()) if single else key)
    return [_match(plan, s, returned_values(plan, s, expr_to_text)) for s in selections]


def evaluate_program(
    program: ast.Program, events: Sequence[Mapping[str, Any]], **fields: str
) -> list[OracleMatch]:
    """All matches of a program's last statement (union and composition, SIGMOD 2014
    section 2.1); ``fields`` are type_field, time_field and id_field."""
    return _evaluate_program(program, events, evaluate, **fields)
