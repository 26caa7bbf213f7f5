"""eval (a brain's own query set) and eval locomo (the LoCoMo benchmark)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

from cyclopts import App, Parameter

from cerebro.cli.common import open_brain
from cerebro.cli.output import emit
from cerebro.errors import InvalidInput
from cerebro.logs import warn

app = App(
    name="eval",
    help="""Measure recall quality: your own queries, or the LoCoMo benchmark.

    Examples
      cerebro eval --queries queries.jsonl --ground-truth truth.jsonl
      cerebro eval --queries q.jsonl --ground-truth truth.jsonl --out base.json
      cerebro eval locomo locomo10.zip --conversations 1,2
    """,
)


def _writable(out: Path | None) -> None:
    """Checked before the run: a report that cannot be written is said at once, not after every query has run."""
    if out is None:
        return
    if out.is_dir():
        raise InvalidInput(f"--out {out} is a folder: name a file")
    folder = next((p for p in out.absolute().parents if p.exists()), None)
    if folder is None or not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise InvalidInput(f"--out {out}: cannot write in {folder}")


def _write(out: Path | None, data: dict) -> None:
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


@app.default
def eval_queries(
    *,
    queries: Annotated[Path, Parameter(help="JSON lines {query_id, query}")],
    ground_truth: Annotated[Path, Parameter(help="JSON lines {query_id, relevant_node_ids}")],
    limit: Annotated[int, Parameter(help="Results per query")] = 20,
    threshold: Annotated[
        float | None, Parameter(help="Vector-lane threshold (default: config recall_threshold)")
    ] = None,
    out: Annotated[Path | None, Parameter(help="Also write the baseline JSON here")] = None,
) -> None:
    """Macro recall@5/10/20 and MRR of recall on the current brain."""
    from cerebro.evals import queries as query_eval

    _writable(out)
    pairs = query_eval.load(queries, ground_truth)
    with open_brain() as brain:
        report = query_eval.run(brain, pairs, limit=limit, threshold=threshold)
    for query_id, ids in report["skipped_ids"].items():
        warn(f"{query_id}: {len(ids)} ground-truth id(s) not active in this brain, skipped")
    _write(out, report)
    m = report["metrics"]
    emit(
        report,
        f"{report['params']['queries']} queries on {report['brain']['active_nodes']} memories: "
        f"recall@5 {m['recall@5']:.4f}  recall@10 {m['recall@10']:.4f}  recall@20 {m['recall@20']:.4f}  "
        f"MRR {m['MRR']:.4f}",
    )


@app.command(name="locomo")
def eval_locomo(
    path: Annotated[Path, Parameter(help="locomo10.zip, or a folder of its <n>.json files")],
    *,
    conversations: Annotated[str | None, Parameter(help="Comma-separated conversation numbers (default: all)")] = None,
    limit: Annotated[int, Parameter(help="Results per question")] = 20,
    out: Annotated[Path | None, Parameter(help="Also write the JSON report here")] = None,
    store: Annotated[
        str | None,
        Parameter(help="Measure on a team database instead (postgresql+psycopg://…): a project per conversation"),
    ] = None,
    embed_model: Annotated[
        str | None, Parameter(help="The local provider's model for the brains (default: a new brain's)")
    ] = None,
) -> None:
    """LoCoMo evidence recall@k, hit@k and MRR: full pipeline, BM25 alone, vectors alone.

    Examples
      cerebro eval locomo locomo10.zip
      cerebro eval locomo locomo10.zip --conversations 1,2 --out locomo.json
      cerebro eval locomo locomo10.zip --embed-model all-MiniLM-L6-v2-onnx-int8
    """
    from cerebro.cli.progress import reporter
    from cerebro.evals import locomo

    _writable(out)
    data = locomo.load(path, locomo.parse_numbers(conversations))
    if embed_model is not None:  # checked before the first brain: a bad name is one line, not a half-run
        from cerebro.embed.registry import resolve_settings

        resolve_settings("local", embed_model, None)
    update, finish = reporter("questions")
    report = locomo.run(data, limit=limit, progress=update, store=store, embed_model=embed_model).to_dict()
    finish()
    _write(out, report)
    emit(report, lambda: locomo.render_md(report))
