"""The hot path: ``recall --prime``, plain ``recall "query"`` and plain ``add "text"`` without Cyclopts.

Hooks and agents run these all day, where start-up time is the whole cost: Cyclopts (and the rich console it
brings) costs more than the prime itself. Only these exact shapes take the fast path — ``recall``, then either
``--prime`` or one query, optionally ``--limit/-l N`` and ``--explain`` (unquoted query words are joined with
spaces); ``add``, then one text and, before or after it, ``--type``, ``--subtype`` and ``--importance`` with values
the command takes (ADR 0028) — anything else (help, other flags, bad values) goes through Cyclopts as usual, so the
two parsers never disagree about an error (ADR 0009). The Cyclopts commands run the same functions (``run``,
``run_add``) with their other options filled in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the specs are plain dicts at run time: creating TypedDicts cost every command ~1.7 ms
    from typing import TypedDict

    from cerebro.values import Origin

    class _Required(TypedDict):
        prime: bool
        query: str | None
        limit: int | None
        explain: bool

    class RecallSpec(_Required, total=False):
        """What a recall asks for: the fast parser fills the first four; the Cyclopts command fills them all."""

        provenance_depth: int | None
        global_: bool
        team: bool
        threshold: float | None
        subtype: str | None
        as_of: str | None

    class _AddRequired(TypedDict):
        content: str
        type: str
        subtype: str | None
        importance: float

    class AddSpec(_AddRequired, total=False):
        """What an add asks for: the fast parser fills the first four; the Cyclopts command fills them all."""

        metadata: str | dict[str, Any] | None
        share: bool
        provenance_root: bool
        origin: Origin
        anchors: list[str] | None
        anchor_ref: str | None
        beads_id: str | None
        allow_secret: bool


def _other_brain(spec: RecallSpec) -> Any:  # noqa: ANN401 - a Brain or None
    """The brain ``--global`` or ``--team`` merges in, opened; None without either."""
    from cerebro.api import Brain

    if spec.get("team"):
        from cerebro.cli.context import open_team_brain

        return open_team_brain("--team")
    if spec.get("global_"):
        from cerebro.brain.promotion import global_brain_path

        return Brain.open(global_brain_path())
    return None


def parse(tokens: Sequence[str]) -> RecallSpec | None:
    if not tokens or tokens[0] != "recall":
        return None
    spec: RecallSpec = {"prime": False, "query": None, "limit": None, "explain": False}
    rest = list(tokens[1:])
    seen: set[str] = set()  # a flag given twice is Cyclopts' error to report ("specified multiple times")
    i = 0
    while i < len(rest):
        token = rest[i]
        flag = "--limit" if token == "-l" else token  # noqa: S105 - a command-line token, not a password
        if flag in seen:
            return None
        if token == "--prime":  # noqa: S105 - a command-line token, not a password
            spec["prime"] = True
        elif token == "--explain":  # noqa: S105 - a command-line token, not a password
            spec["explain"] = True
        elif token in ("--limit", "-l") and i + 1 < len(rest) and re.fullmatch(r"[0-9]{1,6}", rest[i + 1]):
            spec["limit"] = int(rest[i + 1])
            i += 1
        elif token.startswith("-"):
            return None
        elif spec["query"] is None:
            spec["query"] = token
        else:
            spec["query"] = f"{spec['query']} {token}"  # unquoted words: one query, as upstream joins them
        if token.startswith("-"):
            seen.add(flag)
        i += 1
    query = spec["query"]
    # Neither or both, as the command judges them (commands/recall.py): a blank query is no query, but --prime with
    # any query text at all, blank included, is both — let the full parser say what is wrong.
    if spec["limit"] == 0 or (query if spec["prime"] else not (query and query.strip())):
        return None
    if spec["prime"] and spec["explain"]:
        return None
    return spec


_ADD_OPTIONS = ("--type", "--subtype", "--importance")
_UNIT_INTERVAL = r"(?:0|1)?(?:\.[0-9]{1,9})?"  # what float() reads as a number in [0, 1] here (compiled when used)


def parse_add(tokens: Sequence[str]) -> AddSpec | None:
    if not tokens or tokens[0] != "add":
        return None
    from cerebro.values import NODE_TYPES  # the values Cyclopts takes for --type (values.NodeType)

    content: str | None = None
    given: dict[str, str] = {}
    rest = list(tokens[1:])
    i = 0
    while i < len(rest):
        token = rest[i]
        if token in _ADD_OPTIONS:
            if token in given or i + 1 == len(rest) or rest[i + 1].startswith("-"):
                return None
            given[token] = rest[i + 1]
            i += 2
            continue
        if token.startswith("-") or content is not None:  # '-' reads stdin; other dashes are Cyclopts' options
            return None
        content = token
        i += 1
    node_type = given.get("--type", "episode")
    importance = given.get("--importance", "0.5")
    if content is None or node_type not in NODE_TYPES or not importance or not re.fullmatch(_UNIT_INTERVAL, importance):
        return None
    number = float(importance)
    if number > 1:
        return None  # "1.5": the library's error, through Cyclopts like every other refusal
    return {"content": content, "type": node_type, "subtype": given.get("--subtype"), "importance": number}


def insert_importance(value: float) -> float:
    """Upstream's CLI stores ``--importance 0`` as the default 0.5 (a memory at 0 would be evicted by the next
    gc). Negative values stay an error. The library keeps exact values (ADR 0006)."""
    return 0.5 if value == 0 else value


def _embeds_one_text() -> None:
    """A recall or an add embeds one text and the process exits: the local model is loaded for the quickest
    start (ADR 0028). Set here, not at start-up: the hooks and `recall --prime` embed nothing."""
    from cerebro.embed.local import prefer_fast_start

    prefer_fast_start()


def run_add(spec: AddSpec) -> None:
    """Store a memory as ``cerebro add`` does (shared by the fast path and the Cyclopts command) and print its id: the
    brain's modules on a handle, the call ``Brain.add`` makes, without the facade's imports (ADR 0053)."""
    from cerebro.brain import memories
    from cerebro.cli.context import open_handle
    from cerebro.cli.output import emit
    from cerebro.values import Origin

    _embeds_one_text()
    if spec.get("share"):  # marked for `team push` (ADR 0031): the metadata's own "shared"
        from cerebro.brain.validate import parse_metadata

        spec = {**spec, "metadata": {**(parse_metadata(spec.get("metadata")) or {}), "shared": True}}
    extra: dict[str, Any] = {
        key: spec[key]
        for key in ("metadata", "provenance_root", "anchors", "anchor_ref", "beads_id", "allow_secret")
        if key in spec
    }
    h = open_handle()
    try:
        node_id = memories.add(
            h,
            spec["content"],
            type=spec["type"],
            subtype=spec["subtype"],
            importance=insert_importance(spec["importance"]),
            origin=spec.get("origin") or Origin.from_environment("cli"),
            **extra,
        )
    finally:
        h.close()
    emit({"id": node_id}, node_id)


def _prime(spec: RecallSpec) -> None:
    """``recall --prime``: the brain's modules on a handle, not the ``Brain`` facade (its imports, ~6 ms)."""
    from cerebro.brain import retrieval
    from cerebro.cli.context import open_handle
    from cerebro.cli.output import emit
    from cerebro.cli.render import render_scored

    h = open_handle()
    try:
        from cerebro.cli_state import state

        # The statuses only JSON shows (a few reads the session-start hook's budget does without in md).
        primed = retrieval.prime(h, limit=spec["limit"], statuses=state.format != "md")
        retrieval.touch_surfaced(h, [p.node.id for p in primed])
        emit(
            {"mode": "prime", "results": [p.to_dict() for p in primed]},
            lambda: render_scored(primed, explain=False, empty="No memories found."),
            items="results",
        )
    finally:
        h.close()


def _recall_arguments(spec: RecallSpec) -> dict[str, Any]:
    """The query and options every recall of the command takes, whichever way it runs."""
    from cerebro.values import UNSET

    subtype = spec.get("subtype")
    return {
        "query": str(spec["query"]),
        "limit": spec["limit"] or 20,
        "threshold": spec.get("threshold"),
        "subtype": UNSET if subtype is None else subtype,
        "as_of": spec.get("as_of"),
    }


def _recall_on_handle(spec: RecallSpec) -> Any:  # noqa: ANN401 - a RecallResult
    """One brain, no provenance: the brain's modules on a handle, not the ``Brain`` facade (its imports, ~8 ms of a
    one-shot recall) — the calls ``Brain.recall``, ``touch_accessed`` and ``count_expansion_skip`` make."""
    from cerebro.brain import retrieval
    from cerebro.cli.context import open_handle
    from cerebro.logs import warn

    h = open_handle()
    try:
        result = retrieval.recall(h, **_recall_arguments(spec))
        for notice in result.notices:
            warn(notice)
        retrieval.touch_accessed(h, [r.node.id for r in result.results])
        if result.expansion == "gated":
            retrieval.count_expansion_skip(h)
        return result
    finally:
        h.close()


def _recall_with_brain(spec: RecallSpec) -> tuple[Any, Any]:
    """``--global`` or ``--team`` (a second brain merged in) or ``--provenance-depth``: through the ``Brain``."""
    from cerebro.cli.context import open_brain
    from cerebro.logs import warn

    with open_brain() as brain:
        other = _other_brain(spec)  # --global or --team: the second brain, opened for the whole call
        try:
            if other is None:
                search: Any = brain.recall
            elif spec.get("team"):
                search = lambda query, **kw: brain.recall_with_team(other, query, **kw)  # noqa: E731
            else:
                search = brain.recall_with_global
            result = search(**_recall_arguments(spec))
            for notice in result.notices:
                warn(notice)
            brain.touch_accessed([r.node.id for r in result.results if r.store in (None, "project")])
            if other is not None:
                other.touch_accessed([r.node.id for r in result.results if r.store not in (None, "project")])
            if result.expansion == "gated":
                brain.count_expansion_skip()
            depth = spec.get("provenance_depth")
            chains = None
            if depth is not None:  # each result's sources, walked in the brain it came from
                chains = {
                    r.node.id: (
                        other if r.store not in (None, "project") and other is not None else brain
                    ).walk_provenance(r.node.id, depth=depth)
                    for r in result.results
                }
        finally:
            if other is not None:
                other.close()
    return result, chains


def run(spec: RecallSpec) -> None:
    """Run recall as the CLI does (shared by the fast path and the Cyclopts command): the library call,
    then the best-effort bookkeeping (access touches, last_surfaced, the gate's skip counter)."""
    if spec["prime"]:
        _prime(spec)
        return
    from cerebro.cli.output import emit
    from cerebro.cli.render import render_scored

    _embeds_one_text()
    if spec.get("team") or spec.get("global_") or spec.get("provenance_depth") is not None:
        result, chains = _recall_with_brain(spec)
    else:
        result, chains = _recall_on_handle(spec), None
    explain = bool(spec["explain"])
    data = result.to_dict(explain=explain)
    if chains is not None:
        for item in data["results"]:
            item["provenance"] = [{"depth": d, **n.to_dict()} for n, d in chains[item["id"]][1:]]

    def md() -> str:
        from cerebro.cli.render import render_provenance

        suffixes = {node_id: render_provenance(chain) for node_id, chain in chains.items()} if chains else None
        return render_scored(
            result.results,
            explain=explain,
            empty="No relevant memories found.",
            expansion=result.expansion,
            suffixes=suffixes,
        )

    emit(data, md, items="results")
