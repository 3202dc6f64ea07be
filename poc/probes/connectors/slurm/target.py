"""Where slurmrestd listens and who asks; the connector's error."""

from __future__ import annotations

from dataclasses import dataclass


class ConnectorError(Exception):
    """Nothing could be read; the message is one readable line and never holds the token."""


@dataclass
class SlurmRestTarget:
    """Where slurmrestd listens and who asks: `url` like http://slurm.example.com:6820."""

    url: str
    user: str
    token: str
    timeout: float = 20.0

    def __repr__(self) -> str:  # the token stays out of logs and tracebacks
        return f"SlurmRestTarget(url={self.url!r}, user={self.user!r}, token='***')"
