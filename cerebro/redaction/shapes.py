"""Secrets known by their shape: providers' published key and token formats, private-key blocks, JWTs, and
passwords where a URL, a command line or an HTTP header puts them."""

from __future__ import annotations

import re
from collections.abc import Callable

from cerebro.redaction.values import Finding, is_password, is_placeholder, literal, looks_random

_B = r"(?<![A-Za-z0-9_])"  # a token boundary on the left (\b treats "-" and "_" differently)
_E = r"(?![A-Za-z0-9_])"  # … and on the right

_SHAPES: list[tuple[str, str]] = [
    (
        "private-key",
        r"-----BEGIN(?:[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?| OpenVPN Static key V1)-----"
        r"(?:[\s\S]{0,20000}?-----END(?:[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?| OpenVPN Static key V1)-----"
        r"|[A-Za-z0-9+/=\s\\:,-]*)",
    ),
    ("age-secret-key", r"AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}"),
    ("aws-access-key", _B + r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}" + _E),
    ("github-token", _B + r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})" + _E),
    ("gitlab-token", _B + r"gl(?:pat|dt|rt|ptt|cbt|oas|ft)-[A-Za-z0-9_-]{20,}" + _E),
    ("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}"),
    ("slack-token", _B + r"(?:xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Z0-9]{9,}-\d{9,}-[a-f0-9]{32,})" + _E),
    ("discord-webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{30,}"),
    ("stripe-key", _B + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}" + _E),
    ("stripe-webhook-secret", _B + r"whsec_[A-Za-z0-9+/=]{24,}" + _E),
    ("google-api-key", _B + r"AIza[0-9A-Za-z_-]{35}" + _E),
    ("google-oauth-secret", _B + r"GOCSPX-[A-Za-z0-9_-]{28}" + _E),
    ("anthropic-key", _B + r"sk-ant-[a-z]{2,10}\d{2}-[A-Za-z0-9_-]{32,}" + _E),
    (
        "openai-key",
        _B + r"sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{32,}|[A-Za-z0-9]{20,}T3BlbkFJ[A-Za-z0-9]{20,}"
        r"|[A-Za-z0-9]{48}|[a-f0-9]{32})" + _E,
    ),
    ("npm-token", _B + r"npm_[A-Za-z0-9]{36}" + _E),
    ("pypi-token", _B + r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    ("huggingface-token", _B + r"hf_[A-Za-z0-9]{34,40}" + _E),
    ("sendgrid-key", _B + r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}" + _E),
    ("twilio-key", _B + r"SK[0-9a-f]{32}" + _E),
    ("digitalocean-token", _B + r"do[opr]_v1_[a-f0-9]{64}" + _E),
    ("shopify-token", _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E),
    ("databricks-token", _B + r"dapi[a-f0-9]{32}(?:-\d)?" + _E),
    ("docker-token", _B + r"dckr_pat_[A-Za-z0-9_-]{27,}" + _E),
    ("mailgun-key", _B + r"key-[0-9a-f]{32}" + _E),
    ("telegram-bot-token", r"(?<![0-9])\d{8,10}:AA[A-Za-z0-9_-]{33}" + _E),
    ("azure-storage-key", r"(?i:AccountKey)=[A-Za-z0-9+/]{86}==" + _E.replace("_", "_+/=")),
    ("azure-client-secret", _B + r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}" + _E),
    ("hashicorp-vault-token", _B + r"(?:hv[sb]\.[A-Za-z0-9_-]{24,}|s\.[A-Za-z0-9]{24})" + _E),
    ("linear-key", _B + r"lin_api_[A-Za-z0-9]{40}" + _E),
    ("postman-key", _B + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _E),
    ("doppler-token", _B + r"dp\.(?:st|ct|pt|sa|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9_-]{40,}" + _E),
    ("heroku-key", _B + r"HRKU-[A-Za-z0-9_-]{60,}" + _E),
    ("terraform-token", _B + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{60,}" + _E),
    ("atlassian-token", _B + r"ATATT3[A-Za-z0-9_=-]{150,}" + _E),
    ("grafana-token", _B + r"gl(?:sa|c)_[A-Za-z0-9_+/=-]{32,}" + _E),
    ("newrelic-key", _B + r"NRAK-[A-Z0-9]{27}" + _E),
    ("sentry-token", _B + r"sntr(?:ys|yu|y|s|u)_[A-Za-z0-9_+/=-]{40,}"),
    ("supabase-token", _B + r"sbp_[a-f0-9]{40}" + _E),
    ("square-token", _B + r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}" + _E),
    ("alibaba-access-key", _B + r"LTAI[A-Za-z0-9]{12,20}" + _E),
    ("flutterwave-key", _B + r"FLWSECK(?:_TEST)?-[a-f0-9]{32}-X" + _E),
    ("mailgun-key", _B + r"[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}" + _E),
    ("mailchimp-key", _B + r"[a-f0-9]{32}-us\d{1,2}" + _E),
    ("netlify-token", _B + r"nf[pc]_[A-Za-z0-9]{36,}" + _E),
    ("square-token", _B + r"EAAA[A-Za-z0-9_-]{60}" + _E),
    ("airtable-token", _B + r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}" + _E),
    ("firebase-server-key", _B + r"AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}" + _E),
    ("replicate-token", _B + r"r8_[A-Za-z0-9]{37}" + _E),
    ("mapbox-secret-token", _B + r"sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}" + _E),
    ("jwt", _B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}" + _E),
]
# Text each shape must contain (any one of): a pattern only runs over a memory that holds one of its
# literals, so a long memory costs a few substring searches, not forty regular-expression scans.
_ANCHORS: dict[str, tuple[str, ...]] = {
    "private-key": ("PRIVATE KEY", "OpenVPN Static key"),
    "age-secret-key": ("AGE-SECRET-KEY-1",),
    "aws-access-key": ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
    "github-token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab-token": ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-", "glft-"),
    "slack-webhook": ("hooks.slack.com",),
    "slack-token": ("xox", "xapp-"),
    "discord-webhook": ("/api/webhooks/",),
    "stripe-key": ("_live_", "_test_"),
    "stripe-webhook-secret": ("whsec_",),
    "google-api-key": ("AIza",),
    "google-oauth-secret": ("GOCSPX-",),
    "anthropic-key": ("sk-ant-",),
    "openai-key": ("sk-",),
    "npm-token": ("npm_",),
    "pypi-token": ("pypi-AgE",),
    "huggingface-token": ("hf_",),
    "sendgrid-key": ("SG.",),
    "twilio-key": ("SK",),
    "digitalocean-token": ("_v1_",),
    "shopify-token": ("shpat_", "shpca_", "shppa_", "shpss_"),
    "databricks-token": ("dapi",),
    "docker-token": ("dckr_pat_",),
    "mailgun-key": ("key-", "-"),
    "telegram-bot-token": (":AA",),
    "azure-storage-key": ("AccountKey=", "accountkey=", "ACCOUNTKEY=", "Accountkey="),
    "azure-client-secret": ("Q~",),
    "hashicorp-vault-token": ("hvs.", "hvb.", "s."),
    "linear-key": ("lin_api_",),
    "postman-key": ("PMAK-",),
    "doppler-token": ("dp.",),
    "atlassian-token": ("ATATT3",),
    "grafana-token": ("glsa_", "glc_"),
    "newrelic-key": ("NRAK-",),
    "sentry-token": ("sntry", "sntrs_", "sntru_"),
    "heroku-key": ("HRKU-",),
    "terraform-token": (".atlasv1.",),
    "supabase-token": ("sbp_",),
    "square-token": ("sq0atp-", "sq0csp-", "EAAA"),
    "jwt": ("eyJ",),
    "replicate-token": ("r8_",),
    "mapbox-secret-token": ("sk.eyJ",),
    "alibaba-access-key": ("LTAI",),
    "flutterwave-key": ("FLWSECK",),
    "mailchimp-key": ("-us",),
    "netlify-token": ("nfp_", "nfc_"),
    "airtable-token": ("pat",),
    "firebase-server-key": (":APA91b",),
}
# Patterns stay text until a memory holds one of their anchors: re.finditer then compiles one once (re's own cache)
# — compiling all fifty at import cost every `cerebro add` ~25 ms on a slow machine, for the one or two a text needs.
SHAPES = [(kind, _ANCHORS[kind], pattern) for kind, pattern in _SHAPES]

# A password inside a URL: scheme://user:PASSWORD@host. The user and password are bounded runs.
# The password runs to the last @ before the host (P@ss, Xy#92: pasted unencoded), never past a path's slash.
_URL_PASSWORD = re.compile(r"://[^\s/:?#\"'<>]{0,128}:([^\s/?\"'<>]{1,256})@(?=[^\s/@\"'<>])")
# A key or signature in a URL's query: ?api_key=…, &sig=… (a value that looks random, or any password).
_URL_QUERY = re.compile(
    r"(?i)[?&](?:api[_-]?key|apikey|app_?id|app_?key|key|access_token|auth_?token|token|sig|signature|"
    r"client_secret|secret|password|pwd)=([^&\s#\"'<>]{8,512})"
)
# Passwords on command lines: mysql -pSECRET (glued to -p; a space would make it a prompt), sshpass -p, redis-cli -a,
# docker login -p, htpasswd -b FILE USER PASSWORD, SQL's IDENTIFIED BY 'x'.
_CLI_PASSWORD = re.compile(
    r"\bredis-cli\b[^\n]{0,200}?\s-a[ \t]+['\"]?([^\s'\"]+)"
    r"|\bdocker[ \t]+login\b[^\n]{0,200}?\s(?:-p|--password)[ \t=]+['\"]?([^\s'\"]+)"
    r"|\bhtpasswd(?=[^\n]*\s-\w*b)(?:[ \t]+-\w+)*[ \t]+\S+[ \t]+\S+[ \t]+['\"]?([^\s'\"]+)"
    r"|(?i:\bidentified[ \t]+by)[ \t]+'([^'\n]+)'"
)
# mysql -u root -pSECRET (the password glued to -p; a space would make it a prompt), sshpass -p SECRET
_MYSQL_PASSWORD = re.compile(
    r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]{0,200}?\s-p(?:'([^'\n]+)'|\"([^\"\n]+)\"|([^\s'\"]+))"
    r"|\bsshpass\s+-p\s*(?:'([^'\n]+)'|\"([^\"\n]+)\"|([^\s'\"]+))"
)
# ~/.pgpass: hostname:port:database:username:password (only where the text names the file: a MAC address or a
# time has the same colons)
_PGPASS = re.compile(r"(?<![\w.:/-])[A-Za-z0-9_.*-]+:(?:\d{1,5}|\*):[A-Za-z0-9_.*-]+:[A-Za-z0-9_.*-]+:(\S{4,})")
# curl -u user:password, --user user:password
_CLI_USER = re.compile(r"(?:^|\s)(?:-u|--user)[ =]['\"]?[^\s:'\"]{1,128}:([^\s'\"]{1,256})")
# Authorization: Bearer/Basic/Token VALUE (HTTP headers, curl -H)
_AUTH_HEADER = re.compile(
    r"(?i:authorization)[\"']?[ \t]*[:=]?[ \t]*[\"']?(?i:bearer|basic|token|digest|ssws|splunk)[ \t]+"
    r"([A-Za-z0-9._~+/=-]{8,})"
)


# <password>…</password> in XML (Maven's settings.xml, .NET configs)
_XML_SECRET = re.compile(
    r"<(?:password|passwd|secret|token|api[-_]?key)>([^<\s]{3,256})</(?:password|passwd|secret|token|api[-_]?key)>",
    re.IGNORECASE,
)
# An environment entry in Kubernetes or Compose: "- name: DB_PASSWORD" then "value: …" on the next line
_ENV_ENTRY = re.compile(
    r"name:[ \t]*[\"']?[A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_KEY|ACCESS_KEY|PRIVATE_KEY)[\"']?[ \t]*\r?\n"
    r"[ \t]*value:[ \t]*[\"']?([^\s\"'$][^\s\"']{5,255})"
)


def _group_findings(text: str, kind: str, pattern: re.Pattern[str], check: Callable[[str], bool]) -> list[Finding]:
    """The first group that took part in each match of ``pattern``, when ``check`` accepts it."""
    found = []
    for match in pattern.finditer(text):
        group = next(i for i in range(1, (pattern.groups or 0) + 1) if match.group(i) is not None)
        if check(match.group(group)):
            found.append(Finding(kind, match.start(group), match.end(group)))
    return found


def _bare_password(value: str) -> bool:
    """A command line's password: a literal that is not a plain word (``--password via the CLI`` is prose)."""
    return literal(value) and is_password(value, quoted=False, env_style=False)


_HEADER_LINE = re.compile(r"-----(?:BEGIN|END)[^-]*-----")


def _key_body(block: str) -> int:
    """How many base64 characters a key block holds besides its header and footer (a placeholder holds none)."""
    return sum(c.isalnum() or c in "+/" for c in _HEADER_LINE.sub("", block))


def by_shape(text: str) -> list[Finding]:
    """Every match of a provider's shape, then of the URL, command-line and header rules, in that order."""
    found: list[Finding] = []
    for kind, anchors, pattern in SHAPES:
        if not any(anchor in text for anchor in anchors):
            continue
        found += [
            Finding(kind, m.start(), m.end())
            for m in re.finditer(pattern, text)
            # A run of one character, EXAMPLE (AWS's documented key) or "your-…" is a placeholder; but a key's body
            # holds runs of A (zero bytes).
            if (_key_body(m.group()) >= 40 if kind == "private-key" else not is_placeholder(m.group()))
        ]
    found += _group_findings(text, "url-password", _URL_PASSWORD, literal)
    found += _group_findings(text, "password", _MYSQL_PASSWORD, literal)
    found += _group_findings(text, "password", _CLI_USER, literal)
    found += _group_findings(text, "password", _CLI_PASSWORD, _bare_password)
    found += _group_findings(text, "password", _XML_SECRET, literal)
    found += _group_findings(text, "password", _ENV_ENTRY, literal)
    if "pgpass" in text:
        found += _group_findings(text, "password", _PGPASS, lambda v: literal(v) and not v.isdigit())
    found += _group_findings(text, "auth-header", _AUTH_HEADER, literal)
    found += _group_findings(text, "url-secret", _URL_QUERY, lambda v: literal(v) and looks_random(v))
    return found
