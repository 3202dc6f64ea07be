"""Terms are recorded like results: append-only, each with its basis, in the history; a save is
all or nothing; an open item closes when its term gets a basis."""

from datetime import date, timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from evaluations.models import ProjectEvent
from reports.procurement import selectors
from reports.procurement.models import AppendOnlyError, Basis, Confirmation, TermEntry
from reports.procurement.services import TermChange, confirmation_set, terms_record

pytestmark = pytest.mark.django_db


def _current(candidate, key):
    return TermEntry.objects.get(candidate=candidate, key=key, current=True)


def test_a_change_appends_and_keeps_who_when_why(personas) -> None:
    volcano, alice = personas["volcano"], personas["alice"]
    terms_record(
        candidate=volcano,
        changes=[TermChange("licence_spdx", "apache-2.0")],
        actor=alice,
        reason="read the repository",
    )
    later = timezone.localdate() + timedelta(days=30)
    (entry,) = terms_record(
        candidate=volcano,
        changes=[TermChange("licence_spdx", "Apache-2.0", Basis.QUOTE, "Q-17", valid_until=later)],
        actor=alice,
        reason="vendor confirmed",
    )
    history = selectors.term_history(volcano, "licence_spdx")
    assert [e.basis for e in history] == ["quote", "tbc"]
    assert history[0] == entry and entry.previous == history[1] and entry.current
    assert not TermEntry.objects.get(pk=history[1].pk).current
    assert (entry.recorded_by, entry.reason, entry.value) == (
        alice,
        "vendor confirmed",
        "Apache-2.0",
    )
    event = ProjectEvent.objects.filter(verb="terms.changed").latest("pk")
    assert event.before["licence_spdx"]["basis"] == "tbc"
    assert event.after["licence_spdx"] == {
        "value": "Apache-2.0",
        "basis": "quote",
        "reference": "Q-17",
        "valid_until": later.isoformat(),
    }
    with pytest.raises(AppendOnlyError):
        entry.value = "MIT"
        entry.save()


def test_the_same_value_and_basis_again_records_nothing(personas) -> None:
    volcano = personas["volcano"]
    change = TermChange("support_hours", "24x7", Basis.ESTIMATE)
    assert len(terms_record(candidate=volcano, changes=[change], actor=None)) == 1
    events = ProjectEvent.objects.count()
    assert terms_record(candidate=volcano, changes=[change], actor=None) == []
    assert terms_record(candidate=volcano, changes=[TermChange("exit_notes", "")], actor=None) == []
    assert ProjectEvent.objects.count() == events
    assert TermEntry.objects.count() == 1


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            TermChange("list_price", {"amount": "10", "currency": "USD"}, Basis.QUOTE),
            "needs its reference and its valid-until date",
        ),
        (
            TermChange(
                "list_price",
                {"amount": "10", "currency": "USD"},
                Basis.QUOTE,
                "Q-1",
                valid_until=date(2020, 1, 1),
            ),
            "the quote expired on 2020-01-01",
        ),
        (
            TermChange("list_price", {"amount": "10", "currency": "USD"}, Basis.LIST_PRICE),
            "say where the public list price was read",
        ),
        (TermChange("list_price", None, Basis.ESTIMATE), "give the value its basis states"),
        (
            TermChange("support_tier", "Gold", Basis.ESTIMATE, valid_until=date(2099, 1, 1)),
            "only a vendor quote has a valid-until date",
        ),
        (TermChange("support_tier", "Gold", "rumour"), "rumour is not a basis"),
        (
            TermChange("discount_percent", "200", Basis.ESTIMATE),
            "Discount must be between 0 and 100",
        ),
        (TermChange("nope", "x"), "There is no term nope"),
    ],
)
def test_a_bad_term_is_refused_and_nothing_of_the_save_is_written(personas, change, says) -> None:
    good = TermChange("support_hours", "24x7", Basis.ESTIMATE)
    with pytest.raises(ValidationError) as refused:
        terms_record(candidate=personas["volcano"], changes=[good, change], actor=None)
    assert says in refused.value.messages[0]
    assert not TermEntry.objects.exists()
    assert not ProjectEvent.objects.filter(verb="terms.changed").exists()


def test_a_term_given_twice_in_one_save_is_refused(personas) -> None:
    changes = [TermChange("support_tier", "A"), TermChange("support_tier", "B")]
    with pytest.raises(ValidationError, match="Each term may be given once"):
        terms_record(candidate=personas["volcano"], changes=changes, actor=None)


def test_open_items_follow_the_basis_and_close_with_what_confirmed_them(personas) -> None:
    alpha, volcano, alice = personas["alpha"], personas["volcano"], personas["alice"]
    items = {item.cell.term.key for item in selectors.open_items(alpha, [volcano])}
    assert {"licence_kind", "list_price", "sev1_response_hours"} <= items
    assert not {"licence_notes", "exit_notes"} & items  # notes are never to be confirmed
    terms_record(candidate=volcano, changes=[TermChange("licence_kind", "open_source")], actor=None)
    items = {item.cell.term.key for item in selectors.open_items(alpha, [volcano])}
    assert "list_price" not in items  # no price for open source
    chase = confirmation_set(
        candidate=volcano,
        subject="term:sev1_response_hours",
        actor=alice,
        owner_team="procurement",
        owner=alice,
        due=timezone.localdate() - timedelta(days=1),
        request="Asked the reseller for the SLA annex.",
        requested_at=timezone.localdate(),
    )
    first = selectors.open_items(alpha, [volcano])[0]
    assert first.chase == chase and first.overdue  # overdue first
    terms_record(
        candidate=volcano,
        changes=[
            TermChange(
                "sev1_response_hours",
                "4",
                Basis.QUOTE,
                "SLA-2026-3",
                valid_until=timezone.localdate(),
            )
        ],
        actor=alice,
    )
    chase.refresh_from_db()
    assert chase.closed_at is not None and chase.closed_by == alice
    assert chase.closing_reference == "vendor quote: SLA-2026-3"
    items = {item.cell.term.key for item in selectors.open_items(alpha, [volcano])}
    assert "sev1_response_hours" not in items
    assert ProjectEvent.objects.filter(verb="confirmation.updated").exists()


def test_an_expired_quote_is_open_again_and_flagged(personas) -> None:
    alpha, volcano = personas["alpha"], personas["volcano"]
    today = timezone.localdate()
    terms_record(
        candidate=volcano,
        changes=[TermChange("cve_patch_days", "14", Basis.QUOTE, "Q-9", valid_until=today)],
        actor=None,
    )
    assert "cve_patch_days" not in {i.cell.term.key for i in selectors.open_items(alpha, [volcano])}
    TermEntry.objects.filter(key="cve_patch_days").update(valid_until=today - timedelta(days=1))
    (cell,) = [
        c for c in selectors.candidate_terms(volcano, "security") if c.term.key == "cve_patch_days"
    ]
    assert cell.expired and cell.open
    assert "cve_patch_days" in {i.cell.term.key for i in selectors.open_items(alpha, [volcano])}


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"subject": "term:licence_notes"}, "is a note: it is never to be confirmed"),
        ({"subject": "combo:1"}, "combo:1 is not still to be confirmed for this candidate"),
        ({"subject": "widget:1"}, "widget:1 is not still to be confirmed for this candidate"),
        ({"subject": "term:list_price", "owner_team": "catering"}, "catering is not a team"),
        (
            {"subject": "term:list_price", "requested_at": date(2999, 1, 1)},
            "cannot have been sent in the future",
        ),
    ],
)
def test_a_bad_chase_is_refused(personas, kwargs, says) -> None:
    with pytest.raises(ValidationError, match=says):
        confirmation_set(candidate=personas["volcano"], actor=None, **kwargs)
    assert not Confirmation.objects.exists()


def test_a_term_with_a_basis_is_not_chased(personas) -> None:
    volcano = personas["volcano"]
    terms_record(
        candidate=volcano, changes=[TermChange("support_hours", "24x7", Basis.ESTIMATE)], actor=None
    )
    with pytest.raises(ValidationError, match="not to be confirmed: it stands on our estimate"):
        confirmation_set(candidate=volcano, subject="term:support_hours", actor=None)


def test_the_owner_must_be_a_member(personas) -> None:
    with pytest.raises(ValidationError, match="must be a member"):
        confirmation_set(
            candidate=personas["volcano"],
            subject="term:list_price",
            actor=None,
            owner=personas["charlie"],
        )
