"""The web console with Keystone on: its pages and login endpoints answer without a
token, a Keystone password login gives the page a project-scoped token (a wrong password
is a 401), and the event stream takes that token as the API does. Also in a browser."""

from __future__ import annotations

import httpx
from playwright.sync_api import expect
from support import keystone as ks
from support.berth_proc import BerthProcess
from support.browser import artifacts_dir, chromium, console_page

MEMBER = ks.USERS[1]          # berth-alpha-member, in berth-alpha


def _login(berth: BerthProcess, password: str) -> httpx.Response:
    return httpx.post(f"{berth.url}/dashboard/api/login", timeout=60, json={
        "username": MEMBER.name, "password": password, "project_name": MEMBER.project})


def test_console_login_hands_out_a_token_the_api_takes(berth_ks: BerthProcess,
                                                       keystone: ks.Keystone) -> None:
    assert httpx.get(f"{berth_ks.url}/dashboard/", timeout=30).status_code == 200
    config = httpx.get(f"{berth_ks.url}/dashboard/api/config", timeout=30)
    assert config.json() == {"auth": "keystone"}
    refused = _login(berth_ks, "not-the-password")
    assert refused.status_code == 401, refused.text
    answer = _login(berth_ks, ks.PASSWORD)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["project_id"] == keystone.project(MEMBER.project)
    token = body["token"]
    listed = httpx.get(f"{berth_ks.url}/v1/containers", timeout=30,
                       headers={"X-Auth-Token": token})
    assert listed.status_code == 200
    assert httpx.get(f"{berth_ks.url}/dashboard/api/events",
                     timeout=30).status_code == 401
    with httpx.stream("GET", f"{berth_ks.url}/dashboard/api/events", timeout=60,
                      headers={"X-Auth-Token": token}) as events:
        assert events.status_code == 200
        assert next(events.iter_lines()) == "event: snapshot"


def test_console_password_login_in_a_browser(berth_ks: BerthProcess) -> None:
    with chromium() as browser, console_page(browser, berth_ks.url) as page:
        page.get_by_label("User name").fill(MEMBER.name)
        page.get_by_label("Password").fill("not-the-password")
        page.get_by_label("Project", exact=True).fill(MEMBER.project)
        page.get_by_role("button", name="Log in").click()
        expect(page.get_by_role("alert")).to_contain_text("Keystone refused")
        page.get_by_label("Password").fill(ks.PASSWORD)
        page.get_by_role("button", name="Log in").click()
        expect(page.get_by_role("status").filter(has_text="Live")).to_be_visible()
        page.screenshot(path=str(artifacts_dir() / "14-keystone-login.png"))
