"""The vendored tokenizer's ids for ASCII text, in Python: no ``tokenizers`` to import, no JSON to parse (ADR 0045).

A one-shot command that embeds a text (``cerebro recall "q"``, ``cerebro add``, a hook) paid ~22 ms of CPU for the
``tokenizers`` package: ~5 ms to import its 11 MB extension and ~17 ms to parse the 466 KB ``tokenizer.json`` —
almost a tenth of such a command. For ASCII text the tokenizer's pipeline is small and fully specified, so it is
done here, from ``vocab.txt`` (the same 30,522 tokens, one a line, a token's id its line number: BERT's own format,
derived from ``tokenizer.json`` and checked equal to it by the tests):

1. the added tokens ([PAD], [UNK], [CLS], [SEP], [MASK]: ``normalized: false``) are found in the raw text first and
   are their own ids;
2. the rest is normalised as BertNormalizer does: control characters (all of ASCII's but tab, newline and carriage
   return) and NUL are removed, those three become spaces, letters are lower-cased (accents and CJK do not occur);
3. split as BertPreTokenizer does: at whitespace, and every ASCII punctuation character is a word of its own;
4. each word becomes WordPiece's greedy longest-match-first pieces ("##" continues a word), or [UNK] when a part
   matches nothing or the word is longer than 100 characters.

Any text with a non-ASCII character is left to ``tokenizers`` (``encode`` returns None): Unicode's categories,
normalisation and case mappings differ between Unicode versions, and the Rust crate's tables are not Python's.
"""

from __future__ import annotations

import re
import string
from pathlib import Path

from cerebro.errors import ModelUnavailable
from cerebro.paths import sha256

VOCAB_PATH = Path(__file__).parent / "data" / "all-MiniLM-L6-v2" / "vocab.txt"
VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
ADDED_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")  # tokenizer.json's added_tokens, all normalized: false
MAX_WORD_CHARACTERS = 100  # the WordPiece model's max_input_chars_per_word
# The vocabulary's longest tokens ("telecommunications"; "##" and 10 characters): no longer piece can match, so none
# is looked up — at most 18 (10) lookups a position instead of up to 100 (a 100-letter word of noise: ~0.15 ms instead
# of ~0.55; tokenizers ~0.25).
LONGEST_TOKEN = 18
LONGEST_CONTINUATION = 12
_ADDED = re.compile("|".join(re.escape(token) for token in ADDED_TOKENS))
# One pass over the text: controls gone, tab/newline/return a space, upper case lowered, punctuation set apart.
_NORMALISE = str.maketrans(
    {
        **dict.fromkeys([*range(9), 11, 12, *range(14, 32), 127]),
        **dict.fromkeys([9, 10, 13], " "),
        **{c: c.lower() for c in string.ascii_uppercase},
        **{c: f" {c} " for c in string.punctuation},  # exactly Rust's is_ascii_punctuation
    }
)


class AsciiWordPiece:
    """Token ids of ASCII texts, as the vendored ``tokenizer.json`` gives them (without special tokens)."""

    def __init__(self, vocabulary: dict[str, int]) -> None:
        self._ids = vocabulary
        self._unknown = vocabulary["[UNK]"]
        self._words: dict[str, list[int]] = {}  # a word's pieces, once worked out (bounded: see encode)

    @classmethod
    def load(cls) -> AsciiWordPiece:
        """The vendored vocabulary (~5 ms: its digest checked, 30,522 entries into a dict)."""
        raw = VOCAB_PATH.read_bytes()
        if sha256(raw).hexdigest() != VOCAB_SHA256:
            raise ModelUnavailable(f"vendored vocabulary {VOCAB_PATH} is corrupt: reinstall cerebro")
        tokens = raw.decode("utf-8").split("\n")
        if tokens and tokens[-1] == "":
            tokens.pop()
        return cls(dict(zip(tokens, range(len(tokens)), strict=True)))

    def token_id(self, token: str) -> int:
        return self._ids[token]

    def encode(self, text: str) -> list[int] | None:
        """The ids of ``text``'s tokens, or None when it is not ASCII (``tokenizers`` answers then)."""
        if not text.isascii():
            return None
        ids: list[int] = []
        start = 0
        for added in _ADDED.finditer(text):
            self._encode_plain(text[start : added.start()], ids)
            ids.append(self._ids[added.group()])
            start = added.end()
        self._encode_plain(text[start:], ids)
        return ids

    def _encode_plain(self, text: str, ids: list[int]) -> None:
        words = self._words
        if len(words) > 50_000:  # a bulk import's vocabulary of words: kept bounded
            words.clear()
        for word in text.translate(_NORMALISE).split(" "):
            if not word:
                continue
            if len(word) > MAX_WORD_CHARACTERS:  # [UNK], and never cached: 50,000 long words would be gigabytes
                ids.append(self._unknown)
                continue
            pieces = words.get(word)
            if pieces is None:
                pieces = words[word] = self._pieces(word)
            ids.extend(pieces)

    def _pieces(self, word: str) -> list[int]:
        """WordPiece: the longest known prefix, then the longest known "##" continuation, and so on (a word of at most
        MAX_WORD_CHARACTERS)."""
        pieces: list[int] = []
        start = 0
        while start < len(word):
            longest = LONGEST_TOKEN if start == 0 else LONGEST_CONTINUATION - 2  # "##" is not in the word
            for end in range(min(len(word), start + longest), start, -1):
                found = self._ids.get(word[start:end] if start == 0 else "##" + word[start:end])
                if found is not None:
                    pieces.append(found)
                    start = end
                    break
            else:
                return [self._unknown]
        return pieces
