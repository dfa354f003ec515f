"""P13: the web console with 1,000 containers in one project, in headless chromium.

Measured: the page's load until the 1,000 rows are listed (from navigation start,
the token already in the session), a search keystroke and a scroll until the next
frame is painted, a change of every row until the list shows it (the watcher reads
once a second, so this includes up to a second of waiting for its tick), the
server's one read per tick of the rows' fingerprints, and the stream's first event
(the snapshot). Baseline: GET /v1/containers of the same 1,000 rows through the API.
Goal: the list within 1 s; a keystroke or scroll within 50 ms (three frames)."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from typing import Any

import httpx
from sqlalchemy import delete, insert, update

from bench.common import Berth, Result, median, percentile
from berth.db import containers
from berth.db.engine import Database
from berth.db.models import Container

COUNT = 1000
CHROMIUM = "/usr/bin/chromium"
_NEXT_FRAME = "() => new Promise(r => requestAnimationFrame(() => setTimeout(r)))"


def p13(berth: Berth) -> Result:
    from playwright.sync_api import sync_playwright

    project = f"p13-{uuid.uuid4().hex[:6]}"
    db = Database(f"sqlite:///{berth.proc.dir / 'state' / 'berth.sqlite'}")
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    with db.write_connection() as conn:
        conn.execute(insert(Container), [
            {"uuid": str(uuid.uuid4()), "name": f"p13-{i:04d}", "image": "x",
             "status": "Stopped", "host": "bench-fake-host", "project_id": project,
             "user_id": "viewer", "memory": "64", "cpu": 0.1, "command": ["sleep"],
             "container_type": 0, "created_at": now} for i in range(COUNT)])
    token = f"viewer:{project}"
    try:
        api = _api_list(berth, token)
        first_event = _first_event(berth, token)
        reads = []
        for _ in range(30):
            t0 = time.perf_counter()
            containers.fingerprints(db, (0, 1))
            reads.append(time.perf_counter() - t0)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                         args=["--no-sandbox"])
            try:
                figures = _browser(browser, berth, token, db, project)
            finally:
                browser.close()
    finally:
        with db.write_connection() as conn:
            conn.execute(delete(Container).where(Container.project_id == project))
        db.dispose()
    load = figures["load_median"]
    met = load <= 1.0 and figures["keystroke_p95"] <= 0.05 and figures["scroll_p95"] <= 0.05
    return Result("P13", "console: 1,000 containers listed (load to rows shown)", load,
                  api, "s", "≤ 1 s; keystroke, scroll ≤ 50 ms", met,
                  load / api if api else None,
                  {**figures, "api_list_1000_median": api,
                   "stream_first_event_median": first_event,
                   "fingerprint_read_median": median(reads)})


def _api_list(berth: Berth, token: str) -> float:
    times = []
    with httpx.Client(base_url=berth.proc.url, headers={"X-Auth-Token": token}) as http:
        for _ in range(5):
            t0 = time.perf_counter()
            assert len(http.get("/v1/containers").json()["containers"]) == COUNT
            times.append(time.perf_counter() - t0)
    return median(times)


def _first_event(berth: Berth, token: str) -> float:
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        with httpx.stream("GET", f"{berth.proc.url}/dashboard/api/events",
                          headers={"X-Auth-Token": token}, timeout=60) as response:
            for line in response.iter_lines():
                if line.startswith("data: "):
                    times.append(time.perf_counter() - t0)
                    break
    return median(times)


def _browser(browser: Any, berth: Berth, token: str, db: Database, project: str
             ) -> dict[str, float]:
    page = browser.new_page(viewport={"width": 1280, "height": 860})
    page.goto(f"{berth.proc.url}/dashboard/")
    page.evaluate("t => sessionStorage.setItem('berth.token', t)", token)
    shown = f"document.querySelector('.count')?.textContent === '{COUNT} of {COUNT}'"
    loads = []
    for _ in range(5):
        page.reload()
        page.wait_for_function(shown, polling="raf")
        loads.append(page.evaluate("performance.now()") / 1000)
    rows_in_dom = page.locator(".vrow").count()
    keys = []
    box = page.get_by_role("searchbox")
    for i in range(20):
        text = f"p13-0{i:02d}" if i % 2 == 0 else ""
        keys.append(page.evaluate("""async ([text, nextFrame]) => {
            const input = document.querySelector('input[type=search]');
            const t0 = performance.now();
            input.value = text;
            input.dispatchEvent(new Event('input', {bubbles: true}));
            await (eval(nextFrame))();
            return (performance.now() - t0) / 1000;
        }""", [text, _NEXT_FRAME]))
    box.fill("")
    page.wait_for_function(shown, polling="raf")
    scrolls = []
    for i in range(20):
        scrolls.append(page.evaluate("""async ([at, nextFrame]) => {
            const body = document.querySelector('.vbody');
            const t0 = performance.now();
            body.scrollTop = at * body.scrollHeight;
            body.dispatchEvent(new Event('scroll'));
            await (eval(nextFrame))();
            return (performance.now() - t0) / 1000;
        }""", [(i * 37 % 100) / 100, _NEXT_FRAME]))
    changes = []
    for status in ("Running", "Stopped", "Running"):
        page.get_by_label("Status").select_option(status)
        t0 = time.time()
        with db.write_connection() as conn:
            conn.execute(update(Container).where(Container.project_id == project)
                         .values(status=status))
        page.wait_for_function(shown, polling="raf")
        changes.append(time.time() - t0)
    page.close()
    return {"load_median": median(loads), "rows_in_dom": float(rows_in_dom),
            "keystroke_p95": percentile(keys, 95), "keystroke_median": median(keys),
            "scroll_p95": percentile(scrolls, 95), "scroll_median": median(scrolls), "change_1000_rows_median": median(changes)}
