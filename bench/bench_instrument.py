"""What ``reviewtrail.instrument`` adds to an SDK call.

instrument_chat, instrument_chat_stream, instrument_messages
    One call of the real SDK client (``openai.OpenAI`` chat completion; the same streamed in 50
    chunks with usage; ``anthropic.Anthropic`` message) to a loopback server speaking the provider's
    wire format (``tests/support/llm_wire.py``), instrumented and bare, interleaved, 300 calls each
    (60 with --quick). The server runs in a process of its own, as a provider's server does: in the
    client's process its thread would take the GIL from the client at every chunk, and the figure would
    measure thread hand-offs rather than the wrapper. The instrumented client records into a fresh
    store (SQLite ledger, filesystem CAS, fsync on). The durable write (the two CAS batches and the
    ledger append of the manifest and usage records, each durable when it returns, all before the call
    returns) is timed apart, call by call. Figure: the median of (instrumented call - its durable
    write) minus the median bare call, i.e. the wrapper's own work (reading the request, watching the
    answer, pricing it, building and sealing the records). Target: <= 1 ms per call. The write's median is in the notes.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from _util import BENCH_DIR, Config, Result, verdict, work_dir

TARGET_MS = 1.0
MESSAGES = [{"role": "user", "content": "Review the method section. " * 40}]


def _support() -> Any:
    """tests/support/llm_wire.py: the loopback server the tests use."""
    tests = str(BENCH_DIR.parent / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    from support import llm_wire

    return llm_wire


def _serve(conn: Any, path: str, body: Any, events: Any, count: int) -> None:
    """The child process: a wire server answering ``count`` requests on ``path`` with the same reply."""
    w = _support()
    wire = w.WireServer()
    wire.queue(path, *(w.Reply(body=body, events=events) for _ in range(count)))
    wire.start()
    conn.send((wire.url, wire.openai_url))
    conn.recv()  # until the parent is done
    wire.stop()


class _ServerProcess:
    """A wire server in its own process, with every reply of the run queued at its start."""

    def __init__(self, path: str, *, body: Any = None, events: Any = None, count: int) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._process = ctx.Process(target=_serve, args=(child, path, body, events, count), daemon=True)
        self._process.start()
        self.url, self.openai_url = self._conn.recv()

    def stop(self) -> None:
        self._conn.send("stop")
        self._process.join(timeout=10)


class _WriteClock:
    """Times the durable writes of the instrumented calls: the store's CAS puts and ledger appends (each
    durable when it returns). Building the records (pricing, validation, canonical JSON) is not in it."""

    def __init__(self, store: Any) -> None:
        self.seconds = 0.0
        self.writes = 0
        put_many, append = store.cas.put_many, store.append

        def timed(write: Callable[..., Any]) -> Callable[..., Any]:
            def run(*args: Any, **kwargs: Any) -> Any:
                t0 = time.perf_counter()
                try:
                    return write(*args, **kwargs)
                finally:
                    self.seconds += time.perf_counter() - t0
                    self.writes += 1

            return run

        store.cas.put_many, store.append = timed(put_many), timed(append)

    def take(self) -> float:
        seconds, self.seconds = self.seconds, 0.0
        return seconds


def _run(
    name: str,
    cfg: Config,
    reply: dict[str, Any],
    clients: Callable[[Any], tuple[Any, Any]],
    call: Callable[[Any], object],
    what: str,
) -> Result:
    from reviewtrail import app
    from reviewtrail.config import load_settings

    n = cfg.rep_count(300, 60)
    warm = 5
    wire = _ServerProcess(**reply, count=2 * (warm + n))
    try:
        with work_dir("instrument-") as work:
            env = {"REVIEWTRAIL_STORE": str(work / ".reviewtrail")}
            store = app.init_store(load_settings(env, cwd=work))
            clock = _WriteClock(store)
            try:
                bare, traced = clients(wire)
                import reviewtrail

                reviewtrail.instrument(traced, store=store, project_dir=work, env=env)
                for _ in range(warm):  # warm both: connections, model classes, price tables
                    call(bare)
                    call(traced)
                clock.take()
                clock.writes = 0
                ours: list[float] = []
                base: list[float] = []
                writes: list[float] = []
                for i in range(n):
                    order = [(traced, ours), (bare, base)]
                    if i % 2:
                        order.reverse()
                    for client, out in order:
                        t0 = time.perf_counter()
                        call(client)
                        out.append(time.perf_counter() - t0)
                        if client is traced:
                            writes.append(clock.take())
                if clock.writes != 3 * n:  # two CAS batches and one append per recorded call
                    raise AssertionError(f"expected {3 * n} durable writes for {n} calls, timed {clock.writes}")
            finally:
                store.close()
    finally:
        wire.stop()
    wrapped_ms = statistics.median(o - w for o, w in zip(ours, writes, strict=True)) * 1000
    bare_ms = statistics.median(base) * 1000
    write_ms = statistics.median(writes) * 1000
    overhead_ms = wrapped_ms - bare_ms
    return Result(
        name,
        verdict(overhead_ms <= TARGET_MS),
        ours=f"{overhead_ms:.3f} ms/call over the bare call (write apart)",
        baseline=f"{bare_ms:.2f} ms (bare SDK call)",
        ratio=bare_ms / wrapped_ms,
        target=f"<= {TARGET_MS:g} ms",
        notes=[
            f"{what}; median of {n} calls each side, interleaved",
            f"instrumented call without its write {wrapped_ms:.2f} ms; durable write (2 CAS batches + 1 append, fsync) "
            f"{write_ms:.2f} ms; instrumented call in all {statistics.median(ours) * 1000:.2f} ms",
        ],
    )


def bench_chat(cfg: Config) -> Result:
    import openai

    w = _support()

    reply = {"path": w.CHAT, "body": w.chat_completion("It holds. " * 30, model="gpt-4o-2024-08-06")}

    def clients(wire: Any) -> tuple[Any, Any]:
        return openai.OpenAI(base_url=wire.openai_url, api_key="k"), openai.OpenAI(
            base_url=wire.openai_url, api_key="k"
        )

    def call(client: Any) -> object:
        return client.chat.completions.create(model="gpt-4o", messages=MESSAGES, temperature=0.2)

    return _run("instrument_chat", cfg, reply, clients, call, "openai chat.completions.create, JSON answer")


def bench_chat_stream(cfg: Config) -> Result:
    import openai

    w = _support()
    events = w.chat_chunks(["It holds. "] * 50, model="gpt-4o-2024-08-06", usage=w.chat_usage(120, 150))

    reply = {"path": w.CHAT, "events": events}

    def clients(wire: Any) -> tuple[Any, Any]:
        return openai.OpenAI(base_url=wire.openai_url, api_key="k"), openai.OpenAI(
            base_url=wire.openai_url, api_key="k"
        )

    def call(client: Any) -> object:
        stream = client.chat.completions.create(
            model="gpt-4o", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
        )
        return sum(1 for _ in stream)

    return _run("instrument_chat_stream", cfg, reply, clients, call, "openai chat.completions.create, 50-chunk stream")


def bench_messages(cfg: Config) -> Result:
    import anthropic

    w = _support()

    reply = {"path": w.MESSAGES, "body": w.message("It holds. " * 30, model="claude-sonnet-4-5-20250929")}

    def clients(wire: Any) -> tuple[Any, Any]:
        return anthropic.Anthropic(base_url=wire.url, api_key="k"), anthropic.Anthropic(base_url=wire.url, api_key="k")

    def call(client: Any) -> object:
        return client.messages.create(model="claude-sonnet-4-5", max_tokens=512, messages=MESSAGES, system="Be terse.")

    return _run("instrument_messages", cfg, reply, clients, call, "anthropic messages.create, JSON answer")


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    for bench in (bench_chat, bench_chat_stream, bench_messages):
        result = bench(Config(quick=quick))
        print(result.line())
        for note in result.notes:
            print(f"   {note}")
