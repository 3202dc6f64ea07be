"""Form helpers shared by every app."""

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError


def form_add_service_error(form: forms.Form, exc: ValidationError) -> None:
    """Show a service's ValidationError on the form, on the field it names where it can."""
    if hasattr(exc, "error_dict"):
        for field, errors in exc.error_dict.items():
            target = field if field in form.fields else None
            for error in errors:
                form.add_error(target, error)
    else:
        for message in exc.messages:
            form.add_error(None, message)


__all__ = ["NON_FIELD_ERRORS", "form_add_service_error"]
