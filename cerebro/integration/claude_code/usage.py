"""``cerebro usage``: when to use which command, and what it promises — for agents and CLAUDE.md.

Every command in ``cerebro.cli.app.COMMANDS`` has exactly one entry here (a test enforces it), so the map
cannot go stale as commands are added.
"""

from __future__ import annotations

BEGIN = "<!-- cerebro:capabilities:begin -->"
END = "<!-- cerebro:capabilities:end -->"

# command: (situation, invocation, contract)
USAGE: dict[str, tuple[str, str, str]] = {
    "init": (
        "A project has no brain yet",
        "cerebro init",
        "creates the brain (idempotent); --global for the shared one",
    ),
    "add": (
        "You learned something worth keeping",
        'cerebro add --type concept --importance 0.8 "…"',
        "prints the new id",
    ),
    "get": (
        "You need one memory in full, with its links",
        "cerebro get ID [--with-provenance]",
        "node, edges, statuses",
    ),
    "update": (
        "A memory is slightly wrong or incomplete",
        'cerebro update ID --content "…"',
        "re-indexed and re-embedded",
    ),
    "inbox": (
        "You are unsure it is true or worth keeping",
        'cerebro inbox add --type concept "…"',
        "quarantined (never recalled, listed or exported) until inbox approve ID, or inbox discard ID",
    ),
    "list": ("You want to browse by type, status or subtype", "cerebro list --type concept", "newest first"),
    "team": (
        "What you learned should reach the rest of the team, or theirs you",
        "cerebro team push · cerebro team pull",
        "shares memories marked shared with the team brain; a later version wins",
    ),
    "recall": (
        "Before starting a task, or when stuck",
        'cerebro recall "question" [--explain]',
        "best memories first; counts an access",
    ),
    "search": ("You want meaning-only matches", 'cerebro search "…"', "vector lane alone; needs embeddings"),
    "embed": ("Memories were stored while embeddings were down", "cerebro embed --pending", "backfills vectors"),
    "edge": ("Two memories are related", "cerebro edge SRC TGT supports", "typed, directed; re-add updates"),
    "relation": ("You use a new kind of link", "cerebro relation add NAME", "advisory registry"),
    "reinforce": ("A memory proved useful again", "cerebro reinforce ID", "raises its standing"),
    "supersede": ("A fact changed", 'cerebro supersede OLD_ID "new fact"', "old one kept as history, linked"),
    "consolidate": (
        "Several episodes add up to one lesson",
        "cerebro consolidate --into CONCEPT_ID EP1 EP2",
        "derived_from provenance; atomic",
    ),
    "mark-consolidated": ("Episodes are absorbed elsewhere", "cerebro mark-consolidated EP…", "status only"),
    "outcome": ("You acted on a memory and saw the result", "cerebro outcome ID --success|--failure", "feeds ranking"),
    "forget": (
        "Something must go (wrong, secret, obsolete)",
        'cerebro forget --subject "…" --apply',
        "dry run unless --apply",
    ),
    "anchors": (
        "Memories about code may be out of date",
        "cerebro anchors --stale",
        "anchored memories whose code changed or is gone: re-verify, then supersede or forget",
    ),
    "secrets": (
        "A memory may hold a key, token or password in clear",
        "cerebro secrets scan",
        "ids and kinds only; secrets redact replaces them (backup first)",
    ),
    "promote": (
        "A lesson holds in every project, or the whole team should know it",
        "cerebro promote ID [--team]",
        "copied to the global brain; --team shares it with the team brain",
    ),
    "gc": ("The brain is cluttered with stale episodes", "cerebro gc --dry-run", "archives decayed memories"),
    "stats": ("You want the brain's health", "cerebro stats", "counts, model, schema"),
    "brains": (
        "A project moved, or you wonder which brains exist",
        "cerebro brains",
        "every brain and its project; relink a moved one",
    ),
    "eval": ("You changed retrieval settings", "cerebro eval --queries Q --ground-truth G", "recall@k and MRR"),
    "export": (
        "You move or share a brain",
        "cerebro export --format jsonl -o brain.jsonl",
        "json, jsonl, sql or sqlite",
    ),
    "import": (
        "You bring memories in",
        "cerebro import FILE [--on-conflict replace]",
        "validated first; one transaction",
    ),
    "backup": ("Before something risky", "cerebro backup", "consistent copy under backups/"),
    "reembed": ("You switch embedding models", "cerebro reembed --provider ollama", "resumable; recall keeps working"),
    "migrate": (
        "Brains were keyed through symlinks",
        "cerebro migrate --realpath-hashes",
        "rename or merge, with backups",
    ),
    "config": ("You tune the brain", "cerebro config list", "per-brain settings"),
    "hook": (
        "Claude Code calls it for you",
        "cerebro hook prime --event sessionstart",
        "once per session; never fails a session",
    ),
    "stop-guard": (
        "The agent stops early (opt-in Stop hook)",
        "cerebro stop-guard",
        "off until config stop_guard_enabled true; one JSON line",
    ),
    "ingest": ("You want session metrics up to date", "cerebro ingest", "idempotent; bad lines counted, not fatal"),
    "dashboard": (
        "You want to watch how the agent works",
        "cerebro dashboard",
        "live view of session metrics; q quits",
    ),
    "usage": ("You forgot which command fits", "cerebro usage", "this map"),
    "doctor": (
        "Memory seems not to work (no prime, no hooks, errors)",
        "cerebro doctor",
        "checks PATH, hooks, latency, brain, embedder, modes, metrics; a fix per problem; writes nothing",
    ),
    "mcp": (
        "An agent other than Claude Code (or an MCP client) needs this memory",
        "cerebro mcp",
        "an MCP server on stdio: remember, recall, get, list and more as tools; the prime as a prompt",
    ),
    "completion": (
        "You want tab completion in your shell",
        "cerebro completion --install",
        "bash, zsh or fish; prints the script unless --install",
    ),
}


# The map's sections, in order (upstream's layout), and the commands each holds.
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Remember (write)", ("add", "inbox", "update", "supersede", "edge", "relation")),
    ("Retrieve (read)", ("recall", "search", "get", "list")),
    ("Feedback (close the loop — do this after acting on a recall)", ("outcome", "reinforce")),
    (
        "Distill & maintain",
        ("consolidate", "mark-consolidated", "forget", "anchors", "secrets", "gc", "embed", "eval", "stats"),
    ),
    ("Share & lifecycle", ("promote", "team", "export", "import", "backup", "reembed", "migrate")),
    (
        "Operator/infra (rarely agent-invoked)",
        (
            "init",
            "config",
            "brains",
            "hook",
            "stop-guard",
            "ingest",
            "dashboard",
            "doctor",
            "mcp",
            "completion",
            "usage",
        ),
    ),
)
INTRO = (
    'Always pass `-p "$CLAUDE_PROJECT_DIR"`; add `--format json` for structured output; '
    "`cerebro usage` or `cerebro <command> --help` for detail."
)


def render() -> str:
    """``- situation → `command` — contract`` bullets under each section's bold title."""
    lines = [INTRO]
    for title, commands in SECTIONS:
        lines += ["", f"**{title}**"]
        for name in commands:
            situation, invocation, contract = USAGE[name]
            lines.append(f"- {situation} → `{invocation}` — {contract}")
    return "\n".join(lines)


def claudemd_block() -> str:
    return f"{BEGIN}\n{render()}\n{END}"
