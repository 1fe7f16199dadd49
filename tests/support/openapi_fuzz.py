"""Schemathesis over an app's published OpenAPI, against the app running as a real server: every
operation is called with cases generated from its description, and each response is checked.

:func:`fuzz_openapi` takes the app's base URL, so the same run serves the inspector
(``reviewtrail serve``) and any other app that publishes ``/openapi.json`` (the public proxy).
Generation is deterministic (Hypothesis ``derandomize``, no example database) and bounded
(``max_examples`` per operation and generation mode, no shrinking), so a run takes the same cases
every time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FuzzReport", "fuzz_openapi"]


@dataclass
class FuzzReport:
    """What a run did: the operations it found, the cases it sent and the statuses answered (per
    operation label and generation mode), the failures (the checks' messages, reproduction
    included), and the operations for which no negative case exists."""

    operations: list[str] = field(default_factory=list)
    cases: dict[str, int] = field(default_factory=dict)
    statuses: dict[str, set[int]] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    no_negative: list[str] = field(default_factory=list)  # nothing the description forbids can be sent


def fuzz_openapi(
    base_url: str,
    *,
    max_examples: int = 25,
    checks: Sequence[str] = ("not_a_server_error", "response_schema_conformance"),
    known: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    schema_path: str = "openapi.json",
) -> FuzzReport:
    """Load ``base_url + schema_path`` and test every operation against ``base_url``: positive
    cases, negative cases and, when ``known`` names some of an operation's path or query
    parameters, positive cases with those parameters fixed (so the cases reach data the server
    holds, not only not-found answers; the others are still generated). ``checks`` are names from
    ``schemathesis.checks``; ``headers`` are sent with every case."""
    import schemathesis
    import schemathesis.checks
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis.errors import Unsatisfiable
    from schemathesis import GenerationMode

    base = base_url.rstrip("/")
    schema = schemathesis.openapi.from_url(f"{base}/{schema_path}", wait_for_schema=10)
    check_functions = [getattr(schemathesis.checks, name) for name in checks]
    report = FuzzReport()
    for result in schema.get_all_operations():
        operation = result.ok()  # an operation its description cannot express is an error here
        report.operations.append(operation.label)
        path_names = {p.name for p in operation.path_parameters}
        query_names = {p.name for p in operation.query}
        fixed_path = {k: v for k, v in (known or {}).items() if k in path_names}
        fixed_query = {k: v for k, v in (known or {}).items() if k in query_names}
        runs: list[tuple[str, GenerationMode, dict[str, Any] | None, dict[str, Any] | None]] = [
            ("positive", GenerationMode.POSITIVE, None, None),
            ("negative", GenerationMode.NEGATIVE, None, None),
        ]
        if fixed_path or fixed_query:
            runs.append(("positive, known values", GenerationMode.POSITIVE, fixed_path or None, fixed_query or None))
        for mode_name, mode, path_parameters, query in runs:
            key = f"{operation.label} [{mode_name}]"
            strategy = operation.as_strategy(generation_mode=mode, path_parameters=path_parameters, query=query)
            run = _bounded(
                given, settings, HealthCheck, Phase, strategy, max_examples, _caller(base, check_functions, headers)
            )
            sent: list[int] = []
            try:
                run(sent, report.statuses.setdefault(key, set()))
            except Unsatisfiable as exc:
                if mode is GenerationMode.NEGATIVE and not sent:
                    # Every value is allowed (no parameter, or free text): there is no negative case.
                    report.no_negative.append(operation.label)
                    continue
                report.failures[key] = f"{type(exc).__name__}: {exc}"
            except (Exception, BaseExceptionGroup) as exc:  # schemathesis's FailureGroup is a BaseExceptionGroup
                report.failures[key] = f"{type(exc).__name__}: {exc}"
            report.cases[key] = len(sent)
    return report


Call = Callable[[Any, list[int], set[int]], None]


def _caller(base: str, checks: list[Any], headers: Mapping[str, str] | None) -> Call:
    def call(case: Any, sent: list[int], statuses: set[int]) -> None:
        sent.append(1)
        response = case.call_and_validate(base_url=base, headers=dict(headers or {}), checks=checks)
        statuses.add(response.status_code)

    return call


def _bounded(
    given: Any, settings: Any, health: Any, phase: Any, strategy: Any, max_examples: int, call: Callable[..., None]
) -> Callable[[list[int], set[int]], None]:
    @settings(
        max_examples=max_examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[phase.explicit, phase.generate],
        suppress_health_check=list(health),
    )
    @given(case=strategy)
    def run(sent: list[int], statuses: set[int], case: Any) -> None:
        call(case, sent, statuses)

    return run
