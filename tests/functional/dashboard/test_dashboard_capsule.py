"""A capsule made from a template in the console, in a real browser on a real ``berth
serve`` and Docker: the API's refusal of a YAML template is shown with the path it
names and that path's line selected in the text; a YAML syntax error with its line;
then a JSON template is made and shows Running in the live capsule list."""

from __future__ import annotations

import json
import uuid
from typing import Any

from playwright.sync_api import expect
from support.berth_proc import TEST_IMAGE, wait_for
from support.browser import doc_shot, log_in

SELECTED = "e => e.value.substring(e.selectionStart, e.selectionEnd)"


def test_capsule_from_a_template_with_refusals_shown_at_their_path(page: Any, berth: Any) -> None:
    name = f"console-cap-{uuid.uuid4().hex[:6]}"
    bad_yaml = (f"kind: capsule\nmetadata:\n  name: {name}\nspec:\n  containers:\n"
                f"  - image: {TEST_IMAGE}\n    name: first\n    command: [sleep, \"600\"]\n"
                f"  - image: \"Not An Image!\"\n    name: second\n")
    log_in(page)
    page.get_by_role("link", name="Capsules").click()
    page.get_by_role("link", name="Create a capsule").click()
    template = page.get_by_label("Template")
    template.fill(bad_yaml)
    create = page.get_by_role("button", name="Create the capsule")
    create.click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("spec.containers[1].image")
    expect(page.get_by_test_id("refused-at")).to_have_text(
        "At spec.containers[1].image (line 9)Show the line")
    expect(template).to_be_focused()
    expect(template).to_have_attribute("aria-invalid", "true")
    assert template.evaluate(SELECTED) == '  - image: "Not An Image!"'
    doc_shot(page, "capsule-refused")

    template.fill("kind: capsule\nspec:\n  containers: [\n    {image: x}\n")   # not YAML
    create.click()
    expect(alert).to_contain_text("neither JSON nor YAML")
    expect(page.get_by_test_id("refused-at")).to_contain_text("(line ")
    # The console selects the refused line on the next animation frame and focuses the
    # text again (the click left the focus on the button): a fill before that frame
    # would see its select-all replaced by the line's selection, and only the line
    # replaced (a CI run on 2026-12-07 sent both templates in one).
    expect(template).to_be_focused()

    template.fill(json.dumps({"kind": "capsule", "metadata": {"name": name}, "spec": {
        "containers": [{"image": TEST_IMAGE, "name": "only", "command": ["sleep", "600"]}]}},
        indent=2))
    create.click()
    row = page.get_by_role("row").filter(has_text=name)     # the list, narrowed to it
    try:
        expect(row).to_contain_text("Running", timeout=90_000)
        expect(page.get_by_role("searchbox")).to_have_value(name)
        doc_shot(page, "capsule-made")
    finally:
        with berth.http() as http:
            http.delete(f"/v1/capsules/{name}")
            wait_for(lambda: http.get(f"/v1/capsules/{name}").status_code == 404, timeout=90)
