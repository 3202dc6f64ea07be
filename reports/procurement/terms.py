"""The terms procurement records for every candidate, in one list: what each is, the kind of
value it takes and its bounds. Pages, forms, the API, the sheet and the "to be confirmed" list
all read this list, so a term is added here once.

A value is stored as JSON in the term's kind: text, a choice key, an integer, a decimal (as a
string, never a float), money ({"amount": "4500.00", "currency": "USD"}), an SPDX expression,
or the support layers ({"scheduler": "vendor", ...}). `clean` turns what a form or the API sent
into that value, or raises ValidationError saying what is wrong.
"""

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import TYPE_CHECKING

from babel.numbers import list_currencies
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from reports.procurement.licences import is_spdx, spdx_normalize
from workbench.typing import JSON

if TYPE_CHECKING:
    from django.utils.functional import _StrPromise as Promise
else:
    from django.utils.functional import Promise

MAX_TEXT = 4000
MAX_AMOUNT = Decimal("1000000000000")  # one trillion in any currency is a typing error


class Group(models.TextChoices):
    LICENCE = "licence", gettext_lazy("Licence")
    PRICE = "price", gettext_lazy("Price")
    SUPPORT = "support", gettext_lazy("Support")
    UPGRADE = "upgrade", gettext_lazy("Upgrades")
    EXIT = "exit", gettext_lazy("Exit plan")
    SECURITY = "security", gettext_lazy("Security obligations")
    CAPACITY = "capacity", gettext_lazy("Utilisation")


class Kind(models.TextChoices):
    TEXT = "text"
    CHOICE = "choice"
    INTEGER = "integer"
    DECIMAL = "decimal"
    MONEY = "money"
    SPDX = "spdx"
    LAYERS = "layers"


class LicenceKind(models.TextChoices):
    OPEN_SOURCE = "open_source", gettext_lazy("Open source")
    MIXED = "mixed", gettext_lazy("Open source with commercial parts")
    COMMERCIAL = "commercial", gettext_lazy("Commercial")
    CLOUD = "cloud", gettext_lazy("Cloud service")


class PricingUnit(models.TextChoices):
    PER_GPU = "per_gpu", gettext_lazy("per GPU or other accelerator")
    PER_NODE = "per_node", gettext_lazy("per node")
    PER_CORE_PAIR = "per_core_pair", gettext_lazy("per core pair (2 cores or 4 vCPUs)")
    PER_SOCKET_PAIR = "per_socket_pair", gettext_lazy("per bare-metal socket pair")
    PER_NAMED_USER = "per_named_user", gettext_lazy("per named user")
    FLAT_PER_YEAR = "flat_per_year", gettext_lazy("flat per year")
    PER_GPU_HOUR = "per_gpu_hour", gettext_lazy("per GPU-hour consumed")
    PER_NODE_HOUR = "per_node_hour", gettext_lazy("per node-hour consumed")


class PriceTerm(models.TextChoices):
    SUBSCRIPTION_1Y = "subscription_1y", gettext_lazy("1-year subscription")
    SUBSCRIPTION_3Y = "subscription_3y", gettext_lazy("3-year subscription")
    SUBSCRIPTION_5Y = "subscription_5y", gettext_lazy("5-year subscription")
    PERPETUAL = "perpetual", gettext_lazy("perpetual, with support")
    CONSUMPTION = "consumption", gettext_lazy("pay as consumed")


class SupportHours(models.TextChoices):
    ALWAYS = "24x7", gettext_lazy("24x7")
    BUSINESS = "business_hours", gettext_lazy("business hours")
    NONE = "none", gettext_lazy("none")


class Party(models.TextChoices):
    VENDOR = "vendor", gettext_lazy("vendor")
    RESELLER = "reseller", gettext_lazy("reseller")
    COMMUNITY = "community", gettext_lazy("community")
    OUR_TEAM = "our_team", gettext_lazy("our own team")
    NOBODY = "nobody", gettext_lazy("nobody")


class Sbom(models.TextChoices):
    SPDX = "spdx", gettext_lazy("published, SPDX")
    CYCLONEDX = "cyclonedx", gettext_lazy("published, CycloneDX")
    ON_REQUEST = "on_request", gettext_lazy("on request")
    NONE = "none", gettext_lazy("none")


# The layers of the stack whose support is split between parties.
SUPPORT_LAYERS: list[tuple[str, Promise]] = [
    ("scheduler", gettext_lazy("scheduler and control plane")),
    ("gpu_stack", gettext_lazy("GPU drivers and operator")),
    ("platform", gettext_lazy("Kubernetes or operating system")),
    ("hardware", gettext_lazy("hardware")),
]


@dataclass(frozen=True)
class Term:
    key: str
    group: str
    kind: str
    label: Promise
    help: Promise | str = ""
    choices: type[models.TextChoices] | None = None
    minimum: Decimal | None = None
    maximum: Decimal | None = None
    unit: Promise | str = ""
    # Free-text notes are context, not commitments: they never wait for confirmation.
    confirmable: bool = True

    @property
    def group_label(self) -> str:
        return str(Group(self.group).label)


def _term(key: str, group: Group, kind: Kind, label: Promise, **options: object) -> Term:
    return Term(key, str(group), str(kind), label, **options)  # type: ignore[arg-type]


TERMS: list[Term] = [
    _term("licence_kind", Group.LICENCE, Kind.CHOICE, gettext_lazy("Kind of licence"),
          choices=LicenceKind),
    _term("licence_spdx", Group.LICENCE, Kind.SPDX, gettext_lazy("Licence (SPDX expression)"),
          help=gettext_lazy("For example Apache-2.0, GPL-2.0-or-later WITH "
                            "Classpath-exception-2.0; proprietary parts as LicenseRef-<name>.")),
    _term("licence_notes", Group.LICENCE, Kind.TEXT, gettext_lazy("Licence notes"),
          confirmable=False),
    _term("pricing_unit", Group.PRICE, Kind.CHOICE, gettext_lazy("Pricing unit"),
          choices=PricingUnit),
    _term("price_term", Group.PRICE, Kind.CHOICE, gettext_lazy("Term"), choices=PriceTerm),
    _term("list_price", Group.PRICE, Kind.MONEY, gettext_lazy("List price per unit"),
          help=gettext_lazy("Per unit and year for subscriptions, per hour when consumed."),
          minimum=Decimal(0), maximum=MAX_AMOUNT),
    _term("discount_percent", Group.PRICE, Kind.DECIMAL, gettext_lazy("Discount"),
          minimum=Decimal(0), maximum=Decimal(100), unit="%"),
    _term("support_tier", Group.SUPPORT, Kind.TEXT, gettext_lazy("Support tier")),
    _term("support_hours", Group.SUPPORT, Kind.CHOICE, gettext_lazy("Support hours"),
          choices=SupportHours),
    _term("sev1_response_hours", Group.SUPPORT, Kind.DECIMAL,
          gettext_lazy("Severity-1 response time"), minimum=Decimal(0), maximum=Decimal(720),
          unit=gettext_lazy("hours")),
    _term("support_layers", Group.SUPPORT, Kind.LAYERS, gettext_lazy("Who supports which layer"),
          choices=Party),
    _term("support_notes", Group.SUPPORT, Kind.TEXT, gettext_lazy("Support notes"),
          confirmable=False),
    _term("upgrade_cadence_months", Group.UPGRADE, Kind.INTEGER,
          gettext_lazy("Release cadence"), minimum=Decimal(1), maximum=Decimal(60),
          unit=gettext_lazy("months")),
    _term("supported_window_months", Group.UPGRADE, Kind.INTEGER,
          gettext_lazy("Supported-versions window"), minimum=Decimal(0), maximum=Decimal(240),
          unit=gettext_lazy("months")),
    _term("upgrade_notes", Group.UPGRADE, Kind.TEXT, gettext_lazy("Upgrade notes"),
          confirmable=False),
    _term("exit_triggers", Group.EXIT, Kind.TEXT, gettext_lazy("What triggers the exit"),
          help=gettext_lazy("Normal termination and stress: vendor failure, service "
                            "deterioration.")),
    _term("exit_formats", Group.EXIT, Kind.TEXT, gettext_lazy("What comes back, in which format"),
          help=gettext_lazy("Jobs, queues, quotas, users and logs.")),
    _term("exit_transition_by", Group.EXIT, Kind.TEXT, gettext_lazy("Who does the transition")),
    _term("exit_success", Group.EXIT, Kind.TEXT, gettext_lazy("How success is judged")),
    _term("exit_notice_days", Group.EXIT, Kind.INTEGER, gettext_lazy("Contract notice"),
          minimum=Decimal(0), maximum=Decimal(3650), unit=gettext_lazy("days")),
    _term("exit_effort_days", Group.EXIT, Kind.DECIMAL, gettext_lazy("Migration effort"),
          minimum=Decimal(0), maximum=Decimal(100000), unit=gettext_lazy("person-days")),
    _term("exit_notes", Group.EXIT, Kind.TEXT, gettext_lazy("Exit notes"), confirmable=False),
    _term("cve_patch_days", Group.SECURITY, Kind.INTEGER,
          gettext_lazy("Time to patch a critical CVE"), minimum=Decimal(0),
          maximum=Decimal(3650), unit=gettext_lazy("days")),
    _term("sbom", Group.SECURITY, Kind.CHOICE, gettext_lazy("Software bill of materials"),
          choices=Sbom),
    _term("versions_policy", Group.SECURITY, Kind.TEXT,
          gettext_lazy("Supported-versions policy")),
    _term("utilisation_percent", Group.CAPACITY, Kind.DECIMAL,
          gettext_lazy("GPU utilisation reached"), minimum=Decimal(1), maximum=Decimal(100),
          unit="%",
          help=gettext_lazy("The share of provisioned GPU-hours doing work under this "
                            "candidate: measured in the PoC (name the run), a vendor's claim or "
                            "our estimate. The demand divided by it gives the GPUs needed.")),
    _term("utilisation_low_percent", Group.CAPACITY, Kind.DECIMAL,
          gettext_lazy("Utilisation, low"), minimum=Decimal(1), maximum=Decimal(100), unit="%",
          confirmable=False,
          help=gettext_lazy("The least it is likely to reach: its capacity cost at the high "
                            "end. Empty: the figure above.")),
    _term("utilisation_high_percent", Group.CAPACITY, Kind.DECIMAL,
          gettext_lazy("Utilisation, high"), minimum=Decimal(1), maximum=Decimal(100), unit="%",
          confirmable=False,
          help=gettext_lazy("The most it is likely to reach: its capacity cost at the low "
                            "end. Empty: the figure above.")),
]  # fmt: skip
BY_KEY = {term.key: term for term in TERMS}
# A candidate whose licence kind is open source has no price to confirm.
PRICED_KINDS = {LicenceKind.MIXED, LicenceKind.COMMERCIAL, LicenceKind.CLOUD}
# Where the four free-text boundary fields of earlier versions went.
FORMER_FIELDS = {
    "license_model": "licence_notes",
    "support_terms": "support_notes",
    "upgrade_cadence": "upgrade_notes",
    "exit_plan": "exit_notes",
}


def former_terms(field: str, text: str) -> dict[str, str]:
    """The terms one of the former boundary texts becomes: its notes, and for the licence text
    that is an SPDX expression, the expression (the text as written stays in the notes when
    the SPDX spelling differs)."""
    text = text.strip()
    if not text or field not in FORMER_FIELDS:
        return {}
    if field == "license_model" and is_spdx(text):
        expression = spdx_normalize(text)
        return {"licence_spdx": expression} | (
            {} if expression == text else {"licence_notes": text}
        )
    return {FORMER_FIELDS[field]: text}


def term_of(key: str) -> Term:
    try:
        return BY_KEY[key]
    except KeyError:
        raise ValidationError(_("There is no term %(key)s.") % {"key": key}) from None


def terms_in(group: str) -> list[Term]:
    return [term for term in TERMS if term.group == group]


@cache
def currencies() -> frozenset[str]:
    """ISO 4217 codes Babel knows (active currencies)."""
    return frozenset(list_currencies())


def applies(term: Term, licence_kind: str | None) -> bool:
    """Whether the term asks for an answer given the candidate's licence kind: prices do not
    for open source (support bought separately is a support term)."""
    return term.group != Group.PRICE or licence_kind not in (LicenceKind.OPEN_SOURCE,)


def clean(term: Term, raw: JSON) -> JSON:
    """What a form or the API sent, as the term's stored value; None when nothing was given."""
    if raw is None or raw == "" or raw == {}:
        return None
    cleaner = _CLEANERS[term.kind]
    return cleaner(term, raw)


def _text(term: Term, raw: JSON) -> JSON:
    if not isinstance(raw, str):
        raise ValidationError(_("%(term)s takes text.") % {"term": term.label})
    text = raw.strip()
    if len(text) > MAX_TEXT:
        raise ValidationError(
            _("%(term)s has at most %(max)s characters.") % {"term": term.label, "max": MAX_TEXT}
        )
    return text or None


def _choice(term: Term, raw: JSON) -> JSON:
    assert term.choices is not None
    if raw not in term.choices.values:
        raise ValidationError(
            _("%(value)s is not a choice of %(term)s (one of %(choices)s).")
            % {"value": raw, "term": term.label, "choices": ", ".join(term.choices.values)}
        )
    return raw


def _number(term: Term, raw: JSON, *, integer: bool = False) -> Decimal:
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise ValidationError(_("%(term)s takes a number.") % {"term": term.label})
    try:
        value = Decimal(str(raw).strip().replace(",", ""))
    except InvalidOperation:
        raise ValidationError(
            _("%(term)s takes a number, not %(value)s.") % {"term": term.label, "value": raw}
        ) from None
    if not value.is_finite() or (integer and value != value.to_integral_value()):
        message = (
            _("%(term)s takes a whole number, not %(value)s.")
            if integer
            else _("%(term)s takes a number, not %(value)s.")
        )
        raise ValidationError(message % {"term": term.label, "value": raw})
    if (term.minimum is not None and value < term.minimum) or (
        term.maximum is not None and value > term.maximum
    ):
        raise ValidationError(
            _("%(term)s must be between %(min)s and %(max)s, not %(value)s.")
            % {"term": term.label, "min": term.minimum, "max": term.maximum, "value": raw}
        )
    if value.as_tuple().exponent < -4:  # type: ignore[operator]
        raise ValidationError(_("%(term)s has at most four decimal places.") % {"term": term.label})
    return value


def _integer(term: Term, raw: JSON) -> JSON:
    return int(_number(term, raw, integer=True))


def _decimal(term: Term, raw: JSON) -> JSON:
    return str(_number(term, raw).normalize().quantize(Decimal("0.0001")).normalize())


def _money(term: Term, raw: JSON) -> JSON:
    if not isinstance(raw, dict) or set(raw) - {"amount", "currency"}:
        raise ValidationError(_("%(term)s takes an amount and a currency.") % {"term": term.label})
    currency = str(raw.get("currency") or "").strip().upper()
    if currency not in currencies():
        raise ValidationError(
            _("%(currency)s is not an ISO 4217 currency code (for example USD, EUR, CNY).")
            % {"currency": currency or "—"}
        )
    amount = _number(term, raw.get("amount"))
    return {"amount": f"{amount.quantize(Decimal('0.01'))}", "currency": currency}


def _spdx(term: Term, raw: JSON) -> JSON:
    if not isinstance(raw, str):
        raise ValidationError(_("%(term)s takes text.") % {"term": term.label})
    return spdx_normalize(raw)


def _layers(term: Term, raw: JSON) -> JSON:
    known = dict(SUPPORT_LAYERS)
    if not isinstance(raw, dict):
        raise ValidationError(_("%(term)s takes a party per layer.") % {"term": term.label})
    value = {}
    for layer, party in raw.items():
        if layer not in known:
            raise ValidationError(
                _("%(layer)s is not a layer (one of %(layers)s).")
                % {"layer": layer, "layers": ", ".join(known)}
            )
        if party in (None, ""):
            continue
        if party not in Party.values:
            raise ValidationError(
                _("%(party)s is not a party (one of %(parties)s).")
                % {"party": party, "parties": ", ".join(Party.values)}
            )
        value[layer] = party
    return value or None  # type: ignore[return-value]


_CLEANERS: dict[str, Callable[[Term, JSON], JSON]] = {
    Kind.TEXT: _text,
    Kind.CHOICE: _choice,
    Kind.INTEGER: _integer,
    Kind.DECIMAL: _decimal,
    Kind.MONEY: _money,
    Kind.SPDX: _spdx,
    Kind.LAYERS: _layers,
}
