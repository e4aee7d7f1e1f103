"""The installed package: where it imports from, its version, its typing files and stubs."""
import ast
import os
import re

import pytest

import libshard
import libshard._libshard as core

SOURCE = os.environ.get("LIBSHARD_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
PACKAGE = os.path.dirname(libshard.__file__)


def test_imported_from_the_installed_package():
    venv = os.environ.get("LIBSHARD_EXPECT_INSTALLED")
    if not venv:
        pytest.skip("not run against an installed package (python/tests/run_installed.py sets it)")
    assert os.path.realpath(libshard.__file__).startswith(os.path.realpath(venv) + os.sep)
    assert os.path.realpath(core.__file__).startswith(os.path.realpath(venv) + os.sep)
    from importlib import metadata
    assert metadata.version("libshard") == libshard.__version__
    files = {str(f) for f in metadata.files("libshard")}
    assert {"libshard/__init__.py", "libshard/torch.py", "libshard/py.typed", "libshard/_libshard.pyi"} <= files
    assert any(re.fullmatch(r".*/?LICENSE", f) for f in files)


def test_version_is_the_cmake_project_version():
    text = open(os.path.join(SOURCE, "CMakeLists.txt")).read()
    want = re.search(r"project\(\s*libshard\s+VERSION\s+([0-9.]+)", text).group(1)
    assert libshard.__version__ == want == core.__version__


def test_typing_files_ship_with_the_package():
    assert os.path.isfile(os.path.join(PACKAGE, "py.typed"))
    assert os.path.isfile(os.path.join(PACKAGE, "_libshard.pyi"))


def stub_classes():
    tree = ast.parse(open(os.path.join(PACKAGE, "_libshard.pyi")).read())
    return {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}


def runtime_args(doc):
    """Argument names from pybind11's signature line: 'name(self: T, a: int, *, b: str = ...) -> None'."""
    sig = doc.splitlines()[0]
    inner = sig[sig.index("(") + 1:sig.rindex(")")]
    names, depth, cur = [], 0, ""
    for ch in inner + ",":
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            name = cur.strip().split(":")[0].split("=")[0].strip()
            if name and name not in ("self", "*"):
                names.append(name)
            cur = ""
        else:
            cur += ch
    return names


@pytest.mark.parametrize("cls", ["Dataset", "Loader", "Order", "ShardReader", "ShardWriter"])
def test_stub_documents_every_public_method_and_argument(cls):
    node = stub_classes()[cls]
    assert ast.get_docstring(node)
    stub = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
    runtime = getattr(core, cls)
    public = [m for m in dir(runtime) if not m.startswith("_")] + ["__init__", "__len__"] * (cls != "ShardWriter")
    for name in public:
        assert name in stub, "%s.%s is not in _libshard.pyi" % (cls, name)
        assert ast.get_docstring(stub[name]), "%s.%s has no docstring in the stub" % (cls, name)
    for name, fn in stub.items():
        member = getattr(runtime, name)
        if isinstance(member, property) or name in ("__enter__", "__exit__"):
            continue
        doc = member.__doc__ or ""
        if "(" not in doc.splitlines()[0]:
            continue
        want = runtime_args(doc)
        got = [a.arg for a in fn.args.args + fn.args.kwonlyargs if a.arg != "self"]
        got += ["**" + fn.args.kwarg.arg] if fn.args.kwarg else []
        assert got == want, "%s.%s: stub arguments %s, module %s" % (cls, name, got, want)
        text = ast.get_docstring(fn) or ""
        for a in got:
            assert a in text, "%s.%s: argument %s undocumented" % (cls, name, a)


def test_loader_arguments_beyond_sources_and_batch_size_are_keyword_only(tmp_path):
    path = tmp_path / "a.tfrecord"
    with libshard.ShardWriter(str(path)) as w:
        w.write({"image/encoded": b"x", "image/class/label": 0})
    with pytest.raises(TypeError):
        libshard.Loader(str(path), 1, (8, 8))
    assert len(libshard.Loader(str(path), 1, image_size=(8, 8))) == 1
    assert len(libshard.Loader(sources=str(path), batch_size=1, image_size=8)) == 1


def test_every_public_name_is_documented():
    """Each name in libshard.__all__ has a docstring: the compiled ones in _libshard.pyi, the Python ones
    (libshard.tools: convert, verify, inspect and their result types; libshard._samples: write_samples,
    convert_samples, merge) in their source; each of those functions documents each of its arguments."""
    stubs = stub_classes()
    tree = ast.parse(open(os.path.join(PACKAGE, "_libshard.pyi")).read())
    stub_functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    for name in libshard.__all__:
        if name == "__version__":
            continue
        obj = getattr(libshard, name)
        if getattr(obj, "__module__", "") in ("libshard.tools", "libshard._samples"):
            assert (obj.__doc__ or "").strip(), "libshard.%s has no docstring" % name
        else:
            assert name in stubs or name in stub_functions, "libshard.%s is not in _libshard.pyi" % name
    for name in dir(core):
        if callable(getattr(core, name)) and not isinstance(getattr(core, name), type) and name.startswith("_") \
                and not name.startswith("__"):
            assert name in stub_functions and ast.get_docstring(stub_functions[name]), name
    import inspect as pyinspect
    for fn in (libshard.convert, libshard.verify, libshard.inspect, libshard.write_samples,
               libshard.convert_samples):
        doc = fn.__doc__
        for a in pyinspect.signature(fn).parameters:
            if a not in ("options",):
                assert a in doc or a.replace("_", "-") in doc, "%s: argument %s undocumented" % (fn.__name__, a)


def test_loader_keywords_are_checked_by_name():
    """A misspelt keyword names the nearest one; a value of the wrong type names its keyword."""
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'shufle' \(did you mean 'shuffle'\?\)"):
        libshard.Loader("x.tfrecord", 1, shufle=True)
    with pytest.raises(TypeError, match=r"^augment: int 3"):
        libshard.Loader("x.tfrecord", 1, augment=3)


def test_the_program_is_inside_the_package_and_the_venvs_shard_execs_it(tmp_path):
    """`shard` is libshard/_bin/shard (where a wheel's auditwheel repair points it at the bundled libraries);
    VENV/bin/shard runs it in its own place, so its output and exit code are the program's."""
    venv = os.environ.get("LIBSHARD_EXPECT_INSTALLED")
    if not venv:
        pytest.skip("not run against an installed package (python/tests/run_installed.py sets it)")
    import subprocess
    program = os.path.join(PACKAGE, "_bin", "shard")
    assert os.access(program, os.X_OK)
    script = os.path.join(venv, "bin", "shard")
    assert open(script, "rb").read(2) == b"#!"  # the launcher, not a copy of the binary
    for args in (["--version"], ["verify", str(tmp_path / "missing")], ["no-such-command"]):
        direct = subprocess.run([program] + args, capture_output=True, text=True, cwd=str(tmp_path))
        launched = subprocess.run([script] + args, capture_output=True, text=True, cwd=str(tmp_path))
        assert (launched.returncode, launched.stdout, launched.stderr) == (
            direct.returncode, direct.stdout, direct.stderr), args
    assert direct.returncode == 2  # an unknown subcommand is a usage error, passed through


def test_the_launcher_says_what_is_missing_when_the_program_is_not_there(tmp_path):
    import shutil
    import subprocess
    import sys
    fake = tmp_path / "site" / "libshard"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    launcher = os.path.join(SOURCE, "python", "scripts", "shard")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"))
    r = subprocess.run([sys.executable, "-S", launcher, "--version"], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and "has no _bin/shard" in r.stderr and str(fake) in r.stderr, r.stderr
    shutil.rmtree(tmp_path / "site")
