"""The inspector's audit pages over HTTP (``reviewtrail serve`` as a real process on 127.0.0.1,
over a real store built with the library): campaign coverage with its SVG chart, artifact
provenance with each execution log's environment, the diff of two versions, the Reviewer
Specialist card, traces and store health, each with its JSON twin; GET and HEAD only."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from conftest import need
from reviewtrail.human_review.session import decide
from reviewtrail.store import Store
from reviewtrail.web._figures import coverage_figures, diff_rows, disposition_chart
from support.human_review import new_store
from support.web import Inspector, ledger_head, running_inspector
from support.web_pages import (
    HOSTILE_FAMILY,
    TRACE_RUN,
    Artifact,
    artifact_with_two_runs,
    campaign_in_two_families,
    three_rounds,
)

SECURITY = {"x-content-type-options": "nosniff", "referrer-policy": "no-referrer", "x-frame-options": "DENY"}
RUN = f"auto-review-loop/{TRACE_RUN}"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Inspector, Store, Artifact, set[str]]]:
    need(shutil.which("bwrap") is not None, "bubblewrap (bwrap) is not installed")
    root = tmp_path_factory.mktemp("pages")
    store = new_store(root)
    artifact = artifact_with_two_runs(store)
    three_rounds(store, root)
    _, hidden = campaign_in_two_families(store)
    with running_inspector(root) as inspector:
        yield inspector, store, artifact, hidden
    store.close()


@pytest.fixture
def client(served: Any) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served[0].url) as c:
        yield c


PAGES = {
    "coverage": "api/coverage/camp/1",
    "coverage/camp/1": "api/coverage/camp/1",
    "artifacts": "api/artifacts",
    "provenance/report.md@2": "api/provenance/report.md@2",
    "diff?old=report.md@1&new=report.md@2": "api/diff?old=report.md@1&new=report.md@2",
    "specialist/report.md@2": "api/specialist/report.md@2",
    "traces": "api/traces",
    f"traces/{RUN}": f"api/traces/{RUN}",
    "health": "api/health",
}


def section(html: str, marker: str) -> str:
    """The execution-log section of the page that holds ``marker``."""
    [found] = [s for s in html.split('<section class="card log"')[1:] if marker in s]
    return found.split("</section>")[0]


@pytest.mark.parametrize(("page", "api"), PAGES.items())
def test_each_page_and_its_json_answer_get_and_head_with_the_security_headers(
    client: httpx.Client, page: str, api: str
) -> None:
    html, doc = client.get(page), client.get(api)
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html"), html.text
    assert doc.status_code == 200 and doc.headers["content-type"].startswith("application/json"), doc.text
    assert '<html lang="en">' in html.text and "<h1>" in html.text
    doc.json()
    for path in (page, api):
        head = client.head(path)
        assert head.status_code == 200 and head.content == b"", path
        for response in (head, client.get(path)):
            for name, value in SECURITY.items():
                assert response.headers[name] == value, (path, name)
            assert "script-src 'self'" in response.headers["content-security-policy"]


def test_every_page_is_linked_from_the_nav_and_holds_no_inline_script(client: httpx.Client) -> None:
    nav = client.get("").text.split('<nav class="site"')[1].split("</nav>")[0]
    assert re.findall(r'href="([^"]+)"', nav) == ["/", "/coverage", "/artifacts", "/traces", "/health"]
    for page in PAGES:
        html = client.get(page).text
        assert "<script" not in html, page
        assert " on" + "click=" not in html and "javascript:" not in html and 'style="' not in html, page
    artifacts = client.get("artifacts").text
    assert 'href="/provenance/report.md%402?project=default"' in artifacts
    assert 'href="/specialist/report.md%402?project=default"' in artifacts
    assert 'href="/coverage/camp/1"' in client.get("coverage").text


def test_every_method_but_get_and_head_is_refused_and_nothing_is_appended(served: Any, client: httpx.Client) -> None:
    store = served[1]
    before = ledger_head(store)
    for path in [*PAGES, *PAGES.values()]:
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            response = client.request(method, path, json={"disposition": "tie"})
            assert response.status_code == 405 and response.headers["allow"] == "GET, HEAD", (method, path)
    assert ledger_head(store) == before


def test_openapi_describes_the_pages_for_get_and_head_only(client: httpx.Client) -> None:
    paths = client.get("openapi.json").json()["paths"]
    for path in (
        "/coverage/{campaign}/{version}",
        "/api/coverage/{campaign}/{version}",
        "/provenance/{spec}",
        "/api/provenance/{spec}",
        "/api/diff",
        "/api/specialist/{spec}",
        "/api/traces/{skill}/{run_id}",
        "/api/health",
    ):
        assert set(paths[path]) == {"get", "head"}, path


def test_coverage_gives_each_familys_figures_and_no_owner_only_section(client: httpx.Client) -> None:
    doc = client.get("api/coverage/camp/1").json()
    families = {f["family"]: f for f in doc["families"]}
    assert set(families) == {"refunds", HOSTILE_FAMILY}
    refunds = families["refunds"]["decisions"]
    assert refunds["byDisposition"] == {
        "prefer": 1, "tie": 1, "correct": 0, "underdetermined": 0, "malformed": 0, "skip": 0,
    }  # fmt: skip
    assert (refunds["active"], refunds["undecided"], refunds["evaluationOnly"], refunds["exportable"]) == (2, 1, 2, 0)
    assert families[HOSTILE_FAMILY]["decisions"]["byDisposition"]["skip"] == 1
    assert doc["overall"]["decisions"]["active"] == 3 and doc["overall"]["prompts"] == 4
    assert not {"quality", "reviewers", "trainingReceipts", "exported"} & doc.keys()
    html = client.get("coverage/camp/1").text
    assert "evaluation-only" in html and "export-eligible" in html
    row = html.split('<th scope="row">refunds</th>')[1].split("</tr>")[0]
    assert re.findall(r"<td>([^<]*)</td>", row)[-2:] == ["2", "0"]  # evaluation-only, export-eligible


def test_the_disposition_chart_is_svg_with_a_title_and_a_table_and_escapes_every_name(client: httpx.Client) -> None:
    html = client.get("coverage/camp/1").text
    svg = html.split("<svg")[1].split("</svg>")[0]
    assert 'role="img"' in svg and 'aria-labelledby="disposition-chart-title disposition-chart-desc"' in svg
    assert '<title id="disposition-chart-title">' in svg and '<desc id="disposition-chart-desc">' in svg
    assert "<title>refunds: prefer 1 of 2</title>" in svg and "<title>refunds: tie 1 of 2</title>" in svg
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&amp;family: skip 1 of 1" in svg
    assert "<script" not in html and "alert(1)</script>" not in html
    table = html.split('<table class="list" id="mix-table">')[1].split("</table>")[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&amp;family" in table


def test_coverage_and_store_health_name_no_candidate(served: Any, client: httpx.Client) -> None:
    hidden = served[3]
    for path in ("coverage", "coverage/camp/1", "api/coverage/camp/1", "health", "api/health"):
        body = client.get(path).text
        assert not [name for name in hidden if name in body], path


def test_provenance_shows_each_execution_log_with_its_environment(served: Any, client: httpx.Client) -> None:
    artifact = served[2]
    doc = client.get("api/provenance/report.md@2").json()
    logs = {log["recordId"]: log for log in doc["executionLogs"]}
    assert set(logs) == {artifact.snapshot_run, artifact.unrecorded_run}
    recorded, missing = logs[artifact.snapshot_run], logs[artifact.unrecorded_run]
    assert recorded["workingDirectory"] == "/workspace" and missing["workingDirectory"] == "unavailable"
    assert recorded["processEnvironment"]["variables"]["SEED"] == "42"
    assert missing["processEnvironment"] == {"recorded": False, "digest": None, "variables": None, "problem": None}
    assert recorded["managedPackageEnvironment"]["revisionId"].startswith("env-")
    assert doc["versions"] == [1, 2] and doc["graph"]["root"].startswith("artifact_version:")

    html = client.get("provenance/report.md@2").text
    with_env, without = section(html, artifact.snapshot_run), section(html, artifact.unrecorded_run)
    assert "<code>/workspace</code>" in with_env and "<code>unavailable</code>" in without
    details = re.findall(r"<details[^>]*>", with_env)
    assert details == ['<details class="env">']  # collapsed: no open attribute
    assert "<summary>Process environment (" in with_env and "<code>SEED</code>" in with_env
    assert "&lt;b&gt;hello&lt;/b&gt;" in with_env and "<b>hello" not in with_env
    assert "Process environment:</strong> not recorded" in without and "<details" not in without
    for log in (with_env, without):
        managed = log.split("<h4>Managed package environment</h4>")[1]
        assert recorded["managedPackageEnvironment"]["revisionId"] in managed
        assert "SEED" not in managed  # shown apart from the process environment
    assert "/diff?old=report.md%401&amp;new=report.md%402&amp;project=default" in html


def test_an_earlier_version_has_only_the_run_that_wrote_it(served: Any, client: httpx.Client) -> None:
    artifact = served[2]
    doc = client.get("api/provenance/report.md@1").json()
    assert [log["recordId"] for log in doc["executionLogs"]] == [artifact.snapshot_run]
    assert doc["version"] == 1


def test_the_diff_between_two_versions(client: httpx.Client) -> None:
    doc = client.get("api/diff", params={"old": "report.md@1", "new": "report.md@2"}).json()
    assert doc["stats"] == {"added": 2, "removed": 1} and doc["commonPrefixLines"] == 1
    html = client.get("diff", params={"old": "report.md@1", "new": "report.md@2"}).text
    added = [row for row in html.split("<tr") if 'class="added"' in row]
    assert any("Transformers scale well [1]." in row for row in added)
    assert any('class="removed"' in row and "line 2" in row for row in html.split("<tr"))
    assert "… 1 unchanged line(s)" in html
    same = client.get("api/diff", params={"old": "report.md@2", "new": "report.md"}).json()
    assert same["lines"] == [] and same["stats"] == {"added": 0, "removed": 0}


def test_the_reviewer_specialist_card(served: Any, client: httpx.Client) -> None:
    artifact = served[2]
    doc = client.get("api/specialist/report.md@2").json()
    [review] = doc["reviews"]
    assert review["reviewRunId"] == artifact.review_run and review["decision"] == "REVISE_AND_RETRY"
    codes = {f["code"] for f in review["findings"]}
    assert any(code.startswith("CITATION_") for code in codes)
    html = client.get("specialist/report.md@2").text
    assert artifact.review_run in html and "<h3>Context summary</h3>" in html
    assert review["summary"].split(";")[0] in html
    for code in codes:
        assert f"<code>{code}</code>" in html
    assert client.get("api/specialist/report.md@1").json()["reviews"] == []
    assert "No review run of this version yet" in client.get("specialist/notes.md@1").text


def test_traces_list_runs_calls_acceptance_and_divergence(client: httpx.Client) -> None:
    index = client.get("api/traces").json()
    [run] = index["runs"]
    assert (run["skill"], run["run_id"], run["calls"], run["complete"]) == ("auto-review-loop", TRACE_RUN, 3, 3)
    assert index["check"] == {"ok": True, "filesChecked": index["check"]["filesChecked"], "ledgerChecked": True,
                              "problems": []}  # fmt: skip
    assert f'href="/traces/{RUN}"' in client.get("traces").text
    doc = client.get(f"api/traces/{RUN}").json()
    labels = [c["acceptance_status"] for c in doc["run"]["calls"]]
    assert len(labels) == 3 and all(labels)
    assert doc["divergence"]["first_change"] == 2
    assert [s["changed"] for s in doc["divergence"]["steps"]] == [True, False]
    html = client.get(f"traces/{RUN}").text
    calls = html.split('<table class="list" id="calls">')[1].split("</table>")[0]
    assert re.findall(r'<td class="acceptance">([^<]*)</td>', calls) == labels
    assert "The assessment first changed at call 002." in html
    assert "score 5 → 7" in html and "verdict not ready → almost" in html


def test_store_health_gives_the_head_and_says_no_verify_result_is_recorded(served: Any, client: httpx.Client) -> None:
    seq, digest = ledger_head(served[1]) or (0, "")
    doc = client.get("api/health").json()
    assert (doc["head"]["seq"], doc["head"]["hash"]) == (seq, digest)
    assert doc["lastVerify"] is None and doc["lastVerifyNote"].startswith("no verify result recorded")
    html = client.get("health").text
    assert f'<dd id="head-seq">{seq}</dd>' in html and digest in html
    assert "no verify result recorded" in html


@pytest.mark.parametrize(
    ("path", "status", "field"),
    [
        ("api/provenance/nothing.md@1", 404, "name"),
        ("api/provenance/report.md@9", 404, "version"),
        ("api/provenance/report.md@x", 400, "version"),
        ("api/provenance/report.md?project=..", 400, "project"),
        ("api/specialist/nothing.md", 404, "name"),
        ("api/diff?old=report.md@1", 400, "new"),
        ("api/diff?new=report.md@1", 400, "old"),
        ("api/diff?old=report.md@1&new=nothing.md@1", 404, "name"),
        ("api/coverage/no-such-campaign/1", 404, "campaign"),
        ("api/coverage/camp/0", 400, "version"),
        ("api/coverage/camp/9223372036854775808", 400, "version"),
        ("api/traces/auto-review-loop/2026-01-01_run09", 404, "run"),
        ("api/traces/auto-review-loop/not-a-run", 400, "run"),
        ("api/traces/no.such.skill/" + TRACE_RUN, 400, "skill"),
    ],
)
def test_refusals_are_the_error_json_naming_the_field(client: httpx.Client, path: str, status: int, field: str) -> None:
    response = client.get(path)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["field"] == field and error["message"] and error["exitCode"] in (2, 3)
    page = client.get(path.removeprefix("api/"))
    assert page.status_code == status and f"<code>{field}</code>" in page.text
    assert client.head(path).status_code == status


def test_an_artifact_name_with_a_slash_and_an_unknown_project(client: httpx.Client) -> None:
    assert client.get("api/artifacts", params={"project": "elsewhere"}).json() == []
    assert "No artifact in project elsewhere" in client.get("artifacts", params={"project": "elsewhere"}).text
    response = client.get("api/provenance/" + quote("dir/report.md@1"))
    assert response.status_code == 404 and response.json()["error"]["field"] == "name"


def test_a_store_with_nothing_yet_gives_every_page(tmp_path: Path) -> None:
    new_store(tmp_path).close()
    with running_inspector(tmp_path) as inspector, httpx.Client(base_url=inspector.url) as client:
        pages = {path: client.get(path) for path in ("coverage", "artifacts", "traces", "health", "api/traces")}
        assert {path: r.status_code for path, r in pages.items()} == dict.fromkeys(pages, 200)
        assert "nothing to check" in pages["traces"].text and "No trace run yet." in pages["traces"].text
        assert pages["api/traces"].json() == {"project": str(tmp_path), "runs": [], "check": None}
        assert "No campaign yet" in pages["coverage"].text
        assert "No artifact in project default" in pages["artifacts"].text
        assert client.get("api/health").json()["head"]["seq"] == 1  # the store's identity record


# --- the pure parts -------------------------------------------------------------------------


def test_the_chart_escapes_names_and_marks_a_family_without_decisions() -> None:
    svg = str(disposition_chart([('"><script>x</script>', {}), ("a&b", {"tie": 3})], title="<t>"))
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "&#34;&gt;" in svg
    assert '<title id="disposition-chart-title">&lt;t&gt;</title>' in svg
    assert "no active decision" in svg and "<title>a&amp;b: tie 3 of 3</title>" in svg
    assert 'width="420.00"' in svg  # one disposition fills its bar


def test_coverage_figures_drop_what_names_a_run_or_belongs_to_the_owner() -> None:
    family: dict[str, Any] = {
        "family": "f",
        "items": {"invalidItems": [{"itemId": "i1", "promptLabel": "p", "problems": ["run r"]}]},
    }
    doc: dict[str, Any] = {"campaign": {}, "families": [family], "overall": family}
    doc.update({"quality": {}, "reviewers": [], "exported": 1})
    out = coverage_figures(doc)
    assert set(out) == {"campaign", "families", "overall"}
    assert out["families"][0]["items"]["invalidItems"] == [{"itemId": "i1", "promptLabel": "p"}]
    assert family["items"]["invalidItems"][0]["problems"] == ["run r"]  # the input is left as it was


def test_diff_rows_summarize_the_unchanged_ends() -> None:
    line = {"op": "added", "oldLine": None, "newLine": 2, "text": "x", "noNewlineAtEnd": True}
    rows = diff_rows({"commonPrefixLines": 1, "commonSuffixLines": 0, "lines": [line]})
    assert rows == [
        {"op": "skipped", "text": "1 unchanged line(s)"},
        {"op": "added", "sign": "+", "old": None, "new": 2, "text": "x (no newline at end)"},
    ]


def test_store_health_shows_the_last_verify_run_and_what_was_appended_since(tmp_path: Path) -> None:
    from reviewtrail.audit import VERIFY_STATUS_FILE, last_verify_status
    from support.web import planted_campaign, store_env

    store = new_store(tmp_path)
    items, _ = planted_campaign(store, n=1)
    done = subprocess.run(
        [sys.executable, "-m", "reviewtrail", "verify", "--json"],
        env=store_env(tmp_path),
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    status = last_verify_status(store)
    assert status is not None and status.ok and status.problems == 0
    assert (status.head_seq, status.head_hash) == (report["head"]["seq"], report["head"]["hash"])
    decide(store, items[0].item_id, {"disposition": "tie"}, reviewer="rev-1")
    with running_inspector(tmp_path) as inspector, httpx.Client(base_url=inspector.url) as client:
        doc = client.get("api/health").json()
        html = client.get("health").text
        (tmp_path / "store" / VERIFY_STATUS_FILE).write_text('{"ok": "yes"}')  # not a status: shown as none
        broken = client.get("api/health").json()
        failure = {"checkedAt": "2026-12-01T09:00:00Z", "problems": 2, "headSeq": 3}
        listed = status.to_json() | {"ok": False, "partial": True, "objectsRead": False, "lastFailure": failure}
        (tmp_path / "store" / VERIFY_STATUS_FILE).write_text(json.dumps(listed))  # a --no-read-data pass
        partial, partial_html = client.get("api/health").json(), client.get("health").text
    assert doc["lastVerify"]["ok"] is True and doc["lastVerify"]["headSeq"] == status.head_seq
    assert doc["lastVerify"]["recordsSince"] == 1 and doc["lastVerify"]["checkedAt"] == status.checked_at
    assert '<dd id="verify-result">passed</dd>' in html and status.checked_at in html
    assert "1 record(s) appended" in html and "not a ledger record" in html
    assert broken["lastVerify"] is None and broken["lastVerifyNote"].startswith("no verify result recorded")
    assert partial["lastVerify"]["ok"] is False and partial["lastVerify"]["lastFailure"] == failure
    assert '<dd id="verify-result">PARTIAL: what it checked passed' in partial_html
    assert (
        "2026-12-01T09:00:00Z: 2 problem(s) at head seq 3" in partial_html
        and "objects listed, not read" in partial_html
    )
    store.close()
