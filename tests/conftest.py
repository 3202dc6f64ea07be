import copy
import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.test import Client

from tests import services as test_services
from tests.factories import make_actions

# A fixed key for cluster credentials in tests (never used outside them).
TEST_CREDENTIALS_KEYS = "t1:dGVzdC1rZXktMzItYnl0ZXMtbG9uZy0wMTIzNDU2Nzg="
# And for the project history's chain; the processes tests start (servers, workers) inherit it.
TEST_AUDIT_KEYS = "h1:aGlzdG9yeS1rZXktZm9yLXRlc3RzLW9ubHktMDEyMzQ="


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("WORKBENCH_AUDIT_KEYS", TEST_AUDIT_KEYS)
    try:
        test_services.ensure_all()
    except test_services.ServiceMissing as exc:
        pytest.exit(f"test services: {exc}", returncode=3)


def settings_for_tests(*, cache_prefix: str) -> dict[str, Any]:
    """What every test runs with (and what is built for several tests, such as the shared
    demo): English, a fast password hasher, the test keys and cache keys of its own."""
    # Rate-limit counters live in Redis: each test gets keys of its own, so that neither
    # earlier tests nor earlier runs (whose ids repeat in a fresh database) can leak in.
    caches = copy.deepcopy(django_settings.CACHES)
    caches["default"]["KEY_PREFIX"] = cache_prefix
    return {
        "LANGUAGE_CODE": "en",
        "PASSWORD_HASHERS": ["django.contrib.auth.hashers.MD5PasswordHasher"],
        "WORKBENCH_CREDENTIALS_KEYS": TEST_CREDENTIALS_KEYS,
        "WORKBENCH_AUDIT_KEYS": os.environ["WORKBENCH_AUDIT_KEYS"],
        "CACHES": caches,
    }


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """pytest-django's test database, which it drops at the end. A few tests (a browser test,
    for one) leave a session of this process open that Django no longer holds a handle to, and
    PostgreSQL waits 5 s for such sessions before it refuses to drop the database (a warning,
    and 5 s more at the end of the process): end them first."""
    yield
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.fixture(autouse=True)
def _test_settings(settings: Any) -> None:
    for name, value in settings_for_tests(cache_prefix=f"test-{uuid.uuid4().hex[:12]}").items():
        setattr(settings, name, value)


@pytest.fixture
def catalog(db: None) -> None:
    from evaluations.catalog import load_solutions
    from evaluations.services import catalog_seed

    catalog_seed(entries=load_solutions())


@pytest.fixture
def personas(db: None, catalog: None) -> dict[str, Any]:
    """alice administers project alpha (platform), bob is a member (ops), dave observes,
    charlie has no access to alpha and administers beta."""
    from evaluations.services import membership_set
    from tests.factories import CandidateFactory, ProjectFactory, UserFactory

    alice, bob, charlie, dave = (
        UserFactory(username=n) for n in ("alice", "bob", "charlie", "dave")
    )
    alpha = ProjectFactory(slug="alpha", name="Alpha")
    beta = ProjectFactory(slug="beta", name="Beta")
    membership_set(project=alpha, user=alice, role="platform", is_admin=True, actor=None)
    membership_set(project=alpha, user=bob, role="ops", actor=None)
    membership_set(project=alpha, user=dave, role="observer", actor=None)
    membership_set(project=beta, user=charlie, role="business", is_admin=True, actor=None)
    volcano = CandidateFactory(project=alpha, solution_key="volcano")
    slurm = CandidateFactory(project=beta, solution_key="slurm")
    return {
        "alice": alice,
        "bob": bob,
        "charlie": charlie,
        "dave": dave,
        "alpha": alpha,
        "beta": beta,
        "volcano": volcano,
        "beta_slurm": slurm,
    }


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def login() -> Iterator[Any]:
    yield client_for


@pytest.fixture
def suite(personas: dict[str, Any]) -> dict[str, Any]:
    """Alpha has three actions under one requirement; beta has one of its own."""
    requirement, actions = make_actions(
        personas["alpha"],
        [
            ("quota-hit", "resource_shortage"),
            ("real-job", "real_task"),
            ("cross-tenant", "permission_overreach"),
        ],
    )
    _, (beta_action,) = make_actions(
        personas["beta"], [("beta-only", "real_task")], feature="Beta", owner_team="ops"
    )
    return {**personas, "requirement": requirement, "actions": actions, "beta_action": beta_action}
