"""Run the reviewtrail benchmarks and print a report: ``make bench`` (``BENCH_ARGS=--quick`` to smoke-test).

Each benchmark measures reviewtrail and a baseline in the same run, interleaving the
repetitions, and reports medians: the figure, the baseline, the ratio (baseline time /
our time, so > 1 means reviewtrail is faster), the target and PASS/MISS (REPORT when
there is no target, SKIP when a prerequisite is missing). This is a report, never an
assertion: a missed target still exits 0; only a crashing benchmark makes it non-zero.
See the docstrings of bench_cas.py and bench_ledger.py for what is measured and how.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import traceback
from collections.abc import Callable

import bench_cas
import bench_cas_batch
import bench_citations
import bench_claims
import bench_cli
import bench_human_review
import bench_instrument
import bench_ledger
import bench_mcp
import bench_migrate
import bench_payloads
import bench_pg_writers
import bench_provenance
import bench_review
import bench_review_export
import bench_review_flow
import bench_review_session
import bench_s3
import bench_sandbox_network
import bench_startup
import bench_trace
import bench_verify
import bench_web
import bench_web_hostile
import bench_web_reads
from _util import WORK_ROOT, Config, Result

BENCHMARKS: dict[str, tuple[Callable[[Config], Result], str]] = {
    "cas_put_file": (bench_cas.bench_put_file, "put_file of a large random file vs a one-pass hashlib copy + fsync"),
    "cas_put_many": (bench_cas.bench_put_many, "put_many of 4 KiB objects vs git hash-object -w --stdin-paths"),
    "s3_put_file": (bench_s3.bench_put_file, "S3Cas.put_file of 1 GiB vs boto3 upload_file, same SeaweedFS"),
    "s3_put_many": (bench_s3.bench_put_many, "S3Cas.put_many of 10,000 x 4 KiB vs boto3 put_object, same threads"),
    "s3_cas_cat": (bench_s3.bench_cas_cat, "verified cas cat of 256 MiB from S3 vs boto3 download_file"),
    "cas_put_batch": (bench_cas_batch.bench_put_batch, "cas put of 200 files in one process vs a process per file"),
    "cas_cat_batch": (bench_cas_batch.bench_cat_batch, "cas cat of 200 objects in one process vs a process per object"),
    "s3_put_batch": (bench_cas_batch.bench_s3_put_batch, "S3Cas.put_files of 8 x 32 MiB vs the spooled batch put"),
    "ledger_sqlite": (bench_ledger.bench_sqlite, "SQLite ledger append, batches of 1,000 vs raw sqlite3"),
    "ledger_sqlite_prepared": (
        bench_ledger.bench_sqlite_prepared,
        "SQLite ledger append vs raw executemany of the same prepared rows",
    ),
    "ledger_postgres": (bench_ledger.bench_postgres, "PostgreSQL ledger append, batches of 1,000 vs raw psycopg"),
    "ledger_postgres_writers": (
        bench_pg_writers.bench_writers,
        "4 writer processes appending to one PostgreSQL ledger vs 4 of raw psycopg",
    ),
    "cli_help": (bench_cli.bench_help, "reviewtrail --help start-up vs python -c pass"),
    "startup_ledger_tail": (
        bench_startup.bench_ledger_tail,
        "ledger tail -n 5 as a process vs a bare python -c pass",
    ),
    "startup_cas_cat": (
        bench_startup.bench_cas_cat,
        "cas cat of a small object as a process vs a bare python -c pass",
    ),
    "startup_review_queue": (
        bench_startup.bench_review_queue,
        "review queue (4 items) as a process vs a bare python -c pass",
    ),
    "startup_trace_save": (
        bench_startup.bench_trace_save,
        "trace save into a store as a process vs a bare python -c pass",
    ),
    "startup_cas_put_large": (
        bench_startup.bench_cas_put_large,
        "cas put of 256 MiB as a process vs a one-pass hashlib copy + fsync process",
    ),
    "sandbox_run": (bench_provenance.bench_sandbox, "reviewtrail run of `true` vs a plain subprocess of `true`"),
    "sandbox_cgroup_overhead": (
        bench_provenance.bench_cgroup_overhead,
        "sandboxed true with the run's control groups vs without, and bwrap alone",
    ),
    "lineage_query": (bench_provenance.bench_lineage, "lineage of an artifact in a store with 10,000 runs"),
    "claims_extract": (
        bench_claims.bench_extract,
        "claims extract --dry-run of a 1 MB and a 10 MB reply: time ratio and peak RSS, vs read + splitlines",
    ),
    "check_citations": (bench_citations.bench_check_citations, "check_citations of a 1 MB document vs one regex pass"),
    "quick_review": (bench_review.bench_quick_review, "Quick review of an artifact with 1,000 claims"),
    "trace_record": (bench_trace.bench_record, "record_call of one reviewer call vs plain writes + fsync"),
    "trace_save_cli": (bench_trace.bench_cli, "reviewtrail trace save as a process vs python -c pass"),
    "payload_decode": (
        bench_payloads.bench_decode,
        "a trace.review-call@1 payload checked by its msgspec model vs json.dumps + pydantic, strict",
    ),
    "instrument_chat": (
        bench_instrument.bench_chat,
        "an instrumented openai chat completion vs the bare SDK call, same loopback server (durable write apart)",
    ),
    "instrument_chat_stream": (
        bench_instrument.bench_chat_stream,
        "an instrumented 50-chunk openai chat stream vs the bare SDK stream (durable write apart)",
    ),
    "instrument_messages": (
        bench_instrument.bench_messages,
        "an instrumented anthropic message vs the bare SDK call, same loopback server (durable write apart)",
    ),
    "mcp_save_trace": (
        bench_mcp.bench_save_trace,
        "MCP save_trace round trip over stdio to reviewtrail mcp vs the same library call in process",
    ),
    "sandbox_allowlist": (
        bench_sandbox_network.bench_allowlist,
        "reviewtrail run of true with --network allowlist vs none",
    ),
    "sandbox_allowlist_fetch": (bench_sandbox_network.bench_fetch, "one HTTP GET through the allowlist proxy"),
    "migrate_postgres_files": (
        bench_migrate.bench_migrate,
        "migrate SQLite + files to PostgreSQL + files vs PostgreSQL COPY of the rows and a plain copy of the files",
    ),
    "migrate_s3_objects": (
        bench_migrate.bench_migrate_s3,
        "migrate of a store's objects to S3 (SeaweedFS) vs boto3 upload_file of the same files",
    ),
    "verify_memory": (bench_verify.bench_verify_memory, "verify's peak RSS at 1,000,000 vs 100,000 records"),
    "verify_store": (
        bench_verify.bench_verify,
        "verify of 1,000,000 records vs the hash-and-chain floor (read, SHA-256, links)",
    ),
    "review_queue_sqlite": (bench_human_review.bench_queue_sqlite, "review queue first page, 100,000 items (SQLite)"),
    "review_decide_sqlite": (bench_human_review.bench_decide_sqlite, "review decide p95, 100,000 items (SQLite)"),
    "review_export_sqlite": (
        bench_review_export.bench_export_sqlite,
        "review export examples/s, a campaign of real shape, vs the sound floor (SQLite)",
    ),
    "review_export_memory": (
        bench_review_export.bench_export_memory,
        "review export peak RSS at 100,000 vs 10,000 examples",
    ),
    "review_queue_postgres": (
        bench_human_review.bench_queue_postgres,
        "review queue first page, 100,000 items (PostgreSQL)",
    ),
    "review_decide_postgres": (bench_human_review.bench_decide_postgres, "review decide p95 (PostgreSQL)"),
    "review_session_redraw_sqlite": (
        bench_review_session.bench_session_sqlite,
        "review session: key to next card through a pseudo-terminal, 100,000 items (SQLite)",
    ),
    "web_review_page": (
        bench_web.bench_review_page,
        "inspector Review page p95 / static file p95, 32 concurrent clients each, 100,000 items (SQLite)",
    ),
    "web_queue_api": (
        bench_web.bench_queue_api,
        "inspector queue API (one card) p95, 32 concurrent clients, 100,000 items (SQLite), vs a static file",
    ),
    "review_flow": (
        bench_review_flow.bench_review_flow,
        "Review page in Chromium: confirming key to the next card drawn, p95, 100,000 items (SQLite), vs a static page",
    ),
    "web_hostile_connections": (
        bench_web_hostile.bench_hostile_connections,
        "inspector Review page p95 of one reviewer while 2,000 idle and 2,000 slowloris connections are held, vs alone",
    ),
    "web_deep_card": (
        bench_web_reads.bench_deep_card,
        "inspector Review page of card 999 p95 vs card 1, 1,000-item campaign (SQLite)",
    ),
    "web_hostile_readers": (
        bench_web_reads.bench_hostile_readers,
        "a reviewer's card 1 p95 through the proxy while 8 readers loop deep cards, vs alone",
    ),
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repetitions (smoke test)")
    parser.add_argument(
        "--only",
        action="append",
        choices=list(BENCHMARKS),
        metavar="NAME",
        help=f"run only this benchmark (repeatable): {', '.join(BENCHMARKS)}",
    )
    parser.add_argument("--reps", type=int, help="repetitions for every benchmark (overrides the defaults)")
    args = parser.parse_args(argv)
    if args.reps is not None and args.reps < 1:
        parser.error("--reps must be >= 1")
    return args


def run_one(name: str, cfg: Config) -> Result:
    fn, title = BENCHMARKS[name]
    print(f"\n== {name}: {title}", flush=True)
    start = time.perf_counter()
    try:
        result = fn(cfg)
    except Exception as exc:
        traceback.print_exc()
        result = Result(name, "ERROR", notes=[f"crashed: {type(exc).__name__}: {exc}"])
    print(result.line())
    for note in result.notes:
        print(f"   {note}")
    print(f"   ({time.perf_counter() - start:.1f} s)", flush=True)
    return result


def summary(results: list[Result]) -> str:
    header = ("benchmark", "ours", "baseline", "ratio", "target", "status")
    rows = [header] + [(r.name, r.ours, r.baseline, r.ratio_text, r.target, r.status) for r in results]
    widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cfg = Config(quick=args.quick, reps=args.reps)
    names = list(dict.fromkeys(args.only)) if args.only else list(BENCHMARKS)
    print(
        f"reviewtrail benchmarks ({'quick' if cfg.quick else 'full'}): python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, work files under {WORK_ROOT}"
    )
    print("ratio = baseline time / our time (> 1: reviewtrail is faster); figures are medians over repetitions")
    start = time.perf_counter()
    results = [run_one(name, cfg) for name in names]
    print("\nSummary")
    print(summary(results))
    print(f"\ntotal runtime {time.perf_counter() - start:.1f} s")
    crashed = [r.name for r in results if r.status == "ERROR"]
    if crashed:
        print(f"crashed: {', '.join(crashed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
