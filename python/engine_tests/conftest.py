"""The engine tests (issue 48): Spark (pyspark in local mode), Ray (a local cluster) and Apache Beam (DirectRunner)
run the two stages of a conversion from samples -- each task writes its partition of a sample pack
(libshard.write_samples), then each task converts its shards of the pack (libshard.convert with num_tasks and
task_index), then libshard.merge -- and each result must equal one local `libshard.convert` of the image folder
the samples came from: every .tfrecord, .idx and .labels byte for byte, manifest.json apart from the run and the
input's place. The tables users hand over (a Hugging Face `datasets` table, a Parquet file) are built from the same
folder. Every engine is imported for real: a missing package fails the test (tools/pystack.sh engines).

Run by tools/test_today.sh against the wheel, in a venv that sees python/stacks/engines.txt.
"""
import os
import shutil
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
# The engines' workers import what the tasks' functions name (this module, the test modules) by name.
WORKER_PATH = os.pathsep.join([HERE, os.path.normpath(os.path.join(HERE, "..", "tests"))])
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [WORKER_PATH, os.environ.get("PYTHONPATH")] if p)

import libshard  # noqa: E402
from tools_fixtures import assert_same_shards, make_image_folder, manifest_apart_from_place  # noqa: E402

OPTIONS = dict(records_per_shard=3, seed=5, no_sync=True, threads=1)


@pytest.fixture(scope="session", autouse=True)
def private_tmp():
    """The engines' scratch files (Beam's beam-temp-*, the JVM's, Ray's sessions) go to a folder of this run,
    removed after it: a short path under /tmp, as Ray's AF_UNIX sockets live there (at most 107 bytes)."""
    tmp = tempfile.mkdtemp(prefix="libshard-engines-", dir="/tmp")
    saved = (os.environ.get("TMPDIR"), os.environ.get("JAVA_TOOL_OPTIONS"), tempfile.tempdir)
    os.environ["TMPDIR"] = tempfile.tempdir = tmp
    os.environ["JAVA_TOOL_OPTIONS"] = "-XX:-UsePerfData -Djava.io.tmpdir=" + tmp  # no /tmp/hsperfdata_USER
    yield tmp
    for name, value in zip(("TMPDIR", "JAVA_TOOL_OPTIONS"), saved[:2]):
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    tempfile.tempdir = saved[2]
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def pets(tmp_path_factory):
    """An image folder (split/class, JPEG and PNG, one file that is no image) and its local conversion."""
    root = tmp_path_factory.mktemp("pets")
    folder = make_image_folder(str(root / "pets"), per_class=5)
    libshard.convert(folder, root / "local", **OPTIONS)
    return folder, str(root / "local")


def assert_same_dataset(want, got):
    assert_same_shards(want, got)
    assert manifest_apart_from_place(want) == manifest_apart_from_place(got)
    assert open(os.path.join(want, "rejects.tsv")).read() == open(os.path.join(got, "rejects.tsv")).read()
    assert libshard.verify(got).ok
    # Nothing half-written is left looking complete: no temporary of a killed attempt.
    assert not [f for f in os.listdir(got) if "partial" in f]
