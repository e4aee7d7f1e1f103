"""The interop tests (issue 42, part 3): the programs that really read libshard's shards -- tf.data, NVIDIA DALI,
Keras 3, JAX, torchvision's detection models -- each read sets that `shard convert` wrote, and each test compares
what that reader got with libshard's own Loader (or the raw records), record for record.

`shard` is found on PATH (the installed wheel's, or build/tools for a build tree); every peer is imported for real:
a missing package or program fails the test, nothing is skipped for want of it. The sets are converted once per
session into pytest's temporary folder (interop_sets.make_sets).
"""
import os
import shutil
import subprocess
from importlib import metadata

import pytest

# torchvision before TensorFlow: torchvision imports triton (through torch._dynamo), whose LLVM registers its
# command-line options again when TensorFlow's LLVM is already loaded, and the process aborts with "LLVM ERROR:
# inconsistency in registered CommandLine options" (seen with TensorFlow 2.21, torchvision 0.29). Imported in this
# order the two live in one process.
import torch  # noqa: F401
import torchvision  # noqa: F401

import interop_sets

# The distributions whose versions the run prints, as PyPI names them (the first one installed of each group).
PEERS = [("tensorflow-cpu", "tensorflow"), ("nvidia-dali-cuda120", "nvidia-dali-cuda130"), ("keras",), ("jax",),
         ("jaxlib",), ("torch",), ("torchvision",), ("numpy",), ("protobuf",), ("pillow",)]


def _version(names):
    for name in names:
        try:
            return "%s %s" % (name, metadata.version(name))
        except metadata.PackageNotFoundError:
            pass
    return "%s MISSING" % names[0]


def versions():
    """The lines naming what this run read the shards with."""
    try:
        import libshard
        ours = "libshard %s (%s)" % (libshard.__version__, os.path.dirname(libshard.__file__))
    except ImportError as e:
        ours = "libshard MISSING (%s)" % e
    shard = shutil.which("shard")
    if shard:
        shard_version = subprocess.run([shard, "--version"], capture_output=True, text=True,
                                       timeout=60).stdout.strip()
    else:
        shard_version = "MISSING (not on PATH)"
    return ["interop peers: " + ", ".join(_version(names) for names in PEERS),
            "interop %s; %s (%s)" % (ours, shard_version, shard)]


def pytest_report_header(config):
    return versions()


def pytest_terminal_summary(terminalreporter, config):
    # -q leaves the header out: then the versions come at the end.
    if config.option.verbose < 0:
        for line in versions():
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def sets(tmp_path_factory):
    """name -> interop_sets.ConvertedSet, converted once per session (interop_sets.make_sets lists them)."""
    return interop_sets.make_sets(tmp_path_factory.mktemp("sets"))
