"""Which evaluation core runs a query, and why (``engine="auto"``); the cores by name."""

from __future__ import annotations

from kleene.compiler.plan import Plan
from kleene.errors import QueryError
from kleene.runtime.config import MatcherConfig
from kleene.runtime.core import Core
from kleene.runtime.nfa.backtrack import BacktrackCore
from kleene.runtime.nfa.engine import NfaEngine
from kleene.runtime.postpone import PostponeCore
from kleene.runtime.vector import VectorCore, support
from kleene.vocabulary import OutputFormat, Strategy

ENGINES = ("auto", "nfa", "merge", "backtrack", "postpone", "postpone-late", "vector")


def choose_engine(plan: Plan, requested: str) -> tuple[str, str]:
    """The core to use and a one-line reason, for ``explain()``."""
    if requested not in ENGINES:
        raise QueryError(f"unknown engine {requested!r}; expected one of: {', '.join(ENGINES)}")
    any_match = plan.strategy is Strategy.SKIP_TILL_ANY_MATCH
    if plan.groups and (
        requested not in ("auto", "nfa", "merge") or plan.output is OutputFormat.COLLAPSED
    ):
        raise QueryError(
            "a SEQ(...)+ group is evaluated by engine 'nfa' or 'merge' only, and without "
            "collapsed output"
        )
    if plan.groups and requested == "auto":
        return "nfa", "SEQ(...)+: NFA^b runs loop over the group's states (SIGMOD 2008, 5.2.1)"
    if plan.output is OutputFormat.COLLAPSED:
        if not any_match or plan.negations:
            raise QueryError(
                "the collapsed output format needs skip_till_any_match and a pattern without "
                "negation (it returns the intermediate matches of postponed evaluation)"
            )
        if requested not in ("auto", "postpone", "postpone-late"):
            raise QueryError("the collapsed output format is produced by the postponing engine")
        engine = "postpone" if requested == "auto" else requested
        return engine, "collapsed output comes from postponed evaluation (SIGMOD 2014, 5.2)"
    if requested.startswith("postpone") and not any_match:
        raise QueryError(
            "the postponing engine evaluates skip_till_any_match only; use engine='nfa' "
            f"for {plan.strategy.value}"
        )
    if requested == "backtrack" and (plan.negations or plan.output is not OutputFormat.ALL):
        raise QueryError(
            "the backtrack engine reports matches late, so it takes queries without negation "
            "and with the default output format only"
        )
    if requested == "vector" and (why := support(plan)) is not None:
        raise QueryError(f"the vector engine cannot evaluate this query: {why}")
    if requested != "auto":
        return requested, "chosen by the caller"
    if support(plan) is None:
        return "vector", (
            "contiguity and conjuncts between adjacent events only: edges evaluated as "
            "columns over whole batches, runs enumerated with numpy (SIGMOD 2008, 3.1-3.2)"
        )
    if any_match and plan.kleene_vars:
        return "postpone", (
            "Kleene closure under skip till any match: postponing keeps one run per choice "
            "of single-variable events instead of one per subset (SIGMOD 2014, section 5)"
        )
    return "nfa", (
        "no Kleene closure under skip till any match: the basic NFA^b algorithm "
        "(SIGMOD 2008, section 5.2.1)"
    )


def make_core(plan: Plan, config: MatcherConfig) -> Core:
    """The evaluation core the configuration names (resolved by :func:`choose_engine`)."""
    if config.engine in ("nfa", "merge"):
        return NfaEngine(plan, config.max_runs, merge=config.engine == "merge")
    if config.engine == "vector":
        return VectorCore(plan, config.max_runs)
    if config.engine == "backtrack":
        return BacktrackCore(plan, config.max_runs)
    if config.engine in ("postpone", "postpone-late"):
        collapsed = plan.output is OutputFormat.COLLAPSED
        early = config.engine == "postpone"
        return PostponeCore(plan, config.max_runs, collapsed=collapsed, early=early)
    raise ValueError(f"unknown engine {config.engine!r}")
