"""The term list: every kind of value is cleaned into its stored form or refused with a message
that names the term and what is wrong."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from hypothesis import given
from hypothesis import strategies as st

from reports.procurement.terms import BY_KEY, TERMS, Group, applies, clean, term_of


def test_every_term_has_a_group_and_a_unique_key() -> None:
    assert len(BY_KEY) == len(TERMS)
    assert {term.group for term in TERMS} == set(Group.values)
    for term in TERMS:
        if term.kind in ("choice", "layers"):
            assert term.choices is not None, term.key


@pytest.mark.parametrize(
    ("key", "raw", "stored"),
    [
        ("licence_kind", "commercial", "commercial"),
        ("licence_spdx", "apache-2.0", "Apache-2.0"),
        (
            "licence_notes",
            "  Bundled parts under the vendor's EULA  ",
            "Bundled parts under the vendor's EULA",
        ),
        (
            "list_price",
            {"amount": "4,500", "currency": "usd"},
            {"amount": "4500.00", "currency": "USD"},
        ),
        ("discount_percent", "12.50", "12.5"),
        ("sev1_response_hours", 4, "4"),
        ("upgrade_cadence_months", "9", 9),
        (
            "support_layers",
            {"scheduler": "vendor", "hardware": "", "platform": "our_team"},
            {"scheduler": "vendor", "platform": "our_team"},
        ),
        ("licence_notes", "   ", None),
        ("list_price", None, None),
    ],
)
def test_values_are_stored_in_their_kind(key: str, raw: object, stored: object) -> None:
    assert clean(term_of(key), raw) == stored


@pytest.mark.parametrize(
    ("key", "raw", "says"),
    [
        ("licence_kind", "freeware", "freeware is not a choice of Kind of licence"),
        ("list_price", {"amount": "10", "currency": "XYZ"}, "XYZ is not an ISO 4217 currency code"),
        ("list_price", {"amount": "-1", "currency": "USD"}, "must be between 0 and"),
        ("list_price", {"amount": "1e13", "currency": "USD"}, "must be between 0 and"),
        ("list_price", {"amount": "ten", "currency": "USD"}, "takes a number, not ten"),
        ("list_price", "4500", "takes an amount and a currency"),
        ("discount_percent", "200", "Discount must be between 0 and 100, not 200"),
        ("discount_percent", "NaN", "takes a number"),
        ("discount_percent", "0.00001", "at most four decimal places"),
        ("upgrade_cadence_months", "1.5", "takes a whole number, not 1.5"),
        ("upgrade_cadence_months", True, "takes a number"),
        ("exit_notice_days", "-3", "must be between 0 and 3650"),
        ("support_layers", {"network": "vendor"}, "network is not a layer"),
        ("support_layers", {"scheduler": "friends"}, "friends is not a party"),
        ("licence_spdx", "Apache2", "nearest known are Apache-2.0"),
        ("licence_notes", "x" * 4001, "at most 4000 characters"),
    ],
)
def test_bad_values_are_refused_naming_the_term(key: str, raw: object, says: str) -> None:
    with pytest.raises(ValidationError) as refused:
        clean(term_of(key), raw)
    assert says in refused.value.messages[0]


def test_an_unknown_term_is_refused() -> None:
    with pytest.raises(ValidationError, match="There is no term nope"):
        term_of("nope")


def test_prices_do_not_apply_to_open_source() -> None:
    price, support = term_of("list_price"), term_of("support_hours")
    assert not applies(price, "open_source")
    assert applies(price, "commercial") and applies(price, None)
    assert applies(support, "open_source")


@given(st.decimals(min_value=0, max_value=100, places=4, allow_nan=False))
def test_a_percentage_in_range_round_trips(value: Decimal) -> None:
    stored = clean(term_of("discount_percent"), str(value))
    assert Decimal(stored) == value
    assert clean(term_of("discount_percent"), stored) == stored
