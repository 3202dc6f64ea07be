"""Single sign-on: how people sign in besides a local password.

- `local`: the local-account backend (`LOCAL_ACCOUNTS=false` refuses local passwords except a
  superuser's) and which logins django-axes counts;
- `ldap`: the LDAP directory behind the same password form (python-ldap and django-auth-ldap,
  an optional extra: `extra` says whether LDAP is on and stops start-up when it is configured
  but not installed; only `ldap` and `ldap_checks` import those packages);
- `oidc`: OpenID Connect, the provider's endpoints found by discovery;
- `checks`, `ldap_checks`: start-up checks that the issuer and the directory's service account
  are right.

What a login grants is decided in one place, `evaluations.services.sso_login`, which maps the
person's groups to team roles (`SSO_GROUP_ROLES`).
"""
