"""Sandbox: the cost of ``--network allowlist`` against ``--network none``.

sandbox_allowlist
    Wall time of ``run_code`` for ``true`` (bash) in a session with ``network="allowlist"``
    (one allowlist entry): the host proxy's start and stop (a Unix socket, a thread), the bind
    mount of its folder, and the in-sandbox bridge (a listening socket and a forked process),
    on top of everything a ``network="none"`` run does. Baseline: the same run with
    ``network="none"``, interleaved. Median of 15 (5 with --quick). Reported, no fixed target.

sandbox_allowlist_fetch
    Wall time of one plain-HTTP GET from inside the sandbox through the proxy to a local HTTP
    server (pinned with ``resolve``), including the run, against the same run without the
    fetch. Reported, no fixed target.

Run alone with ``python bench/bench_sandbox_network.py [--quick]``, or register both in
``bench/run.py``'s BENCHMARKS.
"""

from __future__ import annotations

import http.server
import statistics
import sys
import threading
import time
from pathlib import Path

from _util import Config, Result, work_dir
from reviewtrail.app import init_store
from reviewtrail.config import Settings
from reviewtrail.provenance.runs import create_session, run_code
from reviewtrail.store import Store


def _store(path: Path) -> Store:
    return init_store(Settings(store=path, database_url=f"sqlite:///{path / 'ledger.sqlite'}"))


class _Ok(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


def _timed(store: Store, sid: str, code: str, lang: str, **kw: object) -> float:
    t0 = time.perf_counter()
    out = run_code(store, session_id=sid, code=code, lang=lang, **kw)  # type: ignore[arg-type]
    took = time.perf_counter() - t0
    if out.run.status != "succeeded":
        raise AssertionError(f"the benchmark run did not succeed: {out.run.error}")
    return took


def bench_allowlist(cfg: Config) -> Result:
    reps = cfg.rep_count(15, 5)
    with work_dir("sandbox-net-") as work:
        store = _store(work / "store")
        sid = create_session(store).session_id
        ours: list[float] = []
        base: list[float] = []
        for _ in range(reps):
            ours.append(_timed(store, sid, "true", "bash", network="allowlist", allowlist=["example.org"]))
            base.append(_timed(store, sid, "true", "bash"))
        store.close()
    o, b = statistics.median(ours) * 1000, statistics.median(base) * 1000
    return Result(
        "sandbox_allowlist",
        "REPORT",
        ours=f"{o:.1f} ms",
        baseline=f"{b:.1f} ms (--network none)",
        ratio=b / o,
        target="report",
        notes=[f"median of {reps}; run_code of `true`: proxy start/stop and the in-sandbox bridge (+{o - b:.1f} ms)"],
    )


def bench_fetch(cfg: Config) -> Result:
    reps = cfg.rep_count(15, 5)
    server = http.server.ThreadingHTTPServer(("127.0.0.2", 0), _Ok)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    fetch = f"import urllib.request\nassert urllib.request.urlopen('http://bench.invalid:{port}/').read() == b'ok'"
    net = {"network": "allowlist", "allowlist": [f"bench.invalid:{port}"], "resolve": {"bench.invalid": "127.0.0.2"}}
    try:
        with work_dir("sandbox-fetch-") as work:
            store = _store(work / "store")
            sid = create_session(store).session_id
            ours: list[float] = []
            base: list[float] = []
            for _ in range(reps):
                ours.append(_timed(store, sid, fetch, "python", **net))
                base.append(_timed(store, sid, "import urllib.request", "python", **net))
            store.close()
    finally:
        server.shutdown()
        server.server_close()
    o, b = statistics.median(ours) * 1000, statistics.median(base) * 1000
    return Result(
        "sandbox_allowlist_fetch",
        "REPORT",
        ours=f"{o:.1f} ms",
        baseline=f"{b:.1f} ms (same run, no fetch)",
        ratio=b / o,
        target="report",
        notes=[f"median of {reps}; one GET through bridge + proxy to a local server (+{o - b:.1f} ms)"],
    )


if __name__ == "__main__":
    config = Config(quick="--quick" in sys.argv[1:])
    for bench in (bench_allowlist, bench_fetch):
        result = bench(config)
        print(result.line())
        for note in result.notes:
            print(f"   {note}")
