"""Pinned batches on a real GPU (issue 29): the scenarios of python/tests/gpu_scenarios.py, one process each --
workers made and dropped, persistent workers with a validation loader every epoch, a killed worker, a range
someone else registered -- each step checking that the process can still use CUDA. Skipped without CUDA;
tools/gpu_check.sh runs them on a GPU machine. test_pinned.py checks the same books without a GPU."""
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("needs CUDA (torch.cuda.is_available() is False)", allow_module_level=True)

from shard_fixtures import write_two_shards  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    return write_two_shards(tmp_path_factory.mktemp("gpu"))


def run_scenario(shards, name):
    r = subprocess.run([sys.executable, os.path.join(HERE, "gpu_scenarios.py"), shards, name],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ, CUDA_LAUNCH_BLOCKING="1"))
    print(r.stdout, r.stderr)
    assert r.returncode == 0 and r.stdout.strip().splitlines()[-1] == "%s: PASS" % name, r.stdout + r.stderr
    assert "BROKEN" not in r.stdout


@pytest.mark.parametrize("name", ["w0-w4", "persistent-validation", "killed-worker", "registered-elsewhere"])
def test_pinned_scenario_keeps_cuda_working(shards, name):
    run_scenario(shards, name)
