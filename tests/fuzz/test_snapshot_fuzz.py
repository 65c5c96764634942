"""Snapshot fuzz: damaged bytes and crafted state trees.

* Random byte mutations of a real snapshot (flips, insertions, deletions, cuts): the
  matcher either refuses it with a SnapshotError or resumes exactly as the original.
* Random changes of the decoded state tree, framed again with a valid header and
  checksum (what an attacker could write): loading raises SnapshotError or succeeds,
  never another exception.
"""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import given, note, settings
from hypothesis import strategies as st

import kleene
from kleene.errors import QueryError, SnapshotError
from tests.property.queries import cases
from tests.runtime.snapshot_support import comparable, reseal, tree_of

ENGINES = ("nfa", "merge", "backtrack", "postpone", "vector")


def _setup(
    case: tuple[str, list[dict[str, Any]]], engine: str, cut: int
) -> tuple[kleene.Query, Any, list[dict[str, Any]]] | None:
    """A query, a matcher after the first ``cut`` events, and the rest of the stream."""
    text, events = case
    try:
        q = kleene.compile(text, engine=engine, strategy="skip_till_any_match")
    except QueryError:  # e.g. the vector engine declines the query
        q = kleene.compile(text, engine="nfa")
    m = q.matcher()
    m.push(events[:cut])
    return q, m, events[cut:]


def _finish(m: Any, rest: list[dict[str, Any]]) -> list[Any]:
    return comparable(m.push(rest) + m.flush())


def damaged(snapshot: bytes, mutations: list[tuple[str, int, int]]) -> bytes:
    """The bytes with each mutation applied: a byte flipped, inserted or deleted, or
    the rest cut off, at a position taken modulo the length."""
    data = bytearray(snapshot)
    for kind, at, value in mutations:
        i = at % (len(data) + 1)
        if kind == "flip" and i < len(data):
            data[i] ^= value
        elif kind == "insert":
            data[i:i] = bytes([value])
        elif kind == "delete" and i < len(data):
            del data[i]
        elif kind == "cut":
            del data[i:]
    return bytes(data)


mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(1, 255)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.integers(0, 255)),
    st.tuples(st.just("delete"), st.integers(0, 10**6), st.just(0)),
    st.tuples(st.just("cut"), st.integers(0, 10**6), st.just(0)),
)


@settings(max_examples=150, deadline=None)
@given(
    case=cases(),
    engine=st.sampled_from(ENGINES),
    cut=st.integers(0, 12),
    mutations=st.lists(mutation, min_size=1, max_size=4),
)
def test_damaged_bytes_are_refused_or_resume_identically(
    case: tuple[str, list[dict[str, Any]]], engine: str, cut: int, mutations: list[Any]
) -> None:
    q, m, rest = _setup(case, engine, cut)
    data = damaged(m.snapshot(), mutations)
    note(repr(mutations))
    expected = _finish(q.matcher(state=m.snapshot()), rest)
    try:
        resumed = q.matcher(state=bytes(data))
    except SnapshotError:
        return
    assert _finish(resumed, rest) == expected


POOL = [None, True, -1, 0, 7, 2**40, 1.5, float("nan"), "x", (), [], {}, (0,), [0], {0: 0}]


def _containers(tree: Any) -> list[Any]:
    """Every list, tuple and dict in the tree, outermost first."""
    out = []
    todo = [tree]
    while todo:
        x = todo.pop()
        if isinstance(x, list | tuple | dict):
            out.append(x)
            todo += list(x.values()) + list(x) if isinstance(x, dict) else list(x)
    return out


def _mutate(tree: Any, pick: int, kind: int, value: Any) -> Any:
    """The tree with one container changed: an item replaced, dropped or added. Tuples
    are immutable, so a changed tuple is rebuilt and put back into its parent."""
    containers = _containers(tree)
    target = containers[pick % len(containers)]
    items = list(target.items()) if isinstance(target, dict) else list(target)
    i = (pick // len(containers)) % (len(items) + 1)
    if kind == 0 and i < len(items):  # replace
        items[i] = (items[i][0], value) if isinstance(target, dict) else value
    elif kind == 1 and i < len(items):  # drop
        del items[i]
    else:  # add
        items.insert(i, (value, value) if isinstance(target, dict) else value)
    try:
        changed: Any = dict(items) if isinstance(target, dict) else type(target)(items)
    except TypeError:  # an unhashable key
        return tree
    if target is tree:
        return changed
    _replace(tree, target, changed)
    return tree


def _replace(tree: Any, old: Any, new: Any) -> Any:
    """``tree`` with the container ``old`` (by identity) replaced by ``new``."""
    if tree is old:
        return new
    if isinstance(tree, dict):
        for k, v in tree.items():
            tree[k] = _replace(v, old, new)
        return tree
    if isinstance(tree, list):
        tree[:] = [_replace(v, old, new) for v in tree]
        return tree
    if isinstance(tree, tuple):
        return tuple(_replace(v, old, new) for v in tree)
    return tree


@settings(max_examples=150, deadline=None)
@given(
    case=cases(),
    engine=st.sampled_from(ENGINES),
    cut=st.integers(1, 12),
    pick=st.integers(0, 10**6),
    kind=st.integers(0, 2),
    value=st.sampled_from(POOL),
)
def test_crafted_state_trees_are_refused_on_load_or_load(
    case: tuple[str, list[dict[str, Any]]],
    engine: str,
    cut: int,
    pick: int,
    kind: int,
    value: Any,
) -> None:
    _q, m, _rest = _setup(case, engine, cut)
    tree = _mutate(tree_of(m), pick, kind, value)
    note(repr(tree))
    with contextlib.suppress(SnapshotError):
        type(m)(m.plan, m.config, reseal(m, tree))
