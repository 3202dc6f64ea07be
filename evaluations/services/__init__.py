"""Every write to evaluations: one function per use case, atomic, validated, recorded.

Import from here (`from evaluations import services`); the modules split the use cases by topic.
"""

from evaluations.demo import DEMO_PASSWORD, DEMO_SLUG
from evaluations.services.accounts import (
    AccessWithdrawn,
    user_access_withdraw,
    user_deactivate,
    user_deactivated,
)
from evaluations.services.catalog import (
    SeedReport,
    catalog_seed,
    team_solution_add,
    team_solution_update,
    template_catalog_seed,
)
from evaluations.services.demo import demo_seed
from evaluations.services.freeze import ScopeFrozen, scope_edit_guard
from evaluations.services.history import ChainBroken, audit_chain_seal, event_record
from evaluations.services.projects import (
    membership_remove,
    membership_set,
    project_create,
    project_recommendation_set,
    project_signing_roles_set,
    project_update,
)
from evaluations.services.shortlist import (
    candidate_add,
    candidate_remove,
    candidate_update,
)
from evaluations.services.sso import (
    MembershipChanges,
    oidc_account,
    sso_groups_refresh,
    sso_login,
    sso_memberships_apply,
)
from evaluations.services.suite import (
    action_create,
    action_delete,
    action_update,
    reorder,
    requirement_create,
    requirement_delete,
    requirement_update,
    requirements_from_claims,
    unique_action_key,
)
from evaluations.services.suite_library import (
    ApplyReport,
    ImportReport,
    TemplatePlan,
    suite_import,
    template_set_apply,
    template_set_plan,
)
from evaluations.services.tokens import (
    api_token_create,
    api_token_find,
    api_token_revoke,
    api_token_touch,
    api_tokens_revoke_created_by,
)

__all__ = [
    "api_token_create",
    "api_token_find",
    "api_token_revoke",
    "api_token_touch",
    "api_tokens_revoke_created_by",
    "AccessWithdrawn",
    "ChainBroken",
    "audit_chain_seal",
    "MembershipChanges",
    "oidc_account",
    "sso_groups_refresh",
    "sso_login",
    "sso_memberships_apply",
    "user_access_withdraw",
    "user_deactivate",
    "user_deactivated",
    "ApplyReport",
    "ImportReport",
    "TemplatePlan",
    "ScopeFrozen",
    "action_create",
    "action_delete",
    "action_update",
    "reorder",
    "requirement_create",
    "requirement_delete",
    "requirement_update",
    "requirements_from_claims",
    "suite_import",
    "template_catalog_seed",
    "template_set_apply",
    "template_set_plan",
    "unique_action_key",
    "DEMO_PASSWORD",
    "DEMO_SLUG",
    "SeedReport",
    "candidate_add",
    "candidate_remove",
    "candidate_update",
    "catalog_seed",
    "team_solution_add",
    "team_solution_update",
    "demo_seed",
    "event_record",
    "membership_remove",
    "membership_set",
    "project_create",
    "project_recommendation_set",
    "project_signing_roles_set",
    "project_update",
    "scope_edit_guard",
]
