"""The key of environment-variable digests lives in the user's 0600 key
file, never in the store, so a team member who can read the store cannot run a dictionary
against everyone's variables; an old store's key is adopted once and removed from the store."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sqlite3

from benchlab.store.db import Store
from tests.cli.forked import run_cli


def _digest(key: bytes, value: str) -> str:
    return "hmac:" + hmac.new(key, value.encode(), hashlib.sha256).hexdigest()[:32]


def test_store_holds_no_key_and_a_reader_cannot_guess_a_value(tmp_path):
    key_file = tmp_path / "alice" / "env-key"
    env = {"BENCHLAB_ENV_KEY_FILE": str(key_file), "BENCHLAB_TEST_PW": "hunter2"}
    run_cli("run", "-r", "1", "-w", "0", "true", db=tmp_path / "s.db", env=env, check=True)
    assert key_file.stat().st_mode & 0o777 == 0o600
    with sqlite3.connect(tmp_path / "s.db") as conn:
        assert conn.execute("SELECT * FROM store_meta WHERE key = 'env_key'").fetchall() == []
        meta = [bytes(r[0]) if isinstance(r[0], bytes) else r[0]
                for r in conn.execute("SELECT value FROM store_meta")]
        [environment] = [json.loads(r[0]) for r in conn.execute("SELECT environment FROM sessions")]
    stored = environment["env_vars"]["BENCHLAB_TEST_PW"]
    # the owner's key reproduces the digest; nothing in the store does
    assert stored == _digest(key_file.read_bytes(), "hunter2")
    for candidate in meta:
        if isinstance(candidate, bytes) and len(candidate) >= 16:
            assert stored != _digest(candidate, "hunter2")
    assert environment["env_vars_digest"].startswith("hmac-sha256/128, keyed by the user's key")


def test_two_users_digests_compare_by_name_only(tmp_path):
    """Different key files: the labels differ, so a diff compares which variables are set."""
    from benchlab.environment.diff import diff_environments

    db = tmp_path / "s.db"
    for user in ("alice", "bob"):
        run_cli("run", "-r", "1", "-w", "0", "true", db=db, check=True,
                env={"BENCHLAB_ENV_KEY_FILE": str(tmp_path / user / "env-key"),
                     "BENCHLAB_TEST_SAME": "same value"})
    with Store.open(db, readonly=True) as store:
        envs = [store.get_session(s["uid"])["environment"] for s in store.sessions()]
    assert envs[0]["env_vars_digest"] != envs[1]["env_vars_digest"]
    paths = [p for p, _, _ in diff_environments(envs[0], envs[1])]
    assert "env_vars.BENCHLAB_TEST_SAME" not in paths


def test_an_old_stores_key_is_adopted_and_removed_from_the_store(tmp_path):
    db = tmp_path / "old.db"
    run_cli("run", "-r", "1", "-w", "0", "true", db=db, check=True,
            env={"BENCHLAB_ENV_KEY_FILE": str(tmp_path / "setup-key")})
    old_key = os.urandom(32)
    with sqlite3.connect(db) as conn:  # as a store written before the key file holds it
        conn.execute("INSERT INTO store_meta (key, value) VALUES ('env_key', ?)", (old_key,))
    key_file = tmp_path / "carol" / "env-key"
    run_cli("run", "-r", "1", "-w", "0", "true", db=db, check=True,
            env={"BENCHLAB_ENV_KEY_FILE": str(key_file)})
    assert key_file.read_bytes() == old_key  # her earlier digests stay comparable
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT * FROM store_meta WHERE key = 'env_key'").fetchall() == []


def test_a_key_file_others_can_read_is_closed_again(tmp_path, monkeypatch):
    key_file = tmp_path / "env-key"
    key_file.write_bytes(os.urandom(32))
    key_file.chmod(0o644)
    monkeypatch.setenv("BENCHLAB_ENV_KEY_FILE", str(key_file))
    with Store.open(tmp_path / "s.db") as store:
        assert store.env_key() == key_file.read_bytes()
    assert key_file.stat().st_mode & 0o777 == 0o600
