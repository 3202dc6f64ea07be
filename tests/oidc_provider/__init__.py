"""A small, real OpenID Connect provider for the single sign-on tests: django-oauth-toolkit's
provider (OIDC on, RS256 ID tokens) in a Django project of its own, served by gunicorn on a free
loopback port in a subprocess. `rig.start_provider()` starts it; `settings`, `urls` and
`validator` make it up; `seed` creates its database, users, groups and the registered client.
"""
