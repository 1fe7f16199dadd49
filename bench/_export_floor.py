"""The sound floor of ``review export`` on SQLite, a plain script run as a child process by
bench_review_export.py: ``python _export_floor.py LEDGER.sqlite OUT_DIR CAMPAIGN VERSION``.

It does the work a sound export must do and nothing else: it pages through the campaign's items
(``rt_p_hr_items``, as the export does), reads straight from ``rt_records`` every record each
example rests on (the item and its decisions by subject, each run's records by subject, the
prompt by id; prompts and runs read once, as they are shared across items), hashes each record's
stored payload and header against its hashes and checks the next record's link to it, parses the
payloads (C ``json``), recomputes each run's candidate digest (once per run) from the stored run
and receipt bytes and checks it and the output event id against the item, checks the active decision against
its item, and writes the three export files and the manifest (temp file, fsync, rename). Only the
shape the bench builds is handled (anything else is an AssertionError); the bench asserts that its
files are byte-identical to the export's. Prints: examples, seconds, peak RSS (KiB).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import time
from typing import Any

_COLS = "seq, id, type, time, actor, privacy, subject, supersedes, payload, payload_hash, prev_hash, hash"
_S = json.encoder.encode_basestring  # type: ignore[attr-defined]
_PAGE = 1000
_CHUNK = 500
_PARTS = ("candidate-run", "context-receipt", "review-response")


def _canon(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _text(v: str | None) -> str:
    return "null" if v is None else _S(v)


def _header_hash(r: tuple[Any, ...]) -> str:
    seq, id_, type_, time_, actor, privacy, subject, supersedes, _, payload_hash, prev_hash, _ = r
    header = (
        f'{prev_hash}{{"actor":{_S(actor)},"id":{_S(id_)},"payloadHash":{_S(payload_hash)},'
        f'"prevHash":{_S(prev_hash)},"privacy":{_S(privacy)},"seq":{seq},"subject":{_text(subject)},'
        f'"supersedes":{_text(supersedes)},"time":{_S(time_)},"type":{_S(type_)}}}'
    )
    return hashlib.sha256(header.encode()).hexdigest()


class Reader:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def select(self, column: str, values: list[str]) -> list[tuple[Any, ...]]:
        """The records whose ``column`` is one of ``values``, each checked, with parsed payloads
        appended, and the next record's link to each checked."""
        found: list[tuple[Any, ...]] = []
        for i in range(0, len(values), _CHUNK):
            part = values[i : i + _CHUNK]
            sql = f"SELECT {_COLS} FROM rt_records WHERE {column} IN ({','.join('?' * len(part))})"
            found += self.conn.execute(sql, part).fetchall()
        out = []
        for r in found:
            assert hashlib.sha256(r[8]).hexdigest() == r[9], f"seq {r[0]}: payload hash"
            assert _header_hash(r) == r[11], f"seq {r[0]}: header hash"
            out.append((*r, json.loads(r[8])))
        self._links(out)
        return out

    def _links(self, records: list[tuple[Any, ...]]) -> None:
        by_seq = {r[0]: r[11] for r in records}
        nexts = sorted(s + 1 for s in by_seq)
        for i in range(0, len(nexts), _CHUNK):
            part = nexts[i : i + _CHUNK]
            sql = f"SELECT seq, prev_hash FROM rt_records WHERE seq IN ({','.join('?' * len(part))})"
            for seq, prev in self.conn.execute(sql, part):
                assert prev == by_seq[seq - 1], f"seq {seq}: link"


def _digest(run: Any, receipt: Any, output: Any) -> str:
    agent, rp = run[12]["agent"], run[12]
    head = f'{{"catalogGeneration":{_text(agent["catalogGeneration"])},"contextManifest":'.encode()
    middle = (
        f',"digestVersion":1,"executionAdapter":{_text(agent["executionAdapter"])},'
        f'"learnedAdapter":{_text(agent["learnedAdapter"])},"model":{_text(agent["model"])},'
        f'"outputEventId":{_text(output[1])},"outputPayloadHash":{_text(output[9])},'
        f'"outputPrivacy":{_text(output[5])},"promptHash":{_text(rp["promptHash"])},'
        f'"provider":{_text(agent["provider"])},"run":'
    ).encode()
    tail = f',"runId":{_text(rp["runId"])},"runPrivacy":{_text(run[5])}}}'.encode()
    return "sha256:" + hashlib.sha256(head + receipt[8] + middle + run[8] + tail).hexdigest()


def _response(text: str, agent: dict[str, Any]) -> dict[str, Any]:
    provenance = {
        "model": {"id": agent["model"], "provider": agent["provider"]},
        "executionAdapter": agent["executionAdapter"],
        "learnedAdapter": agent["learnedAdapter"],
        "catalogGeneration": agent["catalogGeneration"],
    }
    return {"response": text, "origin": "candidate", "provenance": provenance, "trajectory": []}


class Writer:
    def __init__(self, folder: str, name: str) -> None:
        self.name, self.path = name, os.path.join(folder, name)
        self.tmp = os.path.join(folder, f".{name}.floor.tmp")
        self.handle = open(self.tmp, "wb")  # noqa: SIM115
        self.sha, self.rows, self.bytes = hashlib.sha256(), 0, 0

    def line(self, data: bytes) -> None:
        self.handle.write(data)
        self.sha.update(data)
        self.rows += 1
        self.bytes += len(data)

    def close(self) -> None:
        self.handle.flush()
        os.fsync(self.handle.fileno())
        self.handle.close()
        os.replace(self.tmp, self.path)


def export(db: str, folder: str, campaign: str, version: int) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.execute("BEGIN")
    head_seq, head_hash = conn.execute("SELECT seq, hash FROM rt_records ORDER BY seq DESC LIMIT 1").fetchone()
    reader = Reader(conn)
    settings = [r for r in reader.select("subject", [campaign]) if r[2] == "human-review.campaign@1"]
    assert settings and settings[-1][12]["trainingEnabled"] is True
    os.makedirs(folder, exist_ok=True)
    stem = f"{campaign}-v{version}-1"
    kinds = ("training-example.v4", "trl-preference", "openai-preference")
    writers = [Writer(folder, f"{stem}.{kind}.jsonl") for kind in kinds]
    prompts: dict[str, tuple[Any, ...]] = {}
    runs: dict[str, dict[str, Any]] = {}
    after, examples = 0, 0
    while True:
        page = conn.execute(
            "SELECT item_id, seq FROM rt_p_hr_items WHERE campaign_id = ? AND campaign_version = ? AND seq > ? "
            "ORDER BY seq LIMIT ?",
            (campaign, version, after, _PAGE),
        ).fetchall()
        if not page:
            break
        after = page[-1][1]
        about: dict[str, list[tuple[Any, ...]]] = {}
        for r in reader.select("subject", [row[0] for row in page]):
            about.setdefault(r[6], []).append(r)
        items = [next(r for r in about[row[0]] if r[2] == "stream.thought.review.item.created@1") for row in page]
        new_runs = [c["runId"] for it in items for c in it[12]["candidates"] if c["runId"] not in runs]
        fresh = list(dict.fromkeys(new_runs))
        for r in reader.select("subject", fresh):
            runs.setdefault(r[6], {})[r[2].split("@")[0].rsplit(".", 1)[-1]] = r
        for run_id in fresh:  # each run's digest once, however many items pair it
            parts = runs[run_id]
            parts["digest"] = _digest(parts["candidate-run"], parts["context-receipt"], parts["review-response"])
        new_prompts = [it[12]["promptEventId"] for it in items if it[12]["promptEventId"] not in prompts]
        for r in reader.select("id", list(dict.fromkeys(new_prompts))):
            prompts[r[1]] = r
        for item in items:
            examples += _example(item, about[item[6]], prompts, runs, writers)
    for w in writers:
        w.close()
    schemas = ("thoughtstream.training-example.v4", "trl.preference.v1", "openai.preference.v1")
    files = [
        {
            "name": w.name,
            "schemaVersion": schema,
            "rows": w.rows,
            "bytes": w.bytes,
            "sha256": w.sha.hexdigest(),
            "ledgerHead": head_hash,
            "ledgerHeadSeq": head_seq,
        }
        for w, schema in zip(writers, schemas, strict=True)
    ]
    manifest = Writer(folder, "manifest.json")
    manifest.line(json.dumps({"manifestVersion": 1, "files": files}, indent=2, ensure_ascii=False).encode() + b"\n")
    manifest.close()
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(fd)
    os.close(fd)
    return examples


def _example(
    item: tuple[Any, ...],
    about: list[tuple[Any, ...]],
    prompts: dict[str, tuple[Any, ...]],
    runs: dict[str, dict[str, Any]],
    writers: list[Writer],
) -> int:
    ip = item[12]
    decisions = [r for r in about if r[2] == "stream.thought.review.decision@1"]
    superseded = {r[7] for r in decisions}
    active = [r for r in decisions if r[1] not in superseded]
    if not active:
        return 0
    [decision] = active
    d = decision[12]
    prompt = prompts[ip["promptEventId"]]
    pp = prompt[12]
    run_ids = [c["runId"] for c in ip["candidates"]]
    assert d["itemId"] == ip["itemId"] and d["disposition"] == "prefer" and d["useForTraining"] is True
    assert d["preferred"] in run_ids and pp["externalExportEligible"] is True
    texts, agents = [], []
    for frozen in ip["candidates"]:
        parts = runs[frozen["runId"]]
        run, output = parts["candidate-run"], parts["review-response"]
        assert run[12]["status"] == "completed" and output[1] == frozen["outputEventId"]
        assert parts["digest"] == frozen["digest"], "digest"
        texts.append(output[12]["response"])
        agents.append(run[12]["agent"])
    for r in (item, decision, prompt, *(runs[run_id][k] for run_id in run_ids for k in _PARTS)):
        assert r[5] == "public-source"
    won = run_ids.index(d["preferred"])
    judgment: dict[str, Any] = {
        "disposition": "prefer",
        "reasonCodes": d["reasonCodes"],
        "responseTags": d["responseTags"],
        "strength": d["strength"],
    }
    if d["confidence"] is not None:
        judgment["confidence"] = d["confidence"]
    criterion = pp["criterion"]
    row = {
        "schemaVersion": "thoughtstream.training-example.v4",
        "campaign": {"id": pp["campaign"]["id"], "version": pp["campaign"]["version"]},
        "prompt": pp["prompt"],
        "criterion": {"id": criterion["id"], "version": criterion["version"], "label": criterion["label"]},
        "judgment": judgment,
        "chosen": _response(texts[won], agents[won]),
        "rejected": [_response(texts[1 - won], agents[1 - won])],
        "evidence": pp["evidence"],
    }
    chosen, rejected = texts[won], texts[1 - won]
    writers[0].line(_canon(row) + b"\n")
    writers[1].line(_canon({"prompt": pp["prompt"], "chosen": chosen, "rejected": rejected}) + b"\n")
    openai = {
        "input": {"messages": [{"role": "user", "content": pp["prompt"]}]},
        "preferred_output": [{"role": "assistant", "content": chosen}],
        "non_preferred_output": [{"role": "assistant", "content": rejected}],
    }
    writers[2].line(_canon(openai) + b"\n")
    return 1


if __name__ == "__main__":
    t0 = time.perf_counter()
    n = export(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
    seconds = time.perf_counter() - t0
    with open("/proc/self/status") as status:
        hwm = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    print(n, seconds, hwm)
