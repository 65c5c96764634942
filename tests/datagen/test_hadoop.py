"""The Hadoop monitoring trace (SIGMOD 2014, section 6.5) and query Q1 over it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import kleene
from kleene import Match
from kleene.datagen.hadoop import COLUMNS, EVENT_TYPES, generate

QUERIES = Path(__file__).resolve().parents[2] / "bench" / "queries"
SMALL = {"jobs": 8, "nodes": 5, "seed": 3}


def small(seed: int = SMALL["seed"]) -> pa.Table:
    return generate(jobs=SMALL["jobs"], nodes=SMALL["nodes"], seed=seed)


@pytest.fixture(scope="module")
def trace() -> pa.Table:
    return small()


@pytest.fixture(scope="module")
def frame(trace: pa.Table) -> pd.DataFrame:
    return trace.to_pandas()


def test_same_seed_same_trace(trace: pa.Table) -> None:
    assert small().equals(trace)


def test_other_seed_other_trace(trace: pa.Table) -> None:
    assert not small(seed=4).equals(trace)


def test_schema(trace: pa.Table) -> None:
    assert tuple(trace.column_names) == COLUMNS
    assert trace.schema.field("type").type == pa.string()
    assert trace.schema.field("timestamp").type == pa.float64()
    for name in ("id", "job_id", "task_id", "node", "bytes"):
        assert trace.schema.field(name).type == pa.int64()
    for name in ("period", "val"):
        assert trace.schema.field(name).type == pa.float64()


def test_ids_are_positions_and_time_is_sorted(frame: pd.DataFrame) -> None:
    assert (frame["id"].to_numpy() == np.arange(len(frame))).all()
    assert (np.diff(frame["timestamp"].to_numpy()) >= 0).all()
    # whole milliseconds
    ms = frame["timestamp"].to_numpy() * 1000
    assert np.allclose(ms, np.round(ms))


def test_event_type_mix(frame: pd.DataFrame) -> None:
    counts = frame["type"].value_counts()
    assert set(counts.index) == set(EVENT_TYPES)
    jobs = SMALL["jobs"]
    assert counts["JobStart"] == counts["JobEnd"] == jobs
    assert counts["ReducerStart"] == counts["ReducerEnd"]
    mappers = frame[frame["type"] == "Mapper"].groupby("job_id").size()
    reducers = frame[frame["type"] == "ReducerStart"].groupby("job_id").size()
    assert mappers.between(10, 40).all() and len(mappers) == jobs
    assert reducers.between(2, 6).all() and len(reducers) == jobs
    # every reducer pulls from every mapper of its job; each pull and each map output
    # is also a DataIO
    assert counts["DataPull"] == int((mappers * reducers).sum())
    assert counts["DataIO"] == counts["Mapper"] + counts["DataPull"]
    # one Ganglia sample per node every 15 s from 0 to the end of the trace
    end = frame["timestamp"].max()
    assert counts["LoadStd"] == SMALL["nodes"] * (int(end // 15) + 1)


def test_ranges_follow_the_parameters() -> None:
    t = generate(jobs=5, mappers=(3, 3), reducers=(1, 1), nodes=2, seed=0).to_pandas()
    assert (t[t["type"] == "Mapper"].groupby("job_id").size() == 3).all()
    assert (t[t["type"] == "ReducerEnd"].groupby("job_id").size() == 1).all()
    assert set(t["node"].dropna().astype(int)) <= {1, 2}


def test_attributes_present_exactly_where_the_type_has_them(frame: pd.DataFrame) -> None:
    has = {
        "JobStart": {"job_id"},
        "JobEnd": {"job_id"},
        "Mapper": {"job_id", "task_id", "node", "period", "bytes"},
        "DataIO": {"job_id", "task_id", "node", "bytes"},
        "ReducerStart": {"job_id", "task_id", "node"},
        "DataPull": {"job_id", "task_id", "node", "period", "bytes"},
        "ReducerEnd": {"job_id", "task_id", "node", "period"},
        "LoadStd": {"node", "val"},
    }
    optional = ("job_id", "task_id", "node", "period", "bytes", "val")
    for etype, attrs in has.items():
        rows = frame[frame["type"] == etype]
        for attr in optional:
            present = rows[attr].notna()
            assert present.all() if attr in attrs else not present.any(), (etype, attr)


def test_job_lifecycle_order(frame: pd.DataFrame) -> None:
    start = frame[frame["type"] == "JobStart"].set_index("job_id")["timestamp"]
    end = frame[frame["type"] == "JobEnd"].set_index("job_id")["timestamp"]
    tasks = frame[frame["job_id"].notna() & ~frame["type"].isin(["JobStart", "JobEnd"])]
    job = tasks["job_id"].astype(int)
    assert (tasks["timestamp"].to_numpy() > start.loc[job].to_numpy()).all()
    assert (tasks["timestamp"].to_numpy() < end.loc[job].to_numpy()).all()


def test_reducer_lifecycle_and_periods(frame: pd.DataFrame) -> None:
    rs = frame[frame["type"] == "ReducerStart"].set_index("task_id")["timestamp"]
    re = frame[frame["type"] == "ReducerEnd"].set_index("task_id")
    assert np.allclose(re["period"], re["timestamp"] - rs.loc[re.index])
    pulls = frame[frame["type"] == "DataPull"]
    task = pulls["task_id"]
    assert (pulls["timestamp"].to_numpy() > rs.loc[task].to_numpy()).all()
    assert (pulls["timestamp"].to_numpy() < re["timestamp"].loc[task].to_numpy()).all()
    assert (frame.loc[frame["type"] == "Mapper", "period"] > 0).all()


def test_queued_data_of_every_job_drains_to_zero(frame: pd.DataFrame) -> None:
    io = frame[frame["type"] == "DataIO"]
    assert (io.groupby("job_id")["bytes"].sum() == 0).all()
    written = io[io["bytes"] > 0].set_index("task_id")["bytes"]
    mapper = frame[frame["type"] == "Mapper"].set_index("task_id")["bytes"]
    assert written.sort_index().equals(mapper.sort_index())


def test_load_samples_are_standard_scores(frame: pd.DataFrame) -> None:
    load = frame[frame["type"] == "LoadStd"]
    per_tick = load.groupby("timestamp")["val"]
    assert (per_tick.size() == SMALL["nodes"]).all()
    assert (per_tick.mean().abs() < 0.01).all()
    assert np.allclose(per_tick.std(ddof=0), 1.0, atol=0.01)
    ticks = np.sort(load["timestamp"].unique())
    assert np.allclose(np.diff(ticks), 15.0)


def test_stragglers_follow_the_probability() -> None:
    def pull_periods(prob: float) -> np.ndarray:
        t = generate(jobs=4, straggler_prob=prob, pull_period=0.5, seed=7).to_pandas()
        return t.loc[t["type"] == "DataPull", "period"].to_numpy()

    assert pull_periods(0.0).max() < 2.5  # sigma 0.3 around 0.5 s, no straggler
    assert np.median(pull_periods(1.0)) > 4.0  # every pull ten times longer


def test_empty_job_list_gives_only_the_first_load_sample() -> None:
    t = generate(jobs=0, nodes=3)
    assert t.column("type").to_pylist() == ["LoadStd"] * 3


@pytest.mark.parametrize(
    "bad",
    [
        {"jobs": -1},
        {"nodes": 0},
        {"mappers": (0, 3)},
        {"reducers": (4, 2)},
        {"straggler_prob": 1.5},
        {"job_interval": 0},
        {"load_interval": 0},
    ],
)
def test_bad_parameters_are_rejected(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        generate(**bad)  # type: ignore[arg-type]


def test_q1_finds_one_match_per_job_with_its_mapper_statistics(
    trace: pa.Table, frame: pd.DataFrame
) -> None:
    q = kleene.compile((QUERIES / "hadoop_q1.sase").read_text(), time_unit="s")
    result = q.run_detailed(trace)
    assert result.rejected == []
    got = {m.values()["a.job_id"]: m.values() for m in result.matches if isinstance(m, Match)}

    start = frame[frame["type"] == "JobStart"].set_index("job_id")["timestamp"]
    end = frame[frame["type"] == "JobEnd"].set_index("job_id")["timestamp"]
    mappers = frame[frame["type"] == "Mapper"]
    within = mappers["timestamp"].to_numpy() > start.loc[mappers["job_id"]].to_numpy()
    within &= mappers["timestamp"].to_numpy() < end.loc[mappers["job_id"]].to_numpy()
    stats = mappers[within].groupby("job_id")["period"].agg(["mean", "max"])
    expected_jobs = [j for j in stats.index if end[j] - start[j] <= 86400]

    assert sorted(got) == sorted(expected_jobs)
    assert len(result.matches) == SMALL["jobs"]
    for job in expected_jobs:
        assert got[job]["avg(b[].period)"] == pytest.approx(stats.loc[job, "mean"])
        assert got[job]["max(b[].period)"] == pytest.approx(stats.loc[job, "max"])


def test_q4_tracks_the_queue_of_every_job(trace: pa.Table, frame: pd.DataFrame) -> None:
    q = kleene.compile((QUERIES / "hadoop_q4.sase").read_text(), time_unit="s")
    matches = q.run(trace)
    io = frame[frame["type"] == "DataIO"]
    assert len(matches) == len(io)  # one match per DataIO: each closes a prefix
    last = {}
    for m in matches:
        last[m.values()["a.job_id"]] = m.values()["sum(b[].bytes)"]
    assert last == dict.fromkeys(range(1, SMALL["jobs"] + 1), 0)
