"""deploy/kubernetes: the Indexed Job and the merge job parse as Kubernetes
Jobs, and hold what they rely on: completionMode Indexed (JOB_COMPLETION_INDEX
becomes the task index), --num-tasks equal to completions, one s3:// prefix
shared by both jobs, no --task-index (it comes from the index), credentials
from a secret, the merge job merging (and then verifying) that prefix. The task command
is then run for every index against the real `shard` with JOB_COMPLETION_INDEX
set (to a local folder), and `shard merge` must accept the result."""
import os
import shlex
import subprocess

import pytest
import yaml

SOURCE = os.environ.get("LIBSHARD_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SAMPLES = os.path.join(SOURCE, "deploy", "kubernetes")


def job(name):
    with open(os.path.join(SAMPLES, name)) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    assert len(docs) == 1
    d = docs[0]
    assert d["apiVersion"] == "batch/v1" and d["kind"] == "Job"
    return d


def script(j):
    c = j["spec"]["template"]["spec"]["containers"]
    assert len(c) == 1
    assert c[0]["command"] == ["/bin/sh", "-c"]
    return c[0], " ".join(c[0]["args"])


def test_convert_job_is_indexed_with_matching_task_count():
    j = job("convert-job.yaml")
    spec = j["spec"]
    assert spec["completionMode"] == "Indexed"
    n = spec["completions"]
    assert 1 <= spec["parallelism"] <= n
    assert j["spec"]["template"]["spec"]["restartPolicy"] in ("Never", "OnFailure")
    container, cmd = script(j)
    argv = shlex.split(cmd)
    assert argv[:3] == ["exec", "shard", "convert"]
    assert argv[argv.index("--num-tasks") + 1] == str(n)
    assert "--task-index" not in argv  # JOB_COMPLETION_INDEX gives it
    assert argv[argv.index("-o") + 1].startswith("s3://")
    env = {e["name"]: e for e in container["env"]}
    for secret in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        assert "secretKeyRef" in env[secret]["valueFrom"]
    assert "AWS_ENDPOINT_URL" in env


def test_merge_job_merges_and_verifies_the_same_prefix():
    _, convert = script(job("convert-job.yaml"))
    prefix = shlex.split(convert)[shlex.split(convert).index("-o") + 1]
    container, cmd = script(job("merge-job.yaml"))
    steps = [s.strip() for s in cmd.split(";") if s.strip()]
    assert steps == ["set -e", "shard merge " + prefix, "shard verify -q " + prefix]
    env = {e["name"]: e for e in container["env"]}
    assert env["TMPDIR"]["value"] in [m["mountPath"] for m in container["volumeMounts"]]
    for secret in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        assert "secretKeyRef" in env[secret]["valueFrom"]


def test_the_task_command_runs_with_the_index_kubernetes_gives(tmp_path):
    shard = os.environ.get("SHARD")
    if not shard or not os.path.exists(shard):
        pytest.skip("SHARD (the shard program) is not set")
    j = job("convert-job.yaml")
    n = j["spec"]["completions"]
    _, cmd = script(j)
    argv = shlex.split(cmd)[1:]  # without "exec"
    # The sample's command with local paths: input, -o a folder, no staging, small size.
    argv[0] = shard
    argv[2] = os.path.join(SOURCE, "samples", "images")
    argv[argv.index("-o") + 1] = str(tmp_path / "out")
    i = argv.index("--staging")
    del argv[i:i + 2]
    argv[argv.index("--size") + 1] = "32"
    for index in range(n):
        env = dict(os.environ, JOB_COMPLETION_INDEX=str(index))
        for v in ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN"):
            env.pop(v, None)
        r = subprocess.run(argv + ["-q"], env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    assert len([f for f in os.listdir(tmp_path / "out" / ".libshard") if f.startswith("manifest.task-")]) == n
    r = subprocess.run([shard, "merge", str(tmp_path / "out")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert os.path.exists(tmp_path / "out" / "manifest.json")
