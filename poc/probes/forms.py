import json
from typing import Any

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS
from django.forms.utils import ErrorDict
from django.http import QueryDict
from django.utils.translation import gettext_lazy as _

from poc.probes.models import (
    SECRET_FIELDS,
    ClusterKind,
)
from poc.probes.parsers.formats import FORMATS
from poc.probes.parsers.node_commands import NODE_COMMANDS
from poc.probes.present import secret_summary_shown
from workbench.forms import FlagForm


class ProbeUploadForm(forms.Form):
    """Probe output from a node the workbench cannot reach: the agent's bundle, or nvidia-smi
    output in any format the parsers read, as a file or pasted. Its help lists those formats
    (`accepted`, the parsers' registry) and the commands the agent runs on a node (`commands`)."""

    accepted = FORMATS
    commands = NODE_COMMANDS

    candidate = forms.ChoiceField(label=_("Candidate"))
    file = forms.FileField(
        label=_("File"),
        required=False,
        help_text=_("Any of the outputs listed above, the agent's bundle included."),
    )
    text = forms.CharField(
        label=_("Or paste the output"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false", "class": "mono"}),
    )
    host = forms.CharField(label=_("Node name"), max_length=255, required=False)
    expected_gpus = forms.IntegerField(
        label=_("GPUs the node should have"),
        min_value=1,
        max_value=1024,
        required=False,
        help_text=_("Fewer GPUs found than this makes the node fail its health check."),
    )

    def __init__(self, *args: object, candidates: list[tuple[str, str]], **kwargs: object):
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["candidate"].choices = candidates  # type: ignore[attr-defined]

    @classmethod
    def refused(cls, message: str, *, candidates: list[tuple[str, str]]) -> "ProbeUploadForm":
        """An empty form that carries why an upload was refused before it was read (too big):
        nothing of the request is bound, so nothing of it is echoed back."""
        form = cls(candidates=candidates)
        form._errors = ErrorDict(  # type: ignore[attr-defined]
            {NON_FIELD_ERRORS: form.error_class([message])}
        )
        return form

    def clean(self) -> dict[str, object]:
        cleaned = super().clean() or {}
        if not cleaned.get("file") and not (cleaned.get("text") or "").strip():
            raise forms.ValidationError(_("Choose a file or paste the output."))
        if cleaned.get("file") and (cleaned.get("text") or "").strip():
            raise forms.ValidationError(_("Choose a file or paste the output, not both."))
        return cleaned


class MultipleFileInput(forms.FileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files under one name; cleaned to a list (empty when none was chosen)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput(attrs={"multiple": True}))
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[Any]:
        files = data if isinstance(data, list | tuple) else [data] if data else []
        return [super(MultipleFileField, self).clean(item, initial) for item in files]


class ClusterDocumentsForm(forms.Form):
    """Documents of a cluster the workbench cannot reach, for one candidate and optionally one
    of its clusters: files (several at once) or pasted text."""

    candidate = forms.ChoiceField(label=_("Candidate"))
    cluster = forms.ChoiceField(
        label=_("Cluster"),
        required=False,
        help_text=_("Optional: the candidate's registered cluster these documents describe."),
    )
    documents = MultipleFileField(
        label=_("Files"),
        required=False,
        help_text=_(
            "kubectl get nodes -o yaml (or -o json), Volcano or KAI queues and PodGroups, "
            "kubectl describe pod, scontrol show nodes, sinfo, slurmrestd or sinfo --json "
            "JSON. Several files may be chosen."
        ),
    )
    text = forms.CharField(
        label=_("Or paste the documents"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false", "class": "mono"}),
    )

    def __init__(
        self,
        *args: object,
        candidates: list[tuple[str, str]],
        clusters: list[tuple[str, str]],
        **kwargs: object,
    ):
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["candidate"].choices = candidates  # type: ignore[attr-defined]
        self.fields["cluster"].choices = [("", _("— none —")), *clusters]  # type: ignore[attr-defined]

    @classmethod
    def refused(
        cls, message: str, *, candidates: list[tuple[str, str]], clusters: list[tuple[str, str]]
    ) -> "ClusterDocumentsForm":
        """An empty form carrying why an upload was refused before it was read (too big)."""
        form = cls(candidates=candidates, clusters=clusters)
        form._errors = ErrorDict(  # type: ignore[attr-defined]
            {NON_FIELD_ERRORS: form.error_class([message])}
        )
        return form

    def clean(self) -> dict[str, object]:
        cleaned = super().clean() or {}
        pasted = (cleaned.get("text") or "").strip()
        if not cleaned.get("documents") and not pasted:
            raise forms.ValidationError(_("Choose files or paste the documents."))
        if cleaned.get("documents") and pasted:
            raise forms.ValidationError(_("Choose files or paste the documents, not both."))
        return cleaned


class ProbeBindingForm(forms.Form):
    """Which check of the catalogue judges an action, and its parameters as JSON."""

    check = forms.ChoiceField(label=_("Check"), required=False)
    params = forms.CharField(
        label=_("Parameters (JSON)"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "spellcheck": "false", "class": "mono"}),
    )

    def __init__(self, *args: object, checks: list[tuple[str, str]], **kwargs: object):
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["check"].choices = [("", _("— not checked by probes —")), *checks]  # type: ignore[attr-defined]

    def clean_params(self) -> dict[str, object]:
        raw = (self.cleaned_data.get("params") or "").strip()
        if not raw:
            return {}
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise forms.ValidationError(
                _("The parameters are not valid JSON: %(error)s") % {"error": exc}
            ) from None
        if not isinstance(value, dict):
            raise forms.ValidationError(_("The parameters must be a JSON object, e.g. {}."))
        return value


class ClusterForm(forms.Form):
    """A cluster as people register it. Secret fields are write-only: they are never filled
    in from what is stored, and left empty they keep it."""

    name = forms.CharField(label=_("Name"), max_length=100)
    candidate = forms.ChoiceField(label=_("Candidate"))
    kind = forms.ChoiceField(label=_("Kind"), choices=ClusterKind.choices)
    hosts = forms.CharField(
        label=_("Nodes (SSH)"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false", "class": "mono"}),
        help_text=_("One per line: host, host:port or [IPv6]:port."),
    )
    ssh_user = forms.CharField(label=_("SSH user"), max_length=64, required=False)
    ssh_port = forms.IntegerField(label=_("SSH port"), min_value=1, max_value=65535, initial=22)
    api_url = forms.CharField(
        label=_("API URL"),
        max_length=500,
        required=False,
        help_text=_("Kubernetes API server or slurmrestd, e.g. https://10.0.0.5:6443."),
    )
    slurm_user = forms.CharField(label=_("Slurm user"), max_length=64, required=False)
    expected_gpus_per_node = forms.IntegerField(
        label=_("GPUs each node should have"), min_value=1, max_value=1024, required=False
    )
    schedule_minutes = forms.IntegerField(
        label=_("Probe every (minutes)"),
        min_value=5,
        max_value=7 * 24 * 60,
        required=False,
        help_text=_("Leave empty to probe only when asked."),
    )
    controlled_failures = forms.BooleanField(
        label=_("Run controlled failures (creates objects on the cluster)"), required=False
    )
    failure_namespace = forms.CharField(
        label=_("Namespace for controlled failures"), max_length=63, required=False
    )
    ssh_private_key = forms.CharField(
        label=_("SSH private key"),
        required=False,
        strip=False,
        widget=forms.Textarea(
            attrs={"rows": 3, "spellcheck": "false", "class": "mono", "autocomplete": "off"}
        ),
    )
    ssh_key_passphrase = forms.CharField(
        label=_("Key passphrase"), required=False, strip=False, widget=forms.PasswordInput
    )
    ssh_password = forms.CharField(
        label=_("SSH password"), required=False, strip=False, widget=forms.PasswordInput
    )
    kubeconfig = forms.CharField(
        label=_("kubeconfig"),
        required=False,
        widget=forms.Textarea(
            attrs={"rows": 4, "spellcheck": "false", "class": "mono", "autocomplete": "off"}
        ),
        help_text=_("Token or client certificate only: exec plugins and file paths are refused."),
    )
    bearer_token = forms.CharField(
        label=_("Bearer token"), required=False, widget=forms.PasswordInput
    )
    ca_pem = forms.CharField(
        label=_("CA certificate (PEM)"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false", "class": "mono"}),
    )
    jwt = forms.CharField(label=_("Slurm JWT"), required=False, widget=forms.PasswordInput)
    clear_secrets = forms.MultipleChoiceField(
        label=_("Remove stored secrets"), required=False, widget=forms.CheckboxSelectMultiple
    )

    # The fields each kind uses besides name, candidate and kind (secrets: SECRET_FIELDS); the
    # page shows only those of the kind chosen (static/js/workbench.js; all without script).
    KIND_FIELDS: dict[str, tuple[str, ...]] = {
        ClusterKind.SSH: ("hosts", "ssh_user", "ssh_port", "expected_gpus_per_node"),
        ClusterKind.SLURM_SSH: (
            "hosts",
            "ssh_user",
            "ssh_port",
            "expected_gpus_per_node",
            "controlled_failures",
        ),
        ClusterKind.KUBERNETES: (
            "api_url",
            "expected_gpus_per_node",
            "controlled_failures",
            "failure_namespace",
        ),
        ClusterKind.SLURM_REST: (
            "api_url",
            "slurm_user",
            "expected_gpus_per_node",
            "controlled_failures",
        ),
        ClusterKind.AGENT: ("expected_gpus_per_node",),
    }
    # Every kind the workbench probes itself (not the push agent's) can be scheduled.
    COMMON = ("name", "candidate", "kind", "clear_secrets")
    PROBED = ("schedule_minutes",)

    SECRET_NAMES = (
        "ssh_private_key",
        "ssh_key_passphrase",
        "ssh_password",
        "kubeconfig",
        "bearer_token",
        "ca_pem",
        "jwt",
    )

    def __init__(
        self,
        *args: object,
        candidates: list[tuple[str, str]],
        stored: dict[str, str] | None = None,
        **kwargs: object,
    ):
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["candidate"].choices = candidates  # type: ignore[attr-defined]
        stored = stored or {}
        self.fields["clear_secrets"].choices = [  # type: ignore[attr-defined]
            (name, f"{self.fields[name].label}: {secret_summary_shown(summary)}")
            for name, summary in stored.items()
            if name in self.fields
        ]
        for name, summary in stored.items():
            if name in self.fields:
                self.fields[name].help_text = _("Stored: %(summary)s. Leave empty to keep it.") % {
                    "summary": secret_summary_shown(summary)
                }

    def secrets(self) -> dict[str, str]:
        return {name: self.cleaned_data.get(name) or "" for name in self.SECRET_NAMES}

    def fields_by_kind(self) -> dict[str, list[str]]:
        """Each kind's fields, for the page to show only the kind's own."""
        return {
            kind: [
                *self.COMMON,
                *self.KIND_FIELDS[kind],
                *(self.PROBED if kind != ClusterKind.AGENT else ()),
                *SECRET_FIELDS[kind],
            ]
            for kind in ClusterKind.values
        }


class HostKeyConfirmForm(forms.Form):
    """The nodes whose host key fingerprints a person compared and confirmed."""

    node = forms.MultipleChoiceField(choices=[], required=False)

    def __init__(self, data: QueryDict, *, nodes: list[str]) -> None:
        super().__init__(data)
        node_field = self.fields["node"]
        assert isinstance(node_field, forms.MultipleChoiceField)
        node_field.choices = [(node, node) for node in nodes]
        for node in nodes:
            self.fields[f"fingerprint:{node}"] = forms.CharField(required=False, max_length=200)

    def confirmed(self) -> dict[str, str]:
        """Node -> the fingerprint the person confirmed (only nodes ticked with one)."""
        if not self.is_valid():
            return {}
        return {
            node: self.cleaned_data[f"fingerprint:{node}"]
            for node in self.cleaned_data["node"]
            if self.cleaned_data[f"fingerprint:{node}"]
        }


__all__ = [
    "ClusterDocumentsForm",
    "ClusterForm",
    "FlagForm",
    "HostKeyConfirmForm",
    "ProbeBindingForm",
    "ProbeUploadForm",
]
