"""Ledger append throughput on SQLite with and without a signing key (records/s).

    .venv/bin/python bench/bench_signed_append.py [--records 50000] [--batch 1000] [--repeat 3]

The same records (``bench.rec@1``, a small payload) appended with ``Ledger.append`` in batches
to a fresh SQLite ledger (WAL, synchronous=FULL), once by a ledger with no signer and once by one
signing every record with an Ed25519 key (``RecordSigner``: one signature per record, stored in
``rt_signatures`` in the append's transaction). The two runs alternate, each on a new ledger; the
median of ``--repeat`` runs is printed, with what signing costs per record. A report, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from reviewtrail.ledger import NewRecord, RecordSigner, TrustedKeys, open_ledger, signature_problems

_NOTE = "x" * 40


def _records(start: int, stop: int) -> list[NewRecord]:
    return [NewRecord(type="bench.rec@1", actor="bench", privacy="private", payload={"i": i, "note": _NOTE})
            for i in range(start, stop)]  # fmt: skip


def _run(folder: Path, count: int, batch: int, signer: RecordSigner | None) -> float:
    """Records/s of appending ``count`` records to a new ledger in ``folder``."""
    ledger = open_ledger(f"sqlite:///{folder / 'ledger.sqlite'}")
    ledger.signer = signer
    try:
        began = time.perf_counter()
        for start in range(0, count, batch):
            ledger.append(_records(start, min(start + batch, count)))
        elapsed = time.perf_counter() - began
        if ledger.head_seq() != count:
            raise SystemExit(f"expected {count} records, found {ledger.head_seq()}")
        if signer is not None:
            with ledger.snapshot():
                problems = signature_problems(ledger, end=count, trusted=TrustedKeys.of([signer.public_key])).problems
            if len(ledger.signatures_at(range(1, count + 1))) != count or problems:
                raise SystemExit("a signed run did not store a valid signature for every record")
    finally:
        ledger.close()
    return count / elapsed


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    signer = RecordSigner(Ed25519PrivateKey.generate())
    rates: dict[str, list[float]] = {"unsigned": [], "signed": []}
    with tempfile.TemporaryDirectory(prefix="rt-bench-signed-") as tmp:
        for round_ in range(args.repeat):
            for name, key in (("unsigned", None), ("signed", signer)):
                folder = Path(tmp) / f"{name}-{round_}"
                folder.mkdir()
                rates[name].append(_run(folder, args.records, args.batch, key))
    unsigned, signed = statistics.median(rates["unsigned"]), statistics.median(rates["signed"])
    print(f"SQLite append, {args.records:,} records in batches of {args.batch:,}, median of {args.repeat}:")
    print(f"  without a signing key: {unsigned:>10,.0f} records/s")
    print(f"  with a signing key:    {signed:>10,.0f} records/s  ({signed / unsigned:.2f}x)")
    print(f"  signing costs {1e6 / signed - 1e6 / unsigned:.1f} us per record")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
