"""Builds the libshard Python package (python/libshard/) with the project's CMake.

    pip install .                         # a machine with a package index
    pip install --no-build-isolation .    # offline, Debian's setuptools / wheel / pybind11-dev / cmake / ninja
    pip wheel --no-build-isolation .      # a wheel

The compiled module libshard._libshard is the CMake target libshard_python,
configured with tests and benchmarks off for the running interpreter; the
`shard` program (the CMake target shard, the same binary `cmake --build`
makes) is built beside it and installed as the wheel's script, so it lands on
the venv's PATH (VENV/bin/shard).
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
try:
    from setuptools.command.build_scripts import build_scripts
except ImportError:  # setuptools < 69 (Debian 12's 66): the distutils command setuptools provides
    from distutils.command.build_scripts import build_scripts

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
    pybind11>=2.12 there, which reads numpy 2), so CMake does not pick an older system copy; else nothing (Debian's
    pybind11-dev is found by CMake itself)."""
    try:
        import pybind11
        return ["-Dpybind11_DIR=" + pybind11.get_cmake_dir()]
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


class ShardProgram(build_scripts):
    """The wheel's one script is the `shard` program build_ext built (copied as it is: an ELF binary, no
    shebang to rewrite); pip installs it executable in the environment's bin/."""

    def run(self):
        self.run_command("build_ext")  # builds the program too
        built = cmake_build_dir(self) / "tools" / "shard"
        if not built.exists():
            raise RuntimeError("%s not found: is the CMake tree configured with LIBSHARD_BUILD_TOOLS=ON?" % built)
        self.mkpath(self.build_dir)
        dest = os.path.join(self.build_dir, "shard")
        shutil.copyfile(built, dest)
        os.chmod(dest, 0o755)


# With a reused CMake tree, setuptools' own build folders go inside it rather than in ./build.
OPTIONS = {}
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
    scripts=["tools/shard"],  # built, not in the sources: ShardProgram puts the CMake target there
    cmdclass={"build_ext": CMakeBuild, "build_scripts": ShardProgram},
    zip_safe=False,
)
