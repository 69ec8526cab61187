"""A machine profile recorded in a store carries the store's keyed environment, as every
session does: variable values as HMAC digests under the store's secret (reproducible within
the store, so a changed variable shows), never the value itself."""

from __future__ import annotations

import hashlib
import hmac

from benchlab.machines.profile import run_profile
from benchlab.store import Store


def test_a_stored_profile_keys_environment_values_by_the_store_secret(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHLAB_TEST_TOKEN", "hunter2")
    with Store.open(tmp_path / "p.db") as store:
        run_profile(["int64"], name="here", duration_s=1, repeat=1, store=store)
        key = store.env_key()
        [session] = [s for s in store.sessions() if s["kind"] == "profile"]
        env = store.get_session(session["uid"])["environment"]
    stored = env["env_vars"]["BENCHLAB_TEST_TOKEN"]
    want = hmac.new(key, b"hunter2", hashlib.sha256).hexdigest()[:32]
    assert stored == "hmac:" + want and "hunter2" not in str(env)
