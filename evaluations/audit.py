"""The project history as a tamper-evident chain: what an entry's hash covers, and checking it.

Each entry's hash is an HMAC-SHA-256, under a key kept outside the database, over a canonical
JSON array of its content (position, time in UTC, actor name, verb, subject, before, after), the
hash of the entry before it (empty for the first), the id of the key and, when it has them, the
parts its subject names. Someone who can write the table but does not hold the key cannot
recompute a hash, so an edited, inserted or rewritten entry no longer verifies. Keys come
from WORKBENCH_AUDIT_KEYS (`ID:KEY` pairs, workbench.keyring): the first keys new entries, every
one listed verifies what it keyed, so a key is rotated by putting a new one first and keeping
the old ones.

Entries written before the chain was keyed carry no key id and a plain SHA-256. They stay as
they are; the first keyed entry after them covers the last one's hash, and `manage.py
seal_audit_chain` appends such an entry ("audit.sealed") to every chain that ends unkeyed. An
unkeyed entry after a keyed one, or an unkeyed end never sealed, is named by verification.

Row ids are left out, so that a project restored from an archive into another database keeps a
chain that verifies there (given the key); an entry moved to another project breaks its links
there. Values are stored as they read back from the database (JSON round-tripped), so the hash
computed on writing is the one computed on checking.
"""

import hashlib
import hmac
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder

from workbench import keyring

SETTING = "WORKBENCH_AUDIT_KEYS"


class AuditKeysUnavailable(Exception):
    """No usable key to write or check the history chain; the message says why."""


@lru_cache(maxsize=8)
def _keys_from(text: str) -> tuple[tuple[str, bytes], ...]:
    try:
        return tuple(keyring.parse_keys(text, setting=SETTING))
    except keyring.KeyringError as exc:
        raise AuditKeysUnavailable(str(exc)) from None


def audit_keys() -> tuple[tuple[str, bytes], ...]:
    """The configured keys, the one that keys new entries first. Development makes one under
    var/ when none is set; production refuses to start without (evaluations.checks)."""
    text = settings.WORKBENCH_AUDIT_KEYS
    if not text and not settings.PRODUCTION:
        text = keyring.development_keys(Path(settings.VAR_DIR) / "audit-keys", "dev1")
    if not text:
        raise AuditKeysUnavailable(f"{SETTING} is not set: the project history cannot be keyed")
    parsed = _keys_from(text)
    if not parsed:
        raise AuditKeysUnavailable(f"{SETTING} holds no key")
    return parsed


def current_key() -> tuple[str, bytes]:
    """The id and key that new entries are keyed with."""
    return audit_keys()[0]


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
    key_id: str = "",
    key: bytes = b"",
    subject_parts: Any = None,
) -> str:
    """The entry's HMAC under `key` (with its id in what is covered), or, for an entry written
    before the chain was keyed (no key id), its plain SHA-256. The subject's parts are covered
    when the entry has them (entries written before them hash as they always did)."""
    moment = at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    payload: list[Any] = [seq, moment, actor_name, verb, subject, before, after, prev_hash]
    if key_id:
        payload.append(key_id)
    if subject_parts:
        payload.append({"subject_parts": subject_parts})
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if not key_id:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()
    if not key:
        raise AuditKeysUnavailable(f"no key given for key id {key_id!r}")
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()


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
    key_id: str = ""
    subject_parts: Any = None


@dataclass(frozen=True)
class Break:
    """The first broken link of a chain: where, and what is wrong there. `unsealed`: nothing is
    wrong but the end of the chain is not keyed yet (entries from before the key)."""

    seq: int | None
    pk: int | None
    problem: str
    unsealed: bool = False


def first_break(
    entries: Iterator[Entry],
    head_seq: int,
    head_hash: str,
    keys: Mapping[str, bytes] | None = None,
) -> Break | None:
    """The first place where the chain (entries in position order) does not hold, or None.
    `keys` (id to key) defaults to the configured ones."""
    if keys is None:
        keys = dict(audit_keys())
    expected_seq = 1
    previous = ""
    keyed_since: int | None = None  # the position of the first keyed entry
    unkeyed_from: int | None = None  # the first of the unkeyed entries at the end so far
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
        key = b""
        if entry.key_id:
            if entry.key_id not in keys:
                return Break(
                    entry.seq,
                    entry.pk,
                    f"it is keyed with key id {entry.key_id!r}, which {SETTING} does not hold "
                    "(keep retired keys listed after the current one)",
                )
            key = keys[entry.key_id]
            keyed_since = keyed_since or entry.seq
            unkeyed_from = None
        elif keyed_since is not None:
            return Break(
                entry.seq,
                entry.pk,
                f"it is not keyed, though the chain was keyed from entry {keyed_since}: "
                "written or rewritten without the key",
            )
        elif unkeyed_from is None:
            unkeyed_from = entry.seq
        computed = entry_hash(
            seq=entry.seq,
            at=entry.at,
            actor_name=entry.actor_name,
            verb=entry.verb,
            subject=entry.subject,
            before=entry.before,
            after=entry.after,
            prev_hash=entry.prev_hash,
            key_id=entry.key_id,
            key=key,
            subject_parts=entry.subject_parts,
        )
        if not hmac.compare_digest(computed, entry.hash):
            return Break(entry.seq, entry.pk, "its content was changed after it was written")
        previous = entry.hash
        expected_seq += 1
    last = expected_seq - 1
    if last != head_seq or previous != head_hash:
        if last < head_seq:
            return Break(last + 1, None, f"the newest entries {last + 1}-{head_seq} are missing")
        return Break(last, None, "the chain does not end where its head says")
    if unkeyed_from is not None:
        return Break(
            unkeyed_from,
            None,
            f"entries {unkeyed_from}-{last} are not keyed and no keyed entry seals them: run "
            "manage.py seal_audit_chain if they were written before the chain was keyed",
            unsealed=True,
        )
    return None
