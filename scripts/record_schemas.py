"""Write (or, with ``--check``, compare) the JSON Schemas of the record payloads shipped in the
package: ``src/reviewtrail/schemas/records/<type>.schema.json``, one per record type of the
application's catalog (``reviewtrail.app.payload_schemas()``).

    .venv/bin/python scripts/record_schemas.py           # rewrite the folder
    .venv/bin/python scripts/record_schemas.py --check   # exit 1 when a file differs or is missing
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

FOLDER = Path(__file__).resolve().parents[1] / "src" / "reviewtrail" / "schemas" / "records"


def schema_files() -> dict[str, str]:
    """File name → exact text of every schema the code generates."""
    from reviewtrail.app import payload_schemas

    return {
        f"{type_}.schema.json": json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        for type_, schema in payload_schemas().items()
    }


def main(argv: list[str]) -> int:
    files = schema_files()
    present = {p.name for p in FOLDER.glob("*.json")} if FOLDER.is_dir() else set()
    if "--check" in argv:
        stale = sorted(n for n, text in files.items() if n not in present or (FOLDER / n).read_text("utf-8") != text)
        extra = sorted(present - set(files))
        for name in stale:
            print(f"{FOLDER / name}: differs from the code (run scripts/record_schemas.py)")
        for name in extra:
            print(f"{FOLDER / name}: no record type has this schema")
        return 1 if stale or extra else 0
    FOLDER.mkdir(parents=True, exist_ok=True)
    for name in present - set(files):
        (FOLDER / name).unlink()
    for name, text in files.items():
        (FOLDER / name).write_text(text, encoding="utf-8")
    print(f"{len(files)} schemas in {FOLDER}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
