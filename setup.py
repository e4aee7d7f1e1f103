"""Builds the libshard Python package (python/libshard/) with the project's CMake.

    pip install .                         # a machine with a package index
    pip install --no-build-isolation .    # offline, Debian's setuptools / wheel / pybind11-dev / cmake / ninja
    pip wheel --no-build-isolation .      # a wheel

The compiled module libshard._libshard is the CMake target libshard_python,
configured Release (no debug info) with tests and benchmarks off for the
running interpreter, in build-wheel/ (not build/, the suite's CMake tree); the
`shard` program (the CMake target shard, the same binary `cmake --build`
makes) is built beside it and goes into the package as libshard/_bin/shard,
where auditwheel repair can point it at the libraries it bundles; the wheel's
script python/scripts/shard (VENV/bin/shard, on the venv's PATH) execs it.
Whenever the build uses the pybind11 Python package (pip's build isolation
installs pybind11>=2.12, pyproject.toml), CMake is told
LIBSHARD_REQUIRE_NUMPY2_ABI=ON and refuses an older pybind11, so a wheel can
never hold a module that misreads numpy 2's arrays.
CMAKE_ARGS (space-separated) adds arguments to the cmake configure step;
LIBSHARD_CMAKE_BUILD_DIR=<dir> reuses an already configured CMake build tree
(only the module target is brought up to date); it must have been configured
for a Python of the same version. The version is the one in CMakeLists.txt's
project() line (the module's __version__ is compiled from the same line).
"""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "python"))
from build_progress import BuildProgress, open_terminal  # noqa: E402  (python/build_progress.py)


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    m = re.search(r"project\(\s*libshard\s+VERSION\s+([0-9][0-9.]*)", text)
    if not m:
        raise RuntimeError("CMakeLists.txt: no `project(libshard VERSION x.y.z` line")
    return m.group(1)


def pybind11_dir():
    """-Dpybind11_DIR of the pybind11 Python package when one is importable (pip's build environment installs
    pybind11>=2.12 there, which reads numpy 2), so CMake does not pick an older system copy, and
    LIBSHARD_REQUIRE_NUMPY2_ABI=ON, so CMake refuses that package if it is older than 2.12; else nothing (the
    offline Debian build: pybind11-dev 2.10 found by CMake itself, a module for numpy 1 that refuses to import
    under numpy 2)."""
    try:
        import pybind11
        return ["-Dpybind11_DIR=" + pybind11.get_cmake_dir(), "-DLIBSHARD_REQUIRE_NUMPY2_ABI=ON"]
    except (ImportError, AttributeError):
        return []


class CMakeExtension(Extension):
    def __init__(self, name, target):
        super().__init__(name, sources=[])
        self.target = target


def cmake_build_dir(cmd):
    """The CMake build tree: LIBSHARD_CMAKE_BUILD_DIR, or one under setuptools' build_temp."""
    reuse = os.environ.get("LIBSHARD_CMAKE_BUILD_DIR")
    if reuse:
        return Path(reuse).resolve()
    build_ext_cmd = cmd.get_finalized_command("build_ext")
    return Path(build_ext_cmd.build_temp).resolve() / "cmake"


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        dest = Path(self.get_ext_fullpath(ext.name)).resolve()
        build_dir = cmake_build_dir(self)
        if os.environ.get("LIBSHARD_CMAKE_BUILD_DIR"):
            if not (build_dir / "CMakeCache.txt").exists():
                raise RuntimeError("LIBSHARD_CMAKE_BUILD_DIR=%s: not a configured CMake build tree" % build_dir)
        else:
            build_dir.mkdir(parents=True, exist_ok=True)
            cmd = ["cmake", "-S", str(ROOT), "-B", str(build_dir),
                   "-DCMAKE_BUILD_TYPE=Release",
                   "-DLIBSHARD_BUILD_TESTS=OFF", "-DLIBSHARD_BUILD_TOOLS=ON", "-DLIBSHARD_BUILD_BENCH=OFF",
                   "-DLIBSHARD_BUILD_PYTHON=ON", "-DPython3_EXECUTABLE=" + sys.executable]
            if shutil.which("ninja"):
                cmd += ["-G", "Ninja"]
            cmd += pybind11_dir()
            cmd += os.environ.get("CMAKE_ARGS", "").split()
            subprocess.run(cmd, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        # pip hides this output without -v: the progress goes to the terminal too (python/build_progress.py).
        tty = None if sys.stdout.isatty() else open_terminal()
        progress = BuildProgress(tty or sys.stderr)
        progress.start(int(jobs) if jobs.isdigit() else os.cpu_count() or 1)
        started = time.monotonic()
        build = subprocess.Popen(["cmake", "--build", str(build_dir), "--target", ext.target, "shard", "-j", jobs],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        for line in build.stdout:
            sys.stdout.write(line)
            progress.line(line)
        if build.wait() != 0:
            raise subprocess.CalledProcessError(build.returncode, build.args)
        progress.finish(time.monotonic() - started)
        if tty is not None:
            tty.close()
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = build_dir / "python" / "libshard" / ("_libshard" + suffix)
        if not built.exists():
            raise RuntimeError("%s not found: is %s configured for Python %d.%d?"
                               % (built, build_dir, sys.version_info[0], sys.version_info[1]))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, dest)
        # The program, inside the package (python/scripts/shard execs it).
        program = build_dir / "tools" / "shard"
        if not program.exists():
            raise RuntimeError("%s not found: is the CMake tree configured with LIBSHARD_BUILD_TOOLS=ON?" % program)
        (dest.parent / "_bin").mkdir(exist_ok=True)
        shutil.copyfile(program, dest.parent / "_bin" / "shard")
        os.chmod(dest.parent / "_bin" / "shard", 0o755)


# setuptools' own build folders: inside a reused CMake tree, else build-wheel/ (./build is the suite's CMake tree).
OPTIONS = {"build": {"build_base": "build-wheel"}}
if os.environ.get("LIBSHARD_CMAKE_BUILD_DIR"):
    OPTIONS["build"] = {"build_base": os.path.join(os.environ["LIBSHARD_CMAKE_BUILD_DIR"], "python", "setuptools")}

setup(
    name="libshard",
    options=OPTIONS,
    version=project_version(),
    description="TFRecord shards to training batches: a C++ reader with PyTorch, Keras and numpy front ends",
    long_description=(ROOT / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="MIT",
    python_requires=">=3.9",
    install_requires=["numpy"],
    extras_require={"torch": ["torch"]},
    package_dir={"": "python"},
    packages=["libshard"],
    package_data={"libshard": ["py.typed", "*.pyi"]},
    ext_modules=[CMakeExtension("libshard._libshard", target="libshard_python")],
    scripts=["python/scripts/shard"],  # execs libshard/_bin/shard, which build_ext puts in the package
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
