"""Form helpers shared by every app."""

from django import forms
from django.conf import settings
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.http import QueryDict
from django.utils.translation import gettext_lazy as _


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


class PreferenceForm(forms.Form):
    email_notifications = forms.BooleanField(
        label=_("E-mail me when a sheet awaits my decision, is rejected, sealed or outdated"),
        required=False,
    )
    language = forms.ChoiceField(
        label=_("Language of e-mails"),
        required=False,
        choices=[("", _("The site's language")), *settings.LANGUAGES],
    )


class FlagForm(forms.Form):
    """A button that says one thing ("reset", "clear", "with failures"), read through a form
    like any other input."""

    def __init__(self, name: str, data: QueryDict | None = None) -> None:
        super().__init__(data)
        self.name = name
        self.fields[name] = forms.BooleanField(required=False)

    @property
    def set(self) -> bool:
        return self.is_valid() and bool(self.cleaned_data[self.name])


__all__ = ["NON_FIELD_ERRORS", "FlagForm", "PreferenceForm", "form_add_service_error"]
