"""Secrets known by their name: a value assigned to, or said of, a secret-like name (``DB_PASSWORD=…``,
``"api_key": "…"``, ``--token …``, "the staging password is …", "X is the root password")."""

from __future__ import annotations

import bisect
import re
import string
from collections.abc import Iterator
from typing import NamedTuple

from cerebro.redaction.values import (
    MASK,
    PUBLIC_PREFIXES,
    REFERENCE,
    STRONG_SYMBOLS,
    WORD,
    WORD_LIKE,
    Finding,
    is_password,
    is_placeholder,
    looks_like_password,
    looks_random,
)

# Words that make a name secret-like. The name must end with one (``DB_PASSWORD``, ``apiKey``,
# ``x-api-key``, ``password2``), so ``password_reset_url``, ``tokenizer`` and ``secret_name`` are not.
# Over ASCII-lowered text, a fast scan; passwords in a few other languages too (memories are not all English).
_ANCHOR_WORDS = re.compile(
    r"requirepass|storepass|keypass|secret_key_base|pass|pwd|pw|secret|token|credential|creds?|key|auth|login|"
    r"contraseña|contrasena|senha|mot de passe|wachtwoord|passord|lösenord|salasana|heslo|hasło|"
    r"パスワード|密码|密碼|비밀번호"
)
_KEY_PREFIX = re.compile(
    r"(?:api|access|secret|private|signing|encryption|master|license|client|app|application|auth|session|account|fernet|"
    r"hmac|jwt|webhook|cookie|crypt|shared|consumer|deploy)[ _.-]?$"
)
_PASS_WORD = re.compile(r"pass(?:word|wort|wd|phrase)?")
_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)  # keeps every index (str.lower may not)


class _Keyword(NamedTuple):
    """A word that makes a name secret-like, where it is in the text, lowercased (``password``, ``api_key``)."""

    start: int
    end: int
    word: str


def _keywords(text: str) -> Iterator[_Keyword]:
    """Every secret-like word: passwords, secrets, tokens, credentials, and keys named by what they open
    (``api_key``, ``secretKey``, ``private key``) — a bare ``key`` is a dictionary's, a table's, a map's."""
    lowered = text.translate(_LOWER)
    for anchor in _ANCHOR_WORDS.finditer(lowered):
        start, end, word = anchor.start(), anchor.end(), anchor.group()
        if word == "key":
            prefix = _KEY_PREFIX.search(lowered, max(0, start - 16), start)
            if prefix is None:
                continue
            start = prefix.start()
        elif word == "pass":
            whole = _PASS_WORD.match(lowered, start)
            end = whole.end() if whole is not None else end
        elif word == "credential" and lowered[end : end + 1] == "s":
            end += 1
        yield _Keyword(start, end, lowered[start:end])


_PASSWORD_WORDS = frozenset(
    (
        *("pass", "passwd", "password", "passwort", "passphrase", "pwd", "pw"),
        *("contraseña", "contrasena", "senha", "mot de passe", "wachtwoord", "passord", "lösenord"),
        *("salasana", "heslo", "hasło", "パスワード", "密码", "密碼", "비밀번호"),
        *("requirepass", "storepass", "keypass"),  # redis.conf, keytool
    )
)
_CJK = frozenset(("パスワード", "密码", "密碼", "비밀번호"))  # written without spaces: no word boundary to check
# Words after which a password may be said in prose without a verb ("creds are ops / X"): passwords, and these.
_NEAR_WORDS = _PASSWORD_WORDS - {"pass", "pwd", "requirepass", "storepass", "keypass"} | {
    "creds",
    "cred",
    "credentials",
    "credential",
    "login",
}
# Near these, only a word with a symbol counts ("login is admin / Velvet.rocket14*", not "login broke in React18").
_STRICT_NEAR = frozenset({"login", "creds", "cred", "credentials", "credential"})
_NAME_CHARS = re.compile(r"[A-Za-z0-9_.-]")
# Names that end with a secret word but hold no secret: a paging cursor, a count, a type.
_NOT_SECRET_NAMES = re.compile(
    r"(?i)(?:page|next|prev|previous|continuation|cursor|sync|max|min|num|total|input|output|completion|prompt|"
    r"cache|bypass|compass|pass_?through|csrf_?cookie|no|use|has|is|show|type|kind)[_.-]?(?:token|tokens|key|pass)$"
)
# Between a name and its value: = := => : (a typed one too, ": &str ="), a quoted name's closing quote and
# bracket (config["SECRET_KEY"] =), a call's comma (define('DB_PASSWORD', …)), or a space (flags, prose).
_SEPARATOR = re.compile(
    r"""\\?["']?\]?[ \t]{0,8}"""
    r"""(?::[ \t]*[&\w.\[\]<>]{1,40}[ \t]+=(?!=)|:=|=>|=(?!=)|:(?!:)|(?<=["'])[ \t]*,|[ \t](?=\S))[ \t]{0,8}"""
)
# "the password for the staging box is now X", "API secret for the export endpoint: X": up to 8 words, then a verb
# (or a colon closing the last word).
_PROSE = re.compile(
    r"(?i)(?:[ \t]+(?![-#])[^\s:]{1,30}){0,8}?(?:[ \t]+(?:is|was|are|lautet|est|es)(?:[ \t]+(?:now|still|currently|"
    r"set[ \t]+to|changed[ \t]+to|reset[ \t]+to))?[ \t]*[:=]?|:)[ \t]+"
)
# A quoted value: inside JSON-escaped text ("password": \"x\") the quotes are escaped too; in plain text a quote the
# value escapes ("Tr0ub\"4dor") is part of it.
_VALUE_ESCAPED = re.compile(r"""\\(["'`])(.{1,512}?)\\\1""")
_VALUE_QUOTED = re.compile(r"""(["'`])((?:\\.|(?!\1).){1,512}?)\1""")
_VALUE_BARE = re.compile(r"""[^\s"'`,;<>]{1,512}""")
_PREFIX_WORD = re.compile(r"(?i)(?:bearer|token|basic)[ \t]+")


def _name_at(text: str, keyword: _Keyword) -> tuple[int, str] | None:
    """The whole name around a secret keyword, if the name ends with it: (end of name, the name)."""
    end = keyword.end
    while end < len(text) and end - keyword.end < 4 and text[end].isdigit():
        end += 1
    if end < len(text) and _NAME_CHARS.match(text[end]):
        return None  # the keyword is inside a longer word: tokenizer, secret_name, password_reset
    start = keyword.start
    while start > 0 and keyword.start - start < 64 and _NAME_CHARS.match(text[start - 1]):
        start -= 1
    word = keyword.word
    if word in ("pass", "pwd", "pw") and start < keyword.start:
        before = text[keyword.start - 1]
        if before.isalpha() and not (before.islower() and text[keyword.start].isupper()):
            return None  # bypass, compass (but dbPass is a name)
    name = text[start:end]
    if _NOT_SECRET_NAMES.search(name.lstrip("-.")):
        return None
    if word == "auth" and name.lower().lstrip("-") != "auth" and not name.lower().endswith(("_auth", "-auth")):
        return None  # OAuth, author: only a name that is "auth" ("auth": "…" in a Docker config) or basic_auth
    return end, name


# A literal wrapped in a conversion: []byte("…"), bytes("…"), Buffer.from("…"), SecretStr("…").
_WRAPPER = re.compile(r"(?:\[\]byte|bytes|Buffer\.from|SecretStr|str|String)\(\s*(?=[\"'`])")


def _value_at(text: str, cut: int) -> tuple[int, int, bool] | None:
    """The value starting at ``cut``: (start, end, quoted), a quoted string's inside or a bare run."""
    wrapper = _WRAPPER.match(text, cut)
    cut = wrapper.end() if wrapper is not None else cut
    quoted = _VALUE_ESCAPED.match(text, cut) or _VALUE_QUOTED.match(text, cut)
    if quoted is not None:
        return quoted.start(2), quoted.end(2), True
    bare = _VALUE_BARE.match(text, cut)
    if bare is None:
        return None
    end = bare.end()
    while end > cut and text[end - 1] in ".)]}!?:":  # the end of a sentence or a bracket, not the value's
        end -= 1
    # … but "!" and "?" end many passwords (Winter2025!): kept after what is no plain word ("is wrong!") nor a
    # reference (TypeScript's process.env.KEY!)
    core = text[cut:end]
    if end > cut and not WORD_LIKE.fullmatch(core) and not REFERENCE.match(core):
        while end < bare.end() and text[end] in "!?":
            end += 1
    return (cut, end, False) if end > cut else None


def _values_after(text: str, pos: int, name: str) -> list[tuple[int, int, bool, str]]:
    """Where a value may be, for the name ending at ``pos``: assigned (``=``, ``:``, a flag's argument), said of it
    in prose ("the password for staging is now X"), or right after it ("with secret X"). Each comes with how it
    was found — (start, end, quoted, how) — since each way asks for different evidence."""
    found = []
    sep = _SEPARATOR.match(text, pos)
    if sep is not None and sep.end() > pos:
        assigned = bool(re.search(r"[:=,]", sep.group())) or name.startswith("-")
        cut = sep.end()
        prefix = _PREFIX_WORD.match(text, cut)
        if prefix is not None and ("auth" in name.lower() or "token" in name.lower()):
            cut = prefix.end()
        value = _value_at(text, cut)
        # The comma form is a call's arguments, define('DB_PASSWORD', 'x'): not a list's next item ("Password", "…").
        call = "," not in sep.group() or re.search(
            r"\([ \t]*[\"']$", text[max(0, pos - len(name) - 8) : pos - len(name)]
        )
        if value is not None and call:
            found.append((*value, "assigned" if assigned else "adjacent"))
    prose = _PROSE.match(text, pos)
    if prose is not None:
        value = _value_at(text, prose.end())
        if value is not None:
            found.append((*value, "prose"))
    return found


# A constant's name in code (TOKEN_FIXTURE_2, MY_API_KEY): a name, not a value.
_CONSTANT_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def _accepts(value: str, *, how: str, password: bool, quoted: bool, env_style: bool) -> bool:
    # A quoted value, or one in an env file, is a literal whatever it looks like; bare code may be a reference.
    if is_placeholder(value) or (not quoted and not env_style and REFERENCE.match(value)):
        return False
    if value.startswith(PUBLIC_PREFIXES) or value[:1] in "?&#" or (not quoted and value[:1] in "([{<"):
        return False  # published-by-design keys (pk_live_…, Mapbox pk.…), ciphertext (sops ENC[…]), a query, code
    if how == "adjacent":  # "secret X" with no verb: only what cannot be a word (or a quoted password: SQL's
        if password and quoted:  # PASSWORD 'x'), unless it only says "password" again ('password123')
            return is_password(value, quoted=True, env_style=False) and "passw" not in value.lower()
        return looks_like_password(value) if password else looks_random(value)
    if password:  # said in prose, a path or a flag is not the password ("… resource: projects/1/secrets/db-pw")
        return is_password(value, quoted=quoted, env_style=env_style) and not (how == "prose" and "/" in value)
    if _CONSTANT_NAME.fullmatch(value):
        return False
    return looks_random(value) or (env_style and len(value) >= 8 and ":/" not in value)


def _password_words(text: str) -> list[tuple[int, int]]:
    """(start, end) of every word in ``text`` that only a password looks like, in order (one pass over the text:
    a memory that says "password" ten thousand times is still read once)."""
    found = []
    for token in WORD.finditer(text):
        start, end = token.span()
        if not any(c.isdigit() for c in token.group()):
            continue  # most words: a password holds a digit
        while end > start and text[end - 1] in ".,;:":
            end -= 1
        if text.count("/", start, end) == 1 and "://" not in text[start:end]:
            start = text.index("/", start, end) + 1  # user/password
        if looks_like_password(text[start:end]):
            found.append((start, end))
    return found


def _near(text: str, keyword: _Keyword, words: list[tuple[int, int]]) -> list[Finding]:
    """Passwords said near their keyword, in either order, on the same line ("X is the root password", "das Passwort
    lautet X", "rotated the password from X to Y"): every one of ``words`` that starts within 60 characters of it
    (one with a symbol, after a word such as "login" that says less). A marker left by an earlier redaction is a
    blank: "changed from [secret:password] to Y" still finds Y."""
    strict = keyword.word in _STRICT_NEAR
    lo, hi = max(0, keyword.start - 60), keyword.end + 60
    found = []
    for start, end in words[bisect.bisect_left(words, (lo, 0)) :]:
        if start >= hi:
            break
        between = text[min(end, keyword.start) : max(start, keyword.end)]
        if strict and not any(c in STRONG_SYMBOLS for c in text[start:end]):
            continue
        if "\n" not in between and not keyword.start <= start < keyword.end:
            found.append(Finding("password", start, end))
    return found


def _name_kind(keyword: str) -> str:
    """The kind a secret found by its name is reported as: token, api-key, credential or secret."""
    word = keyword.lower()
    if "token" in word:
        return "token"
    if word.endswith("key"):
        return "api-key"
    return "credential" if word.startswith("credential") else "secret"


def _whole_word(text: str, keyword: _Keyword) -> bool:
    """``password`` (or passwords, password's) as a word of its own: not ``pass`` in passes, nor bypass."""
    if keyword.word in ("pass", "pwd"):
        return False
    if keyword.word in _CJK:
        return True
    before = text[keyword.start - 1 : keyword.start]
    after = text[keyword.end : keyword.end + 2]
    if after[:1] == "s":  # a plural
        after = after[1:]
    return not before.isalpha() and not after[:1].isalpha()


def _in_colon_path(text: str, start: int, end: int) -> bool:
    """``…:secret:prod/db`` (an ARN, a URN): a colon on each side, the next one glued to what follows."""
    return text[start - 1 : start] == ":" and text[end : end + 1] == ":" and text[end + 1 : end + 2] not in " \t\n"


def by_name(text: str) -> list[Finding]:
    found = []
    words: list[tuple[int, int]] | None = None  # the password-like words, found when first needed
    for keyword in _keywords(text):
        password = keyword.word in _PASSWORD_WORDS
        # $TOKEN, ${API_KEY}: a variable used, not a value given
        # "login" only points at a password said near it (a login's own value is a user name).
        named = None
        if text[keyword.start - 1 : keyword.start] != "$" and keyword.word != "login":
            named = _name_at(text, keyword)
        hit, assigned = None, False
        # A name inside a colon path (arn:aws:secretsmanager:…:secret:prod/db) is not assigned what follows it.
        if named is not None and _in_colon_path(text, named[0] - len(named[1]), named[0]):
            named = None
        if named is not None:
            pos, name = named
            env_style = name.lstrip("-").isupper() and text[pos : pos + 1] == "="
            # "pass" and "pwd" alone are words too ("tests pass `pytest -q`", "pass --no-cache", "pass: 1520",
            # "pwd: /srv/app"): only a value assigned or said of them, and never a count, a flag or a path.
            bare = name.lower() in ("pass", "pwd", "pw")
            # Its value redacted already (a marker reads as blanks): said, so no word near it is taken for it.
            assigned = _SAID.match(text, pos) is not None
            for start, end, quoted, how in _values_after(text, pos, name):
                assigned = assigned or how == "assigned"
                value = text[start:end]
                if bare and not _may_be_given_to_a_bare_word(value):
                    continue
                if bare and how == "adjacent":  # "pass 6B8c+2u#Zd", never "tests pass `pytest -q`"
                    if looks_like_password(value):
                        hit = Finding("password", start, end)
                        break
                    continue
                if _accepts(text[start:end], how=how, password=password, quoted=quoted, env_style=env_style):
                    hit = Finding("password" if password else _name_kind(keyword.word), start, end)
                    break
        # A name given a value that is not a secret (a reference, ciphertext) has said what it holds: no guessing.
        if hit is None and not assigned and keyword.word in _NEAR_WORDS and _whole_word(text, keyword):
            words = _password_words(text) if words is None else words
            found += _near(text, keyword, words)
        if hit is not None:
            found.append(hit)
    return found


_SAID = re.compile(r"""[ \t"'`:=>(\[]{0,8}""" + re.escape(MASK))


def _may_be_given_to_a_bare_word(value: str) -> bool:
    return not value.isdigit() and not value.startswith(("-", "/", "~", "./", "../"))
