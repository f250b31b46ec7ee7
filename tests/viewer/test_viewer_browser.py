"""The viewer page in headless Chromium: run page -> episode -> comparison, checked against the records.

Needs Playwright's Python package and Debian's `chromium` (no browser download); skipped, with the reason,
where either is missing. Saves screenshots of the three pages (viewer-run.png, viewer-episode.png,
viewer-compare.png) into the test's temporary folder, or into `$PDDLWORLDS_SCREENSHOTS` when set: the
README's pictures are made with `PDDLWORLDS_SCREENSHOTS=docs pytest tests/viewer/test_viewer_browser.py`, so an
ordinary test run never rewrites tracked files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pddlworlds.cli import main
from pddlworlds.testing.browser import launch, unavailable_reason
from pddlworlds.viewer.pagedata import written

REASON = unavailable_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"browser test skipped: {REASON}")

ROOT = Path(__file__).parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


def lines_of(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines() if line.strip()]


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    """viewer_run (HiAgent, STANDARD) and the expert/random run's Blocksworld and Gripper episodes."""
    other = tmp_path / "eval_run"
    other.mkdir()
    (other / "config.json").write_text((FIXTURES / "eval_run" / "config.json").read_text())
    kept = [ln for ln in lines_of(FIXTURES / "eval_run") if ln["domain"] in ("blocksworld", "gripper")]
    (other / "episodes.jsonl").write_text("".join(json.dumps(ln) + "\n" for ln in kept))
    return FIXTURES / "viewer_run", other


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def test_run_episode_compare_in_chromium(runs: tuple[Path, Path], tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    viewer_run, other = runs
    shots = Path(os.environ.get("PDDLWORLDS_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    page_file = tmp_path / "view.html"
    assert main(["view", str(viewer_run), str(other), "--out", str(page_file)]) == 0
    records = {("viewer_run", ln["agent"], ln["domain"], ln["problem"]): ln for ln in lines_of(viewer_run)}
    records |= {("eval_run", ln["agent"], ln["domain"], ln["problem"]): ln for ln in lines_of(other)}

    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        requests: list[str] = []
        errors: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(page_file.as_uri())
        page.wait_for_selector("body[data-ready='1']")

        # Run page: the summary table against the records, the episode table, its filters.
        for tr in page.query_selector_all("#summary tbody tr"):
            label, domain, n, sr, pr = [td.inner_text() for td in tr.query_selector_all("td")][:5]
            run_name, agent = label.split(":", 1)
            mine = [
                ln
                for (r, a, d, _), ln in records.items()
                if r == run_name and a == agent and domain in ("all", d)
            ]
            assert int(n) == len(mine)
            assert sr == pct(sum(ln["success"] for ln in mine) / len(mine))
            assert pr == pct(sum(ln["progress"] for ln in mine) / len(mine))
        assert len(page.query_selector_all("#summary tbody tr")) == 4 * 3  # 4 agents x (2 domains + all)
        assert len(page.query_selector_all("#episodes tbody tr")) == len(records)
        assert len(page.query_selector_all(".curve svg polyline")) == 4 * 3
        page.screenshot(path=str(shots / "viewer-run.png"), full_page=True)
        page.fill("input[data-filter='label']", "viewer_run:hiagent")
        assert len(page.query_selector_all("#episodes tbody tr")) == 2
        page.fill("input[data-filter='domain']", "blocks")
        rows = page.query_selector_all("#episodes tbody tr")
        assert len(rows) == 1
        page.select_option("select[data-filter='success']", "no")
        assert len(page.query_selector_all("#episodes tbody tr")) == 0
        page.select_option("select[data-filter='success']", "any")
        page.click("#episodes tbody tr a.open")

        # Episode page: every step as recorded, how it was parsed, the memory as the model saw it.
        page.wait_for_selector("body[data-page='ep']")
        record = records[("viewer_run", "hiagent", "blocksworld", "problem1")]
        assert page.inner_text("#episode-title").startswith("viewer_run:hiagent on blocksworld problem1")
        cards = page.query_selector_all(".step[data-step]")
        assert len(cards) == len(record["trajectory"]) == 9
        for card, step in zip(cards, record["trajectory"]):
            assert card.query_selector("code.action").text_content() == step["action"]
            assert card.query_selector("pre.observation").text_content() == step["observation"]
            assert card.query_selector(".validity").inner_text() == ("yes" if step["valid"] else "no")
            assert card.query_selector("pre.raw").text_content() == written(step)  # the reply, stored once
            memory = card.query_selector("pre.memory")
            assert memory is not None and memory.text_content() == step["memory_view"]
            assert card.query_selector("svg.picture.blocksworld") is not None
        assert cards[1].query_selector("code.canonical").text_content() == "putdown b2"
        assert "invalid" in (cards[6].get_attribute("class") or "")
        assert cards[6].query_selector(".why").text_content() == "unknown_verb"
        badges = [b.inner_text().split(":")[0] for b in cards[4].query_selector_all(".badge")]
        assert "retrieve" in badges and "summary" in badges
        cards[4].query_selector("details.mem summary").click()
        memory_text = cards[4].query_selector("pre.memory").inner_text()
        assert "Subgoal 1 is shown in full above, in place of its summary." in memory_text
        retrieved = [e.inner_text() for e in cards[4].query_selector_all("pre.memory .retrieved")]
        assert "Action: unstack b2 from b3" in retrieved  # subgoal 1's pairs, marked where they stand
        assert cards[4].query_selector("pre.memory .summaryline") is None  # they stand in place of its summary
        assert cards[3].query_selector("pre.memory .retrieved") is None  # nothing retrieved before step 5
        cards[3].scroll_into_view_if_needed()
        page.evaluate("document.getElementById('step-4').scrollIntoView()")
        page.screenshot(path=str(shots / "viewer-episode.png"))

        # Compare: HiAgent and STANDARD on the same problem; they part at step 2 (STANDARD's invalid stack).
        page.click("a.compare-link:text-is('viewer_run:standard')")
        page.wait_for_selector("body[data-page='cmp']")
        standard = records[("viewer_run", "standard", "blocksworld", "problem1")]
        assert page.inner_text("#first-difference") == "They first differ at step 2."
        diverge = page.query_selector_all("#compare tr.diverge")
        assert [tr.get_attribute("data-step") for tr in diverge] == ["2"]
        rows = page.query_selector_all("#compare tbody tr")
        assert len(rows) == max(len(record["trajectory"]), len(standard["trajectory"]))
        for tr, a, b in zip(rows, record["trajectory"], standard["trajectory"]):
            left, right = tr.query_selector_all("td")
            assert left.query_selector("code").text_content() == a["action"]
            assert right.query_selector("code").text_content() == b["action"]
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(shots / "viewer-compare.png"))

        # Two runs: the expert's episode of another run on the same problem opens beside HiAgent's.
        page.goto(page_file.as_uri() + "#run")
        page.wait_for_selector("#cmp-a")
        page.select_option("#cmp-a", "viewer_run:hiagent")
        page.select_option("#cmp-b", "eval_run:expert")
        assert len(page.query_selector_all("#pairs a.compare-link")) == 2
        page.click("#pairs a.compare-link")
        page.wait_for_selector("body[data-page='cmp']")
        assert "eval_run:expert" in page.inner_text("h2")

        # A link straight to an episode opens it, though its data comes after the script in the file.
        fresh = browser.new_page()
        fresh.goto(page_file.as_uri() + f"#ep/{len(lines_of(viewer_run)) - 1}")
        fresh.wait_for_selector("body[data-page='ep'] #episode-title")
        assert fresh.inner_text("#episode-title").startswith("viewer_run:standard on gripper prob01")
        assert len(fresh.query_selector_all(".step[data-step] svg.picture.gripper")) == 12
        browser.close()

    assert errors == []
    assert requests and all(url.startswith("file:") for url in requests), requests


# ---- a shared run folder cannot run script ------------------------------------------------------------------

#: Markup that runs script wherever it is parsed as HTML (an element, an attribute, a URL); each sets a flag.
PAYLOADS = [
    '<img src=x onerror="window.__pwned=1">',
    '"><svg onload="window.__pwned=2">',
    "'><script>window.__pwned=3</script>",
    "javascript:window.__pwned=4",
]
NO_SPACE = "<svg/onload=window.__pwned=5>"  # a block name the pictures read (no space in it)


def tamper(value: object, payload: str, keep: frozenset[str]) -> object:
    """`value` with every string replaced by `payload`, and every key not in `keep` prefixed with it."""
    if isinstance(value, str):
        return payload
    if isinstance(value, list):
        return [tamper(v, payload, keep) for v in value]
    if isinstance(value, dict):
        return {(k if k in keep else payload + k): tamper(v, payload, keep) for k, v in value.items()}
    return value


def tampered_lines(source: list[dict]) -> list[dict]:
    """Every string of the records replaced by markup (keys too), and lines with strings in number fields."""
    from dataclasses import fields

    from pddlworlds.records import EpisodeRecord, LLMCall, StepRecord

    known = frozenset(f.name for record in (EpisodeRecord, StepRecord, LLMCall) for f in fields(record))
    out = []
    for i, payload in enumerate(PAYLOADS):
        original = source[i % len(source)]
        line = tamper(original, payload, known)
        line["agent"] += str(i)  # four episodes, not one stored four times
        if i % 2 == 0:
            line["domain"] = original["domain"]  # a domain with pictures and a replay
        line[payload] = {payload: [payload, 1]}  # a field the page shows as "more"
        out.append(line)
    # Markup as block names, where the pictures read them.
    line = json.loads(json.dumps(source[0]).replace("b1", NO_SPACE))
    line["agent"] = NO_SPACE
    out.append(line)
    # Strings in number fields: each such line is refused and named on the page.
    for name in ("index", "subgoal_index", "prompt_tokens", "completion_tokens", "latency_s", "progress"):
        line = json.loads(json.dumps(source[0]))
        line["trajectory"][0][name] = PAYLOADS[0]
        out.append(line)
    for name in ("prompt_tokens", "completion_tokens", "latency_s"):
        line = json.loads(json.dumps(source[0]))
        line["trajectory"][0]["calls"][0][name] = PAYLOADS[1]
        out.append(line)
    for name in ("seed", "steps", "optimal_length", "run_time_s", "progress"):
        out.append({**source[1], name: PAYLOADS[0]})
    return out


def assert_nothing_ran(page, errors: list[str], where: str) -> None:
    assert page.evaluate("window.__pwned") is None, where
    handlers = page.evaluate(
        "const URLS = ['href', 'src', 'action', 'formaction', 'xlink:href'];"
        "Array.from(document.querySelectorAll('*')).flatMap(e => Array.from(e.attributes)"
        ".filter(a => a.name.startsWith('on') || (URLS.includes(a.name) && /^\\s*javascript:/i.test(a.value)))"
        ".map(a => e.tagName + ' ' + a.name))"
    )
    assert handlers == [], where
    assert page.evaluate("document.querySelectorAll('img, iframe, object, embed, svg script').length") == 0
    assert page.evaluate("document.querySelectorAll('script:not([type])').length") == 1  # the page's own
    assert errors == [], where


def visit_every_page(page_file: Path, episodes: int) -> list[str]:
    """Open the run page, every episode and a comparison; the text shown on the episode pages."""
    from playwright.sync_api import sync_playwright

    shown = []
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        errors: list[str] = []
        requests: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("dialog", lambda d: (errors.append("dialog: " + d.message), d.dismiss()))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(page_file.as_uri())
        page.wait_for_selector("body[data-ready='1']")
        assert_nothing_ran(page, errors, "run page")
        page.fill("input[data-filter='label']", "<")
        if page.query_selector("#cmp-a"):
            page.select_option("#cmp-a", index=1)
        assert_nothing_ran(page, errors, "run page, filtered")
        for ident in range(episodes):
            page.goto("about:blank")
            page.goto(page_file.as_uri() + f"#ep/{ident}")
            page.wait_for_selector("body[data-page='ep']")
            for summary in page.query_selector_all("details summary"):
                summary.click()
            shown.append(page.inner_text("#app"))
            assert_nothing_ran(page, errors, f"episode {ident}")
        page.goto("about:blank")
        page.goto(page_file.as_uri() + "#cmp/0/1")
        page.wait_for_selector("body[data-page='cmp']")
        assert_nothing_ran(page, errors, "compare page")
        browser.close()
    assert {url.split("#")[0] for url in requests if url != "about:blank"} == {page_file.as_uri()}, requests
    return shown


def test_a_tampered_run_folder_runs_no_script(tmp_path: Path) -> None:
    folder = tmp_path / "<svg onload=window.__pwned=6>"
    folder.mkdir()
    config = json.loads((FIXTURES / "viewer_run" / "config.json").read_text())
    config = tamper(config, PAYLOADS[0], frozenset({"agents", "llm", "seeds", "max_steps"}))
    config["seeds"] = PAYLOADS
    (folder / "config.json").write_text(json.dumps(config))
    lines = tampered_lines(lines_of(FIXTURES / "viewer_run"))
    (folder / "episodes.jsonl").write_text("".join(json.dumps(ln) + "\n" for ln in lines))
    page_file = tmp_path / "view.html"
    assert main(["view", str(folder), "--out", str(page_file)]) == 0
    shown = visit_every_page(page_file, episodes=len(PAYLOADS) + 1)
    assert any(PAYLOADS[0] in text for text in shown)  # the markup is shown as text
    assert any(NO_SPACE in text for text in shown)
    html = page_file.read_text()
    assert html.count("; skipped") == 14  # every line with a string in a number field, named


def test_tampered_page_data_runs_no_script(tmp_path: Path) -> None:
    """Past the reader's checks too: every value the page lays out, numbers included, replaced by markup."""
    from pddlworlds.viewer import page_data, read_run
    from pddlworlds.viewer.page import render

    data, details = page_data([read_run(FIXTURES / "viewer_run")])

    def spoil(value: object, key: str = "") -> object:
        if isinstance(value, list):
            return [spoil(v) for v in value]
        if isinstance(value, dict):
            return {k: spoil(v, k) for k, v in value.items()}
        return value if key == "kind" else PAYLOADS[len(key) % len(PAYLOADS)]

    page_file = tmp_path / "view.html"
    page_file.write_text(render(spoil(data), spoil(details)))
    visit_every_page(page_file, episodes=len(details))
