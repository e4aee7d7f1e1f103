#!/usr/bin/env python3
"""Runs python/tests against the *installed* libshard package, on one of the project's two Python stacks.

Debian's stack (the ctest `python_tests`):
1. a fresh venv with --system-site-packages (Debian's numpy, torch, PIL, pytest) in WORK/venv;
2. `pip install --no-build-isolation --no-index --no-deps SOURCE` into it, with LIBSHARD_CMAKE_BUILD_DIR=BUILD
   so that setup.py reuses this build tree's compiled module instead of building everything again;
Today's stack (--wheel WHEEL --stack VENV; tools/test.sh --today):
1. a fresh venv *without* system site packages, made by the stack's own interpreter, that sees the pinned stack's
   packages (VENV, from tools/pystack.sh today) through a .pth file;
2. `pip install --no-deps WHEEL` into it: the binary wheel tools/build_wheels.sh made, not the build tree;
Then, on either:
3. pytest on SOURCE/python/tests (and each --also folder, e.g. python/interop_tests; or only the --only folders,
   e.g. python/engine_tests) with the venv's python,
   from WORK/run (outside the source tree), with LIBSHARD_EXPECT_INSTALLED=VENV so that test_package.py checks
   that the import came from the venv; the versions of the stack's packages are printed first;
4. removes WORK, setuptools' build folder (BUILD/python/setuptools) and anything pip left in the source tree
   that was not there before.

Exit status: pytest's; 77 (skipped) when the venv cannot be made (no python3-venv).
"""
import argparse
import os
import shutil
import subprocess
import sys


# Printed before the tests: what this run is tested with (docs/building.md's "Supported versions" table is made
# from these lines).
VERSIONS = r"""
import platform, sys
from importlib import metadata
names = ["numpy", "torch", "torchvision", "pillow", "pytest", "protobuf", "tensorflow-cpu", "nvidia-dali-cuda120",
         "keras", "jax", "jaxlib"]
found = []
for n in names:
    try:
        found.append("%s %s" % (n, metadata.version(n)))
    except metadata.PackageNotFoundError:
        pass
import libshard
print("run_installed: Python %s (%s), libshard %s (pybind11 %s, from %s); %s" % (
    platform.python_version(), sys.executable, libshard.__version__, libshard._libshard._pybind11_version,
    libshard.__file__, ", ".join(found)))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--wheel", help="install this wheel instead of the source tree (needs --stack)")
    ap.add_argument("--stack", help="the pinned stack's venv the fresh venv sees (with --wheel)")
    ap.add_argument("--also", action="append", default=[], help="another test folder to run, e.g. interop_tests")
    ap.add_argument("--only", action="append", default=[],
                    help="run this test folder (e.g. engine_tests) instead of python/tests")
    ap.add_argument("pytest_args", nargs="*")
    args = ap.parse_args()
    source, work = os.path.abspath(args.source), os.path.abspath(args.work)
    venv, run = os.path.join(work, "venv"), os.path.join(work, "run")
    # pip builds in the source tree: remember what is there to remove what it adds.
    leftovers = [os.path.join(source, "python", "libshard.egg-info")]
    existed = {p for p in leftovers if os.path.exists(p)}
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(run)
    try:
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        py = os.path.join(venv, "bin", "python")
        if args.wheel:
            if not args.stack:
                ap.error("--wheel needs --stack")
            stack_py = os.path.join(args.stack, "bin", "python")
            subprocess.run([stack_py, "-m", "venv", venv], check=True)
            site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  check=True, capture_output=True, text=True).stdout.strip()
            stack_site = subprocess.run([stack_py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        check=True, capture_output=True, text=True).stdout.strip()
            with open(os.path.join(site, "_libshard_test_stack.pth"), "w") as f:
                f.write(stack_site + "\n")
            subprocess.run([py, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-cache-dir",
                            os.path.abspath(args.wheel)], env=env, check=True, cwd=run)
        else:
            made = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv])
            if made.returncode != 0:
                print("run_installed: cannot create a venv (python3-venv missing?)")
                return 77
            env["LIBSHARD_CMAKE_BUILD_DIR"] = os.path.abspath(args.build)
            subprocess.run([py, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-index", "--no-deps",
                            "--no-cache-dir", source], env=env, check=True, cwd=run)
            env.pop("LIBSHARD_CMAKE_BUILD_DIR")
        subprocess.run([py, "-c", VERSIONS], check=True, env=env, cwd=run)
        env["LIBSHARD_EXPECT_INSTALLED"] = venv
        # torch's compile caches (/tmp/torchinductor_USER by default) go with the rest of WORK.
        env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(work, "torchinductor")
        env["TRITON_CACHE_DIR"] = os.path.join(work, "triton")
        env["PATH"] = os.path.join(venv, "bin") + os.pathsep + env.get("PATH", "")  # as an activated venv: its `shard`
        env.setdefault("LIBSHARD_SOURCE_DIR", source)
        tests = ([os.path.join(source, "python", d) for d in args.only] if args.only else
                 [os.path.join(source, "python", "tests")] + [os.path.join(source, "python", d) for d in args.also])
        return subprocess.run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "--basetemp", os.path.join(work, "pytest-tmp")] + tests + args.pytest_args,
                              env=env, cwd=run).returncode
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(os.path.join(os.path.abspath(args.build), "python", "setuptools"), ignore_errors=True)
        for p in leftovers:
            if p not in existed:
                shutil.rmtree(p, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
