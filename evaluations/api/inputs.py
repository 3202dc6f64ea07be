"""What every app's write endpoints share to validate their input with serializers: strict
fields (a number is no string; text the database cannot store is refused, saying why) and the
400 answer whose `detail` names the first field that is wrong and what is wrong with it."""

from typing import Any

from django.core.validators import ProhibitNullCharactersValidator
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from workbench.text import text_problem

QUERY = "query parameter "  # `where` of a query string's errors: "query parameter run ..."

# Messages read after the field's name: "candidate is required", "run is longer than 200 ...".
FIELD_MESSAGES: dict[str, Any] = {
    "required": "is required",
    "null": "may not be null",
    "blank": "may not be empty",
    "max_length": "is longer than {max_length} characters",
}


class StringField(serializers.CharField):
    """A JSON string kept as it was sent: a number or a boolean is no string. Any character is
    accepted (a document's text is kept as a file, byte for byte)."""

    default_error_messages = {**FIELD_MESSAGES, "invalid": "must be a string"}

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)
        # DRF's own two checks walk the text a character at a time: TextField checks it whole.
        self.validators = [
            validator
            for validator in self.validators
            if not isinstance(
                validator, ProhibitNullCharactersValidator | ProhibitSurrogateCharactersValidator
            )
        ]

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return data


class TextField(StringField):
    """A string the database can store: a NUL or a lone surrogate is refused by name."""

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if problem := text_problem(value):
            raise serializers.ValidationError(problem)
        return value


class IntegerValueField(serializers.IntegerField):
    """A JSON integer as sent: a string of digits, a decimal or a boolean is none."""

    default_error_messages = {
        **FIELD_MESSAGES,
        "invalid": "must be an integer",
        "min_value": "must be at least {min_value}",
    }

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return data


class IdField(serializers.IntegerField):
    """A row's id as a URL writes it: ASCII digits only (no sign, no spaces, no decimals)."""

    default_error_messages = {**FIELD_MESSAGES, "invalid": "must be an id (digits)"}

    def to_internal_value(self, data: Any) -> int:
        text = data if isinstance(data, str) else ""
        if not (text.isascii() and text.isdigit() and len(text) <= 9):
            self.fail("invalid")
        return int(text)


class FlagField(serializers.BooleanField):
    """A flag in a query string: true or false, 1 or 0, in any case."""

    default_error_messages = {**FIELD_MESSAGES, "invalid": "must be true or false"}

    def to_internal_value(self, data: Any) -> bool:
        text = str(data).lower()
        if text not in ("true", "1", "false", "0"):
            self.fail("invalid")
        return text in ("true", "1")


@extend_schema_field(OpenApiTypes.BINARY)
class UploadField(serializers.FileField):
    """A file sent as a multipart field (described as binary, which generated clients send)."""


def _first_error(errors: Any, path: str) -> tuple[str, str]:
    """The place (`documents[1].name`, "" for the input as a whole) and the message of the
    first error in a serializer's errors."""
    if isinstance(errors, dict):
        for key, value in errors.items():
            if key == api_settings.NON_FIELD_ERRORS_KEY:
                where = path
            elif isinstance(key, int):
                where = f"{path}[{key}]"
            else:
                where = f"{path}.{key}" if path else str(key)
            if value:
                return _first_error(value, where)
    if isinstance(errors, list):
        for position, item in enumerate(errors):
            if isinstance(item, dict):  # one item of a list of objects (empty when valid)
                if item:
                    return _first_error(item, f"{path}[{position}]")
            elif item:
                return _first_error(item, path)
    return path, str(errors)


def input_problem(errors: Any, *, where: str = "") -> str:
    """One line naming the first field that is wrong and what is wrong with it: "query
    parameter candidate contains a NUL character", "outputs[0].exit_code: A valid integer is
    required."; a problem of the input as a whole is its message alone."""
    path, message = _first_error(errors, "")
    if not path:
        return message
    return f"{where}{path}{' ' if message[:1].islower() else ': '}{message}"


def input_refused(serializer: serializers.BaseSerializer[Any], *, where: str = "") -> Response:
    """The 400 for input its serializer refused: {"detail": what is wrong, and where}."""
    return Response({"detail": input_problem(serializer.errors, where=where)}, status=400)
