"""libshard.convert / verify / inspect against the `shard` program, and the program the package installs."""
import filecmp
import json
import os
import signal
import subprocess
import sys

import pytest

import libshard
from tools_fixtures import make_image_folder, shard_program

SHARD = shard_program()
needs_shard = pytest.mark.skipif(SHARD is None, reason="no `shard` program (not installed, no LIBSHARD_BUILD_DIR)")


def run_shard(*args, cwd=None):
    return subprocess.run([SHARD] + [str(a) for a in args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def images(tmp_path):
    return make_image_folder(str(tmp_path / "pets"))


def tree(folder):
    """Every file under folder, relative, except the lock and the per-shard entries' folder."""
    out = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != ".libshard"]
        out += [os.path.relpath(os.path.join(root, f), folder) for f in files]
    return sorted(out)


def without_run_fields(manifest_text):
    """manifest.json without what names the run rather than the data: when it started and how long it took."""
    m = json.loads(manifest_text)
    m["run"].pop("started")
    m["run"].pop("seconds")
    return m


# --- 1. `pip install .` brings the `shard` program ---------------------------------------------------------------

def test_pip_install_puts_shard_on_the_venvs_path(tmp_path):
    venv = os.environ.get("LIBSHARD_EXPECT_INSTALLED")
    if not venv:
        pytest.skip("not run against an installed package (python/tests/run_installed.py sets it)")
    program = os.path.join(venv, "bin", "shard")
    assert os.access(program, os.X_OK), "pip install did not install bin/shard"
    assert os.path.realpath(SHARD) == os.path.realpath(program)
    # From outside the source tree, as a user runs it: the venv's bin first on PATH.
    env = dict(os.environ, PATH=os.path.join(venv, "bin") + os.pathsep + os.environ.get("PATH", ""))
    v = subprocess.run(["shard", "--version"], capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert v.returncode == 0 and v.stdout.strip() == "shard " + libshard.__version__
    src = make_image_folder(str(tmp_path / "pets"))
    c = subprocess.run(["shard", "convert", "pets", "-o", "out", "-q"], capture_output=True, text=True, env=env,
                       cwd=str(tmp_path))
    assert c.returncode == 3, c.stderr  # every image converted, the broken file rejected
    assert os.path.isfile(tmp_path / "out" / "manifest.json")
    assert src and libshard.Loader(str(tmp_path / "out"), 4, split="train", image_size=16).num_samples == 12


# --- 2. libshard.convert ---------------------------------------------------------------------------------------

@needs_shard
@pytest.mark.parametrize("options", [
    {},
    {"size": 24, "format": "png", "shard_size": "4KiB", "seed": 7, "prefix": "p", "label_offset": 1,
     "resize_mode": "letterbox", "fill": "1,2,3"},
    {"records_per_shard": 3, "no_shuffle": True, "format": "raw", "zstd_level": 3, "raw_filter": "up",
     "channels": "gray", "threads": 2},
])
def test_convert_is_byte_identical_to_the_program(images, tmp_path, options):
    flags = []
    for k, v in options.items():
        flags += ["--" + k.replace("_", "-")] + ([] if v is True else [str(v)])
    cli = run_shard("convert", images, "-o", tmp_path / "cli", "-q", *flags)
    assert cli.returncode == 3, cli.stderr
    r = libshard.convert(images, tmp_path / "py", **options)
    assert tree(tmp_path / "cli") == tree(tmp_path / "py")
    for f in tree(tmp_path / "cli"):
        if f == "manifest.json":
            a = (tmp_path / "cli" / f).read_text()
            b = (tmp_path / "py" / f).read_text()
            assert without_run_fields(a) == without_run_fields(b)
        else:
            assert filecmp.cmp(tmp_path / "cli" / f, tmp_path / "py" / f, shallow=False), f
    # The result is the summary line's and the manifest's.
    m = json.loads((tmp_path / "py" / "manifest.json").read_text())
    assert r.manifest == m
    assert r.manifest_path == str(tmp_path / "py" / "manifest.json")
    assert r.rejected == 1 and len(r.rejects) == 1
    assert r.rejects[0][0].endswith("broken0.jpg") and r.rejects[0][1]
    assert r.converted == 24 and r.kept == 0 and r.shards_reused == 0
    assert r.shards_written == len(r.shards) and all(os.path.isfile(s) for s in r.shards)
    assert sorted(os.path.basename(s) for s in r.shards) == sorted(f for f in tree(tmp_path / "py")
                                                                   if f.endswith(".tfrecord"))
    rejects_tsv = (tmp_path / "py" / "rejects.tsv").read_text()
    assert r.rejects[0][0] in rejects_tsv


@needs_shard
def test_convert_dedup_takes_the_programs_modes(images, tmp_path):
    """dedup="within,across" (the flag's text) drops a train image's copy from val, naming the train file, as
    `shard convert --dedup within,across` does, byte for byte; an unknown mode is the program's usage error."""
    import shutil
    shutil.copy(os.path.join(images, "train", "dog", "dog1.png"), os.path.join(images, "val", "eel", "copy.png"))
    cli = run_shard("convert", images, "-o", tmp_path / "cli", "-q", "--dedup", "within,across")
    assert cli.returncode == 3, cli.stderr
    r = libshard.convert(images, tmp_path / "py", dedup="within,across")
    for f in tree(tmp_path / "cli"):
        if f != "manifest.json":
            assert filecmp.cmp(tmp_path / "cli" / f, tmp_path / "py" / f, shallow=False), f
    assert r.manifest["options"]["dedup"] == "within,across"
    assert [why for path, why in r.rejects if path.endswith("copy.png")] == [
        "duplicate of train/dog/dog1.png in train (exact: equal pixels)"]
    with pytest.raises(ValueError, match="--dedup must be within, across or within,across, not 'sideways'"):
        libshard.convert(images, tmp_path / "x", dedup="sideways")


@needs_shard
def test_convert_refuses_what_the_program_refuses_with_its_message(images, tmp_path):
    cases = [({"size": "0"}, "--size"), ({"quality": 0}, "--quality"), ({"shard_size": "12XB"}, "--shard-size"),
             ({"resize_mode": "letterbox"}, "--resize-mode letterbox needs --size"),
             ({"format": "gif"}, "gif"), ({"labels": str(tmp_path / "none.txt")}, "none.txt")]
    for options, needle in cases:
        flags = []
        for k, v in options.items():
            flags += ["--" + k.replace("_", "-"), str(v)]
        cli = run_shard("convert", images, "-o", tmp_path / "x", *flags)
        assert cli.returncode == 2
        message = cli.stderr.splitlines()[0]
        with pytest.raises(ValueError) as e:
            libshard.convert(images, tmp_path / "x", **options)
        assert str(e.value) == message and needle in message
    assert not os.path.exists(tmp_path / "x")
    with pytest.raises(ValueError, match="shard convert: .*missing"):
        libshard.convert(str(tmp_path / "missing"), tmp_path / "y")
    with pytest.raises(TypeError, match="unexpected keyword argument 'sise'"):
        libshard.convert(images, tmp_path / "y", sise=224)
    with pytest.raises(TypeError, match="dry_run"):
        libshard.convert(images, tmp_path / "y", dry_run=True)
    with pytest.raises(TypeError, match="is a flag"):
        libshard.convert(images, tmp_path / "y", no_shuffle="yes")


def test_convert_progress_resume_and_interrupt(images, tmp_path):
    seen = []
    r = libshard.convert(images, tmp_path / "out", progress=seen.append, records_per_shard=5, no_sync=True)
    assert seen and isinstance(seen[-1], libshard.ConvertProgress)
    assert seen[-1].done == seen[-1].total == 25 and seen[-1].rejected == 1
    assert [p.done for p in seen] == sorted(p.done for p in seen)
    # A rerun keeps everything.
    again = libshard.convert(images, tmp_path / "out", records_per_shard=5, no_sync=True)
    assert again.converted == 0 and again.kept == 24 and again.shards_written == 0
    assert again.shards_reused == r.shards_written

    # An exception from the callback stops the run the same way and reaches the caller.
    def fail(p):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        libshard.convert(images, tmp_path / "fail", progress=fail)


CHILD = r"""
import json, signal, sys, time, libshard
signal.signal(signal.SIGINT, signal.default_int_handler)  # also when the suite runs in the background (SIG_IGN)
seen = []
def progress(p):
    seen.append(p)
    if len(seen) == 1:
        print("started", flush=True)   # the parent sends SIGINT now;
        time.sleep(60)                 # waiting for it here, so a fast conversion cannot finish first
try:
    libshard.convert(sys.argv[1], sys.argv[2], progress=progress, threads=1, format="png", records_per_shard=40)
    print(json.dumps({"interrupted": False}))
except KeyboardInterrupt:
    print(json.dumps({"interrupted": True, "done": seen[-1].done, "total": seen[-1].total}))
"""


@needs_shard
def test_ctrl_c_stops_a_conversion_that_then_resumes_to_the_programs_bytes(tmp_path):
    """SIGINT while libshard.convert runs (GIL released, threads converting): KeyboardInterrupt in the caller
    well before the end, no manifest, no partial shard left, and the same call resumes to the program's bytes."""
    src = make_image_folder(str(tmp_path / "many"), classes=("a", "b"), per_class=150, splits=("train",), bad=0)
    child = subprocess.Popen([sys.executable, "-c", CHILD, src, str(tmp_path / "py")], stdout=subprocess.PIPE,
                             text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert child.stdout.readline().strip() == "started"
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=300)
    assert child.returncode == 0
    result = json.loads(out)
    assert result["interrupted"] and result["done"] < result["total"] == 300
    assert not os.path.exists(tmp_path / "py" / "manifest.json")
    assert [f for f in os.listdir(tmp_path / "py" / ".libshard") if "partial" in f] == []
    resumed = libshard.convert(src, tmp_path / "py", threads=1, format="png", records_per_shard=40)
    assert resumed.converted + resumed.kept == 300
    cli = run_shard("convert", src, "-o", tmp_path / "cli", "-q", "--format", "png", "--records-per-shard", "40")
    assert cli.returncode == 0, cli.stderr
    assert tree(tmp_path / "cli") == tree(tmp_path / "py")
    for f in tree(tmp_path / "cli"):
        if f != "manifest.json":
            assert filecmp.cmp(tmp_path / "cli" / f, tmp_path / "py" / f, shallow=False), f


def test_convert_warns_and_returns_the_layout(images, tmp_path):
    """The program's layout line and listing warnings reach Python: the layout as data (kind, splits, classes per
    split), each warning issued once as a UserWarning (and kept in r.warnings)."""
    import warnings as w
    with w.catch_warnings(record=True) as caught:
        w.simplefilter("always")
        r = libshard.convert(images, tmp_path / "split", no_sync=True)
    assert [str(c.message) for c in caught] == []
    assert r.layout.kind == "split/class"
    assert r.layout.splits == [libshard.tools.SplitLayout("train", "", 13, 3),
                               libshard.tools.SplitLayout("val", "", 12, 3)]
    assert r.layout.text == "layout split/class: split train 13 samples in 3 classes, split val 12 samples in 3 classes"
    # A class folder named like a split: the program warns; so does Python, once.
    src = make_image_folder(str(tmp_path / "data"), classes=("cat", "test_set"), splits=("pets",), bad=0)
    with w.catch_warnings(record=True) as caught:
        w.simplefilter("always")
        r = libshard.convert(os.path.join(src, "pets"), tmp_path / "classes", no_sync=True)
    messages = [str(c.message) for c in caught if issubclass(c.category, UserWarning)]
    assert len(messages) == 1 and "'test_set' looks like a split but was taken as a class" in messages[0], messages
    assert len(r.warnings) == 1 and r.warnings[0] in messages[0]
    assert r.layout.kind == "class" and r.layout.splits == [libshard.tools.SplitLayout("train", "", 8, 2)]


def test_convert_args_are_the_programs_flags(images):
    assert libshard.tools.convert_args(images, "out", size=224, no_shuffle=True, shard_size="64MiB",
                                       label_offset=1, no_sync=False) == [
        images, "--output", "out", "--size", "224", "--no-shuffle", "--shard-size", "64MiB", "--label-offset", "1"]



@needs_shard
def test_convert_options_are_the_programs_and_refuse_every_checked_value_alike(images, tmp_path):
    """libshard.convert sets its keywords through the library's table that `shard convert` registers its options
    from: the same options, and a value a flag's check refuses gives the program's first line."""
    help_text = run_shard("convert", "--help").stdout
    listed = {w.lstrip("-").split(",")[-1].lstrip("-") for line in help_text.splitlines()
              for w in line.split()[:1] if w.startswith("-") and w not in ("-h,--help",)}
    flags = {name for name, _, positional, _ in libshard._libshard._convert_flags() if not positional}
    assert flags == listed and len(flags) > 50
    cases = [{"seed": -1}, {"tiff_page": -1}, {"threads": 257}, {"records_per_shard": "010"},
             {"val_fraction": "nan"}, {"box_min_visible": 2}, {"prefix": ""}, {"layout": "x"},
             {"feature": "bad"}, {"on_error": "x"}, {"num_tasks": 2, "task_index": 5}]
    for options in cases:
        flags_text = []
        for k, v in options.items():
            flags_text += ["--" + k.replace("_", "-"), str(v)]
        cli = run_shard("convert", images, "-o", tmp_path / "x", *flags_text)
        assert cli.returncode == 2, options
        with pytest.raises(ValueError) as e:
            libshard.convert(images, tmp_path / "x", **options)
        assert str(e.value) == cli.stderr.splitlines()[0], options
    assert not os.path.exists(tmp_path / "x")

# --- 3. libshard.verify ----------------------------------------------------------------------------------------

@needs_shard
def test_verify_reports_the_programs_json_faults(images, tmp_path):
    out = tmp_path / "out"
    r = libshard.convert(images, out, records_per_shard=6, no_sync=True)
    good = libshard.verify(str(out))
    assert good.ok and good.faults == [] and bool(good)
    assert good.summary["records"] == 24
    # Damage one shard: a payload byte of its second record, and cut another's tail.
    first = sorted(r.shards)[0]
    data = bytearray(open(first, "rb").read())
    data[len(data) // 2] ^= 0x40
    open(first, "wb").write(bytes(data))
    second = sorted(r.shards)[1]
    size = os.path.getsize(second)
    os.truncate(second, size - 7)
    for kwargs, flags in [({}, []), ({"decode": True}, ["--decode"]), ({"threads": 1}, ["--threads", "1"]),
                          ({"manifest": str(out / "manifest.json")}, ["--manifest", str(out / "manifest.json")])]:
        rep = libshard.verify([str(out)], **kwargs)
        cli = run_shard("verify", "--json", out, *flags)
        assert cli.returncode == 1
        doc = json.loads(cli.stdout)
        for d in (doc, rep.json):
            d["summary"].pop("seconds")
            d["summary"].pop("mb_per_s")
        assert rep.json == doc
        assert not rep.ok
        want = [(f["path"], x["offset"], x["record"], x["kind"], x["message"]) for f in doc["files"]
                for x in f["faults"]]
        want += [(x["path"], None, None, x["kind"], x["message"]) for m in doc["manifests"] for x in m["faults"]]
        assert [tuple(f) for f in rep.faults] == want
        kinds = {f.kind for f in rep.faults}
        assert {"data_crc_mismatch", "truncated_data"} <= kinds | {"truncated_header"}, kinds
        assert any(f.file == first and f.offset is not None and f.record is not None for f in rep.faults)
        assert any(f.kind.startswith("manifest_") and f.offset is None for f in rep.faults)


def test_paths_that_are_not_utf8_work_as_the_loader_takes_them(images, tmp_path):
    # They raised a pybind TypeError, while Loader read the same folder: bytes, os.PathLike and surrogate-escaped
    # str are all one path (os.fsencode's bytes).
    source = os.fsencode(str(tmp_path)) + b"/photos-\xff"
    os.rename(images, source)
    out = os.fsencode(str(tmp_path)) + b"/out-\xfe"
    # The default prefix is the folder's name: refused, saying how to choose another.
    with pytest.raises(ValueError, match=r"shard prefix 'photos-\\xff' is not valid UTF-8 \(the default prefix is "
                                         r"the input's name; --prefix NAME sets another\)"):
        libshard.convert(source, out, records_per_shard=10, no_sync=True)
    r = libshard.convert(source, out, records_per_shard=10, no_sync=True, prefix="photos")
    assert r.converted == 24 and all(os.fsencode(s).startswith(out) for s in r.shards)
    for given in (out, os.fsdecode(out), type("P", (), {"__fspath__": lambda self: out})()):
        report = libshard.verify(given, decode=True)
        assert report.ok and report.summary["records"] == 24
        assert all(os.fsencode(f["path"]).startswith(out) for f in report.json["files"])
    assert len(libshard.Loader(out, 4, image_size=8, split="*")) == 6
    assert sum(libshard.inspect(os.fsencode(s)).records for s in r.shards) == 24
    # A message naming such a path is a ValueError that shows the byte, not an empty one.
    with pytest.raises(ValueError, match=r"missing-\\xfd"):
        libshard.convert(os.fsencode(str(tmp_path)) + b"/missing-\xfd", out, no_sync=True)
    with pytest.raises(ValueError, match=r"nowhere-\\xfd"):
        libshard.verify(os.fsencode(str(tmp_path)) + b"/nowhere-\xfd")


def test_verify_usage_errors_raise(tmp_path):
    with pytest.raises(ValueError, match="nothing to check"):
        libshard.verify([])
    with pytest.raises(ValueError, match="--compression"):
        libshard.verify([str(tmp_path)], compression="lz4")
    with pytest.raises(ValueError, match="missing.tfrecord: no such file or folder"):
        libshard.verify([str(tmp_path / "missing.tfrecord")])
    junk = tmp_path / "junk.tfrecord"
    junk.write_bytes(b"\x01" * 40)
    rep = libshard.verify(junk)
    assert not rep.ok and [(f.file, f.offset, f.record) for f in rep.faults] == [(str(junk), 0, 0)]


# --- 4. libshard.inspect ---------------------------------------------------------------------------------------

@needs_shard
def test_inspect_is_the_programs_json_with_records_as_dicts(images, tmp_path):
    r = libshard.convert(images, tmp_path / "out", no_sync=True)
    shard = sorted(r.shards)[0]
    got = libshard.inspect(shard, n=2)
    cli = json.loads(run_shard("inspect", "--json", "-n", "2", shard).stdout)
    assert got._asdict() == dict(cli, first_examples=got.first_examples)
    assert got.records == libshard.ShardReader(shard).__len__() > 2
    keys = {f["key"]: f for f in got.features}
    assert keys["image/encoded"]["kind"] == "bytes_list" and keys["image/class/label"]["kind"] == "int64_list"
    assert len(got.first_records) == len(got.first_examples) == 2
    ex = got.first_examples[0]
    assert ex == libshard.ShardReader(shard).example(0)
    assert isinstance(ex["image/class/label"][0], int) and isinstance(ex["image/filename"][0], bytes)
    assert got.error is None
    with pytest.raises(FileNotFoundError):
        libshard.inspect(str(tmp_path / "missing.tfrecord"))
    # A cut file: read up to the damage, which `error` names.
    cut = tmp_path / "cut.tfrecord"
    cut.write_bytes(open(shard, "rb").read()[:-5])
    damaged = libshard.inspect(str(cut), n=1)
    assert damaged.error and str(cut) in damaged.error and damaged.records == got.records - 1


@needs_shard
def test_inspect_errors_are_value_errors_with_the_programs_message(images, tmp_path):
    r = libshard.convert(images, tmp_path / "out", no_sync=True)
    shard = sorted(r.shards)[0]
    for kw, flags, text in ((dict(compression="bogus"), ["--compression", "bogus"], "bogus"),
                            (dict(n=-1), ["-n", "-1"], "-1")):
        with pytest.raises(ValueError, match="shard inspect: .*" + text):
            libshard.inspect(shard, **kw)
        assert run_shard("inspect", *flags, shard).returncode == 2
    with pytest.raises(ValueError, match="shard inspect: " + str(tmp_path)):  # a folder: not a file to read
        libshard.inspect(tmp_path)
    assert libshard.inspect(shard, n=0).first_records == []


@needs_shard
def test_verify_refuses_a_lone_mixture_as_the_program_does(images, tmp_path):
    libshard.convert(images, tmp_path / "out", no_sync=True)
    text = json.dumps({"format": "libshard.mixture/1", "sources": [{"path": str(tmp_path / "out"), "weight": 1}]})
    (tmp_path / "mix.json").write_text(text)
    (tmp_path / "mixdir").mkdir()
    (tmp_path / "mixdir" / "mixture.json").write_text(text)
    for named in (tmp_path / "mix.json", tmp_path / "mixdir"):
        cli = run_shard("verify", "--json", named)
        assert cli.returncode == 2 and "--json takes one dataset" in cli.stderr
        with pytest.raises(ValueError) as e:
            libshard.verify(named)
        assert str(e.value) + "\n" == cli.stderr
    assert libshard.verify(tmp_path / "out").ok  # a dataset is still checked


def test_convert_draws_a_tqdm_bar_only_when_asked_or_on_a_terminal(images, tmp_path, capfd):
    pytest.importorskip("tqdm")
    libshard.convert(images, tmp_path / "quiet")  # stderr is not a terminal here: no bar
    assert capfd.readouterr().err == ""
    libshard.convert(images, tmp_path / "bar", bar=True)
    err = capfd.readouterr().err
    assert "shard convert" in err and "25/25" in err
