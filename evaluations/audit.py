"""The project history as a tamper-evident chain: what an entry's hash covers, and checking it.

Each entry's hash is SHA-256 over a canonical JSON array of its content (position, time in UTC,
actor name, verb, subject, before, after) and the hash of the entry before it (empty for the
first). Row ids are left out, so that a project restored from an archive into another database
keeps a chain that verifies; an entry moved to another project breaks its links there. Values
are stored as they read back from the database (JSON round-tripped), so the hash computed on
writing is the one computed on checking.
"""

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder


def normalised(value: Any) -> Any:
    """A before/after value as the JSON column gives it back."""
    if value is None:
        return None
    return json.loads(json.dumps(value, cls=DjangoJSONEncoder))


def entry_hash(
    *,
    seq: int,
    at: datetime,
    actor_name: str,
    verb: str,
    subject: str,
    before: Any,
    after: Any,
    prev_hash: str,
) -> str:
    moment = at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    payload = [seq, moment, actor_name, verb, subject, before, after, prev_hash]
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Entry:
    """What verification reads of one stored entry."""

    pk: int
    seq: int | None
    at: datetime
    actor_name: str
    verb: str
    subject: str
    before: Any
    after: Any
    prev_hash: str
    hash: str


@dataclass(frozen=True)
class Break:
    """The first broken link of a chain: where, and what is wrong there."""

    seq: int | None
    pk: int | None
    problem: str


def first_break(entries: Iterator[Entry], head_seq: int, head_hash: str) -> Break | None:
    """The first place where the chain (entries in position order) does not hold, or None."""
    expected_seq = 1
    previous = ""
    for entry in entries:
        if entry.seq is None:
            return Break(None, entry.pk, "the entry has no place in the chain")
        if entry.seq != expected_seq:
            missing = (
                f"{expected_seq}"
                if entry.seq == expected_seq + 1
                else (f"{expected_seq}-{entry.seq - 1}")
            )
            return Break(expected_seq, None, f"entries {missing} are missing (deleted)")
        if entry.prev_hash != previous:
            return Break(entry.seq, entry.pk, "it does not link to the entry before it")
        computed = entry_hash(
            seq=entry.seq,
            at=entry.at,
            actor_name=entry.actor_name,
            verb=entry.verb,
            subject=entry.subject,
            before=entry.before,
            after=entry.after,
            prev_hash=entry.prev_hash,
        )
        if computed != entry.hash:
            return Break(entry.seq, entry.pk, "its content was changed after it was written")
        previous = entry.hash
        expected_seq += 1
    last = expected_seq - 1
    if last != head_seq or previous != head_hash:
        if last < head_seq:
            return Break(last + 1, None, f"the newest entries {last + 1}-{head_seq} are missing")
        return Break(last, None, "the chain does not end where its head says")
    return None
