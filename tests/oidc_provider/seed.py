"""Create the provider's database: its users (each with a password and groups) and the
workbench as a registered confidential client that skips the consent page.

    python -m tests.oidc_provider.seed SEED.json

SEED.json: {"client_id", "client_secret", "redirect_uri", "post_logout_redirect_uri",
"users": {name: {"password",
"email", "groups": [...]}}}.
"""

import json
import os
import sys


def main(path: str) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.oidc_provider.settings")
    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from oauth2_provider.models import Application

    with open(path, encoding="utf-8") as handle:
        seed = json.load(handle)
    call_command("migrate", verbosity=0, interactive=False)
    for name, person in seed["users"].items():
        user = User.objects.create_user(
            name, email=person["email"], password=person["password"], first_name=name.title()
        )
        for group in person["groups"]:
            user.groups.add(Group.objects.get_or_create(name=group)[0])
    Application.objects.create(
        name="workbench",
        client_id=seed["client_id"],
        client_secret=seed["client_secret"],
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=seed["redirect_uri"],
        post_logout_redirect_uris=seed["post_logout_redirect_uri"],
        algorithm=Application.RS256_ALGORITHM,
        skip_authorization=True,
    )


if __name__ == "__main__":
    main(sys.argv[1])
