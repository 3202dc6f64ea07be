"""The demo's names, which the demo service writes and the login page and selectors read."""

DEMO_ADMIN = "admin"
DEMO_PASSWORD = "workbench-demo"  # noqa: S105 - printed to the developer by `manage.py demo`
DEMO_SLUG = "demo"
