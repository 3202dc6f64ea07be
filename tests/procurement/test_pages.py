"""The terms pages: every member reads them, procurement, business and project admins change
them, a bad value is answered 422 naming the term and saves nothing, and Chinese readers read
them in Chinese."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from evaluations.services import membership_set
from reports.procurement.models import Confirmation, TermEntry
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _edit(group: str = "price") -> str:
    return reverse(
        "procurement:terms_edit",
        kwargs={"slug": "alpha", "candidate_slug": "volcano", "group": group},
    )


def _price_form(**extra: str) -> dict[str, str]:
    form = {
        f"{key}__basis": "tbc"
        for key in ("pricing_unit", "price_term", "list_price", "discount_percent")
    }
    return {**form, **extra}


@pytest.fixture
def buyer(personas):
    user = UserFactory(username="erin")
    membership_set(project=personas["alpha"], user=user, role="procurement", actor=None)
    return user


def test_procurement_records_a_price_with_its_quote(personas, buyer, login) -> None:
    client = login(buyer)
    page = client.get(_edit())
    assert page.status_code == 200 and "List price per unit" in page.content.decode()
    until = (timezone.localdate() + timedelta(days=90)).isoformat()
    answer = client.post(
        _edit(),
        _price_form(
            pricing_unit="per_gpu",
            pricing_unit__basis="quote",
            pricing_unit__reference="Q-2026-114",
            pricing_unit__valid_until=until,
            list_price__amount="4500",
            list_price__currency="usd",
            list_price__basis="quote",
            list_price__reference="Q-2026-114",
            list_price__valid_until=until,
            reason="first quote",
        ),
    )
    assert answer.status_code == 302 and answer.url.endswith("#g-price")
    price = TermEntry.objects.get(key="list_price", current=True)
    assert (
        price.value == {"amount": "4500.00", "currency": "USD"} and price.reference == "Q-2026-114"
    )
    table = client.get(reverse("procurement:terms", kwargs={"slug": "alpha"})).content.decode()
    assert (
        "$4,500.00" in table and "Q-2026-114" in table and "per GPU or other accelerator" in table
    )


def test_a_bad_value_names_the_term_and_saves_nothing(personas, buyer, login) -> None:
    answer = login(buyer).post(
        _edit(),
        _price_form(
            pricing_unit="per_gpu",
            list_price__amount="-5",
            list_price__currency="USD",
            discount_percent="12",
        ),
    )
    assert answer.status_code == 422
    assert "List price per unit must be between 0 and" in answer.content.decode()
    assert not TermEntry.objects.exists()


def test_an_unknown_licence_is_refused_with_the_nearest(personas, buyer, login) -> None:
    form = {f"{key}__basis": "tbc" for key in ("licence_kind", "licence_spdx", "licence_notes")} | {
        "licence_spdx": "Apache2"
    }
    answer = login(buyer).post(_edit("licence"), form)
    assert answer.status_code == 422
    assert "Apache2 is not an SPDX licence" in answer.content.decode()
    assert "Apache-2.0" in answer.content.decode()


@pytest.mark.parametrize(
    ("who", "status"), [("alice", 200), ("bob", 403), ("dave", 403), ("charlie", 404)]
)
def test_who_may_change_terms(personas, login, who, status) -> None:
    # alice administers alpha; bob (operations) writes results but not terms; dave observes;
    # charlie is no member.
    client = login(personas[who])
    assert client.get(_edit()).status_code == status
    assert client.post(_edit(), _price_form(pricing_unit="per_node")).status_code in (status, 302)
    assert TermEntry.objects.exists() == (status == 200)
    read = client.get(reverse("procurement:terms", kwargs={"slug": "alpha"})).status_code
    assert read == (404 if who == "charlie" else 200)


def test_the_history_and_the_list_of_what_to_confirm(personas, buyer, login) -> None:
    client = login(buyer)
    client.post(_edit(), _price_form(pricing_unit="per_node", reason="guess"))
    client.post(_edit(), _price_form(pricing_unit="per_gpu", pricing_unit__basis="estimate"))
    history = client.get(
        reverse(
            "procurement:term_history",
            kwargs={"slug": "alpha", "candidate_slug": "volcano", "key": "pricing_unit"},
        )
    ).content.decode()
    assert history.index("per GPU") < history.index("per node") and "guess" in history
    listed = client.get(
        reverse("procurement:to_confirm", kwargs={"slug": "alpha"})
    ).content.decode()
    assert "List price per unit" in listed and "Pricing unit" not in listed
    chase = reverse(
        "procurement:confirmation_edit",
        kwargs={"slug": "alpha", "candidate_slug": "volcano", "key": "list_price"},
    )
    due = (timezone.localdate() + timedelta(days=7)).isoformat()
    answer = client.post(chase, {"owner_team": "procurement", "due": due, "request": "RFQ sent"})
    assert answer.status_code == 302
    row = Confirmation.objects.get()
    assert (row.owner_team, row.due.isoformat(), row.request) == ("procurement", due, "RFQ sent")
    listed = client.get(
        reverse("procurement:to_confirm", kwargs={"slug": "alpha"})
    ).content.decode()
    assert "RFQ sent" in listed and due in listed
    bad = client.post(chase, {"owner_team": "catering"})
    assert bad.status_code == 422


def test_chinese_readers_read_the_terms_in_chinese(personas, buyer, login) -> None:
    client = login(buyer)
    client.post(
        _edit(),
        _price_form(
            list_price__amount="4500", list_price__currency="CNY", list_price__basis="estimate"
        ),
    )
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    page = client.get(reverse("procurement:terms", kwargs={"slug": "alpha"})).content.decode()
    assert "许可" in page and "待确认" in page
    assert "¥4,500.00" in page or "4,500.00" in page
