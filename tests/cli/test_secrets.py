"""The command line's side of secret redaction: add warns by kind on stderr (never echoing the secret),
--allow-secret keeps one on purpose, and `secrets scan` / `secrets redact` report and repair a brain."""

from __future__ import annotations

from pathlib import Path

from .helpers import node, ok

AWS = "AKIAQX3NZ7VGLD5KPW2M"
NOTICE = "cerebro: warning: redacted 1 secret before storing (aws-access-key); --allow-secret keeps it on purpose\n"


def redacted(result):
    """Success, with the one warning line a redaction gives (which never holds the secret)."""
    assert result.exit_code == 0, result
    assert result.stderr == NOTICE
    return result


def test_add_stores_a_marker_and_says_so_on_stderr(cli, add, brain_path: Path) -> None:
    result = redacted(cli("add", f"deploy key {AWS}"))
    node_id = result.stdout.strip()
    assert node(brain_path, node_id).content == "deploy key [secret:aws-access-key]"
    assert AWS not in result.stdout


def test_allow_secret_stores_the_text_as_given(cli, brain_path: Path) -> None:
    result = ok(cli("add", f"deploy key {AWS}", "--allow-secret"))
    assert node(brain_path, result.stdout.strip()).content == f"deploy key {AWS}"
    assert result.stderr == ""


def test_update_supersede_and_the_inbox_redact_too(cli, add, brain_path: Path) -> None:
    first = add("a note")
    redacted(cli("update", first, "--content", f"key {AWS}"))
    assert node(brain_path, first).content == "key [secret:aws-access-key]"
    newer = redacted(cli("supersede", first, f"rotated: {AWS}", "--format", "json")).json()["id"]
    assert node(brain_path, newer).content == "rotated: [secret:aws-access-key]"
    candidate = redacted(cli("inbox", "add", f"maybe {AWS}", "--format", "json")).json()["id"]
    listed = ok(cli("inbox", "list", "--format", "json")).json()["candidates"]
    assert [c["content"] for c in listed if c["id"] == candidate] == ["maybe [secret:aws-access-key]"]


def test_scan_then_redact(cli, add, brain_path: Path) -> None:
    secret_id = add(f"old note {AWS}", "--allow-secret")
    add("nothing to hide")
    scan = ok(cli("secrets", "scan"))
    assert scan.stdout == (
        f"Found 1 secret in 1 of 2 records:\n- {secret_id[:8]} [memory] aws-access-key\n"
        "Replace them with: cerebro secrets redact\n"
    )
    done = ok(cli("secrets", "redact", "--format", "json")).json()
    assert done["redacted"] is True and done["records"] == 1 and Path(done["backup"]).exists()
    assert node(brain_path, secret_id).content == "old note [secret:aws-access-key]"
    assert ok(cli("secrets", "scan")).stdout == "No secrets found in 2 records.\n"


def test_redact_names_the_older_backups_that_still_hold_the_secret(cli, add, brain_path: Path) -> None:
    """Only the backup redact took itself was named: one taken before (by hand, before an upgrade) kept the
    secret unmentioned (a review)."""
    add(f"old note {AWS}", "--allow-secret")
    earlier = Path(ok(cli("backup", "--format", "json")).json()["backup"])
    done = ok(cli("secrets", "redact", "--format", "json")).json()
    assert done["older_backups"] == [str(earlier)] and done["backup"] != str(earlier)
    assert AWS.encode() in earlier.read_bytes()  # what the message warns of
    add(f"another {AWS}", "--allow-secret")
    text = ok(cli("secrets", "redact")).stdout
    assert f"2 older backups of this brain may hold them too: {earlier}, {done['backup']}." in text
    assert ok(cli("secrets", "scan", "--format", "json")).json()["older_backups"] == []


def test_the_global_brain_is_scanned_and_redacted_with_global(cli, add, brain_path: Path, isolated_home: Path) -> None:
    """A Go-era global brain, or one written with allow_secret: no command reached it, and recall --global returned
    the secret (from a review)."""
    from cerebro import Brain, paths

    add("nothing to hide")
    ok(cli("init", "--global", "--embed-provider", "fake"))
    with Brain.open(paths.global_brain_path()) as other:
        secret_id = other.add(f"shared note {AWS}", allow_secret=True)
    assert ok(cli("secrets", "scan")).stdout == "No secrets found in 1 records.\n"  # the project's brain
    found = ok(cli("secrets", "scan", "--global", "--format", "json")).json()
    assert [(f["id"], f["content"]) for f in found["findings"]] == [(secret_id, ["aws-access-key"])]
    done = ok(cli("secrets", "redact", "--global", "--format", "json")).json()
    assert done["redacted"] is True and done["records"] == 1
    with Brain.open(paths.global_brain_path()) as other:
        assert other.get(secret_id).node.content == "shared note [secret:aws-access-key]"


def test_secrets_redact_dry_run_changes_nothing(cli, add, brain_path: Path) -> None:
    secret_id = add(f"old note {AWS}", "--allow-secret")
    data = ok(cli("secrets", "redact", "--dry-run", "--format", "json")).json()
    assert data["redacted"] is False and data["backup"] is None and data["secrets"] == 1
    assert node(brain_path, secret_id).content == f"old note {AWS}"


def test_config_turns_redaction_off_per_brain(cli, brain_path: Path) -> None:
    ok(cli("config", "set", "redact_secrets", "false"))
    stored = ok(cli("add", f"deploy key {AWS}")).stdout.strip()
    assert node(brain_path, stored).content == f"deploy key {AWS}"
