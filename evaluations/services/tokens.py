"""Project-scoped API tokens for CI and scripts: created once, stored as a hash, revocable."""

import hashlib
import hmac
import secrets
from datetime import timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from evaluations.models import ApiToken, Membership, Project
from evaluations.services.history import event_record
from workbench.people import stored_user

TOKEN_PREFIX = "wbt"
DEFAULT_EXPIRY_DAYS = 90  # every token expires; the longest a person may choose is a year
MAX_EXPIRY_DAYS = 365
TOUCH_INTERVAL = timedelta(minutes=1)


def token_hash(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


@transaction.atomic
def api_token_create(
    *,
    project: Project,
    name: str,
    scopes: list[str],
    actor: User | None,
    expires_days: int | None = DEFAULT_EXPIRY_DAYS,
) -> tuple[ApiToken, str]:
    """Create a token and return it with its secret, which is never stored and never shown
    again: only its SHA-256 and a short prefix (for lookup) are kept."""
    prefix = secrets.token_hex(4)
    raw = f"{TOKEN_PREFIX}_{prefix}_{secrets.token_urlsafe(32)}"
    token = ApiToken(
        project=project,
        name=name.strip(),
        prefix=prefix,
        token_hash=token_hash(raw),
        scopes=sorted(set(scopes)),
        expires_at=timezone.now() + timedelta(days=expires_days) if expires_days else None,
        created_by=stored_user(actor),
    )
    token.full_clean()
    token.save()
    event_record(
        project=project,
        actor=actor,
        verb="token.created",
        subject=f"{token.name} ({prefix})",
        after={"scopes": token.scopes, "expires_at": str(token.expires_at or "")},
    )
    return token, raw


@transaction.atomic
def api_token_revoke(*, token: ApiToken, actor: User | None, reason: str = "") -> ApiToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        event_record(
            project=token.project,
            actor=actor,
            verb="token.revoked",
            subject=f"{token.name} ({token.prefix})",
            after={"reason": reason} if reason else None,
        )
    return token


@transaction.atomic
def api_tokens_revoke_created_by(*, user: User, actor: User | None, reason: str) -> int:
    """Revoke every live token `user` created, in every project (an account being deactivated);
    each revocation goes to its project's history. Returns how many were revoked."""
    live = (
        ApiToken.objects.select_for_update()
        .select_related("project")
        .filter(created_by=user, revoked_at__isnull=True)
    )
    tokens = list(live)
    for token in tokens:
        api_token_revoke(token=token, actor=actor, reason=reason)
    return len(tokens)


def api_token_find(raw: str) -> ApiToken | None:
    """The live token for a presented secret, or None (unknown, wrong, expired or revoked)."""
    parts = raw.split("_", 2)  # the secret itself may contain "_"
    if len(parts) != 3 or parts[0] != TOKEN_PREFIX:
        return None
    creator_is_member = Membership.objects.filter(
        project=OuterRef("project"), user=OuterRef("created_by")
    )
    token = (
        ApiToken.objects.select_related("project")
        .annotate(
            creator_is_member=Exists(creator_is_member),
            creator_is_active=F("created_by__is_active"),
        )
        .filter(prefix=parts[1])
        .first()
    )
    if token is None or not hmac.compare_digest(token.token_hash, token_hash(raw)):
        return None
    if token.revoked_at is not None:
        return None
    if token.expires_at is not None and token.expires_at <= timezone.now():
        return None
    if token.created_by_id is not None and not token.creator_is_member:  # type: ignore[attr-defined]
        # The person who made it has left the project: the token goes with them.
        api_token_revoke(token=token, actor=None, reason="its creator left the project")
        return None
    if token.created_by_id is not None and not token.creator_is_active:  # type: ignore[attr-defined]
        # Deactivation revokes at once (evaluations.services.user_deactivate); this catches an
        # account made inactive some other way.
        api_token_revoke(token=token, actor=None, reason="its creator was deactivated")
        return None
    return token


def api_token_touch(token: ApiToken) -> None:
    """Record the last use, at most once a minute so reads do not turn into writes."""
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > TOUCH_INTERVAL:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
