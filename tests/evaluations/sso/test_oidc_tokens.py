"""ID tokens a provider (or someone posing as one) gets wrong are refused, never a server error:
each is signed here with the real test provider's key (or another key) and checked against the
provider's published keys, exactly as the callback checks them."""

import time
from typing import Any

import jwt
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import rsa
from django.core.exceptions import SuspiciousOperation

from evaluations.sso.oidc import OidcBackend, provider

pytestmark = pytest.mark.django_db


def _signed(oidc: Any, claims: dict[str, Any], *, key: Any = None) -> str:
    jwks = requests.get(provider().jwks_uri, timeout=5, proxies={}).json()
    kid = jwks["keys"][0]["kid"]
    own_key = (oidc.folder / "signing.pem").read_bytes()
    now = int(time.time())
    body = {
        "iss": oidc.issuer,
        "aud": oidc.client_id,
        "sub": "subject-1",
        "iat": now,
        "exp": now + 300,
        "nonce": "n-1",
        **claims,
    }
    return jwt.encode(body, key or own_key, algorithm="RS256", headers={"kid": kid})


def test_a_right_token_passes(personas: Any, oidc_on: Any) -> None:
    payload = OidcBackend().verify_token(_signed(oidc_on, {}), nonce="n-1")
    assert payload["sub"] == "subject-1"
    listed = OidcBackend().verify_token(
        _signed(oidc_on, {"aud": ["other-app", oidc_on.client_id]}), nonce="n-1"
    )
    assert listed["sub"] == "subject-1"  # an audience list that names us


@pytest.mark.parametrize(
    ("claims", "refusal"),
    [
        ({"iss": "https://impostor.example.test/o"}, "issuer is not OIDC_ISSUER"),
        ({"aud": "another-client"}, "not meant for OIDC_CLIENT_ID"),
        ({"aud": ["another-client", "a-third"]}, "not meant for OIDC_CLIENT_ID"),
        ({"exp": int(time.time()) - 60}, "not valid: Signature has expired"),
        ({"nbf": int(time.time()) + 3600}, "not valid: The token is not yet valid"),
        ({"nonce": "n-2"}, "Nonce verification failed"),
    ],
)
def test_a_wrong_claim_is_refused(personas: Any, oidc_on: Any, claims: Any, refusal: str) -> None:
    with pytest.raises(SuspiciousOperation, match=refusal):
        OidcBackend().verify_token(_signed(oidc_on, claims), nonce="n-1")


def test_a_token_signed_by_another_key_is_refused(personas: Any, oidc_on: Any) -> None:
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with pytest.raises(SuspiciousOperation, match="verification failed"):
        OidcBackend().verify_token(_signed(oidc_on, {}, key=stranger), nonce="n-1")
