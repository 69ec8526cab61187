"""Bad use of the cluster options: one line naming the problem and the fix, exit 2, nothing
stored — checked before any cluster is started."""

from __future__ import annotations

import json

from benchlab.store.db import Store
from tests.cli.forked import run_cli
from tests.conftest import assert_one_line_error


def test_cluster_options_refuse_bad_use_in_one_line(db_path, tmp_path):
    fleet = tmp_path / "fleet.json"
    fleet.write_text(json.dumps({"format": "benchlab-fleet-calibration", "version": 1,
                                 "base": "b", "machines": {"a": None}}))
    cases = [
        (["run", "--calibration", str(fleet), "true"], ("fleet calibration", "--cluster")),
        (["run", "--on", "2", "true"], ("--cluster",)),
        (["run", "--cluster", "local:x", "true"], ("--cluster", "local:N")),
        (["run", "--lost-after", "5s", "true"], ("--lost-after", "--cluster")),
        (["run", "--cluster", "local:1", "--lost-after", "soon", "true"],
         ("--lost-after", "not a duration")),
        (["run", "--cluster", "local:1", "--lost-after", "0s", "true"], ("--lost-after", "> 0")),
        (["run", "--cluster", "local:1", "--lost-after", "200h", "true"],
         ("--lost-after", "too long")),
        (["study", "run", "--builtin", "--lost-after", "5s"], ("--lost-after", "--cluster")),
        (["study", "run", "--builtin", "--cluster", "local:1", "--lost-after", "-3s"],
         ("--lost-after",)),
        (["variability", "--fleet"], ("fleet", "profile --cluster")),
        (["variability", "onlyone"], ("TARGET and BASE",)),
        (["variability", "--fleet", "--methods", "int64"], ("--fleet", "--methods")),
        (["profile", "--cluster", "local:1", "--cpus", "0"], ("--cluster", "--cpus")),
    ]
    Store.open(db_path).close()
    for argv, needles in cases:
        assert_one_line_error(run_cli(*argv, db=db_path), *needles)
    with Store.open(db_path, readonly=True) as store:
        assert store.sessions() == []
