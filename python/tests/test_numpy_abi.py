"""numpy 2, whatever pybind11 built the module (issue 29): a module built with pybind11 < 2.12 (which reads
numpy 2's array descriptors with numpy 1's layout: wrong pixels, silently) refuses to import under numpy >= 2,
naming both versions and the fix; Debian 12's pair (pybind11 2.10, numpy 1.24) and pybind11 >= 2.12 with numpy 2
import. Each case runs in a fresh interpreter with the recorded pybind11 version and numpy's version replaced."""
import re
import subprocess
import sys
import textwrap

import pytest

import libshard


def import_with(pybind11_version, numpy_version):
    code = textwrap.dedent("""
        import sys, numpy
        import libshard
        libshard._libshard._pybind11_version = %r
        numpy.__version__ = %r
        for name in [m for m in sys.modules if m == "libshard" or (m.startswith("libshard.") and
                                                                   m != "libshard._libshard")]:
            del sys.modules[name]
        import libshard  # runs the package's check again, over the same compiled module
        print("imported", libshard._libshard._pybind11_version)
    """ % (pybind11_version, numpy_version))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_the_module_records_the_pybind11_it_was_built_with():
    assert re.fullmatch(r"\d+\.\d+\.\w+", libshard._libshard._pybind11_version)


def test_an_old_pybind11_under_numpy_2_refuses_to_import_naming_both_versions_and_the_fix():
    r = import_with("2.10.3", "2.5.0")
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: libshard: its compiled module was built with pybind11 2.10.3"), r.stderr
    assert "numpy 2.5.0 is imported here" in last and "wrong pixels" in last
    assert 'pybind11>=2.12' in last and 'numpy<2' in last


@pytest.mark.parametrize("pybind11_version,numpy_version", [("2.10.3", "1.24.2"), ("2.11.1", "1.26.4"),
                                                            ("2.12.0", "2.0.0"), ("2.13.6", "2.5.0"),
                                                            ("3.0.1", "2.5.0")])
def test_pairs_that_read_numpy_right_import(pybind11_version, numpy_version):
    r = import_with(pybind11_version, numpy_version)
    assert r.returncode == 0 and r.stdout.strip() == "imported " + pybind11_version, r.stderr


def test_the_check_reads_release_candidates_and_dev_versions():
    with pytest.raises(ImportError, match="pybind11 2.11.dev1"):
        libshard._check_numpy_abi("2.11.dev1", "2.0.0rc1")
    libshard._check_numpy_abi("2.12.0.dev1", "2.0.0rc1")
    libshard._check_numpy_abi("2.10.0", "1.26.0rc1")


def test_a_module_running_under_numpy_2_was_built_with_pybind11_2_12_or_later():
    """Today's stack (numpy 2, the wheel): the module really is a numpy 2 one, not one let through by the check."""
    import numpy
    if int(numpy.__version__.split(".")[0]) < 2:
        pytest.skip("numpy %s: Debian's stack, whose module is built with pybind11 %s for numpy 1"
                    % (numpy.__version__, libshard._libshard._pybind11_version))
    major, minor = (int(x) for x in libshard._libshard._pybind11_version.split(".")[:2])
    assert (major, minor) >= (2, 12), libshard._libshard._pybind11_version
