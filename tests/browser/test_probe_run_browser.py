"""A cluster run's page in a real Chromium, at a phone's width: what the cluster said (long
node lists, a refusal's words) wraps or scrolls inside its tables, never the page."""

import pytest
from playwright.sync_api import expect

from tests.probes.clusters.test_cluster_facts_page import PARTITIONS, slurm_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_what_the_cluster_said_fits_a_phone(logged_in_page, live_server, personas) -> None:
    many = PARTITIONS.replace(
        "Nodes=g[01-02]", "Nodes=" + ",".join(f"gpu{n:03}" for n in range(60))
    )
    run = slurm_run(personas, partitions=many, pending="Resources\n", refusal=";" + "x" * 300)
    page = logged_in_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/projects/alpha/probes/{run.pk}/")
    section = page.locator("#cluster-facts")
    expect(section).to_contain_text("What the cluster said")
    expect(section).to_contain_text("Requested node configuration is not available")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
