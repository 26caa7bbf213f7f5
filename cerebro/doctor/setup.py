"""Checks 1–2: the `cerebro` the hooks run, and how Claude Code is wired for this project."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cerebro.doctor.base import (
    FAIL,
    OK,
    WARN,
    Check,
    _cmd,
    _edit,
    _Findings,
    _flat,
    _q,
    _reads,
    _which_cerebro,
)

# --------------------------------------------------------------------------- 1. cli-on-path


def _source() -> str:
    """What to install cerebro from: this checkout when running from one, else the package index."""
    import cerebro

    checkout = Path(cerebro.__file__).resolve().parents[1]
    return _q(str(checkout)) if (checkout / "pyproject.toml").is_file() else "cerebro-memory"


def _install_fix() -> tuple[str, str]:
    """(the command that puts this cerebro on PATH, a note on it): this interpreter's script folder when it
    holds one, else an install from this checkout (or the package index)."""
    import sys

    source = _source()
    install = f"uv tool install --reinstall {source}"
    scripts = Path(sys.executable).parent
    if (scripts / "cerebro").is_file():
        note = (
            f"this cerebro is {scripts / 'cerebro'}: put the fix in your shell profile (Claude Code inherits "
            f"its PATH), or install it for every shell: {install}"
        )
        return f'export PATH={_q(str(scripts))}:"$PATH"', note
    return install, f"or: pip install {source}"


def check_cli_on_path() -> Check:
    """``cerebro`` resolves on this PATH (the one hooks inherit) and is this version of cerebro."""
    import subprocess

    from cerebro import __version__

    name = "cli-on-path"
    fix, note = _install_fix()
    found = _which_cerebro()
    if found is None:
        return Check(
            name,
            FAIL,
            f"no cerebro on PATH, so every hook is skipped; {note}",
            fix,
            {"path": None, "version": None, "this_version": __version__},
        )
    try:
        ran = subprocess.run(  # noqa: S603 - a fixed program with an argument list, no shell
            [found, "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check(
            name,
            FAIL,
            f"{found} does not run ({_flat(str(exc))}); {note}",
            fix,
            {"path": found, "version": None, "this_version": __version__},
        )
    version = ran.stdout.strip().splitlines()[-1].strip() if ran.stdout.strip() else ""
    extra = {"path": found, "version": version or None, "this_version": __version__}
    if ran.returncode != 0 or not version:
        why = _flat(ran.stderr)[:200] or f"exit {ran.returncode}"
        return Check(name, FAIL, f"{found} --version failed ({why}); {note}", fix, extra)
    if version != __version__:
        return Check(
            name,
            WARN,
            f"{found} is cerebro {version}, not this cerebro {__version__}, and hooks run it; {note}",
            fix,
            extra,
        )
    return Check(name, OK, f"{found} (cerebro {version})", None, extra)


# --------------------------------------------------------------------------- 2. hooks


def _handlers(settings: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """(event, matcher, command) of every handler in a settings object's ``hooks``."""
    hooks = settings.get("hooks")
    found: list[tuple[str, str, Any]] = []
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            continue
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            for handler in group["hooks"]:
                if isinstance(handler, dict):
                    found.append((str(event), str(group.get("matcher") or ""), handler.get("command")))
    return found


def _settings_label(project: Path, path: Path) -> str:
    try:
        return str(path.relative_to(project))
    except ValueError:
        return "~/" + str(path.relative_to(Path.home())) if Path.home() in path.parents else str(path)


def check_hooks(project: Path) -> Check:
    """Which routes wire cerebro into Claude Code for this project (init's hooks, the plugin), and whether
    those hooks are current, guarded, complete and not doubled."""
    import json

    from cerebro.integration.claude_code import scaffold, templates

    findings = _Findings("hooks")
    files = scaffold.claude_settings_files(project)
    user_file, project_file, local_file = files[0], files[1], files[2]
    force_fix = {
        project_file: _cmd(project, "cerebro init --force"),
        local_file: _cmd(project, "cerebro init --force --local"),
    }
    current = {(event, templates.init_command(command)) for event, _, command in templates.HOOKS}
    expected = {(event, matcher, templates.init_command(command)) for event, matcher, command in templates.HOOKS}
    wired: dict[Path, list[tuple[str, str, str]]] = {}
    for path in files:
        label = _settings_label(project, path)
        if not path.exists():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            findings.add(
                FAIL,
                f"{label} is not valid JSON ({_flat(str(exc))}): Claude Code cannot read it; repair it by hand",
                _edit(path),
            )
            continue
        if not isinstance(data, dict):
            findings.add(FAIL, f"{label} does not hold a JSON object; repair it by hand", _edit(path))
            continue
        hooks = data.get("hooks", {})
        if not isinstance(hooks, dict) or any(not isinstance(v, list) for v in hooks.values()):
            findings.add(FAIL, f'{label}: "hooks" is not an object of event lists; repair it by hand', _edit(path))
            continue
        ours = [(e, m, c) for e, m, c in _handlers(data) if templates.is_cerebro_hook(c)]
        if ours:
            wired[path] = ours

    plugin = scaffold.plugin_enabled(project)
    skills_dir = scaffold.Targets(project).skills
    init_skills = [
        name for name in templates.SKILLS if skills_dir is not None and (skills_dir / name / "SKILL.md").is_file()
    ]
    routes = [f"init ({_settings_label(project, p)})" for p in wired] + ([f"plugin ({plugin})"] if plugin else [])
    extra: dict[str, Any] = {
        "routes": routes,
        "plugin": plugin,
        "init_skills": init_skills,
        "stale": [],
        "unguarded": [],
        "missing": [],
    }

    for path, handlers in wired.items():
        label = _settings_label(project, path)
        stale = sorted({e for e, _, c in handlers if (e, c) not in current})
        unguarded = sorted(
            {
                e
                for e, _, c in handlers
                if "command -v cerebro" not in str(c) and not str(c).startswith(templates.PLUGIN_GATE)
            }
        )
        extra["stale"] += [f"{label}: {e}" for e in stale]
        extra["unguarded"] += [f"{label}: {e}" for e in unguarded]
        problems = ([f"older or upstream cerebro hooks ({', '.join(stale)})"] if stale else []) + (
            [f"no `command -v cerebro` guard ({', '.join(unguarded)}): errors for a teammate without cerebro"]
            if unguarded
            else []
        )
        if path == user_file:
            findings.add(
                WARN,
                f"{label} wires cerebro hooks into every project ({'; '.join(problems) or 'current'}); "
                f"take them out by hand, init and the plugin wire projects",
                _edit(path),
            )
        elif problems:
            findings.add(WARN, f"{label}: {'; '.join(problems)}", force_fix[path])

    if plugin:
        project_wired = [p for p in wired if p != user_file]
        if project_wired:
            where = ", ".join(_settings_label(project, p) for p in project_wired)
            findings.add(
                WARN,
                f"both the {plugin} plugin and init's hooks ({where}) wire this project",
                "; ".join(force_fix[p] for p in project_wired),
            )
        folder = skills_dir or Path()  # init_skills is empty without a skills folder
        unchanged = [n for n in init_skills if _reads(folder / n / "SKILL.md") == templates.skill_text(n)]
        edited = [n for n in init_skills if n not in unchanged]
        if unchanged:
            findings.add(
                WARN,
                f"skills doubled: .claude/skills/{{{','.join(unchanged)}}} beside the plugin's /cerebro:* skills",
                _cmd(project, "cerebro init --force"),
            )
        if edited:  # init --force keeps a skill whose text is not cerebro's: it may be the user's edit
            findings.add(
                WARN,
                f"skills doubled: .claude/skills/{{{','.join(edited)}}} beside the plugin's /cerebro:* skills; "
                "their text differs from this cerebro's (an older cerebro's, or edited), so init keeps them: "
                "remove them unless you want both",
                "rm " + " ".join(_q(folder / n / "SKILL.md") for n in edited),
            )
    elif wired:
        found = {(e, m, c) for handlers in wired.values() for e, m, c in handlers}
        missing = sorted({f"{e}{f' ({m})' if m else ''}" for e, m, c in expected - found})
        if missing:
            extra["missing"] = missing
            target = next((p for p in (project_file, local_file) if p in wired), project_file)
            findings.add(
                WARN,
                f"cerebro hooks missing for {', '.join(missing)}",
                force_fix.get(target, _cmd(project, "cerebro init --force")),
            )
    elif findings.status != FAIL:
        findings.add(
            WARN,
            "no Claude Code hooks run cerebro for this project (neither init's nor the plugin)",
            _cmd(project, "cerebro init"),
        )
    ok_detail = ", ".join(routes) + (": current" if wired and not plugin else "")
    return findings.check(ok_detail, **extra)
