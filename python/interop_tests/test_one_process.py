"""libshard and TensorFlow in one process, in either import order (keras's default backend is TensorFlow, so a
Keras user has both). TensorFlow loads its own Protobuf with RTLD_GLOBAL; before libshard bound its module's
libraries to their own symbols (RTLD_DEEPBIND, libshard/__init__.py), its Protobuf called TensorFlow's and the
first manifest read crashed the process (SIGSEGV in DescriptorPool::FindFileByName). Each case runs in a fresh
interpreter, and its first batch must equal the one a process without TensorFlow reads."""
import os
import shutil
import subprocess
import sys

import pytest

READ = """
import hashlib, sys
%s
loader = libshard.Loader(sys.argv[1], 8, split="train", image_size=28)
images, labels = next(iter(loader))
print(hashlib.sha256(images.tobytes() + labels.tobytes()).hexdigest())
"""

ORDERS = {
    "libshard alone": "import libshard",
    "tensorflow first": "import tensorflow as tf\nimport libshard\nassert tf.constant(2).numpy() == 2",
    "libshard first": "import libshard\nimport tensorflow as tf\nassert tf.constant(2).numpy() == 2",
    "keras (tensorflow backend) first": "import keras\nimport libshard.keras\nimport libshard",
}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("one_process") / "ds"
    samples = os.path.join(os.path.dirname(__file__), "..", "..", "samples", "images")
    shard = shutil.which("shard")
    assert shard, "no `shard` on PATH"
    subprocess.run([shard, "convert", samples, "-o", str(out), "-q", "--seed", "1"], check=True, timeout=300)
    return str(out)


def first_batch_digest(dataset, imports):
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    r = subprocess.run([sys.executable, "-c", READ % imports, dataset], capture_output=True, text=True,
                       timeout=300, env=env)
    assert r.returncode == 0, "exit %d:\n%s" % (r.returncode, r.stderr[-3000:])
    return r.stdout.strip().splitlines()[-1]


def test_libshard_reads_the_same_batch_whatever_was_imported_before_it(dataset):
    want = first_batch_digest(dataset, ORDERS["libshard alone"])
    for name, imports in ORDERS.items():
        if name != "libshard alone":
            assert first_batch_digest(dataset, imports) == want, name
