"""Check 3: the hook commands' start-up and prime, timed against Claude Code's budgets."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cerebro.doctor.base import (
    FAIL,
    LATENCY_RUNS,
    OK,
    SKIP,
    WARN,
    Check,
    _cmd,
    _copy_into,
    _Findings,
    _scratch_home,
    _subprocess_env,
    _which_cerebro,
    default_budgets,
)
from cerebro.doctor.setup import _source

# --------------------------------------------------------------------------- 3. hook-latency


def _time_runs(
    argv: list[str], env: dict[str, str], runs: int, timeout: float, stdin: Callable[[int], str] | None = None
) -> tuple[list[float | None], int]:
    """Wall-clock milliseconds of each run (None: it did not finish within ``timeout``), and how many runs
    printed something (for a prime: delivered memories)."""
    import subprocess
    import time

    timings: list[float | None] = []
    printed = 0
    for index in range(runs):
        start = time.perf_counter()
        try:
            ran = subprocess.run(  # noqa: S603 - a fixed program with an argument list, no shell
                argv,
                input=stdin(index) if stdin else "",
                capture_output=True,
                text=True,
                env=env,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            timings.append(None)
            continue
        timings.append(round((time.perf_counter() - start) * 1000.0, 1))
        printed += bool(ran.stdout.strip())
    return timings, printed


def _median(values: list[float | None]) -> float | None:
    import statistics

    if any(v is None for v in values) or not values:
        return None
    return round(statistics.median(v for v in values if v is not None), 1)


def check_hook_latency(
    project: Path,
    *,
    budgets: dict[str, tuple[float, float]] | None = None,
    runs: int = LATENCY_RUNS,
    executable: str | None = None,
) -> Check:
    """Start-up of the hook commands as Claude Code runs them (the ``cerebro`` on PATH, in a subprocess):
    ``hook has-brain`` (the floor every hook pays, and about what SessionEnd costs) against SessionEnd's
    budget, ``hook prime --event userpromptsubmit`` against SessionStart's and UserPromptSubmit's. The median
    of ``runs``. The hooks run against a scratch CEREBRO_HOME holding a copy of the brain: a prime stamps the
    memories it shows and claims the session, which must not happen to the real brain."""
    import json
    import secrets

    from cerebro import paths

    name = "hook-latency"
    limits = {**default_budgets(), **(budgets or {})}
    exe = executable or _which_cerebro()
    if exe is None:
        return Check(name, SKIP, "not measured: no cerebro on PATH for hooks to run (see cli-on-path)")
    brain = paths.project_brain_path(project)
    copied = False
    with _scratch_home() as home:
        if brain.is_file() and brain.stat().st_size > 0:
            try:
                copied = _copy_into(brain, home).is_file()
            except Exception:  # noqa: BLE001 - an unreadable brain is the brain check's to report
                copied = False
        env = _subprocess_env(home)
        slowest = max(fail for _, fail in limits.values()) / 1000.0 + 5.0
        floor, _ = _time_runs([exe, "hook", "has-brain", "-p", str(project)], env, runs, slowest)
        token = secrets.token_hex(6)

        def payload(index: int) -> str:  # a session of its own per run: each run primes for real
            return json.dumps(
                {
                    "session_id": f"cerebro-doctor-{token}-{index}",
                    "hook_event_name": "UserPromptSubmit",
                    "prompt": "cerebro doctor",
                    "cwd": str(project),
                }
            )

        prime, delivered = _time_runs(
            [exe, "hook", "prime", "--event", "userpromptsubmit", "-p", str(project)],
            env,
            runs,
            slowest,
            payload,
        )
    floor_ms, prime_ms = _median(floor), _median(prime)
    extra = {
        "executable": exe,
        "runs": runs,
        "has_brain_ms": floor,
        "prime_ms": prime,
        "has_brain_median_ms": floor_ms,
        "prime_median_ms": prime_ms,
        "brain_copied": copied,
        "prime_delivered": delivered,  # runs that injected memories (none for an empty brain)
        "budgets_ms": {event: {"warn": warn, "fail": fail} for event, (warn, fail) in limits.items()},
    }
    findings = _Findings(name)
    shim = " (it runs through a version manager's shim)" if "shims" in Path(exe).parts else ""
    judged = [
        (
            "has-brain",
            floor_ms,
            ("SessionEnd",),
            f"uv tool install --reinstall --compile-bytecode {_source()}",
            f"every hook pays this start-up{shim}; a tool install with compiled bytecode starts fastest",
        ),
        (
            "prime",
            prime_ms,
            ("SessionStart", "UserPromptSubmit"),
            _cmd(project, "cerebro gc"),
            "fewer active memories prime faster (or lower prime_limit)",
        ),
    ]
    for what, value, events, fix, why in judged:
        if value is None:
            findings.add(FAIL, f"{what} did not finish within {slowest:.0f} s: Claude Code cancels it", fix)
            continue
        over_fail = [e for e in events if value > limits[e][1]]
        over_warn = [e for e in events if value > limits[e][0] and e not in over_fail]
        if over_fail:
            findings.add(
                FAIL,
                f"{what} takes {value:.0f} ms, over the {limits[over_fail[0]][1]:.0f} ms Claude Code "
                f"gives {'/'.join(over_fail)} hooks before cancelling them ({why})",
                fix,
            )
        elif over_warn:
            findings.add(
                WARN,
                f"{what} takes {value:.0f} ms, over {limits[over_warn[0]][0]:.0f} ms of the "
                f"{limits[over_warn[0]][1]:.0f} ms {'/'.join(over_warn)} hooks get ({why})",
                fix,
            )
    detail = (
        f"has-brain {floor_ms:.0f} ms (SessionEnd budget {limits['SessionEnd'][1]:.0f} ms), "
        f"prime {prime_ms:.0f} ms (SessionStart/UserPromptSubmit timeout "
        f"{min(limits['SessionStart'][1], limits['UserPromptSubmit'][1]):.0f} ms); median of {runs}"
        if floor_ms is not None and prime_ms is not None
        else ""
    )
    if findings.status != OK and detail:
        findings.details.append(detail)
    return findings.check(detail, **extra)
