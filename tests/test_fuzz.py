"""Fuzzing the HTTP API from its own OpenAPI document (issue 10): schemathesis, every check
(contract included), against a real `rag serve` subprocess over the seed corpus with the local model.

Passing means: no check failed (no 5xx, every status, header, body and SSE event as documented,
schema-valid requests accepted, invalid ones refused), no request timed out, and no response carries
a traceback. The run is bounded by RAG_FUZZ_EXAMPLES cases per operation and phase (default 6,
about 1-2 minutes per run on 2 cores); `make fuzz` runs it with a larger budget. The figures
(cases per operation, statuses) are printed and kept in the NDJSON report under the test's tmp_path.
"""

from __future__ import annotations

import base64
import collections
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .servers import rag_serve

EXAMPLES = int(os.environ.get("RAG_FUZZ_EXAMPLES", "6"))
SEED = int(os.environ.get("RAG_FUZZ_SEED", "2025"))
KEY = "k3y-for-fuzzing"
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")


@contextlib.contextmanager
def serve(tmp_path: Path, env: dict[str, str]) -> Iterator[str]:
    """`rag serve` over the seed corpus (store in tmp_path); yields its URL. Its log must hold no traceback."""
    log = tmp_path / "serve.log"
    with rag_serve(log, {"RAG_STORE__PATH": str(tmp_path / "chroma"), **env}) as (url, _proc):
        assert httpx.get(url + "/healthz", timeout=10).json()["papers"] == 19
        yield url
    assert "Traceback" not in log.read_text(), log.read_text()[-5000:]


def schemathesis(url: str, report: Path, *headers: str) -> subprocess.CompletedProcess[str]:
    """`st run` with every check, a fixed seed, a bounded number of cases and a per-request timeout."""
    cmd = [
        str(SCHEMATHESIS),
        "run",
        f"{url}/openapi.json",
        "--checks",
        "all",
        "--seed",
        str(SEED),
        "--max-examples",
        str(EXAMPLES),
        "--request-timeout",
        "60",
        "--workers",
        "1",  # the server answers one generation at a time anyway
        "--report",
        "junit,ndjson",
        "--report-dir",
        str(report),
        *[arg for header in headers for arg in ("-H", header)],
    ]
    env = {**os.environ, "NO_COLOR": "1"}
    # cwd: schemathesis keeps a replay cache (.schemathesis/) in its working directory, not the repo's
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env, cwd=report.parent)


def figures(report: Path) -> dict:
    """Cases per operation, response statuses, failed checks and bodies with a traceback, from
    schemathesis's NDJSON report."""
    (ndjson,) = report.glob("ndjson-*.ndjson")
    cases: dict[str, set[str]] = collections.defaultdict(set)
    statuses: collections.Counter[int] = collections.Counter()
    failed: list[str] = []
    tracebacks: list[str] = []
    for line in ndjson.read_text().splitlines():
        event = json.loads(line)
        finished = event.get("ScenarioFinished")
        if not finished:
            continue
        recorder = finished["recorder"]
        for case_id in recorder.get("cases", {}):
            cases[recorder["label"]].add(case_id)
        for case_id, checks in recorder.get("checks", {}).items():
            failed += [
                f"{recorder['label']} {case_id}: {c['name']}" for c in checks if c["status"] == "failure"
            ]
        for interaction in recorder.get("interactions", {}).values():
            response = interaction.get("response")
            if response is None:
                continue
            statuses[response["status_code"]] += 1
            content = response.get("content") or {}
            body = base64.b64decode(content["$base64"]) if "$base64" in content else content.get("string", "")
            if "Traceback" in str(body):
                tracebacks.append(interaction["request"]["uri"])
    return {
        "cases": {label: len(ids) for label, ids in sorted(cases.items())},
        "statuses": dict(sorted(statuses.items())),
        "failed": failed,
        "tracebacks": tracebacks,
    }


def short(output: str) -> str:
    """schemathesis's report with its (long) reproduction commands cut."""
    return "\n".join(line if len(line) < 400 else line[:400] + " ..." for line in output.splitlines())[-8000:]


RUNS = {
    "open": ({}, ()),
    "api key and UI login": (
        {"RAG_SERVER__API_KEY": KEY, "RAG_SERVER__UI_AUTH": "alice:pa55word"},
        (f"Authorization: Bearer {KEY}",),
    ),
}


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("run", list(RUNS))
def test_schemathesis_finds_nothing(tmp_path: Path, run: str) -> None:
    env, headers = RUNS[run]
    report = tmp_path / "report"
    t0 = time.monotonic()
    with serve(tmp_path, env) as url:
        result = schemathesis(url, report, *headers)
    seconds = time.monotonic() - t0
    found = figures(report)
    print(f"schemathesis ({run}), {seconds:.0f} s:", json.dumps(found, indent=1))
    assert result.returncode == 0, short(result.stdout + result.stderr)
    assert found["failed"] == [] and found["tracebacks"] == []
    assert not any(status >= 500 for status in found["statuses"])
    assert set(found["cases"]) >= {"POST /api/ask", "POST /api/ask/stream", "POST /api/export", "POST /api/compare",
                                   "GET /api/map", "POST /api/permalink",
                                   "POST /v1/chat/completions"}
    assert sum(found["statuses"].values()) >= 6 * EXAMPLES  # it did run
    junit = next(report.glob("junit-*.xml")).read_text()
    assert 'failures="0"' in junit and 'errors="0"' in junit
