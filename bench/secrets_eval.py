"""Precision and recall of secret redaction on the labelled sets in fixtures/secrets/ (docs/privacy.md).

    .venv/bin/python bench/secrets_eval.py            # every set: recall, false positives, speed
    .venv/bin/python bench/secrets_eval.py --misses   # also each missed secret and each changed look-alike

A secret counts as caught only when every one of its values is gone from the redacted text; a look-alike counts as
a false positive when its text changed at all. Speed is the time to redact every line of the set once.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cerebro.redaction import redact

SETS = Path(__file__).resolve().parents[1] / "fixtures" / "secrets"


def main() -> None:
    show = "--misses" in sys.argv
    for path in sorted([SETS / "labelled.jsonl", *SETS.glob("heldout*/heldout.jsonl")]):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        started = time.perf_counter()
        redacted = [redact(row["text"])[0] for row in rows]
        elapsed = time.perf_counter() - started
        secrets = [(r, out) for r, out in zip(rows, redacted, strict=True) if r["label"] == "secret"]
        benign = [(r, out) for r, out in zip(rows, redacted, strict=True) if r["label"] != "secret"]
        missed = [r for r, out in secrets if any(v in out for v in r["values"])]
        changed = [r for r, out in benign if out != r["text"]]
        kinds = len({r["kind"] for r, _ in secrets})
        print(
            f"{path.relative_to(SETS)}: {len(secrets)} secrets ({kinds} kinds), {len(benign)} look-alikes | "
            f"recall {1 - len(missed) / len(secrets):.3f} | false positives {len(changed) / len(benign):.3f} "
            f"({len(changed)}) | {1000 * elapsed / len(rows):.2f} ms a line"
        )
        if show:
            for r in missed:
                print(f"  missed {r['id']} [{r['kind']}] {' '.join(r['text'].split())[:140]}")
            for r in changed:
                print(f"  changed {r['id']} [{r['kind']}] {' '.join(r['text'].split())[:140]}")


if __name__ == "__main__":
    main()
