"""How fast secret redaction reads text: ordinary memories, and the hostile inputs of
``tests/unit/test_redaction.py::test_hostile_text_is_read_in_one_pass`` (which asserts only that they end).

    .venv/bin/python bench/redaction_speed.py [--runs 5]

Prints, per input, its length and the CPU time of one ``redact`` (the best of RUNS) and the rate in MB/s. A rate that
falls as the input grows is backtracking: every pattern should read the text in one pass.
"""

from __future__ import annotations

import argparse
import time

from cerebro.redaction import redact

INPUTS = {
    "ordinary memory (~300 B)": "Decided to keep the retry budget at three attempts; the flaky test in "
    "tests/test_sync.py fails when the mock server answers late. See HS-042 and the runbook in docs/ops.md. " * 2,
    "ordinary text (200 kB)": "The deploy script reads its settings from the environment, then runs the migrations. "
    * 2_400,
    "'password ' × 20,000": "password " * 20_000,
    "'=' × 200,000": "=" * 200_000,
    "PEM headers × 2,000": "-----BEGIN RSA PRIVATE KEY-----\n" * 2_000,
    "'a://b:c@' × 20,000": "a://b:c@" * 20_000,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    redact("warm up: compiles the shapes a text's anchors name")
    print("| input | length | CPU (best of runs) | MB/s |")
    print("|---|---|---|---|")
    for name, text in INPUTS.items():
        best = float("inf")
        for _ in range(args.runs):
            started = time.process_time()
            redact(text)
            best = min(best, time.process_time() - started)
        rate = len(text) / best / 1e6 if best > 0 else float("inf")
        print(f"| {name} | {len(text):,} | {best * 1000:.2f} ms | {rate:.1f} |")


if __name__ == "__main__":
    main()
