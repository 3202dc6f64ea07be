"""Types shared by every app's views and services."""

from django.contrib.auth.models import AnonymousUser, User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

AnyUser = User | AnonymousUser


class HtmxHttpRequest(HttpRequest):
    """A request after django-htmx's middleware: `request.htmx` is truthy for htmx calls."""

    htmx: HtmxDetails


class AuthedHttpRequest(HtmxHttpRequest):
    """A request to a view behind `login_required`: the user is a real account."""

    user: User  # type: ignore[assignment]


# Decoded JSON (a request body, a JSON column) and YAML (the catalog files): what it may hold.
type JSON = str | int | float | bool | None | list[JSON] | dict[str, JSON]
type JSONObject = dict[str, JSON]
