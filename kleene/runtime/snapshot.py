"""The snapshot format: versioned, data-only, verified (docs/architecture.md, "Snapshots").

A snapshot is a header and a compressed body::

    magic "\\x89kleene\\n" (8 bytes) | format version (2 bytes, big endian)
    | body length (4 bytes) | CRC-32 of the rest (4 bytes)
    | kind (1 byte: Q query, P program, I interval query) | plan fingerprint (32 bytes) | zlib(body)

The body is a tree of plain values (None, bool, int, float, str, bytes, list, tuple,
dict, set, frozenset, date and time values, Decimal, time zones) written as JSON, where
every container is a list headed by a tag (:data:`LIST`, :data:`TUPLE`, ...), so that
tuples, non-string keys and the other types come back exactly. Loading builds nothing
but those values: no code named by the bytes runs. The state classes of the runtime
turn themselves into such trees (``to_data``) and are rebuilt from them field by field
(``from_data``), checking every type, length, index and cross reference on the way, so
that a malformed payload is refused on load and never fails later.

The fingerprint is a SHA-256 of the compiled plan's canonical query text (the AST
printed back) and of every option that changes what the state means or what a resumed
matcher finds: strategy, output format, window, engine, allowed lateness and the event
field names. ``max_runs`` is left out: a matcher may resume under a higher limit.

Every refusal is a :class:`~kleene.errors.SnapshotError` that names the cause.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import hashlib
import json
import struct
import zlib
import zoneinfo
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from kleene.errors import SnapshotError
from kleene.events import EVENT_TIME, EVENT_TYPE, FIRST_ATTRIBUTE, is_missing, value_kind

if TYPE_CHECKING:
    from kleene.compiler.plan import Plan
    from kleene.runtime.config import MatcherConfig

MAGIC = b"\x89kleene\n"
VERSION = 2  # 2: buffer pointers name an entry slot, not a Dewey version
# the layout of the stream time every kind's state holds (kleene.runtime.stream_time),
# part of every fingerprint: a snapshot of another layout is refused by it
STREAM_LAYOUT = 1
# one tag per kind of query (kleene.kinds), so a state never reaches another kind's matcher
QUERY, PROGRAM, INTERVAL, TPSTREAM, EVENTSET = b"Q", b"P", b"I", b"T", b"S"
_KINDS = {
    QUERY: "a SASE+ query",
    PROGRAM: "a SASE+ program",
    INTERVAL: "a query over interval events",
    TPSTREAM: "a TPStream query",
    EVENTSET: "an event-set pattern",
}
_HEAD = struct.Struct(">8sHII")  # magic, version, body length, CRC-32
_FINGERPRINT = 32
_LEVEL = 1  # zlib: the state is rewritten every micro-batch, speed matters most

# container tags of the body's JSON
LIST, TUPLE, DICT, SET, FROZENSET, BYTES, BIGINT = range(7)
DATETIME, DATE, TIME, TIMEDELTA, DECIMAL, FIXED_ZONE, NAMED_ZONE, REF, FLAT = range(7, 16)
_INT64 = 1 << 63

_REDO = "take the snapshot again, or start a matcher without state"


def fail(what: str) -> NoReturn:
    """Refuse a payload whose structure is wrong."""
    raise SnapshotError(f"the snapshot's state is malformed ({what}); {_REDO}")


# --- framing ----------------------------------------------------------------------------


def seal(kind: bytes, fingerprint: bytes, tree: Any) -> bytes:
    """The snapshot bytes of a state tree."""
    body = kind + fingerprint + zlib.compress(dumps(tree), _LEVEL)
    return _HEAD.pack(MAGIC, VERSION, len(body), zlib.crc32(body)) + body


def unseal(data: Any, kind: bytes, fingerprint: bytes) -> Any:
    """The state tree of snapshot bytes taken with the same ``kind`` and fingerprint."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise SnapshotError(
            f"a snapshot is bytes (from snapshot()), not {type(data).__name__}; {_REDO}"
        )
    data = bytes(data)
    if not data.startswith(MAGIC[: len(data)]) or not data:
        raise SnapshotError(
            "these bytes are not a kleene snapshot (no kleene header; snapshots taken "
            f"before format version 1 were pickles and cannot be loaded); {_REDO}"
        )
    if len(data) < _HEAD.size:
        raise SnapshotError(f"the snapshot is truncated ({len(data)} bytes); {_REDO}")
    _magic, version, length, crc = _HEAD.unpack_from(data)
    if version != VERSION:
        raise SnapshotError(
            f"the snapshot has format version {version}, this kleene reads version "
            f"{VERSION}; resume it with the kleene that took it, or start without state"
        )
    body = data[_HEAD.size :]
    if len(body) < length:
        raise SnapshotError(
            f"the snapshot is truncated ({len(data)} of {_HEAD.size + length} bytes); {_REDO}"
        )
    if len(body) > length or zlib.crc32(body) != crc:
        raise SnapshotError(f"the snapshot is corrupt (its checksum does not match); {_REDO}")
    if body[:1] != kind:
        taken = _KINDS.get(body[:1], "something else")
        wanted = _KINDS.get(kind, f"a query of kind {kind!r}")
        raise SnapshotError(
            f"the snapshot was taken from {taken}, not from {wanted}; resume it with the "
            "object that took it"
        )
    if body[1 : 1 + _FINGERPRINT] != fingerprint:
        raise SnapshotError(
            "the snapshot was taken from another query (or the same query with other "
            "options: strategy, output, engine, window, allowed lateness or field names; "
            "or by a kleene with another state layout); resume it with the query and "
            "options that took it, or start without state"
        )
    try:
        text = zlib.decompress(body[1 + _FINGERPRINT :])
    except zlib.error as e:
        raise SnapshotError(f"the snapshot is corrupt ({e}); {_REDO}") from None
    except MemoryError:
        raise SnapshotError(f"the snapshot is too large to load; {_REDO}") from None
    return loads(text)


_FINGERPRINTS: dict[tuple[int, Any], tuple[Plan, bytes]] = {}
_CACHED = 256


def fingerprint(plan: Plan, config: MatcherConfig) -> bytes:
    """SHA-256 of what a query's state means: its canonical text and the options that
    change results (see the module docstring). Cached for the latest plans: Spark
    builds a matcher per key and micro-batch."""
    cached = _FINGERPRINTS.get((id(plan), config))
    if cached is not None and cached[0] is plan:
        return cached[1]
    if len(_FINGERPRINTS) >= _CACHED:
        _FINGERPRINTS.clear()
    found = _fingerprint(plan, config)
    _FINGERPRINTS[(id(plan), config)] = (plan, found)
    return found


def _fingerprint(plan: Plan, config: MatcherConfig) -> bytes:
    fields = config.fields
    facts = [
        plan.canonical,
        plan.strategy.value,
        plan.output.value,
        repr(plan.window),
        plan.window_has_unit,
        config.engine,
        repr(float(config.allowed_lateness)),
        [fields.type_field, fields.time_field, fields.id_field],
    ]
    return kind_fingerprint(QUERY, facts)


def kind_fingerprint(kind: bytes, facts: list[Any]) -> bytes:
    """The one recipe of every kind's fingerprint: SHA-256 of the format version, the
    stream time's layout, the kind's snapshot tag and the facts that give its state a
    meaning (the query's canonical text and every option that changes its results)."""
    return digest([VERSION, STREAM_LAYOUT, kind.decode(), *facts])


def digest(facts: Any) -> bytes:
    """SHA-256 of a JSON-able list of facts."""
    return hashlib.sha256(json.dumps(facts).encode()).digest()


# --- the body: tagged JSON ------------------------------------------------------------


class Flat:
    """A list of plain ints and floats that a state class writes as one JSON array,
    untagged (for bulk data of a fixed layout; its ``from_data`` checks each item)."""

    __slots__ = ("items",)

    def __init__(self, items: list[Any]) -> None:
        self.items = items


def dumps(tree: Any) -> bytes:
    """JSON text of a tree of plain values (see the module docstring)."""
    try:
        return json.dumps(_Encoder().encode(tree), separators=(",", ":")).encode()
    except RecursionError:
        raise SnapshotError("the matcher's state is nested too deeply to be saved") from None
    except (TypeError, ValueError) as e:  # a Flat list holding something else
        raise SnapshotError(f"the matcher's state cannot be saved: {e}") from None


def loads(text: bytes) -> Any:
    """The tree of plain values that :func:`dumps` wrote."""
    try:
        raw = json.loads(text)
        return _Decoder().decode(raw)
    except SnapshotError:
        raise
    except (RecursionError, MemoryError):
        fail("nested too deeply or too large")
    except (ValueError, TypeError, OverflowError) as e:  # bad JSON, int digits, dates
        fail(str(e))


class _Encoder:
    """Tags containers; a tuple met again (the NFA^b buffer shares its pointers between
    entries and runs) is written once and then referred to by number,
    in the order the tuples were completed."""

    def __init__(self) -> None:
        self.memo: dict[int, int] = {}
        self.keep: list[tuple[Any, ...]] = []  # alive, so that ids stay unique

    def encode(self, x: Any) -> Any:
        t = type(x)
        if t is str or t is float or t is bool or x is None:
            return x
        if t is int:
            return x if -_INT64 <= x < _INT64 else [BIGINT, hex(x)]
        if t is tuple:
            if not x:
                return [TUPLE]
            seen = self.memo.get(id(x))
            if seen is not None:
                return [REF, seen]
            out = [TUPLE, *map(self.encode, x)]
            self.memo[id(x)] = len(self.keep)
            self.keep.append(x)
            return out
        if t is list:
            return [LIST, *map(self.encode, x)]
        if t is dict:
            items: list[Any] = [DICT]
            for k, v in x.items():
                items += (self.encode(k), self.encode(v))
            return items
        if t is set or t is frozenset:
            return [SET if t is set else FROZENSET, *map(self.encode, x)]
        if t is bytes:
            return [BYTES, base64.b64encode(x).decode()]
        if t is Flat:
            return [FLAT, x.items]
        return _encode_other(x, self.encode)


class _Decoder:
    """Builds the values back; a reference names a tuple completed before it."""

    def __init__(self) -> None:
        self.tuples: list[tuple[Any, ...]] = []

    def decode(self, x: Any) -> Any:
        if type(x) is not list:
            return x  # JSON scalars: None, bool, int, float, str
        if not x or type(x[0]) is not int:
            fail("a container without its tag")
        tag = x[0]
        if tag == TUPLE:
            if len(x) == 1:
                return ()
            out = tuple(map(self.decode, x[1:]))
            self.tuples.append(out)
            return out
        if tag == REF:
            if len(x) != 2 or type(x[1]) is not int or not 0 <= x[1] < len(self.tuples):
                fail("a reference to no earlier tuple")
            return self.tuples[x[1]]
        if tag == LIST:
            return list(map(self.decode, x[1:]))
        if tag == FLAT:
            if len(x) != 2 or type(x[1]) is not list:
                fail("a flat list")
            return Flat(x[1])
        if tag == DICT:
            if len(x) % 2 == 0:
                fail("a mapping with a key but no value")
            items = list(map(self.decode, x[1:]))
            return _hashed(dict, zip(items[::2], items[1::2], strict=True))
        if tag in (SET, FROZENSET):
            return _hashed(set if tag == SET else frozenset, map(self.decode, x[1:]))
        return _decode_other(tag, x[1:])


def _encode_other(x: Any, encode: Callable[[Any], Any]) -> Any:
    base: type[Any]
    for base in (int, float, str, bytes, tuple, list):  # subclasses, e.g. IntEnum
        if isinstance(x, base):
            return encode(base(x))
    if isinstance(x, np.generic):
        return encode(x.item())
    if isinstance(x, dt.datetime):
        return [DATETIME, *_clock(x, encode), x.year, x.month, x.day]
    if isinstance(x, dt.date):
        return [DATE, x.year, x.month, x.day]
    if isinstance(x, dt.time):
        return [TIME, *_clock(x, encode)]
    if isinstance(x, dt.timedelta):
        return [TIMEDELTA, x.days, x.seconds, x.microseconds]
    if isinstance(x, decimal.Decimal):
        return [DECIMAL, str(x)]
    if isinstance(x, dt.tzinfo):
        return _zone(x)
    raise SnapshotError(
        f"the matcher's state holds a value of type {type(x).__name__} ({x!r:.60}), which "
        "a snapshot cannot save: give events plain values (numbers, strings, booleans, "
        "datetimes)"
    )


def _clock(x: dt.datetime | dt.time, encode: Callable[[Any], Any]) -> list[Any]:
    return [x.hour, x.minute, x.second, x.microsecond, x.fold, encode(x.tzinfo)]


def _zone(z: dt.tzinfo) -> list[Any]:
    if isinstance(z, dt.timezone):
        offset = z.utcoffset(None)
        name = z.tzname(None)
        return [FIXED_ZONE, offset.days, offset.seconds, offset.microseconds, name]
    key = getattr(z, "key", None) or getattr(z, "zone", None)  # zoneinfo, pytz
    if isinstance(key, str):
        return [NAMED_ZONE, key]
    raise SnapshotError(
        f"the time zone {z!r} cannot be saved in a snapshot: use datetime.timezone or a "
        "zoneinfo.ZoneInfo"
    )


def _hashed(make: Callable[[Iterable[Any]], Any], items: Iterable[Any]) -> Any:
    try:
        return make(items)
    except TypeError:
        fail("an unhashable key")


def _decode_other(tag: int, args: list[Any]) -> Any:
    if tag == BYTES and len(args) == 1 and type(args[0]) is str:
        try:
            return base64.b64decode(args[0], validate=True)
        except ValueError:
            fail("bad bytes")
    if tag == BIGINT and len(args) == 1 and type(args[0]) is str:
        return int(args[0], 16)
    if tag == DATETIME and len(args) == 9 and _ints(args, 0, 5, 6, 9):
        tz = _tz(args[5])
        h, m, s, us, fold, _tz_data, year, month, day = args
        return dt.datetime(year, month, day, h, m, s, us, tzinfo=tz, fold=fold)
    if tag == DATE and len(args) == 3 and _ints(args, 0, 3):
        return dt.date(*args)
    if tag == TIME and len(args) == 6 and _ints(args, 0, 5):
        h, m, s, us, fold, tz_data = args
        return dt.time(h, m, s, us, tzinfo=_tz(tz_data), fold=fold)
    if tag == TIMEDELTA and len(args) == 3 and _ints(args, 0, 3):
        return dt.timedelta(*args)
    if tag == DECIMAL and len(args) == 1 and type(args[0]) is str:
        try:
            return decimal.Decimal(args[0])
        except decimal.InvalidOperation:
            fail("a bad decimal")
    if tag in (FIXED_ZONE, NAMED_ZONE):
        return _tz([tag, *args])
    fail(f"unknown value tag {tag} or bad arguments")


def _ints(args: list[Any], *ranges: int) -> bool:
    spans = zip(ranges[::2], ranges[1::2], strict=True)
    return all(type(v) is int for a, b in spans for v in args[a:b])


def _tz(x: Any) -> dt.tzinfo | None:
    if x is None:
        return None
    if type(x) is list and len(x) == 5 and x[0] == FIXED_ZONE and _ints(x, 1, 4):
        if x[4] is not None and type(x[4]) is not str:
            fail("a bad time zone name")
        offset = dt.timedelta(*x[1:4])
        if x[4] is None:
            return dt.timezone(offset)
        return dt.UTC if not offset and x[4] == "UTC" else dt.timezone(offset, x[4])
    if type(x) is list and len(x) == 2 and x[0] == NAMED_ZONE and type(x[1]) is str:
        try:
            return zoneinfo.ZoneInfo(x[1])
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise SnapshotError(
                f"the snapshot names the time zone {x[1]!r}, which this machine does not "
                "know; install the time zone data (tzdata) or start without state"
            ) from None
    fail("a bad time zone")


# --- checks for from_data ---------------------------------------------------------------


@contextmanager
def loading() -> Iterator[None]:
    """Around ``from_data``: the explicit checks refuse what they can name; anything
    they missed that still fails while rebuilding is refused the same way."""
    try:
        yield
    except SnapshotError:
        raise
    except (RecursionError, MemoryError):
        fail("too large or nested too deeply")
    except Exception as e:
        fail(f"{type(e).__name__}: {e}")


def fields_of(x: Any, what: str, *names: str) -> list[Any]:
    """The fields of a dict with exactly these string keys, in this order."""
    if type(x) is not dict or set(x) != set(names):
        fail(f"{what} is not a record of {', '.join(names)}")
    return [x[n] for n in names]


def integer(x: Any, what: str, low: int | None = None, high: int | None = None) -> int:
    """An int (not a bool) with ``low <= x < high``."""
    if type(x) is not int or (low is not None and x < low) or (high is not None and x >= high):
        fail(f"{what} is not an integer in range")
    return x


def number(x: Any, what: str) -> Any:
    """A time or other numeric value (int or float, not bool)."""
    if type(x) is not int and type(x) is not float:
        fail(f"{what} is not a number")
    return x


def optional_number(x: Any, what: str) -> Any:
    return None if x is None else number(x, what)


def boolean(x: Any, what: str) -> bool:
    if type(x) is not bool:
        fail(f"{what} is not a boolean")
    return x


def text(x: Any, what: str) -> str:
    if type(x) is not str:
        fail(f"{what} is not a string")
    return x


def sequence(x: Any, what: str, kind: type[Any] = list, length: int | None = None) -> Any:
    """A list or tuple (``kind``), of ``length`` items when given."""
    if type(x) is not kind or (length is not None and len(x) != length):
        shape = kind.__name__ if length is None else f"{kind.__name__} of {length}"
        fail(f"{what} is not a {shape}")
    return x


def mapping(x: Any, what: str) -> dict[Any, Any]:
    if type(x) is not dict:
        fail(f"{what} is not a mapping")
    return x


def partition_key(x: Any) -> tuple[Any, ...]:
    return sequence(x, "a partition", tuple)


class Shapes:
    """What a plan says the state's values look like, for checking a loaded state.
    ``learned``: the kinds the matcher learned for attribute groups (admission)."""

    def __init__(self, plan: Plan, learned: dict[int, str] | None = None) -> None:
        self.plan = plan
        self.n_states = len(plan.states)
        self.event_length = FIRST_ATTRIBUTE + len(plan.attributes)
        self.vector_length = len(plan.initial_vector)
        self.n_components = len(plan.positive_vars)
        self.kind_of = value_kind
        # event type -> (tuple index, attribute, kind its values must have or None)
        self.required = {
            etype: [
                (plan.attr_index(a), a, _kind(plan, etype, a, learned or {}))
                for a in attrs
                if a in plan.attributes
            ]
            for etype, attrs in plan.required.items()
        }

    def event(self, x: Any) -> tuple[Any, ...]:
        """An event tuple (type, time, id, *attributes) that admission would let
        through: every attribute the query reads of its type present and of its kind."""
        if type(x) is not tuple or len(x) != self.event_length:
            fail("an event is not a tuple of its type, time, id and attributes")
        if type(x[EVENT_TYPE]) is not str:
            fail("an event type is not a string")
        number(x[EVENT_TIME], "an event time")
        for index, attr, kind in self.required.get(x[EVENT_TYPE], ()):
            value = x[index]
            if is_missing(value) or (kind is not None and self.kind_of(value) != kind):
                fail(f"an event's {attr!r} is missing or not of its kind")
        return x

    def vector(self, x: Any) -> tuple[Any, ...]:
        """A computation-state vector."""
        return sequence(x, "a computation-state vector", tuple, self.vector_length)

    def state(self, x: Any) -> int:
        return integer(x, "an automaton state", 0, self.n_states)

    def selection(self, x: Any) -> tuple[int, int, Any, Any]:
        """(state, position, event id, time)."""
        state, position, _id, time = sequence(x, "a selection", tuple, 4)
        self.state(state)
        integer(position, "a stream position", 0)
        number(time, "a selection's time")
        return x


def _kind(plan: Plan, etype: str, attr: str, learned: dict[int, str]) -> str | None:
    group = plan.kind_groups.get((etype, attr))
    if group is None:
        return None
    return plan.group_kinds.get(group) or learned.get(group)
