"""The project history is a hash chain: every service write appends an entry in the same
transaction, and `verify_audit` names the first entry edited or deleted in the database."""

import threading
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction

from evaluations.models import AuditHead, ProjectEvent
from evaluations.selectors import audit_chain_break
from evaluations.services import event_record, project_update
from tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


def _history(project, count: int = 5) -> list[ProjectEvent]:
    user = UserFactory()
    return [
        event_record(
            project=project,
            actor=user if n % 2 else None,
            verb="candidate.changed",
            subject=f"item {n} · 中文",
            before={"tier": "primary", "effort": 1.5, "n": n},
            after={"tier": "backup", "list": [1, 2, {"x": None}]},
        )
        for n in range(count)
    ]


def test_entries_chain_and_verify() -> None:
    project = ProjectFactory()
    events = _history(project)
    assert [e.seq for e in events] == [1, 2, 3, 4, 5]
    assert events[0].prev_hash == "" and events[1].prev_hash == events[0].hash
    head = AuditHead.objects.get(project=project)
    assert (head.seq, head.hash) == (5, events[-1].hash)
    assert audit_chain_break(project) is None


def test_an_edited_entry_is_named() -> None:
    project = ProjectFactory()
    events = _history(project)
    ProjectEvent.objects.filter(pk=events[2].pk).update(after={"tier": "primary"})
    found = audit_chain_break(project)
    assert found is not None and (found.seq, found.pk) == (3, events[2].pk)
    assert "content was changed" in found.problem


def test_an_entry_rewritten_with_a_fresh_hash_is_named_at_that_entry() -> None:
    """Whoever edits an entry and recomputes its hash without the key (as a plain SHA-256, or
    as an HMAC under a key guessed) is named at that very entry, even with every later link
    rewritten to match."""
    from evaluations.audit import entry_hash

    project = ProjectFactory()
    events = _history(project)
    target = events[1]
    fields = {
        "seq": 2,
        "at": target.at,
        "actor_name": target.actor_name,
        "verb": target.verb,
        "subject": "nothing happened",
        "before": target.before,
        "after": target.after,
        "prev_hash": target.prev_hash,
    }
    for key_id, key, problem in (
        ("", b"", "it is not keyed, though the chain was keyed from entry 1"),
        (target.key_id, b"g" * 32, "its content was changed"),
    ):
        forged = entry_hash(**fields, key_id=key_id, key=key)
        ProjectEvent.objects.filter(pk=target.pk).update(
            subject="nothing happened", hash=forged, key_id=key_id
        )
        ProjectEvent.objects.filter(pk=events[2].pk).update(prev_hash=forged)
        found = audit_chain_break(project)
        assert found is not None and (found.seq, found.pk) == (2, target.pk), found
        assert problem in found.problem


def test_deleted_entries_are_named() -> None:
    project = ProjectFactory()
    events = _history(project)
    ProjectEvent.objects.filter(pk=events[1].pk).delete()
    found = audit_chain_break(project)
    assert found is not None and found.seq == 2 and "entries 2 are missing" in found.problem

    other = ProjectFactory()
    tail = _history(other)
    ProjectEvent.objects.filter(pk__in=[tail[3].pk, tail[4].pk]).delete()
    found = audit_chain_break(other)
    assert found is not None and "newest entries 4-5 are missing" in found.problem


def test_a_deleted_user_leaves_the_chain_intact() -> None:
    project = ProjectFactory()
    user = UserFactory(username="leaver")
    event_record(project=project, actor=user, verb="membership.added", subject="leaver")
    user.delete()
    event = ProjectEvent.objects.get(project=project)
    assert event.actor is None and event.actor_name == "leaver"
    assert audit_chain_break(project) is None


def test_a_rolled_back_change_leaves_no_entry_and_the_head_where_it_was() -> None:
    project = ProjectFactory()
    _history(project, 2)
    with pytest.raises(RuntimeError), transaction.atomic():
        event_record(project=project, actor=None, verb="x", subject="never")
        raise RuntimeError
    assert AuditHead.objects.get(project=project).seq == 2
    assert audit_chain_break(project) is None
    assert event_record(project=project, actor=None, verb="y").seq == 3


def test_services_write_into_the_chain() -> None:
    project = ProjectFactory()
    user = UserFactory()
    project_update(project=project, actor=user, description="A shared 64-GPU pool")
    entry = ProjectEvent.objects.get(project=project)
    assert entry.seq == 1 and entry.actor_name == user.username
    assert audit_chain_break(project) is None


def test_the_command_names_the_break_and_exits_non_zero() -> None:
    intact, broken = ProjectFactory(slug="intact"), ProjectFactory(slug="broken")
    _history(intact, 2)
    events = _history(broken, 3)
    ProjectEvent.objects.filter(pk=events[0].pk).update(verb="nothing")
    out = StringIO()
    with pytest.raises(CommandError, match="1 project history chain"):
        call_command("verify_audit", stdout=out)
    text = out.getvalue()
    assert "intact: intact" in text
    assert f"broken: BROKEN at entry 1 (id {events[0].pk}): its content was changed" in text
    call_command("verify_audit", "intact", stdout=StringIO())  # one project, intact: no error
    with pytest.raises(CommandError, match="no such project: nope"):
        call_command("verify_audit", "nope", stdout=StringIO())


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_get_consecutive_places() -> None:
    project = ProjectFactory()
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(5):
                event_record(
                    project=project, actor=None, verb="result.recorded", subject=f"{n}.{i}"
                )
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    seqs = sorted(ProjectEvent.objects.filter(project=project).values_list("seq", flat=True))
    assert seqs == list(range(1, 41))
    assert audit_chain_break(project) is None
