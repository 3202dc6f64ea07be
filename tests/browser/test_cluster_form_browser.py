"""Registering a cluster in Chromium: the form shows only the fields of the kind chosen, and
changes with it; what is hidden is not needed to register that kind."""

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_cluster_form_shows_the_fields_of_its_kind(logged_in_page, live_server, personas):
    page = logged_in_page
    page.goto(f"{live_server.url}/projects/alpha/clusters/new/")

    def shown(name: str):
        return expect(page.locator(f'[data-field="{name}"]'))

    page.select_option("#id_kind", "kubernetes")
    for name in ("name", "candidate", "api_url", "kubeconfig", "bearer_token", "ca_pem"):
        shown(name).to_be_visible()
    for name in ("hosts", "ssh_user", "ssh_private_key", "jwt", "slurm_user"):
        shown(name).to_be_hidden()
    page.select_option("#id_kind", "ssh")
    for name in ("hosts", "ssh_user", "ssh_port", "ssh_private_key", "ssh_password"):
        shown(name).to_be_visible()
    for name in ("api_url", "kubeconfig", "jwt", "controlled_failures", "failure_namespace"):
        shown(name).to_be_hidden()
    page.select_option("#id_kind", "slurm_rest")
    for name in ("api_url", "slurm_user", "jwt", "controlled_failures"):
        shown(name).to_be_visible()
    shown("kubeconfig").to_be_hidden()
    # Registered with only what the slurmrestd kind shows.
    page.fill("#id_name", "hpc")
    page.fill("#id_api_url", "http://127.0.0.1:6820")
    page.fill("#id_slurm_user", "root")
    page.fill("#id_jwt", "eyJhbGciOiJIUzI1NiJ9.e30.sig")
    page.click("button.primary")
    expect(page.locator("h2")).to_contain_text("hpc")
