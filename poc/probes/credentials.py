"""Cluster credentials encrypted at rest: AES-256-GCM under versioned keys from the environment.

`WORKBENCH_CREDENTIALS_KEYS` (or `WORKBENCH_CREDENTIALS_KEYS_FILE`) holds comma-separated
`ID:KEY` pairs, KEY being 32 random bytes in URL-safe base64; the first pair encrypts, every
pair decrypts, so a new key is put first and `manage.py rotate_credentials_key` re-encrypts the
rows under it before the old one is dropped. The keys are not derived from SECRET_KEY: rotating
one must not touch the other.

A ciphertext reads `wbc1:ID:BASE64(nonce + ciphertext + tag)`. The row's table, primary key and
field are bound as associated data, so a ciphertext copied into another row or field does not
decrypt. A missing, malformed or wrong key fails closed: `CredentialsUnavailable` with a message
that names the problem and never a key or a secret.

In development, with no keys configured, one is made once under var/ (like the development
signing certificate); production refuses to start without them (poc.probes.checks).
"""

import base64
import binascii
import json
import secrets
from functools import lru_cache
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from django.conf import settings

from workbench import keyring

PREFIX = "wbc1"
NONCE_BYTES = 12


class CredentialsUnavailable(Exception):
    """Credentials cannot be encrypted or decrypted: no usable key, or the wrong one."""


def new_key_text(key_id: str = "1") -> str:
    """A fresh `ID:KEY` pair for WORKBENCH_CREDENTIALS_KEYS."""
    return keyring.new_key_text(key_id)


def parse_keys(text: str) -> list[tuple[str, bytes]]:
    """The `ID:KEY,ID:KEY` list, in order (the first encrypts); CredentialsUnavailable when a
    pair is malformed, a key is not 32 bytes, or an id repeats."""
    try:
        return keyring.parse_keys(text, setting="WORKBENCH_CREDENTIALS_KEYS")
    except keyring.KeyringError as exc:
        raise CredentialsUnavailable(str(exc)) from None


def _development_keys() -> str:
    return keyring.development_keys(Path(settings.VAR_DIR) / "credentials-keys", "dev1")


@lru_cache(maxsize=8)
def _keys_from(text: str) -> tuple[tuple[str, bytes], ...]:
    return tuple(parse_keys(text))


def keys() -> tuple[tuple[str, bytes], ...]:
    """The configured keys, the encrypting one first."""
    text = settings.WORKBENCH_CREDENTIALS_KEYS
    if not text and not settings.PRODUCTION:
        text = _development_keys()
    if not text:
        raise CredentialsUnavailable(
            "WORKBENCH_CREDENTIALS_KEYS is not set: cluster credentials cannot be stored or read"
        )
    parsed = _keys_from(text)
    if not parsed:
        raise CredentialsUnavailable("WORKBENCH_CREDENTIALS_KEYS holds no key")
    return parsed


def current_key_id() -> str:
    return keys()[0][0]


def _aad(table: str, pk: int, field: str) -> bytes:
    return f"{table}\x1f{pk}\x1f{field}".encode()


def encrypt(value: dict[str, Any], *, table: str, pk: int, field: str) -> str:
    """`value` (a JSON object of secrets) sealed for one row's field, under the current key."""
    key_id, key = keys()[0]
    nonce = secrets.token_bytes(NONCE_BYTES)
    plaintext = json.dumps(value, separators=(",", ":"), sort_keys=True).encode()
    sealed = AESGCM(key).encrypt(nonce, plaintext, _aad(table, pk, field))
    return f"{PREFIX}:{key_id}:{base64.b64encode(nonce + sealed).decode()}"


def key_id_of(ciphertext: str) -> str | None:
    parts = ciphertext.split(":", 2)
    return parts[1] if len(parts) == 3 and parts[0] == PREFIX else None


def decrypt(ciphertext: str, *, table: str, pk: int, field: str) -> dict[str, Any]:
    """The secrets sealed in `ciphertext` for this row's field; CredentialsUnavailable when
    the key is missing or wrong, or the ciphertext belongs to another row or was altered."""
    if not ciphertext:
        return {}
    parts = ciphertext.split(":", 2)
    if len(parts) != 3 or parts[0] != PREFIX:
        raise CredentialsUnavailable(
            "the stored credentials are not in a format this version reads"
        )
    key_id, encoded = parts[1], parts[2]
    key = dict(keys()).get(key_id)
    if key is None:
        raise CredentialsUnavailable(
            f"the credentials were encrypted under key id {key_id!r}, which "
            "WORKBENCH_CREDENTIALS_KEYS no longer holds"
        )
    try:
        raw = base64.b64decode(encoded, validate=True)
        plaintext = AESGCM(key).decrypt(
            raw[:NONCE_BYTES], raw[NONCE_BYTES:], _aad(table, pk, field)
        )
    except (binascii.Error, ValueError, InvalidTag):
        raise CredentialsUnavailable(
            f"the credentials do not decrypt under key id {key_id!r}: a wrong key, or a "
            "ciphertext that belongs to another row"
        ) from None
    value = json.loads(plaintext)
    if not isinstance(value, dict):
        raise CredentialsUnavailable("the stored credentials are not a JSON object")
    return value
