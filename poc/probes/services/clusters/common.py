"""What the cluster services share: the errors a run ends with, the time limit, the
network guard's resolver, a Slurm target from a cluster's secrets."""

from collections.abc import Callable
from typing import TYPE_CHECKING

from django.conf import settings
from django.utils.translation import gettext as _

from poc.probes.connectors import guard
from poc.probes.models import (
    Cluster,
)

if TYPE_CHECKING:
    from poc.probes.connectors import slurm


class ClusterUnreachable(Exception):
    """No node or endpoint of the cluster answered: worth another try later."""


def hard_time_limit() -> int:
    return settings.PROBE_SOFT_TIME_LIMIT + 60


def checked_address(host: str, port: int) -> str:
    return guard.checked_address(host, port, settings.PROBE_ALLOWED_NETWORKS)


class RunTimedOut(Exception):
    """The run went past PROBE_SOFT_TIME_LIMIT (its own clock, whatever the worker pool)."""


UNREACHABLE_WORDS = ("cannot connect", "connection refused", "timed out", "unreachable", "no route")


def connector_error(exc: Exception) -> Exception:
    """A connector's failure as the run reports it: unreachable (worth a retry) or final."""
    text = str(exc)
    if any(word in text.lower() for word in UNREACHABLE_WORDS):
        return ClusterUnreachable(text)
    return RunFailed(text)


class RunFailed(Exception):
    """The cluster answered, but the probe cannot go on; the message says why."""


def resolver(error: type[Exception]) -> Callable[[str, int], str]:
    def resolve(host: str, port: int) -> str:
        try:
            return checked_address(host, port)
        except guard.GuardRefused as exc:
            raise error(str(exc)) from None

    return resolve


def plain_http_token_refused(url: str) -> str | None:
    """Why a slurmrestd JWT may not go to `url`, or None: over plain http:// only where
    SLURM_TOKEN_OVER_HTTP allows it (development, or said so in production)."""
    if url.strip().lower().startswith("http://") and not settings.SLURM_TOKEN_OVER_HTTP:
        return _(
            "slurmrestd's address is plain http://, so its JWT would cross the network in "
            "clear text: use https://, or set SLURM_TOKEN_OVER_HTTP=true for a link you trust."
        )
    return None


def slurm_target(cluster: Cluster, secrets: dict[str, str]) -> "slurm.SlurmRestTarget":
    from poc.probes.connectors import slurm

    refused = plain_http_token_refused(cluster.api_url)
    if refused:
        raise RunFailed(refused)

    return slurm.SlurmRestTarget(
        url=cluster.api_url,
        user=cluster.slurm_user,
        token=secrets.get("jwt", ""),
        timeout=float(settings.PROBE_COMMAND_TIMEOUT),
    )
