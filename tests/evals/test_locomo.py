"""cerebro eval locomo on a synthetic conversation in LoCoMo's format (the real data is not shipped)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from cerebro.errors import InvalidInput
from cerebro.evals import locomo
from tests.conftest import FIXTURES

DATA = FIXTURES / "locomo"


def test_parse_turns_captions_and_evidence_wrinkles() -> None:
    (conversation,) = locomo.load(DATA, (901,))
    assert conversation.turns[0] == ("D1:1", "Ada: Morning Brook! I finally adopted a greyhound called Pixel.")
    assert conversation.turns[3] == (
        "D1:4",
        "Brook: Here is the boat after the fiberglass patch. [image: a small white sailboat on a trailer]",
    )
    assert [t[0] for t in conversation.turns] == ["D1:1", "D1:2", "D1:3", "D1:4", "D2:1", "D2:2", "D2:3", "D2:4"]
    evidence = {q: ev for q, ev, _ in conversation.questions}
    assert evidence["What did Brook repair with fiberglass?"] == {"D1:2", "D1:4"}
    # No evidence, or only malformed evidence: dropped.
    assert "What does nobody remember?" not in evidence
    assert "Malformed evidence only" not in evidence
    assert len(conversation.questions) == 6


def test_zip_and_folder_read_the_same(tmp_path: Path) -> None:
    archive = tmp_path / "locomo10.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(DATA / "901.json", "data/multimodal_dialog/locomo10_v2/901.json")
    assert locomo.load(archive, (901,))[0].questions == locomo.load(DATA, (901,))[0].questions


@pytest.mark.parametrize(
    ("path", "numbers", "message"),
    [("missing", None, "no LoCoMo data"), (".", (77,), "conversations not found")],
)
def test_bad_paths_and_numbers(path: str, numbers, message: str) -> None:
    target = DATA if path == "." else DATA / path
    with pytest.raises(InvalidInput, match=message):
        locomo.load(target, numbers)


@pytest.mark.parametrize(
    ("document", "what"),
    [
        ([], "not a JSON object"),
        ({"session_1": [{"dia_id": "D1:1", "text": "hi"}]}, "no 'speaker' field"),
        ({"session_1": [], "qa": [{"question": "q", "evidence": ["D1:1"], "category": "x"}]}, "invalid literal"),
    ],
)
def test_a_conversation_not_in_locomos_shape_is_one_line_naming_it(tmp_path: Path, document, what: str) -> None:
    """An AttributeError, a KeyError or a ValueError came out as an internal error (a review)."""
    (tmp_path / "7.json").write_text(json.dumps(document))
    with pytest.raises(InvalidInput, match=f"conversation 7 is not in LoCoMo's shape .*{what}"):
        locomo.load(tmp_path, (7,))


def test_cli_runs_the_protocol_and_reports_every_slice(cli, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = cli("eval", "locomo", str(DATA), "--conversations", "901", "--out", str(out), "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = result.json()
    assert json.loads(out.read_text()) == report
    assert report["conversations"] == [901]
    assert set(report["runs"]) == {"pipeline", "bm25", "vector"}
    pipeline = report["runs"]["pipeline"]
    assert pipeline["all"]["questions"] == 6
    assert pipeline["categories 1-4"]["questions"] == 5
    assert pipeline["category 5 (adversarial)"]["questions"] == 1
    # Each question names words only its evidence holds: keyword recall finds every one in the top 5.
    assert report["runs"]["bm25"]["all"]["hit@5"] == 1.0
    assert pipeline["all"]["recall@5"] == 1.0
    assert pipeline["all"]["recall@20"] == 1.0
    assert 0.0 < pipeline["all"]["MRR"] <= 1.0
    assert report["settings"]["embedding_model"] == "all-MiniLM-L6-v2-onnx-int8-dq7"


def test_cli_markdown_table(cli) -> None:
    result = cli("eval", "locomo", str(DATA), "--conversations", "901")
    assert result.exit_code == 0, result.stderr
    assert "| pipeline | all | 6 |" in result.stdout
    assert "| bm25 | categories 1-4 | 5 |" in result.stdout


def test_cli_bad_conversation_list(cli) -> None:
    result = cli("eval", "locomo", str(DATA), "--conversations", "9x")
    assert result.exit_code == 2
    assert result.stderr.startswith("cerebro: error:") and result.stdout == ""


def test_cli_measures_the_float_model_of_older_brains_when_asked(cli) -> None:
    """``--embed-model`` gives every conversation's brain the local provider's other model (ADR 0041); a name the
    provider does not run is one line on stderr before any brain is made."""
    report = cli(
        "eval",
        "locomo",
        str(DATA),
        "--conversations",
        "901",
        "--embed-model",
        "all-MiniLM-L6-v2-onnx-int8",
        "--format",
        "json",
    ).json()
    assert report["settings"]["embedding_model"] == "all-MiniLM-L6-v2-onnx-int8"
    bad = cli("eval", "locomo", str(DATA), "--conversations", "901", "--embed-model", "nomic-embed-text")
    assert bad.exit_code == 2 and bad.stdout == ""
    assert bad.stderr.startswith("cerebro: error:") and "runs only" in bad.stderr and bad.stderr.count("\n") == 1
