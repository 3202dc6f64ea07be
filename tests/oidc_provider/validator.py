from typing import Any

from oauth2_provider.oauth2_validators import OAuth2Validator


class GroupsValidator(OAuth2Validator):
    """Adds the user's name, e-mail address and Django groups (the `groups` claim, with the
    profile scope) to the ID token and the userinfo answer."""

    oidc_claim_scope = {**OAuth2Validator.oidc_claim_scope, "groups": "profile"}

    def get_additional_claims(self, request: Any) -> dict[str, Any]:
        user = request.user
        return {
            "preferred_username": user.username,
            "given_name": user.first_name,
            "family_name": user.last_name,
            "email": user.email,
            "email_verified": True,
            "groups": sorted(user.groups.values_list("name", flat=True)),
        }
