"""What the peer runners share: the query in each engine's language, the output
protocol and the memory probe. Standard library only, since every runner imports it from
its own virtual environment.

The query finds a falling-then-rising price per stock symbol: a start row, one or more
rows each strictly below the row before, then a row strictly above the last of them,
with the rows contiguous within the symbol's partition. In MATCH_RECOGNIZE that is
``PATTERN (A B+ C)`` with ``PARTITION BY symbol ORDER BY <time>`` and the default
``AFTER MATCH SKIP PAST LAST ROW``; in kleene it is partition contiguity with
``OUTPUT NON-OVERLAP`` (SIGMOD 2008, section 2). Why the two agree:

* Partition contiguity makes kleene's runs use every next event of the partition, which
  is how MATCH_RECOGNIZE matches rows of a partition.
* B and C exclude each other (a row falls, rises or stays level), so from a given start
  row there is at most one match: greedy or reluctant B+ and kleene's take/proceed
  choice all lead to the same one.
* MATCH_RECOGNIZE reports the match with the earliest start, then resumes after its
  last row. kleene's non-overlap output picks, per partition, the match with the
  earliest end (ties: earliest start) and drops those starting at or before that end.
  Along a partition the end of the match from a start row never decreases as the start
  moves later (starts within one falling stretch share its end), so both rules pick the
  same matches.

A match is reported as ``[symbol, a, b_first, b_last, c]`` (event ids); with contiguity
the first and last B fix the whole B run.

Runner protocol: each match on its own line of standard output as a JSON array, then one
line ``{"summary": {...}}`` with at least ``engine``, ``version``, ``seconds``
(processing time measured inside the process, without interpreter, JVM or session
start-up), ``cpu_seconds`` (CPU time of the process tree over the measured phase) and
``peak_rss_mib``.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

KLEENE_QUERY = """PATTERN SEQ(Stock a, Stock+ b[], Stock c)
WHERE partition_contiguity AND [symbol]
  AND b[1].price < a.price
  AND b[i].price < b[i-1].price
  AND c.price > b[b.LEN].price
OUTPUT NON-OVERLAP"""

# B falls below the row before it; C rises above the last B. The standard form uses
# PREV(); Flink 2.3 rejects PREV() in DEFINE ("physical offsets within partition"), so its
# form reads the previous B with LAST(B.price, 1) and the start row for the first B.
DEFINE_PREV = """B AS B.price < PREV(B.price),
    C AS C.price > PREV(C.price)"""
DEFINE_LAST = """B AS B.price < LAST(B.price, 1)
         OR (LAST(B.price, 1) IS NULL AND B.price < A.price),
    C AS C.price > LAST(B.price)"""


def match_recognize_sql(table: str, order_by: str, define: str, into: str | None = None) -> str:
    """The MATCH_RECOGNIZE query over ``table`` (columns id, symbol, price, order_by)."""
    head = f"INSERT INTO {into}\n" if into else ""
    return f"""{head}SELECT symbol, a_id, b_first, b_last, c_id
FROM {table}
MATCH_RECOGNIZE (
  PARTITION BY symbol
  ORDER BY {order_by}
  MEASURES A.id AS a_id, FIRST(B.id) AS b_first, LAST(B.id) AS b_last, C.id AS c_id
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (A B+ C)
  DEFINE
    {define}
)"""


def emit(matches: Iterable[Sequence[int]], summary: dict[str, Any]) -> None:
    """Print the matches, one JSON array a line, then the summary line."""
    out = sys.stdout
    for m in matches:
        out.write(json.dumps([int(v) for v in m]) + "\n")
    out.write(json.dumps({"summary": summary}) + "\n")
    out.flush()


def tree_cpu_seconds() -> float:
    """User plus system CPU time used so far by this process and its live descendants
    (every thread of each)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in _descendants(os.getpid()):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


def self_peak_mib() -> float:
    """This process's peak resident set size so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class TreeMemory:
    """Samples the resident set of this process plus all its descendants (a JVM a runner
    launched, say) every ``interval`` seconds; ``peak_mib`` is the largest sum seen.
    Pages shared between processes are counted once per process. The process list is
    re-read every 20 samples."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.peak_mib = 0.0
        self._pids: list[int] = []
        self._samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def sample(self) -> None:
        if self._samples % 20 == 0:
            self._pids = _descendants(os.getpid())
        self._samples += 1
        total = sum(_rss_kib(pid) for pid in self._pids)
        self.peak_mib = max(self.peak_mib, total / 1024)


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0
