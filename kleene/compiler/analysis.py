"""Predicate analysis for NFA^b compilation (SIGMOD 2008, section 3.2, step 2).

Equivalence tests are expanded to equality conjuncts, every conjunct is given its *last
identifier* (the reference instantiated latest by the automaton) and placed on the edge
of that identifier's state.

Two keys are read off the conjuncts. The *partition* (SIGMOD 2008, section 2: "the
equivalence tests ... are commonly used to form partitions"; section 3.2, step 3: the
ignore formula of partition contiguity is the negation of the partition condition) comes
from the equivalence tests ``[attr]`` alone. A *hash key* also takes the attribute
classes that equality conjuncts tie across every positive variable; runs may be indexed
by it only where that cannot change a result (:func:`choose_key`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from kleene.lang import ast


class Phase(IntEnum):
    """When, within one component, a reference is instantiated."""

    FIRST = 0  # a single variable's event, or a[1]
    EACH = 1  # a[i], a[i-1], f(a[..i-1]): at every element
    END = 2  # a[a.LEN], a.LEN, f(a[]): when the Kleene array ends


@dataclass(frozen=True)
class Placement:
    """Where a conjunct is evaluated.

    ``component`` is the index of the positive component (in pattern order) whose state
    carries the conjunct; ``phase`` says which edge: FIRST -> begin, EACH -> begin (if
    it applies at i = 1) and take, END -> proceed. ``negated`` names the negated
    variable for a conjunct checked by the negation filter instead.
    """

    component: int
    phase: Phase
    needs_previous: bool = False
    negated: str | None = None


@dataclass(frozen=True)
class Conjunct:
    expr: ast.Expr
    placement: Placement
    key_equality: bool = False  # implied when runs are routed by the partition key


def references(expr: ast.Node) -> list[ast.AttrRef | ast.LenRef | ast.Aggregate]:
    return [n for n in expr.walk() if isinstance(n, ast.AttrRef | ast.LenRef | ast.Aggregate)]


def ref_phase(ref: ast.AttrRef | ast.LenRef | ast.Aggregate) -> Phase:
    if isinstance(ref, ast.LenRef):
        return Phase.END
    if isinstance(ref, ast.Aggregate):
        return Phase.EACH if ref.range is ast.AggRange.BEFORE_CURRENT else Phase.END
    if ref.index in (None, ast.IndexKind.FIRST):
        return Phase.FIRST
    if ref.index is ast.IndexKind.LAST:
        return Phase.END
    return Phase.EACH


def needs_previous(ref: ast.AttrRef | ast.LenRef | ast.Aggregate) -> bool:
    if isinstance(ref, ast.AttrRef):
        return ref.index is ast.IndexKind.PREVIOUS
    return isinstance(ref, ast.Aggregate) and ref.range is ast.AggRange.BEFORE_CURRENT


def place(expr: ast.Expr, pattern: ast.Seq) -> Placement:
    """The edge of a conjunct's last identifier (section 3.2, step 2)."""
    positive = [c.var for c in pattern.positive]
    refs = references(expr)
    order = {c.var: k for k, c in enumerate(pattern.components)}
    negated = {r.var for r in refs if (c := pattern.component(r.var)) and c.negated}
    previous = any(needs_previous(r) for r in refs)
    if negated:  # checked by the negation, at the last of its variables it mentions
        return Placement(0, Phase.FIRST, previous, negated=max(negated, key=order.__getitem__))
    if not refs:
        return Placement(0, Phase.FIRST)
    groups = {m.var: g for g in multi_groups(pattern) for m in g}
    iterating = [r for r in refs if ref_phase(r) is Phase.EACH]
    if iterating and iterating[0].var in groups:
        # iteration i of SEQ(...)+ (SIGMOD 2014, 2.1): checked at the latest member
        # whose i-th (or first) event it reads; validation keeps [i-1] to it and later
        members = [m.var for m in groups[iterating[0].var]]
        anchor = max(
            (
                members.index(r.var)
                for r in refs
                if isinstance(r, ast.AttrRef)
                and r.var in members
                and r.index in (ast.IndexKind.CURRENT, ast.IndexKind.FIRST)
            ),
            default=0,
        )
        return Placement(positive.index(members[anchor]), Phase.EACH, previous)

    def location(r: ast.AttrRef | ast.LenRef | ast.Aggregate) -> tuple[int, Phase]:
        phase = ref_phase(r)
        if phase is Phase.END and r.var in groups:  # a group ends as a whole
            return positive.index(groups[r.var][-1].var), phase
        return positive.index(r.var), phase

    last = max(location(r) for r in refs)
    return Placement(last[0], last[1], previous)


def multi_groups(pattern: ast.Seq) -> list[tuple[ast.Component, ...]]:
    """The groups ``SEQ(...)+`` of two or more members (one member is a Kleene var)."""
    return [g for g in pattern.kleene_groups() if len(g) > 1]


def _per_iteration(left: ast.Expr, right: ast.Expr, pattern: ast.Seq) -> bool:
    """``b[i].x = c[i].x`` within a group ties each iteration's pair, not all elements."""
    grouped = {m.var for g in multi_groups(pattern) for m in g}
    return all(
        isinstance(side, ast.AttrRef)
        and side.var in grouped
        and side.index is ast.IndexKind.CURRENT
        for side in (left, right)
    )


def expand_equivalence(test: ast.Equivalence, query: ast.Query) -> list[ast.Expr]:
    """``[x]`` -> ``v.x = anchor.x`` for every other variable in scope."""
    scope = query.strategy_vars or tuple(c.var for c in query.pattern.components)
    comps = [c for c in query.pattern.components if c.var in scope]
    positive = [c for c in comps if not c.negated]
    if not positive:
        return []
    anchor, rest = positive[0], [c for c in comps if c is not positive[0]]
    out: list[ast.Expr] = []
    for attr in test.attrs:
        anchor_ref = _element_ref(anchor, attr, first=True, span=test.span)
        if anchor.kleene:
            out.append(_eq(_element_ref(anchor, attr, first=False, span=test.span), anchor_ref))
        for comp in rest:
            out.append(_eq(_element_ref(comp, attr, first=False, span=test.span), anchor_ref))
    return out


def _element_ref(comp: ast.Component, attr: str, *, first: bool, span: ast.Span) -> ast.AttrRef:
    if not comp.kleene:
        return ast.AttrRef(comp.var, attr, None, span=span)
    index = ast.IndexKind.FIRST if first else ast.IndexKind.CURRENT
    return ast.AttrRef(comp.var, attr, index, span=span)


def _eq(left: ast.Expr, right: ast.Expr) -> ast.Binary:
    return ast.Binary(ast.BinOp.EQ, left, right, span=left.span)


# --- partition key inference ---------------------------------------------------------


@dataclass(frozen=True)
class PartitionKey:
    """Attributes equal across every positive variable (and some negated ones).

    ``attrs[k][var]`` is the attribute of class k for variable ``var``. ``by_type`` gives
    the attribute tuple used to read the key of an event of a pattern type; ``common``
    is the attribute tuple for events of other types (empty when names differ).
    """

    attrs: tuple[dict[str, str], ...]
    by_type: dict[str, tuple[str, ...]]
    common: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """One display name per key attribute."""
        return (
            tuple(self.common)
            if self.common
            else tuple("|".join(sorted(set(cls.values()))) for cls in self.attrs)
        )

    def covers(self, var: str) -> bool:
        return all(var in cls for cls in self.attrs)


def _uniform(conjuncts: list[ast.Expr], pattern: ast.Seq) -> set[tuple[str, str]]:
    """Kleene attributes equal across all elements: ``a[i].x`` equated with ``a[1].x``
    or ``a[i-1].x`` (as an equivalence test expands), or with a value that does not vary
    with i (another variable's whole value)."""
    out: set[tuple[str, str]] = set()
    pairs = [
        (e.left, e.right)
        for e in conjuncts
        if isinstance(e, ast.Binary)
        and e.op is ast.BinOp.EQ
        and isinstance(e.left, ast.AttrRef)
        and isinstance(e.right, ast.AttrRef)
        and not _per_iteration(e.left, e.right, pattern)
    ]
    changed = True
    while changed:
        changed = False
        for left, right in pairs + [(r, left) for left, r in pairs]:
            if left.index is not ast.IndexKind.CURRENT or (left.var, left.attr) in out:
                continue
            same = left.var == right.var and left.attr == right.attr
            if (same and right.index in (ast.IndexKind.FIRST, ast.IndexKind.PREVIOUS)) or (
                not same and left.var != right.var and _whole_ref(right, pattern, out)
            ):
                out.add((left.var, left.attr))
                changed = True
    return out


def _whole_ref(
    node: ast.Expr, pattern: ast.Seq, uniform: set[tuple[str, str]]
) -> tuple[str, str] | None:
    """``v.x`` of a single variable, ``a[i].x`` of a Kleene one, or ``a[1].x`` /
    ``a[a.LEN].x`` when all of a's elements share x: a value every element carries."""
    if not isinstance(node, ast.AttrRef):
        return None
    comp = pattern.component(node.var)
    if comp is None:
        return None
    if (
        comp.kleene
        and node.index in (ast.IndexKind.FIRST, ast.IndexKind.LAST)
        and (node.var, node.attr) in uniform
    ):
        return node.var, node.attr
    if comp.kleene and node.index is not ast.IndexKind.CURRENT:
        return None
    if not comp.kleene and node.index is not None:
        return None
    return node.var, node.attr


def _key_classes(conjuncts: list[ast.Expr], pattern: ast.Seq) -> list[dict[str, str]]:
    """Union-find over (variable, attribute) nodes joined by equality conjuncts: the
    classes that cover every positive variable, each as variable -> attribute."""
    parent: dict[tuple[str, str], tuple[str, str]] = {}

    def find(x: tuple[str, str]) -> tuple[str, str]:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    uniform = _uniform(conjuncts, pattern)
    negated = {c.var for c in pattern.negative}
    equalities = []
    for expr in conjuncts:
        if (
            isinstance(expr, ast.Binary)
            and expr.op is ast.BinOp.EQ
            and not _per_iteration(expr.left, expr.right, pattern)
        ):
            left = _whole_ref(expr.left, pattern, uniform)
            right = _whole_ref(expr.right, pattern, uniform)
            if left and right and left[0] != right[0]:
                equalities.append((left, right))
    # Classes are built from equalities between positive variables only: a conjunct that
    # mentions a negated variable constrains the negation, not the match. A negated
    # variable then joins a class it is equated with (its candidates can be routed).
    for var, attr in uniform:
        if var not in negated:
            find((var, attr))  # a Kleene array whose elements share attr is keyed by it
    for left, right in equalities:
        if left[0] not in negated and right[0] not in negated:
            parent[find(left)] = find(right)
    for left, right in equalities:
        if (left[0] in negated) != (right[0] in negated):
            neg, pos = (left, right) if left[0] in negated else (right, left)
            if pos in parent:
                parent[find(neg)] = find(pos)

    classes: dict[tuple[str, str], dict[str, str]] = {}
    for node in list(parent):
        classes.setdefault(find(node), {})
        cls = classes[find(node)]
        # two attributes of one variable in a class are equal: use the first by name
        cls[node[0]] = min(cls.get(node[0], node[1]), node[1])

    positive = [c.var for c in pattern.positive]
    keyed = []
    for cls in classes.values():
        if not all(v in cls for v in positive):
            continue
        by_type: dict[str, str] = {}
        if any(
            by_type.setdefault(c.event_type, cls[c.var]) != cls[c.var] for c in pattern.positive
        ):
            continue  # one type keyed by two attributes: no partition by this class
        for comp in pattern.negative:  # a negated variable joins only if its type agrees
            if (
                comp.var in cls
                and by_type.setdefault(comp.event_type, cls[comp.var]) != cls[comp.var]
            ):
                del cls[comp.var]
        keyed.append(cls)
    keyed.sort(key=lambda cls: sorted(cls.items()))
    return keyed


def _key_of(keyed: list[dict[str, str]], pattern: ast.Seq) -> PartitionKey | None:
    """The key whose attribute classes are ``keyed``, in this order."""
    if not keyed:
        return None
    types = {c.event_type for c in pattern.components}
    by_type_tuple = {
        t: tuple(
            cls[next(c.var for c in pattern.components if c.event_type == t and c.var in cls)]
            for cls in keyed
        )
        for t in types
        if all(any(c.event_type == t and c.var in cls for c in pattern.components) for cls in keyed)
    }
    common: tuple[str, ...] = ()
    positive = [c.var for c in pattern.positive]
    names = [{cls[v] for v in positive} for cls in keyed]
    if all(len(n) == 1 for n in names):
        common = tuple(next(iter(n)) for n in names)
    return PartitionKey(tuple(keyed), by_type_tuple, common)


def infer_partition_key(conjuncts: list[ast.Expr], pattern: ast.Seq) -> PartitionKey | None:
    """The attribute classes that ``conjuncts`` tie across every positive variable.

    Given the expanded equivalence tests only, this is the query's partition; given
    every conjunct, a hash key (see :func:`choose_key`)."""
    return _key_of(_key_classes(conjuncts, pattern), pattern)


def hash_key(
    partition: PartitionKey | None,
    conjuncts: list[ast.Expr],
    pattern: ast.Seq,
    *,
    extra: bool = True,
    on_arrival: bool = False,
) -> PartitionKey | None:
    """The partition's classes first (so a hash key value starts with the partition
    value), then, with ``extra``, every other class the equality conjuncts tie across
    all positive variables (with ``on_arrival``, only those :func:`_checked_on_arrival`).
    A class that extends a partition class (a negated variable equated with it, whose
    candidates can then be looked up by key) replaces it."""
    found = _key_classes(conjuncts, pattern)
    first: list[dict[str, str]] = []
    for cls in partition.attrs if partition is not None else ():
        wider = [f for f in found if cls.items() <= f.items()]
        first.append(wider[0] if wider else cls)
    rest = [f for f in found if f not in first] if extra else []
    if on_arrival:
        rest = [f for f in rest if _checked_on_arrival(f, conjuncts, pattern)]
    return _key_of(first + rest, pattern)


def _checked_on_arrival(cls: dict[str, str], conjuncts: list[ast.Expr], pattern: ast.Seq) -> bool:
    """Whether every selected event's key attribute is compared with an earlier event's
    when it is selected: each component after the first has an equality between its
    key attribute (``v.x``, ``v[1].x``, or ``v[i].x`` from i = 1) and an earlier
    variable's, on its begin edge; each Kleene variable's later elements, one between
    ``v[i].x`` and ``v[1].x``, ``v[i-1].x`` or an earlier variable's, on its take edge.
    The equivalence tests expand to such equalities. ``a.x = c.x and b.x = c.x`` ties b
    only when c is selected: the class is no hash key under skip till next match."""
    positive = pattern.positive
    order = {c.var: k for k, c in enumerate(positive)}
    begin: set[int] = set()
    take: set[int] = set()
    I = ast.IndexKind  # noqa: E741
    for expr in conjuncts:
        if not (
            isinstance(expr, ast.Binary)
            and expr.op is ast.BinOp.EQ
            and isinstance(expr.left, ast.AttrRef)
            and isinstance(expr.right, ast.AttrRef)
        ):
            continue
        where = place(expr, pattern)
        for mine, other in ((expr.left, expr.right), (expr.right, expr.left)):
            if not all(r.var in order and cls.get(r.var) == r.attr for r in (mine, other)):
                continue
            k, j = order[mine.var], order[other.var]
            if where.negated is not None or where.component != k:
                continue
            kleene = positive[k].kleene
            if j < k and other.index in (None, I.FIRST, I.LAST):
                if mine.index is None or mine.index is I.FIRST:
                    begin.add(k)
                elif mine.index is I.CURRENT and where.phase is Phase.EACH:
                    begin.add(k)
                    take.add(k)
            elif (
                j == k
                and kleene
                and mine.index is I.CURRENT
                and where.phase is Phase.EACH
                and other.index in (I.FIRST, I.PREVIOUS)
            ):
                take.add(k)
    return all(k in begin for k in range(1, len(positive))) and all(
        k in take for k, c in enumerate(positive) if c.kleene
    )


def choose_key(
    partition: PartitionKey | None,
    conjuncts: list[ast.Expr],
    pattern: ast.Seq,
    strategy: ast.Strategy,
    output: ast.OutputFormat,
) -> tuple[PartitionKey | None, bool]:
    """The key a plan carries and whether runs are indexed (routed) by it.

    * Partition contiguity: the ignore edge is "not in the run's partition" (SIGMOD
      2008, section 3.2, step 3), so runs are routed by the partition exactly; a wider
      key would hide from a run events of its partition that must end it.
    * Output non-overlap picks one match per partition (section 2), so its runs are
      grouped by the partition only.
    * Skip till any match, output all or collapsed: routing by the hash key changes no
      result. Every class of it is an equality that each match satisfies, so every
      match lies in one hash value, and a run may ignore any event (ignore is true).
    * Skip till next match, output all: the same holds for the classes checked on
      arrival (:func:`_checked_on_arrival`). An event of another hash value then fails
      every begin, take and proceed (peek) formula of a run, so its ignore formula (not
      begin/take) holds and the run ignores it, which is what not routing it to the run
      does. Its only other effect, ending a run whose window has passed, ends a run that
      could no longer reach F (every later begin/take is outside the window).
    * Strict contiguity, and partition contiguity without a partition (which is strict
      contiguity), route nothing; the hash key is kept for the vector engine: a run takes
      consecutive events, and every event of a match shares the key iff each shares its
      predecessor's.
    """
    if strategy is ast.Strategy.STRICT_CONTIGUITY or (
        strategy is ast.Strategy.PARTITION_CONTIGUITY and partition is None
    ):
        return hash_key(partition, conjuncts, pattern), False
    if strategy is ast.Strategy.PARTITION_CONTIGUITY or output is ast.OutputFormat.NON_OVERLAP:
        key = hash_key(partition, conjuncts, pattern, extra=False)
        return key, key is not None
    on_arrival = strategy is ast.Strategy.SKIP_TILL_NEXT_MATCH
    key = hash_key(partition, conjuncts, pattern, on_arrival=on_arrival)
    return key, key is not None


def is_key_equality(expr: ast.Expr, key: PartitionKey | None, pattern: ast.Seq) -> bool:
    """True when the conjunct only restates the partition key (routing implies it)."""
    if key is None or not (isinstance(expr, ast.Binary) and expr.op is ast.BinOp.EQ):
        return False
    every = {(v, a) for cls in key.attrs for v, a in cls.items()}
    left = _whole_ref(expr.left, pattern, every)
    right = _whole_ref(expr.right, pattern, every)
    if not (left and right):
        return False
    return any(cls.get(left[0]) == left[1] and cls.get(right[0]) == right[1] for cls in key.attrs)
