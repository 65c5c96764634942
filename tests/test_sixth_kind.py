"""A sixth kind of query, defined and registered from this file alone: the measure of
"a new kind is one package plus one registration" (issue 25).

The ECHO language: ``ECHO <type>`` matches every event of that type, one match per
event binding the variable ``e``. Its query and matcher are the contract's
(:mod:`kleene.runtime.contract`), its snapshot is sealed with its own tag, and one
:func:`kleene.kinds.register` call makes it run through :func:`kleene.compile`,
``run``, ``run_detailed``, a matcher, ``kleene run`` and ``kleene explain``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import kleene
from kleene import kinds
from kleene.cli import CliPart
from kleene.errors import MatchLimitError, QueryError, QuerySyntaxError, SnapshotError
from kleene.match import MatchLike, RejectedEvent, RunResult
from kleene.runtime.contract import CompiledQuery, OnMatches, Reporter, StreamMatcher
from kleene.runtime.snapshot import kind_fingerprint, seal, unseal
from tests.cli.inprocess import run_main

TAG = b"X"  # the echo kind's snapshot tag, none of the built-in kinds'


@dataclass(frozen=True)
class EchoMatch:
    """One echoed event."""

    id: Any
    time: Any
    returned: dict[str, Any] = field(default_factory=dict)

    @property
    def start(self) -> Any:
        return self.time

    @property
    def end(self) -> Any:
        return self.time

    @property
    def partition(self) -> tuple[Any, ...]:
        return ()

    def ids(self) -> dict[str, tuple[Any, ...]]:
        return {"e": (self.id,)}

    def values(self) -> dict[str, Any]:
        return dict(self.returned)


class EchoQuery(CompiledQuery[EchoMatch]):
    kind = "echo"

    def __init__(
        self,
        text: str,
        *,
        type_field: str = "type",
        time_field: str = "timestamp",
        id_field: str = "id",
        max_matches: int | None = 1000,
    ) -> None:
        words = re.sub(r"//[^\n]*", "", text).split()  # its one comment: // to the line end
        if len(words) != 2 or words[0].upper() != "ECHO":
            raise QuerySyntaxError("write ECHO <event type>", line=1, column=1, text=text)
        self.text, self.event_type = text, words[1]
        self.fields = (type_field, time_field, id_field)
        self.max_matches = max_matches

    @property
    def variables(self) -> tuple[str, ...]:
        return ("e",)

    def fingerprint(self) -> bytes:
        return kind_fingerprint(TAG, [self.text, *self.fields])

    def matcher(
        self, *, state: bytes | None = None, on_matches: OnMatches | None = None
    ) -> EchoMatcher:
        return EchoMatcher(self, state, on_matches)

    def explain(self) -> str:
        return f"echo: every {self.event_type} event"


class EchoMatcher(StreamMatcher[EchoMatch]):
    def __init__(self, query: EchoQuery, state: bytes | None, on_matches: OnMatches | None):
        self.query = query
        self.reporter: Reporter[EchoMatch] = Reporter(query.max_matches, on_matches)
        self.position = self.rejected_total = 0
        self.rejected: list[RejectedEvent] = []
        if state is not None:
            self.position, self.rejected_total = unseal(state, TAG, query.fingerprint())

    def push(self, events: Any) -> list[EchoMatch]:
        rows = events.to_pylist() if hasattr(events, "to_pylist") else list(events)
        type_field, time_field, id_field = self.query.fields
        out = self.reporter.call()
        for record in rows:
            position, self.position = self.position, self.position + 1
            if record.get(type_field) is None or record.get(time_field) is None:
                self.rejected.append(RejectedEvent(record.get(id_field), position, "no type"))
                self.rejected_total += 1
            elif record[type_field] == self.query.event_type:
                out.append(EchoMatch(record.get(id_field, position), record[time_field]))
        return out.finish()

    def advance_to(self, time: Any) -> list[EchoMatch]:
        return []

    def flush(self) -> list[EchoMatch]:
        return []

    def take_rejected(self) -> list[RejectedEvent]:
        taken, self.rejected = self.rejected, []
        return taken

    def snapshot(self) -> bytes:
        return seal(TAG, self.query.fingerprint(), [self.position, self.rejected_total])

    @property
    def rejected_count(self) -> int:
        return self.rejected_total

    @property
    def reported(self) -> int:
        return self.reporter.reported


def _engine_text(query: EchoQuery) -> str:
    return f"echo {query.event_type}"


ECHO = kinds.Kind(
    "echo",
    "ECHO query",
    EchoQuery,
    recognises=lambda lead: lead.first == "ECHO",
    snapshot_tag=TAG,
    cli=CliPart(engine_text=_engine_text),
)


@pytest.fixture
def echo() -> Iterator[kinds.Kind]:
    kinds.register(ECHO)
    try:
        yield ECHO
    finally:
        kinds.unregister("echo")


EVENTS = [
    {"id": 1, "type": "A", "timestamp": 1},
    {"id": 2, "type": "B", "timestamp": 2},
    {"id": 3, "type": "A", "timestamp": 3},
    {"id": 4, "timestamp": 4},  # no type: rejected
    {"id": 5, "type": "A", "timestamp": 5},
    {"id": 6, "type": "A", "timestamp": 8},
]
ECHOED = [1, 3, 5, 6]


def _echo(text: str, **options: Any) -> EchoQuery:
    query = kleene.compile(text, **options)
    assert isinstance(query, EchoQuery)
    return query


def _ids(matches: list[EchoMatch]) -> list[Any]:
    return [m.ids()["e"][0] for m in matches]


def test_the_registry_tells_its_text_and_compiles_it(echo: kinds.Kind) -> None:
    assert kinds.kind_of_text("// a sixth kind\necho A") is echo
    assert kinds.kind_of_text("// ECHO A\nPATTERN SEQ(A a, B b) WITHIN 5").name == "sase"
    query = _echo("ECHO A", type_field="type")
    assert kinds.kind_of(query) is echo
    assert echo.options() == ("type_field", "time_field", "id_field", "max_matches")


def test_without_its_registration_the_text_is_not_a_query() -> None:
    with pytest.raises(QuerySyntaxError):
        kleene.compile("ECHO A")


def test_an_unknown_option_is_refused_with_its_options(echo: kinds.Kind) -> None:
    with pytest.raises(QueryError) as caught:
        kleene.compile("ECHO A", strategy="skip-till-any-match")
    message = str(caught.value)
    assert "'strategy' is not an option of an ECHO query (an option of the" in message
    assert "its options: type_field, time_field, id_field, max_matches" in message
    with pytest.raises(QueryError, match="ECHO query, which takes time='point'"):
        kleene.compile("ECHO A", time="interval")


def test_run_and_run_detailed(echo: kinds.Kind) -> None:
    query = _echo("ECHO A")
    with pytest.warns(kleene.RejectedEventsWarning):
        assert _ids(query.run(EVENTS)) == ECHOED
    result = query.run_detailed(EVENTS)
    assert isinstance(result, RunResult)
    assert _ids(result.matches) == ECHOED
    assert [r.id for r in result.rejected] == [4]
    assert all(isinstance(m, MatchLike) for m in result.matches)


@pytest.mark.parametrize("chunk", [1, 2, 4])
def test_a_matcher_in_chunks_equals_the_run(echo: kinds.Kind, chunk: int) -> None:
    query = _echo("ECHO A")
    matcher = query.matcher()
    found: list[EchoMatch] = []
    for start in range(0, len(EVENTS), chunk):
        found += matcher.push(EVENTS[start : start + chunk])
    found += matcher.flush()
    assert _ids(found) == ECHOED
    assert matcher.reported == len(ECHOED) and matcher.rejected_count == 1


@pytest.mark.parametrize("cut", range(len(EVENTS) + 1))
def test_snapshot_and_resume_equals_uninterrupted(echo: kinds.Kind, cut: int) -> None:
    query = _echo("ECHO A")
    first = query.matcher()
    before = first.push(EVENTS[:cut])
    state = first.snapshot()
    resumed = query.matcher(state=state)
    after = [*resumed.push(EVENTS[cut:]), *resumed.flush()]
    assert _ids(before + after) == ECHOED
    assert resumed.rejected_count == 1
    with pytest.raises(SnapshotError, match="another query"):
        _echo("ECHO B").matcher(state=state)


def test_max_matches_is_enforced_as_matches_come(echo: kinds.Kind) -> None:
    query = _echo("ECHO A", max_matches=2)
    taken: list[list[EchoMatch]] = []
    matcher = query.matcher(on_matches=taken.append)
    with pytest.raises(MatchLimitError, match="max_matches=2"):
        matcher.push(EVENTS)
    assert [_ids(chunk) for chunk in taken] == [[1, 3]]


def _files(tmp_path: Path) -> tuple[Path, Path]:
    query = tmp_path / "q.echo"
    query.write_text("// echo every A\nECHO A\n", encoding="utf-8")
    data = tmp_path / "events.jsonl"
    data.write_text("".join(json.dumps(e) + "\n" for e in EVENTS), encoding="utf-8")
    return query, data


def test_kleene_run(echo: kinds.Kind, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    query, data = _files(tmp_path)
    out, rejected = tmp_path / "out.jsonl", tmp_path / "rejected.jsonl"
    done = run_main(monkeypatch, "run", query, "-i", data, "-o", out, "--rejected", rejected)
    assert done.code == 0, done.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records == [
        {"ids": {"e": [i]}, "start": t, "end": t, "partition": []}
        for i, t in ((1, 1), (3, 3), (5, 5), (6, 8))
    ]
    assert [json.loads(line)["id"] for line in rejected.read_text().splitlines()] == [4]
    assert "local (echo A)" in done.stdout.decode()


def test_kleene_run_stops_at_max_matches(
    echo: kinds.Kind, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    query, data = _files(tmp_path)
    out = tmp_path / "out.jsonl"
    done = run_main(monkeypatch, "run", query, "-i", data, "-o", out, "--max-matches", "3")
    assert done.code == 1 and "max_matches=3" in done.stderr
    assert len(out.read_text().splitlines()) == 3


def test_kleene_explain(echo: kinds.Kind, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    query, _ = _files(tmp_path)
    done = run_main(monkeypatch, "explain", query)
    assert done.code == 0, done.stderr
    assert done.stdout.decode() == "echo: every A event\n"


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (("--strategy", "skip-till-any-match"), "--strategy does not apply to an ECHO query"),
        (("--max-runs", "5"), "--max-runs does not apply to an ECHO query"),
        (("--engine", "spark"), "is an ECHO query, which runs on the local engine only"),
    ],
)
def test_kleene_run_refuses_what_the_kind_does_not_take(
    echo: kinds.Kind,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    flags: tuple[str, ...],
    says: str,
) -> None:
    query, data = _files(tmp_path)
    out = tmp_path / "out.jsonl"
    done = run_main(monkeypatch, "run", query, "-i", data, "-o", out, *flags)
    assert done.code == 2 and says in done.stderr, done.stderr
    assert not out.exists()


def test_kleene_explain_refuses_png(
    echo: kinds.Kind, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    query, _ = _files(tmp_path)
    done = run_main(monkeypatch, "explain", query, "--png", tmp_path / "q.png")
    assert done.code == 2
    assert "--png does not apply to an ECHO query; it applies to" in done.stderr
    assert not (tmp_path / "q.png").exists()
