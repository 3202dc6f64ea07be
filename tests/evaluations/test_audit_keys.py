"""The history chain is keyed: a database writer without the key cannot recompute it, keys
rotate by id, entries from before the key are sealed once by a recorded step, and the head
printed in a sealed sheet holds the chain to what it was."""

import base64
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from evaluations.audit import entry_hash
from evaluations.models import AuditHead, ProjectEvent
from evaluations.selectors import AuditAnchor, audit_chain_break
from evaluations.services import event_record
from tests.factories import ProjectFactory
from workbench.keyring import new_key_text

pytestmark = pytest.mark.django_db

OLD = "old1:" + base64.urlsafe_b64encode(b"o" * 32).decode()
NEW = "new2:" + base64.urlsafe_b64encode(b"n" * 32).decode()


def _history(project, count: int) -> list[ProjectEvent]:
    return [
        event_record(project=project, actor=None, verb="candidate.changed", subject=f"item {n}")
        for n in range(count)
    ]


def _recompute_without_key(project, first_seq: int) -> None:
    """What someone who can write the table does to hide an edit: recompute every hash from
    the edited entry on, and the head, with what they can compute (the entries' own key ids
    kept, the key guessed)."""
    previous = ""
    for event in ProjectEvent.objects.filter(project=project).order_by("seq"):
        if event.seq >= first_seq:
            event.prev_hash = previous
            event.hash = entry_hash(
                seq=event.seq,
                at=event.at,
                actor_name=event.actor_name,
                verb=event.verb,
                subject=event.subject,
                before=event.before,
                after=event.after,
                prev_hash=previous,
                key_id=event.key_id,
                key=b"\0" * 32,
            )
            event.save(update_fields=["prev_hash", "hash"])
        previous = event.hash
    AuditHead.objects.filter(project=project).update(hash=previous)


def test_verify_audit_catches_a_recomputed_chain() -> None:
    project = ProjectFactory(slug="rewritten")
    events = _history(project, 5)
    assert {e.key_id for e in events} == {"h1"}  # the test key (tests/conftest.py)
    ProjectEvent.objects.filter(pk=events[2].pk).update(subject="nothing happened")
    _recompute_without_key(project, 3)
    out = StringIO()
    with pytest.raises(CommandError, match="1 project history chain"):
        call_command("verify_audit", stdout=out)
    assert f"rewritten: BROKEN at entry 3 (id {events[2].pk}): its content was changed" in (
        out.getvalue()
    )


def test_a_chain_rewritten_unkeyed_from_the_start_is_not_taken_as_old_history() -> None:
    project = ProjectFactory(slug="stripped")
    events = _history(project, 3)
    ProjectEvent.objects.filter(project=project).update(key_id="")
    _recompute_without_key(project, 1)
    found = audit_chain_break(project)
    assert found is not None and found.unsealed and found.seq == 1
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("verify_audit", "stripped", stdout=out)
    assert "stripped: NOT SEALED from entry 1: entries 1-3 are not keyed" in out.getvalue()
    assert len(events) == 3


def test_keys_rotate_by_id(settings) -> None:
    project = ProjectFactory()
    settings.WORKBENCH_AUDIT_KEYS = OLD
    _history(project, 2)
    settings.WORKBENCH_AUDIT_KEYS = f"{NEW},{OLD}"  # a new key first, the old one kept
    later = _history(project, 2)
    assert [e.key_id for e in ProjectEvent.objects.filter(project=project).order_by("seq")] == [
        "old1",
        "old1",
        "new2",
        "new2",
    ]
    assert audit_chain_break(project) is None
    out = StringIO()
    call_command("rotate_audit_key", stdout=out)
    assert "keyed with 'new2'" in out.getvalue() and "2 entries keyed with 'old1': configured" in (
        out.getvalue()
    )
    settings.WORKBENCH_AUDIT_KEYS = NEW  # the old key dropped too early
    found = audit_chain_break(project)
    assert found is not None and found.seq == 1
    assert "key id 'old1', which WORKBENCH_AUDIT_KEYS does not hold" in found.problem
    with pytest.raises(CommandError, match="lacks 'old1'"):
        call_command("rotate_audit_key", stdout=StringIO())
    fresh = StringIO()
    call_command("rotate_audit_key", "--new-key", stdout=fresh)
    assert fresh.getvalue().startswith("k2:") and later


def _legacy_history(project, count: int) -> None:
    """Entries as they were written before the chain was keyed: plain SHA-256, no key id."""
    for event in _history(project, count):
        ProjectEvent.objects.filter(pk=event.pk).update(key_id="")
    _recompute_without_key(project, 1)  # plain SHA-256: no key ids


def test_history_from_before_the_key_is_sealed_once_and_then_held() -> None:
    old = ProjectFactory(slug="old")
    _legacy_history(old, 3)
    untouched = ProjectFactory(slug="keyed")
    _history(untouched, 2)
    found = audit_chain_break(old)
    assert found is not None and found.unsealed and found.seq == 1
    out = StringIO()
    call_command("seal_audit_chain", stdout=out)
    assert "old: entries 1-3 sealed as entry 4" in out.getvalue()
    assert "keyed:" not in out.getvalue()
    assert "1 chain(s) sealed under key id 'h1'" in out.getvalue()
    seal = ProjectEvent.objects.get(project=old, seq=4)
    assert (seal.verb, seal.key_id, seal.after) == (
        "audit.sealed",
        "h1",
        {"key_id": "h1", "first": 1, "last": 3},
    )
    assert audit_chain_break(old) is None
    again = StringIO()
    call_command("seal_audit_chain", stdout=again)  # safe to run again: nothing more to seal
    assert "0 chain(s) sealed" in again.getvalue()
    assert ProjectEvent.objects.filter(project=old).count() == 4
    # Rewriting the old, unkeyed part afterwards, hashes recomputed, breaks at the seal.
    ProjectEvent.objects.filter(project=old, seq=2).update(subject="rewritten")
    _recompute_without_key(old, 1)
    found = audit_chain_break(old)
    assert found is not None and found.seq == 4


def test_a_broken_chain_is_not_sealed() -> None:
    project = ProjectFactory(slug="tampered")
    _legacy_history(project, 3)
    ProjectEvent.objects.filter(project=project, seq=2).update(subject="changed")
    out = StringIO()
    with pytest.raises(CommandError, match="1 chain"):
        call_command("seal_audit_chain", stdout=out)
    assert "tampered: not sealed, the chain is broken at entry 2" in out.getvalue()
    assert not ProjectEvent.objects.filter(project=project, verb="audit.sealed").exists()


def test_an_anchor_catches_the_newest_entries_cut_off_with_the_head() -> None:
    project = ProjectFactory()
    events = _history(project, 5)
    anchor = AuditAnchor(seq=5, hash=events[4].hash, where="sheet r1")
    assert audit_chain_break(project, [anchor]) is None
    # Deleting the newest entries and moving the head back leaves a chain that holds alone.
    ProjectEvent.objects.filter(project=project, seq__gte=4).delete()
    AuditHead.objects.filter(project=project).update(seq=3, hash=events[2].hash)
    assert audit_chain_break(project) is None
    found = audit_chain_break(project, [anchor])
    assert found is not None and found.seq == 5
    assert "sheet r1 recorded entry 5, which the chain no longer holds" in found.problem


def test_keys_are_checked_by_name(settings) -> None:
    from evaluations.audit import AuditKeysUnavailable, audit_keys

    for text, problem in (
        ("a1:" + base64.urlsafe_b64encode(b"short").decode(), "is 5 bytes, not 32"),
        ("no-colon", "is not ID:KEY"),
        (f"{OLD},{OLD}", "repeats"),
    ):
        settings.WORKBENCH_AUDIT_KEYS = text
        with pytest.raises(AuditKeysUnavailable, match=problem) as caught:
            audit_keys()
        assert "WORKBENCH_AUDIT_KEYS" in str(caught.value)
    settings.WORKBENCH_AUDIT_KEYS = new_key_text("x9")
    assert audit_keys()[0][0] == "x9"


def test_development_makes_one_key_under_var(settings, tmp_path) -> None:
    from evaluations.audit import audit_keys

    settings.WORKBENCH_AUDIT_KEYS, settings.PRODUCTION, settings.VAR_DIR = "", False, tmp_path
    first = audit_keys()
    assert first == audit_keys() and first[0][0] == "dev1" and len(first[0][1]) == 32
    assert (tmp_path / "audit-keys").stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["audit-keys"]  # nothing left aside
