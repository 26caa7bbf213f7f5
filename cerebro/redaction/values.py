"""How the redaction judges text: what a finding is, and what a secret's value looks like (random enough for
a token, literal enough for a password) as opposed to a placeholder, a reference, a word or an address."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

MARKER = "[secret:{kind}]"
MARKER_RE = re.compile(r"\[secret:[a-z0-9-]+\]")
MASK = "\x1f"  # a marker's characters while scanning: whitespace to every pattern, and never part of a value


@dataclass(frozen=True)
class Finding:
    """One secret in a text: its kind and where it is (the characters replaced by the marker)."""

    kind: str
    start: int
    end: int


# A run of one character inside a provider's shape: a placeholder (AKIAXXXXXXXXXXXXXXXX, ghp_xxxx…), not a key.
FILLER = re.compile(r"([A-Za-z0-9*])\1{5}")


def literal(value: str) -> bool:
    return not is_placeholder(value) and not value.startswith("$")


# Values that name a type, a state or a placeholder rather than hold a secret (compared in lower case).
_PLACEHOLDER_WORDS = frozenset(
    (
        *("none", "null", "nil", "undefined", "true", "false", "str", "string", "bytes", "int", "bool"),
        *("required", "optional", "empty", "hidden", "redacted", "masked", "omitted", "removed", "unset"),
        *("secret", "password", "passwd", "token", "key", "value", "example", "sample", "dummy", "placeholder"),
        *("todo", "tbd", "fixme", "test", "unknown", "changeit", "changeme", "xxx"),
    )
)
_PLACEHOLDER = re.compile(
    r"(?i)^(?:[<\[{(].*[>\]})]|\$.*|%.*|.*\{\{.*|.*(?:\.\.\.|…).*|(.)\1{3,}|.*\byour[_ -].*|.*_here|.*example.*"
    r"|.*placeholder.*|.*replace[_-]?me.*|.*change[_-]?me.*)$"
)
# Code that names a value instead of holding it: a dotted path, a call or an index (os.environ[…], getenv(…),
# @Microsoft.KeyVault(…)), or a secret manager's address (op://…, vault:…, arn:aws:secretsmanager:…).
REFERENCE = re.compile(
    r"^[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::|->)[A-Za-z_][A-Za-z0-9_]*)+$|^@?[A-Za-z_][\w.]*[(\[]"
    r"|^(?:op|vault|secret|secrets|sm|gcpsm|awssm|azkv)://|^arn:aws:(?:secretsmanager|ssm):"
)


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def is_placeholder(value: str) -> bool:
    return (
        value.lower() in _PLACEHOLDER_WORDS
        or bool(_PLACEHOLDER.match(value))
        or bool(FILLER.search(value))
        or value.startswith("[secret:")  # already redacted (a marker, or one cut by a sentence's end)
    )


# A path of lowercase words (secret/data/ci/github, ops-team/deploy_key): an address in a store, not a value.
_PATH = re.compile(r"[a-z0-9_.-]+(?:/[a-z0-9_.-]+)+")


def looks_random(value: str) -> bool:
    """A token's value: long enough, mixed characters, high entropy (ids in prose are words, not this)."""
    if (
        len(value) < 12
        or " " in value
        or ":/" in value
        or value.startswith(("/", "~/", "./"))
        or _PATH.fullmatch(value)
    ):
        return False  # a URL or a path is an address, whatever its name
    classes = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )
    if classes < 2 or (not any(c.isdigit() for c in value) and len(value) < 20):
        return False
    if _IDENTIFIER.fullmatch(value):
        return False  # lowercase words and short numbers joined as a name is (user_42_profile, build-2024-x)
    return _entropy(value) >= 3.0


_IDENTIFIER = re.compile(r"[a-z]+(?:[_-](?:[a-z]+|[0-9]{1,4}))+")


def is_password(value: str, *, quoted: bool, env_style: bool) -> bool:
    """A password's value: any quoted literal (or any value in an env file); bare text that is not a word — a bare
    word is prose or a variable or a type (``password is stored``, ``password: SecretStr``)."""
    if len(value) < 3:
        return False
    if quoted or env_style:
        return True
    return len(value) >= 4 and not WORD_LIKE.fullmatch(value)


# One word, or words joined as identifiers are: lowercase, Capitalised, CamelCase, UPPER, snake_case.
WORD_LIKE = re.compile(r"[a-z_]+|(?:[A-Z][a-z]+)+|[A-Z_]+|[A-Za-z][a-z]+(?:_[a-z]+)+")
# Values that start like these are public or encrypted by design: Stripe publishable keys, Mapbox public tokens,
# sops and Ansible Vault ciphertext.
PUBLIC_PREFIXES = ("pk_live_", "pk_test_", "pk.", "pub", "phc_", "ENC[", "$ANSIBLE_VAULT", "!vault")


STRONG_SYMBOLS = frozenset("!@#$%^&*?+=~<>|;")


def looks_like_password(token: str) -> bool:
    """A word in prose that only a password looks like: 8-64 characters with letters and digits, and a symbol or
    mixed case — not a URL, a path, an address, a version or a hex digest."""
    if not 8 <= len(token) <= 64 or "/" in token or _NOT_A_PASSWORD.search(token):
        return False
    has = {
        "lower": any(c.islower() for c in token),
        "upper": any(c.isupper() for c in token),
        "digit": any(c.isdigit() for c in token),
        "symbol": any(c in STRONG_SYMBOLS for c in token),
    }
    if not (has["lower"] or has["upper"]) or not has["digit"]:
        return False
    return has["symbol"] or (has["lower"] and has["upper"])


# Not a password, however mixed: an address (a domain, an e-mail, a file name: a dot then 2-10 letters at the end, or
# an @ between words), a marker, an assignment in code (min_length=12), or a word holding "password" (1Password).
_NOT_A_PASSWORD = re.compile(r"(?i)\.[a-z]{2,10}$|\w@\w|\[secret:|^[a-z_]\w*=|passwor[dt]")
WORD = re.compile(r"[^\s\"'`()\[\]{},]+")
