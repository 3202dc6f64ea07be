"""Versioned secret keys from the environment: `ID:KEY,ID:KEY`, the first one in use for new
writes, every one kept for reading what older keys wrote.

Used for cluster credentials (poc/probes/credentials.py, AES-256-GCM) and for the project
history's keyed chain (evaluations/audit.py, HMAC-SHA-256). KEY is 32 random bytes in URL-safe
base64; an id is up to 16 letters and digits, stored beside what the key wrote, so a key can be
rotated: a new pair goes first, the old one stays for as long as anything written under it
must still be read. In development, with nothing configured, one key is made once under var/.
"""

import base64
import binascii
import os
import secrets
from pathlib import Path

KEY_BYTES = 32


class KeyringError(Exception):
    """A key list that cannot be used; the message names the setting and the entry."""


def new_key_text(key_id: str = "1") -> str:
    """A fresh `ID:KEY` pair."""
    return f"{key_id}:{base64.urlsafe_b64encode(secrets.token_bytes(KEY_BYTES)).decode()}"


def parse_keys(text: str, *, setting: str) -> list[tuple[str, bytes]]:
    """The `ID:KEY,ID:KEY` list, in order (the first is in use); KeyringError naming `setting`
    when a pair is malformed, a key is not 32 bytes, or an id repeats."""
    keys: list[tuple[str, bytes]] = []
    for position, pair in enumerate(p.strip() for p in text.split(",")):
        if not pair:
            continue
        key_id, sep, encoded = pair.partition(":")
        key_id, encoded = key_id.strip(), encoded.strip()
        if not sep or not key_id or not key_id.isalnum() or len(key_id) > 16:
            raise KeyringError(
                f"{setting}: entry {position + 1} is not ID:KEY "
                "(an id of letters and digits, a colon, a base64 key)"
            )
        try:
            key = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        except (binascii.Error, ValueError):
            raise KeyringError(f"{setting}: the key of id {key_id!r} is not base64") from None
        if len(key) != KEY_BYTES:
            raise KeyringError(
                f"{setting}: the key of id {key_id!r} is {len(key)} bytes, not {KEY_BYTES}"
            )
        if any(existing == key_id for existing, _key in keys):
            raise KeyringError(f"{setting}: id {key_id!r} repeats")
        keys.append((key_id, key))
    return keys


def development_keys(path: Path, key_id: str) -> str:
    """The key list kept in `path`, made once (readable by its owner only) when missing. The
    file appears whole (written aside, then linked into place), so a process racing to read it
    never sees it empty."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        aside = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        descriptor = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(new_key_text(key_id) + "\n")
        try:
            os.link(aside, path)
        except FileExistsError:
            pass  # another process made it first: theirs is kept
        finally:
            aside.unlink()
    return path.read_text(encoding="utf-8").strip()
