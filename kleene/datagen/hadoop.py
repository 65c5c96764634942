"""A synthetic Hadoop cluster-monitoring trace shaped like SIGMOD 2014, section 6.5.

The paper's case study merges two logs into one stream: Hadoop's own job and task logs
(a job starts, its mappers run, its reducers pull the mappers' output and reduce, the
job ends) and Ganglia's system metrics, sampled every 15 seconds on every node. Queries
Q1-Q6 (Tables 1 and 5) read the following event types, which this generator produces:

=============  =============================================  ===========================
type           when                                           attributes
=============  =============================================  ===========================
JobStart       a job is submitted                             job_id
Mapper         a mapper finishes (its summary record)         job_id, task_id, node,
                                                              period (runtime, s),
                                                              bytes (map output)
DataIO         map output is written (``bytes > 0``) or a     job_id, task_id, node, bytes
               reducer pulls part of it away (``bytes < 0``)
ReducerStart   a reducer starts                               job_id, task_id, node
DataPull       a reducer finishes fetching one mapper's       job_id, task_id (the
               partition of the map output                    reducer's), node, period
                                                              (fetch time, s), bytes
ReducerEnd     a reducer finishes (its summary record)        job_id, task_id, node,
                                                              period (runtime, s)
JobEnd         the job's last reducer is done                 job_id
LoadStd        Ganglia's sample on one node, every            node, val
               ``load_interval`` seconds
=============  =============================================  ===========================

Attributes a type does not have are null. ``timestamp`` is in seconds (float, whole
milliseconds, as in Hadoop's logs); ``id`` is the event's position in the table, which is
sorted by time. ``val`` of a LoadStd sample is the node's load (running tasks plus a
little background noise) as a standard score across all nodes at that instant: how far
the node is from the cluster's mean load, in standard deviations.

How a job unfolds (the paper gives the shape, not the distributions; these are the
choices made here, all drawn from the seeded generator):

* jobs arrive as a Poisson process with mean gap ``job_interval``;
* a job has ``mappers`` and ``reducers`` tasks (uniform in the given inclusive ranges),
  each on a uniformly drawn node of ``1..nodes``;
* mappers launch a few at a time after a set-up delay and run a log-normal time with
  median ``mapper_period``; each writes a log-normal amount of output (median 64 MiB)
  that is split among the reducers;
* every reducer starts shortly after the job's first mapper finishes, pulls its part of
  every mapper's output (one DataPull per mapper, after that mapper is done; the fetch
  time is log-normal with median ``pull_period`` and sigma 0.3, and with probability
  ``straggler_prob`` ten times longer: the stragglers Q3 looks for), then reduces for a
  log-normal time with median ``reducer_period``;
* the job ends shortly after its last reducer.

Every job's DataIO bytes therefore sum to zero: what the mappers write, the reducers
take away (Q4 tracks that queue). Everything is computed in integer milliseconds with
numpy, so the order constraints above hold exactly and large traces take seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from kleene.datagen._checks import at_least, bounds, positive, probability

EVENT_TYPES = (
    "JobStart",
    "Mapper",
    "DataIO",
    "ReducerStart",
    "DataPull",
    "ReducerEnd",
    "JobEnd",
    "LoadStd",
)
COLUMNS = ("id", "type", "timestamp", "job_id", "task_id", "node", "period", "bytes", "val")

# Among events of one millisecond, the order of EVENT_TYPES (a pulled part's DataIO comes
# after its DataPull; a mapper's output DataIO after the Mapper record).
_RANK = {name: i for i, name in enumerate(EVENT_TYPES)}
_RANK_PULL_IO = len(EVENT_TYPES)  # DataIO of a pull: right after the DataPull
_MIB = 1 << 20


@dataclass(frozen=True)
class HadoopParams:
    """The knobs of the trace; see the module docstring for what each one shapes."""

    jobs: int = 100
    nodes: int = 20
    seed: int = 0
    mappers: tuple[int, int] = (10, 40)
    reducers: tuple[int, int] = (2, 6)
    job_interval: float = 30.0
    mapper_period: float = 20.0
    reducer_period: float = 10.0
    pull_period: float = 0.5
    straggler_prob: float = 0.02
    load_interval: float = 15.0

    def validate(self) -> None:
        """Raise ValueError when a parameter is out of its domain."""
        at_least("jobs", self.jobs, 0)
        at_least("nodes", self.nodes, 1)
        bounds("mappers", self.mappers, 1)
        bounds("reducers", self.reducers, 1)
        for name in ("job_interval", "mapper_period", "reducer_period", "pull_period"):
            positive(name, getattr(self, name))
        at_least("load_interval (s)", self.load_interval, 0.001)
        probability("straggler_prob", self.straggler_prob)


def generate(
    jobs: int = 100,
    *,
    nodes: int = 20,
    seed: int = 0,
    mappers: tuple[int, int] = (10, 40),
    reducers: tuple[int, int] = (2, 6),
    job_interval: float = 30.0,
    mapper_period: float = 20.0,
    reducer_period: float = 10.0,
    pull_period: float = 0.5,
    straggler_prob: float = 0.02,
    load_interval: float = 15.0,
) -> pa.Table:
    """Generate a Hadoop monitoring trace of ``jobs`` jobs on ``nodes`` nodes.

    Returns a table with columns ``id, type, timestamp, job_id, task_id, node, period,
    bytes, val`` sorted by ``timestamp`` (seconds); see the module docstring for the event
    types and what each parameter controls. Periods are in seconds. With the defaults a
    job yields about 260 events and Ganglia adds ``nodes`` LoadStd samples every
    ``load_interval`` seconds. The same parameters and seed always give the same table.
    """
    return generate_table(
        HadoopParams(
            jobs,
            nodes,
            seed,
            mappers,
            reducers,
            job_interval,
            mapper_period,
            reducer_period,
            pull_period,
            straggler_prob,
            load_interval,
        )
    )


def generate_table(params: HadoopParams) -> pa.Table:
    """:func:`generate` with its parameters in one object."""
    params.validate()
    rng = np.random.default_rng(params.seed)
    parts = _job_events(params, rng)
    end_ms = max((int(p.time.max()) for p in parts if p.time.size), default=0)
    parts.append(_load_samples(params, rng, parts, end_ms))
    return _assemble(parts)


# --- the pieces -------------------------------------------------------------------------


@dataclass
class _Part:
    """Events of one type (and emission rank) as parallel columns; None: all null."""

    type_name: str
    rank: int
    time: np.ndarray  # int64 milliseconds
    job_id: np.ndarray | None = None
    task_id: np.ndarray | None = None
    node: np.ndarray | None = None
    period: np.ndarray | None = None  # int64 milliseconds
    bytes: np.ndarray | None = None
    val: np.ndarray | None = None


def _lognormal_ms(rng: np.random.Generator, median_s: float, sigma: float, n: int) -> np.ndarray:
    """Log-normal durations in whole milliseconds, at least 1."""
    ms = np.rint(rng.lognormal(np.log(median_s * 1000.0), sigma, size=n)).astype(np.int64)
    return np.maximum(ms, 1)


def _ranks_within(sizes: np.ndarray) -> np.ndarray:
    """0, 1, ..., size-1 for each group of ``sizes``, concatenated."""
    total = int(sizes.sum())
    starts = np.cumsum(sizes) - sizes
    return np.arange(total, dtype=np.int64) - np.repeat(starts, sizes)


@dataclass
class _Tasks:
    """The mappers or the reducers of all jobs as parallel columns (times in ms)."""

    job: np.ndarray  # index of each task's job
    task: np.ndarray  # task id
    node: np.ndarray
    start: np.ndarray
    end: np.ndarray


def _job_events(p: HadoopParams, rng: np.random.Generator) -> list[_Part]:
    n_jobs = p.jobs
    job_ids = np.arange(1, n_jobs + 1, dtype=np.int64)
    gaps = np.rint(rng.exponential(p.job_interval * 1000.0, size=n_jobs)).astype(np.int64)
    submit = np.cumsum(np.maximum(gaps, 1))
    n_map = rng.integers(p.mappers[0], p.mappers[1] + 1, size=n_jobs)
    n_red = rng.integers(p.reducers[0], p.reducers[1] + 1, size=n_jobs)
    maps, map_out = _mappers(p, rng, submit, n_map)
    reds = _reducers(p, rng, maps, n_map, n_red)
    pull_red, part, fetch, pull_end = _pulls(p, rng, maps, map_out, reds, n_map, n_red)

    last_pull = np.zeros(reds.task.size, dtype=np.int64)
    np.maximum.at(last_pull, pull_red, pull_end)
    reds.end = last_pull + _lognormal_ms(rng, p.reducer_period, 0.5, reds.task.size)
    job_last = np.zeros(n_jobs, dtype=np.int64)
    np.maximum.at(job_last, reds.job, reds.end)
    job_end = job_last + rng.integers(500, 2001, size=n_jobs)

    mapper = (job_ids[maps.job], maps.task, maps.node)
    reducer = (job_ids[reds.job], reds.task, reds.node)
    puller = (reducer[0][pull_red], reds.task[pull_red], reds.node[pull_red])
    return [
        _Part("JobStart", _RANK["JobStart"], submit, job_id=job_ids),
        _task_part("Mapper", maps.end, mapper, period=maps.end - maps.start, size=map_out),
        _task_part("DataIO", maps.end, mapper, size=map_out),
        _task_part("ReducerStart", reds.start, reducer),
        _task_part("DataPull", pull_end, puller, period=fetch, size=part),
        _task_part("DataIO", pull_end, puller, size=-part, rank=_RANK_PULL_IO),
        _task_part("ReducerEnd", reds.end, reducer, period=reds.end - reds.start),
        _Part("JobEnd", _RANK["JobEnd"], job_end, job_id=job_ids),
    ]


def _task_part(
    name: str,
    time: np.ndarray,
    who: tuple[np.ndarray, np.ndarray, np.ndarray],
    *,
    period: np.ndarray | None = None,
    size: np.ndarray | None = None,
    rank: int | None = None,
) -> _Part:
    """Events about tasks: ``who`` gives each event's job id, task id and node."""
    job_id, task_id, node = who
    rank = _RANK[name] if rank is None else rank
    return _Part(name, rank, time, job_id, task_id, node, period=period, bytes=size)


def _mappers(
    p: HadoopParams, rng: np.random.Generator, submit: np.ndarray, n_map: np.ndarray
) -> tuple[_Tasks, np.ndarray]:
    """Mappers, launched four at a time 250 ms apart after a 1-3 s set-up, and the bytes
    each outputs."""
    map_job = np.repeat(np.arange(p.jobs), n_map)
    n_mappers = map_job.size
    setup = rng.integers(1000, 3001, size=p.jobs)
    launch = (_ranks_within(n_map) // 4) * 250 + rng.integers(0, 250, size=n_mappers)
    start = submit[map_job] + setup[map_job] + launch
    end = start + _lognormal_ms(rng, p.mapper_period, 0.4, n_mappers)
    node = rng.integers(1, p.nodes + 1, size=n_mappers)
    out = np.rint(rng.lognormal(np.log(64 * _MIB), 0.5, size=n_mappers)).astype(np.int64)
    task = np.arange(n_mappers, dtype=np.int64)
    return _Tasks(map_job, task, node, start, end), out


def _reducers(
    p: HadoopParams, rng: np.random.Generator, maps: _Tasks, n_map: np.ndarray, n_red: np.ndarray
) -> _Tasks:
    """Reducers, started 0.5-2 s after their job's first mapper finishes; their end is
    set once their pulls are known."""
    red_job = np.repeat(np.arange(p.jobs), n_red)
    n_reducers = red_job.size
    map_offset = np.cumsum(n_map) - n_map
    first_map_end = np.minimum.reduceat(maps.end, map_offset) if p.jobs else np.zeros(0, np.int64)
    start = first_map_end[red_job] + rng.integers(500, 2001, size=n_reducers)
    node = rng.integers(1, p.nodes + 1, size=n_reducers)
    task = maps.task.size + np.arange(n_reducers, dtype=np.int64)
    return _Tasks(red_job, task, node, start, np.zeros(n_reducers, dtype=np.int64))


def _pulls(
    p: HadoopParams,
    rng: np.random.Generator,
    maps: _Tasks,
    map_out: np.ndarray,
    reds: _Tasks,
    n_map: np.ndarray,
    n_red: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every reducer fetches its part of every mapper of its job: per pull, its reducer,
    the bytes fetched, the fetch time and when it ends."""
    n_mappers = maps.task.size
    map_offset = np.cumsum(n_map) - n_map
    pull_red = np.repeat(np.arange(reds.task.size), n_map[reds.job])
    pull_map = map_offset[reds.job][pull_red] + _ranks_within(n_map[reds.job])
    n_pulls = pull_red.size
    weight = rng.uniform(0.5, 1.5, size=n_pulls)
    share = weight / np.bincount(pull_map, weights=weight, minlength=n_mappers)[pull_map]
    part = np.floor(map_out[pull_map] * share).astype(np.int64)
    # the last reducer of the job takes what rounding left, so parts sum to the output
    last_red = _ranks_within(n_red)[pull_red] == n_red[reds.job][pull_red] - 1
    left = map_out - np.bincount(pull_map, weights=part, minlength=n_mappers).astype(np.int64)
    part[last_red] += left[pull_map[last_red]]
    fetch = _lognormal_ms(rng, p.pull_period, 0.3, n_pulls)
    straggle = rng.random(n_pulls) < p.straggler_prob
    fetch[straggle] *= 10
    pull_end = np.maximum(maps.end[pull_map], reds.start[pull_red]) + fetch
    return pull_red, part, fetch, pull_end


def _load_samples(
    p: HadoopParams, rng: np.random.Generator, parts: list[_Part], end_ms: int
) -> _Part:
    """Ganglia's samples: every node, every ``load_interval`` from 0 to the trace's end.

    A node's load at a sample is the number of its tasks running then plus N(0, 0.25)
    noise; ``val`` is that load's standard score across the nodes at the sample."""
    interval = max(round(p.load_interval * 1000.0), 1)
    ticks = end_ms // interval + 1
    running = np.zeros((p.nodes, ticks + 1), dtype=np.int64)
    for start_name, end_name in (("Mapper", "Mapper"), ("ReducerStart", "ReducerEnd")):
        starts = next(x for x in parts if x.type_name == start_name)
        ends = next(x for x in parts if x.type_name == end_name)
        assert ends.period is not None and ends.node is not None
        begin = ends.time - ends.period if start_name == end_name else starts.time
        first_tick = -(-begin // interval)  # first sample at or after the task starts
        stop_tick = -(-ends.time // interval)  # first sample at or after it ends
        np.add.at(running, (ends.node - 1, first_tick), 1)
        np.add.at(running, (ends.node - 1, stop_tick), -1)
    load = np.cumsum(running, axis=1)[:, :ticks] + rng.normal(0.0, 0.25, size=(p.nodes, ticks))
    spread = load.std(axis=0)
    score = np.where(spread > 0, (load - load.mean(axis=0)) / np.where(spread > 0, spread, 1), 0)
    # events ordered by tick, then node
    return _Part(
        "LoadStd",
        _RANK["LoadStd"],
        np.repeat(np.arange(ticks, dtype=np.int64), p.nodes) * interval,
        node=np.tile(np.arange(1, p.nodes + 1, dtype=np.int64), ticks),
        val=np.round(score.T.ravel(), 3),
    )


def _column(
    parts: list[_Part], name: str, dtype: pa.DataType, order: np.ndarray, scale: float = 1.0
) -> pa.Array:
    """One output column in time order; null where a type lacks the attribute."""
    values = []
    valid = []
    np_dtype = np.float64 if pa.types.is_floating(dtype) else np.int64
    for part in parts:
        col = getattr(part, name)
        n = part.time.size
        if col is None:
            values.append(np.zeros(n, dtype=np_dtype))
            valid.append(np.zeros(n, dtype=bool))
        else:
            values.append(np.asarray(col, dtype=np_dtype))
            valid.append(np.ones(n, dtype=bool))
    data = np.concatenate(values)[order]
    if scale != 1.0:
        data = data * scale
    mask = ~np.concatenate(valid)[order]
    return pa.array(data, type=dtype, mask=mask if mask.any() else None)


def _assemble(parts: list[_Part]) -> pa.Table:
    time_ms = np.concatenate([p.time for p in parts]).astype(np.int64)
    rank = np.concatenate([np.full(p.time.size, p.rank, dtype=np.int64) for p in parts])
    within = np.concatenate([np.arange(p.time.size, dtype=np.int64) for p in parts])
    order = np.lexsort((within, rank, time_ms))
    names = pa.array([p.type_name for p in parts], pa.string())
    type_index = np.repeat(np.arange(len(parts)), [p.time.size for p in parts])[order]
    n = time_ms.size
    return pa.table(
        {
            "id": pa.array(np.arange(n, dtype=np.int64)),
            "type": names.take(pa.array(type_index)),
            "timestamp": pa.array(time_ms[order] / 1000.0),
            "job_id": _column(parts, "job_id", pa.int64(), order),
            "task_id": _column(parts, "task_id", pa.int64(), order),
            "node": _column(parts, "node", pa.int64(), order),
            "period": _column(parts, "period", pa.float64(), order, scale=0.001),
            "bytes": _column(parts, "bytes", pa.int64(), order),
            "val": _column(parts, "val", pa.float64(), order),
        }
    )
