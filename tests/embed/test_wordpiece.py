"""The Python WordPiece for ASCII text (ADR 0045) gives exactly the ``tokenizers`` package's ids, and spares a process
that embeds only ASCII text the package altogether."""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest

from cerebro.embed import local, wordpiece
from cerebro.embed.local import TOKENIZER_PATH, LocalEmbedder
from cerebro.embed.wordpiece import AsciiWordPiece
from cerebro.errors import ModelUnavailable

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reference():
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


@pytest.fixture(scope="module")
def ours() -> AsciiWordPiece:
    return AsciiWordPiece.load()


def test_the_vocabulary_is_the_tokenizer_s_own():
    vocabulary = json.loads(TOKENIZER_PATH.read_text(encoding="utf-8"))["model"]["vocab"]
    lines = wordpiece.VOCAB_PATH.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""
    assert dict(zip(lines[:-1], range(len(lines) - 1), strict=True)) == vocabulary
    assert len(lines) - 1 == len(vocabulary) == 30522
    assert max(len(token) for token in vocabulary) == wordpiece.LONGEST_TOKEN
    assert max(len(token) for token in vocabulary if token.startswith("##")) == wordpiece.LONGEST_CONTINUATION


def _differences(reference, ours: AsciiWordPiece, texts: list[str]) -> list[tuple[str, list[int], list[int] | None]]:
    return [
        (text, expected, got)
        for text in texts
        if (expected := reference.encode(text, add_special_tokens=False).ids) != (got := ours.encode(text))
    ]


def _fuzzed_texts(reference, count: int) -> list[str]:
    """ASCII texts built to find differences: vocabulary words and their continuations, the added tokens (and near
    misses), words of 99 to 150 letters, every ASCII character (controls, NUL, DEL), punctuation, digits."""
    rng = random.Random(3)
    vocabulary = sorted(token for token in reference.get_vocab() if token.isascii())
    longest = sorted(vocabulary, key=len)[-200:]  # the pieces near the longest a lookup tries
    added = ["[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]", "[cls]", "[CLS", "CLS]", "[unused1]", "[[SEP]]"]

    def part() -> str:
        roll = rng.random()
        if roll < 0.3:
            token = rng.choice(vocabulary)
            return token.removeprefix("##") if rng.random() < 0.7 else token
        if roll < 0.35:
            return rng.choice(added)
        if roll < 0.4:  # a long token, whole or as a continuation of a letter
            return rng.choice(["", rng.choice(string.ascii_lowercase)]) + rng.choice(longest).removeprefix("##")
        if roll < 0.5:
            return "".join(rng.choice(string.ascii_letters) for _ in range(rng.choice([99, 100, 101, 150])))
        if roll < 0.7:
            return "".join(chr(rng.randrange(128)) for _ in range(rng.randrange(1, 12)))
        if roll < 0.8:
            return rng.choice(string.punctuation + " \t\n\r\x0b\x0c\x00\x1c\x1f\x7f")
        return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(rng.randrange(1, 20)))

    return ["".join(part() + rng.choice(["", " ", "\n"]) for _ in range(rng.randrange(1, 15))) for _ in range(count)]


def test_fuzzed_ascii_texts_give_the_tokenizer_s_ids(reference, ours):
    texts = _fuzzed_texts(reference, 4000)
    assert all(text.isascii() for text in texts)
    assert _differences(reference, ours, texts) == []


def test_the_project_s_own_prose_gives_the_tokenizer_s_ids(reference, ours):
    """Real technical English (code names, paths, flags, numbers): every ASCII line of the README, the changelog and
    the ADRs."""
    sources = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs" / "adrs").glob("*.md"))]
    lines = [line for source in sources for line in source.read_text(encoding="utf-8").splitlines() if line.isascii()]
    assert len(lines) > 2000
    assert _differences(reference, ours, lines) == []


@pytest.mark.parametrize("text", ["café au lait", "naïve", "東京 tower", "emoji 🥰 here", "\u00a0nbsp", "ﬁle"])
def test_text_with_any_other_character_is_left_to_the_tokenizer(ours, text):
    assert ours.encode(text) is None


@pytest.mark.parametrize(
    "text",
    ["plain words", "café au lait", "[CLS] inside", "x" * 101, "un café noir " * 100],  # > 128 tokens: uncut
)
def test_the_embedder_s_ids_are_the_tokenizer_s(reference, text):
    embedder = LocalEmbedder()
    embedder.embed(["load"])
    assert embedder._token_ids(text) == reference.encode(text, add_special_tokens=False).ids


def test_embedding_ascii_text_does_not_load_the_tokenizers_package(isolated_home):
    program = (
        "import sys\n"
        "from cerebro.embed.local import LocalEmbedder\n"
        "embedder = LocalEmbedder()\n"
        "embedder.embed(['how does the auth token refresh?'])\n"
        "print('tokenizers' in sys.modules)\n"
        "embedder.embed(['un café'])\n"
        "print('tokenizers' in sys.modules)\n"
    )
    shown = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert shown.stdout.split() == ["False", "True"]


def test_a_corrupt_vocabulary_is_refused(monkeypatch, tmp_path):
    tampered = tmp_path / "vocab.txt"
    tampered.write_bytes(wordpiece.VOCAB_PATH.read_bytes().replace(b"\nthe\n", b"\nteh\n", 1))
    monkeypatch.setattr(wordpiece, "VOCAB_PATH", tampered)
    monkeypatch.setattr(local, "_LOADED", {})
    with pytest.raises(ModelUnavailable, match=r"vocab\.txt is corrupt"):
        LocalEmbedder().embed(["anything"])
    assert local._LOADED == {}


def test_words_past_the_limit_are_unknown_and_not_remembered(ours):
    long_word = "f" * 5000
    unknown = ours.token_id("[UNK]")
    assert ours.encode(f"a {long_word} b") == [*ours.encode("a"), unknown, *ours.encode("b")]
    assert long_word not in ours._words  # 50,000 such words would hold gigabytes


def test_a_thread_that_sees_the_session_finds_the_tokenizer_ready(monkeypatch):
    """The session is the sign that the model is loaded (read without the lock): it is set after everything else."""
    seen = []
    real = AsciiWordPiece.token_id
    embedder = LocalEmbedder()

    def token_id(self, token):
        seen.append(embedder._session)
        return real(self, token)

    monkeypatch.setattr(AsciiWordPiece, "token_id", token_id)
    embedder._load()
    assert seen == [None, None] and embedder._session is not None


def test_non_ascii_text_does_not_wait_for_a_model_loading_meanwhile(reference):
    import threading

    embedder = LocalEmbedder()
    embedder.embed(["un café"])  # the tokenizers package is loaded now
    answers = []
    with local._LOAD_LOCK:  # another model's session loading, say
        worker = threading.Thread(target=lambda: answers.append(embedder._token_ids("déjà vu")))
        worker.start()
        worker.join(timeout=10)
    assert answers == [reference.encode("déjà vu", add_special_tokens=False).ids]
