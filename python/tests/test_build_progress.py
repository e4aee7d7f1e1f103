"""setup.py's progress lines while CMake builds (python/build_progress.py; issue 32: `pip install .` was silent
for minutes)."""
import importlib.util
import io
import os

# Loaded from its file: python/ on sys.path would make every later `import libshard` (and importlib.metadata)
# find the source tree instead of the installed package.
_spec = importlib.util.spec_from_file_location(
    "build_progress", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build_progress.py"))
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
BuildProgress = _module.BuildProgress


def test_a_line_at_each_tenth_of_the_ninja_steps():
    out = io.StringIO()
    p = BuildProgress(out)
    p.start(2)
    for k in range(1, 157):
        p.line("[%d/156] Building CXX object libshard/src/x%d.cc.o\n" % (k, k))
        p.line("some compiler warning text [not a step]\n")
    p.finish(312.4)
    lines = out.getvalue().splitlines()
    assert lines[0] == ("libshard: building the C++ extension and the shard program with CMake; this takes a few "
                        "minutes on 2 cores (pip -v shows each step)")
    steps = lines[1:-1]
    assert steps[0] == "libshard: [16/156] 10% built"
    assert steps[-1] == "libshard: [156/156] 100% built"
    assert len(steps) == 10
    assert lines[-1] == "libshard: C++ build done in 312 s"


def test_a_short_build_says_each_step_once():
    out = io.StringIO()
    p = BuildProgress(out)
    for k in range(1, 4):
        p.line("[%d/3] Linking\n" % k)
    assert out.getvalue().splitlines() == ["libshard: [1/3] 33% built", "libshard: [2/3] 66% built",
                                           "libshard: [3/3] 100% built"]
