"""The LoCoMo retrieval benchmark (Maharana et al., ACL 2024), run through the ordinary ``Brain``.

Protocol (``../shared/data/locomo/README.md``): each conversation gets a fresh brain with default
settings; every turn becomes one ``episode`` memory ``"<speaker>: <text>"`` (plus ``" [image: <caption>]"``)
with its ``dia_id`` in metadata, through the normal write path; each question goes through
``Brain.recall(question, limit=20)``. Evidence recall@k, hit@k and MRR are reported over all
categories, categories 1–4 and each category, for the full pipeline and for each lane alone.

The data's licence keeps it out of the repository: PATH is the zip or a folder of its JSON files.
"""

from __future__ import annotations

import functools
import json
import re
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cerebro import config
from cerebro.errors import InvalidInput, quote
from cerebro.evals.metrics import Tally

DEVELOPMENT = (26, 30, 41, 42, 43)  # tune only on these
HELD_OUT = (44, 47, 48, 49, 50)  # acceptance only
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
RUNS = ("pipeline", "bm25", "vector")
_DIA = re.compile(r"D\d+:\d+")
_FILE = re.compile(r"(\d+)\.json$")


@dataclass
class Conversation:
    number: int
    turns: list[tuple[str, str]]  # (dia_id, memory content)
    questions: list[tuple[str, set[str], int]]  # (question, evidence dia_ids, category)


def load(path: str | Path, numbers: tuple[int, ...] | None = None) -> list[Conversation]:
    """Read conversations from the LoCoMo zip or a folder of ``<n>.json`` files."""
    source = Path(path)
    if not source.exists():
        raise InvalidInput(f"no LoCoMo data at {source}")
    documents: dict[int, Any] = {}
    for name, read in _files(source):
        match = _FILE.search(name)
        if not match:
            continue
        number = int(match.group(1))
        if numbers is None or number in numbers:
            try:
                documents[number] = json.loads(read())
            except ValueError as exc:
                raise InvalidInput(f"{name} is not valid JSON: {exc}") from None
    missing = sorted(set(numbers or ()) - set(documents))
    if missing:
        raise InvalidInput(f"conversations not found in {source}: {', '.join(map(str, missing))}")
    if not documents:
        raise InvalidInput(f"no LoCoMo conversation files in {source}")
    return [_parsed(number, documents[number], source) for number in sorted(documents)]


def _parsed(number: int, document: object, source: Path) -> Conversation:
    """:func:`parse`, or a one-line error naming the conversation when its file is not LoCoMo's shape."""
    try:
        if not isinstance(document, dict):
            raise TypeError("not a JSON object")
        return parse(number, document)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        what = f"no {exc.args[0]!r} field" if isinstance(exc, KeyError) else str(exc)
        raise InvalidInput(f"{source}: conversation {number} is not in LoCoMo's shape ({what})") from None


def _files(source: Path) -> Iterator[tuple[str, Callable[[], bytes]]]:
    if source.is_dir():
        for file in sorted(source.rglob("*.json")):
            yield str(file), file.read_bytes
    else:
        try:
            archive = zipfile.ZipFile(source)
        except zipfile.BadZipFile:
            raise InvalidInput(f"{source} is neither a folder nor a zip file") from None
        for info in archive.infolist():
            if info.filename.endswith(".json"):
                yield info.filename, functools.partial(archive.read, info)


def parse(number: int, document: dict[str, Any]) -> Conversation:
    turns: list[tuple[str, str]] = []
    sessions = sorted(
        (int(key.split("_")[1]), value)
        for key, value in document.items()
        if re.fullmatch(r"session_\d+", key) and isinstance(value, list)
    )
    for _, session in sessions:
        for turn in session:
            content = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                content += f" [image: {turn['blip_caption']}]"
            turns.append((turn["dia_id"], content))
    questions = []
    for qa in document.get("qa", []):
        evidence = {m for item in qa.get("evidence", []) for m in _DIA.findall(str(item))}
        if evidence:  # a few questions have no (or only malformed) evidence: dropped, per the README
            questions.append((str(qa["question"]), evidence, int(qa.get("category", 0))))
    return Conversation(number, turns, questions)


@dataclass
class Report:
    conversations: list[int]
    tallies: dict[str, dict[str, Tally]] = field(default_factory=dict)  # run → slice → tally
    seconds: float = 0.0
    settings: dict[str, Any] = field(default_factory=dict)

    def tally(self, run: str, slice_name: str) -> Tally:
        return self.tallies.setdefault(run, {}).setdefault(slice_name, Tally())

    def to_dict(self) -> dict[str, Any]:
        return {
            "benchmark": "locomo",
            "conversations": self.conversations,
            "seconds": round(self.seconds, 1),
            "settings": self.settings,
            "runs": {
                run: {name: tally.means() for name, tally in slices.items()} for run, slices in self.tallies.items()
            },
        }


def _slices(category: int) -> list[str]:
    names = ["all"]
    if 1 <= category <= 4:
        names.append("categories 1-4")
    names.append(f"category {category} ({CATEGORIES.get(category, '?')})")
    return names


def run(
    conversations: list[Conversation],
    *,
    limit: int = 20,
    workdir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    configure: Callable[[Any], None] | None = None,
    store: str | None = None,
    embed_model: str | None = None,
) -> Report:
    """Evaluate every conversation in a fresh default brain. ``configure(brain)`` may change settings
    (used while tuning on the development half). ``store``: a team database's URL — each conversation is then a
    new project there (ADR 0030), so the same pipeline is measured on PostgreSQL. ``embed_model``: the local
    provider's other model (the float32 one of brains made before ADR 0041) instead of a new brain's."""
    import uuid

    from cerebro.api import Brain

    report = Report([c.number for c in conversations])
    started = time.monotonic()
    total = sum(len(c.questions) for c in conversations)
    done = 0
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        for conversation in conversations:
            path: str | Path = Path(tmp) / f"locomo-{conversation.number}.sqlite"
            project = f"locomo-{conversation.number}-{uuid.uuid4().hex[:8]}" if store else None
            if store:
                path = store
            Brain.init(path, team_project=project, embed_model=embed_model)
            with Brain.open(path, team_project=project) as brain:
                brain.on_warning = lambda message: None
                if configure is not None:
                    configure(brain)
                ids = brain.add_many(
                    [{"content": content, "metadata": {"dia_id": dia}} for dia, content in conversation.turns]
                )
                dia_of = {node_id: dia for node_id, (dia, _) in zip(ids, conversation.turns, strict=True)}
                for question, evidence, category in conversation.questions:
                    for run_name, lanes in (("pipeline", None), ("bm25", ("keyword",)), ("vector", ("vector",))):
                        result = brain.recall(question, limit=limit, lanes=lanes)
                        retrieved = [dia_of.get(item.node.id, "") for item in result.results]
                        for slice_name in _slices(category):
                            report.tally(run_name, slice_name).add(retrieved, evidence)
                    done += 1
                    if progress:
                        progress(done, total)
                report.settings = {
                    "embedding_model": brain.stats().embedding_model,
                    "config": {e.key: config.typed(e.key, e.value) for e in brain.config_list() if e.source == "brain"},
                    "limit": limit,
                }
    report.seconds = time.monotonic() - started
    return report


def parse_numbers(text: str | None) -> tuple[int, ...] | None:
    if not text:
        return None
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise InvalidInput(f"--conversations takes numbers separated by commas, got {quote(text)}") from None


def render_md(report: dict[str, Any]) -> str:
    lines = [
        f"# LoCoMo retrieval — conversations {', '.join(map(str, report['conversations']))}",
        f"{report['settings'].get('embedding_model', '')}, limit {report['settings'].get('limit')}, "
        f"{report['seconds']} s",
        "",
        "| run | slice | questions | R@5 | R@10 | R@20 | hit@5 | hit@10 | hit@20 | MRR |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run_name, slices in report["runs"].items():
        for slice_name, m in slices.items():
            if not m.get("questions"):
                continue
            lines.append(
                f"| {run_name} | {slice_name} | {m['questions']} | {m['recall@5']:.3f} | {m['recall@10']:.3f} | "
                f"{m['recall@20']:.3f} | {m['hit@5']:.3f} | {m['hit@10']:.3f} | {m['hit@20']:.3f} | {m['MRR']:.3f} |"
            )
    return "\n".join(lines)
