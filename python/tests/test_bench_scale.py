"""bench/scale/run.py cannot rot: a tiny run of each stage, its table and its JSON checked (the benchmark itself,
at 10^5 records and more, runs outside CI: docs/performance.md, "Scale")."""
import json
import os
import subprocess
import sys

import pytest

from tools_fixtures import shard_program

SHARD = shard_program()

SOURCE = os.environ.get("LIBSHARD_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.mark.skipif(SHARD is None, reason="needs the shard program (LIBSHARD_BUILD_DIR or PATH)")
def test_the_scale_benchmark_runs_every_stage_and_reports_growth(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "scale.json"
    work = tmp_path / "work"
    r = subprocess.run([sys.executable, os.path.join(SOURCE, "bench", "scale", "run.py"), "--sizes", "1200,2400",
                        "--classes", "6", "--shard", SHARD, "--pythonpath", "", "--python", sys.executable,
                        "--work", str(work), "--json", str(out)], capture_output=True, text=True, timeout=500)
    assert r.returncode == 0, r.stderr[-3000:]
    for row in ("convert peak RSS", "merge wall", "manifest.json", "Loader open", "first batch epoch 1",
                "worker private mem e0"):
        assert row in r.stdout, row
    doc = json.loads(out.read_text())
    assert doc["sizes"] == [1200, 2400] and set(doc["results"]) == {"1200", "2400"}
    big = doc["results"]["2400"]
    assert big["manifest"]["bytes"] > 0 and big["first_batch_e1"]["wall_s"] > 0
    assert any("manifest.json" in c["check"] for c in doc["checks"])
    assert not work.exists()  # removed without --keep
