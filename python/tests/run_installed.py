#!/usr/bin/env python3
"""Runs python/tests against the *installed* libshard package (the ctest `python_tests`).

1. a fresh venv with --system-site-packages (Debian's numpy, torch, PIL, pytest) in WORK/venv;
2. `pip install --no-build-isolation --no-index --no-deps SOURCE` into it, with LIBSHARD_CMAKE_BUILD_DIR=BUILD
   so that setup.py reuses this build tree's compiled module instead of building everything again;
3. pytest on SOURCE/python/tests with the venv's python, from WORK/run (outside the source tree), with
   LIBSHARD_EXPECT_INSTALLED=VENV so that test_package.py checks that the import came from the venv;
4. removes WORK, setuptools' build folder (BUILD/python/setuptools) and anything pip left in the source tree
   that was not there before.

Exit status: pytest's; 77 (skipped) when the venv cannot be made (no python3-venv).
"""
import argparse
import os
import shutil
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
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
        made = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv])
        if made.returncode != 0:
            print("run_installed: cannot create a venv (python3-venv missing?)")
            return 77
        py = os.path.join(venv, "bin", "python")
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env["LIBSHARD_CMAKE_BUILD_DIR"] = os.path.abspath(args.build)
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        subprocess.run([py, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-index", "--no-deps",
                        "--no-cache-dir", source], env=env, check=True, cwd=run)
        env.pop("LIBSHARD_CMAKE_BUILD_DIR")
        env["LIBSHARD_EXPECT_INSTALLED"] = venv
        env.setdefault("LIBSHARD_SOURCE_DIR", source)
        tests = os.path.join(source, "python", "tests")
        return subprocess.run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "--basetemp", os.path.join(work, "pytest-tmp"), tests] + args.pytest_args,
                              env=env, cwd=run).returncode
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(os.path.join(os.path.abspath(args.build), "python", "setuptools"), ignore_errors=True)
        for p in leftovers:
            if p not in existed:
                shutil.rmtree(p, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
