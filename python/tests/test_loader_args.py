"""What a Loader accepts and refuses (issue 21): a source named twice, an unfinished conversion, a key the
manifest lacks, the default image size, batch sizes beyond the dataset or memory, normalisation that overflows,
integer and dtype arguments, plain exception messages, one name per operation, and the Keras adapter."""
import importlib.util
import io
import json
import os
import random
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from PIL import Image

import libshard
import libshard.keras


def png_bytes(arr):
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


def write_shard(path, n, first_label=0, size=(8, 8), gray=False):
    """n PNG records of height x width pixels; every pixel is the label (mod 256)."""
    h, w = size
    with libshard.ShardWriter(str(path)) as wr:
        for i in range(n):
            label = first_label + i
            shape = (h, w) if gray else (h, w, 3)
            wr.write({"image/encoded": png_bytes(np.full(shape, label % 256, np.uint8)), "image/format": "png",
                      "image/class/label": label})


SCHEMA = [{"key": k, "kind": kind, "required": req} for k, kind, req in (
    ("image/encoded", "bytes", True), ("image/format", "bytes", True), ("image/class/label", "int64", True),
    ("image/class/text", "bytes", False), ("image/segmentation/class/encoded", "bytes", False))]


def write_converted(out, splits, options=None, complete=True):
    """A converter-like folder: splits = {name: [(records, stats or None), ...]} of numbered shards."""
    out.mkdir(parents=True, exist_ok=True)
    entries, label = [], 0
    for name, shards in splits.items():
        files = []
        for i, (records, _) in enumerate(shards):
            f = "x-%s-%05d-of-%05d.tfrecord" % (name, i, len(shards))
            size = (28, 28)
            write_shard(out / f, records, first_label=label, size=size, gray=True)
            label += records
            files.append({"file": f, "records": str(records)})
        stats = shards[0][1] or {}
        entries.append({"name": name, "records": str(sum(r for r, _ in shards)), "shards": files, "stats": stats})
    manifest = {"format": "libshard.manifest/1", "complete": complete, "schema": SCHEMA, "splits": entries,
                "options": options or {"resize_mode": "none"}}
    (out / "manifest.json").write_text(json.dumps(manifest))
    return out


def gray_stats(records, sizes):
    """The statistics shard convert writes for `records` gray images of `sizes` {"WxH": count}."""
    pixels = sum(int(s.split("x")[0]) * int(s.split("x")[1]) * c for s, c in sizes.items())
    return {"converted": str(records), "channels": [{"count": str(pixels)}],
            "source_sizes": [{"name": s, "count": str(c)} for s, c in sizes.items()],
            "source_formats": [{"name": "png", "count": str(records)}]}


@pytest.fixture
def shard(tmp_path):
    path = tmp_path / "a.tfrecord"
    write_shard(path, 10)
    return str(path)


# --- 1. a source named twice ---

def test_a_file_reached_twice_is_refused_naming_both(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    write_shard(d / "a.tfrecord", 3)
    write_shard(d / "b.tfrecord", 2)
    (tmp_path / "link.tfrecord").symlink_to(d / "a.tfrecord")
    conv = write_converted(tmp_path / "conv", {"train": [(4, None)]})
    for sources in ([str(d), str(d)], [str(d / "*.tfrecord"), str(d)], [str(d / "a.tfrecord"), str(d)],
                    [str(tmp_path / "link.tfrecord"), str(d / "a.tfrecord")],
                    [str(conv), str(conv / "x-train-00000-of-00001.tfrecord")],
                    [str(conv / "manifest.json"), str(conv)]):
        with pytest.raises(ValueError) as e:
            libshard.Loader(sources, 2, image_size=8)
        message = str(e.value)
        assert sources[0] in message and sources[1] in message and "are the same file" in message, message
    assert libshard.Loader([str(d / "a.tfrecord"), str(d / "b.tfrecord")], 2, image_size=8).num_samples == 5


# --- 2. an unfinished conversion ---

def test_an_unfinished_conversion_is_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    write_shard(out / "x-train-00000-of-00003.tfrecord", 2)
    write_shard(out / "x-train-00002-of-00003.tfrecord", 2)
    write_shard(out / "x-val-00000-of-00001.tfrecord", 2, first_label=100)
    for source in (str(out), str(out / "*.tfrecord")):
        with pytest.raises(ValueError, match=r"2 of the 3 shards of this set are here; 1 missing \(00001\)") as e:
            libshard.Loader(source, 2, image_size=8)
        assert "shard verify %s" % source in str(e.value) and "shard merge" in str(e.value)
    # The converter's state without manifest.json: a run killed before it, or task outputs not merged.
    (out / "x-train-00001-of-00003.tfrecord").write_bytes((out / "x-train-00000-of-00003.tfrecord").read_bytes())
    (out / ".libshard").mkdir()
    with pytest.raises(ValueError, match="a `shard convert` that did not finish"):
        libshard.Loader(str(out), 2, image_size=8)
    (out / ".libshard" / "manifest.task-00001-of-00002.json").write_text("{}")
    with pytest.raises(ValueError, match=r"not merged yet .*run `shard merge %s` first" % out):
        libshard.Loader(str(out), 2, image_size=8)
    # A task's partial manifest.
    conv = write_converted(tmp_path / "conv", {"train": [(2, None)]}, complete=False)
    with pytest.raises(ValueError, match="the manifest says its conversion is not complete .*shard merge"):
        libshard.Loader(str(conv), 2, image_size=8)


# --- 3. keys ---

def test_a_key_the_manifest_lacks_is_refused_naming_its_keys(tmp_path):
    conv = write_converted(tmp_path / "conv", {"train": [(4, None)]})
    with pytest.raises(ValueError) as e:
        libshard.Loader(str(conv), 2, image_size=8, keys={"label": "image/class/lable"})
    assert str(e.value) == (
        'keys: the label key "image/class/lable" is not in the manifest\'s schema (its keys: image/class/label, '
        'image/class/text, image/encoded, image/format, image/segmentation/class/encoded)')
    L = libshard.Loader(str(conv), 4, image_size=8, keys={"label": "image/class/label"})
    assert next(L).labels.tolist() == [0, 1, 2, 3]
    # Plain shards have no schema: read as before (a record without the key gets label -1).
    plain = libshard.Loader(str(conv / "x-train-00000-of-00001.tfrecord"), 4, image_size=8, keys={"label": "lable"})
    assert next(plain).labels.tolist() == [-1] * 4


# --- 4. the default image size ---

def test_no_image_size_means_the_stored_one_when_every_image_has_it(tmp_path):
    conv = write_converted(tmp_path / "mnist", {"train": [(5, gray_stats(5, {"28x28": 5}))],
                                                "test": [(3, gray_stats(3, {"28x28": 3}))]})
    images, labels = next(libshard.Loader(str(conv), 4, split="train"))
    assert images.shape == (4, 28, 28, 1)  # not 224 x 224 x 3, upsampled
    assert [int(images[i, 0, 0, 0]) for i in range(4)] == labels.tolist()  # the pixels as stored
    assert next(libshard.Loader(str(conv), 4, split="train", channels=3))[0].shape == (4, 28, 28, 3)
    assert next(libshard.Loader(str(conv), 4, split="train", image_size=14))[0].shape == (4, 14, 14, 1)
    # Sizes that differ: image_size is required, and the message names them.
    mixed = write_converted(tmp_path / "mixed", {"train": [(5, gray_stats(5, {"28x28": 3, "32x20": 2}))]})
    with pytest.raises(ValueError, match=r"^image_size: not given, and the stored images do not all have one size "
                                         r"\(28x28, 32x20\); give the output size"):
        libshard.Loader(str(mixed), 4)
    # A fixed-size resize mode: its size.
    fixed = write_converted(tmp_path / "fixed", {"train": [(5, gray_stats(5, {"28x28": 3, "32x20": 2}))]},
                            options={"resize_mode": "stretch", "width": 28, "height": 28})
    assert next(libshard.Loader(str(fixed), 4))[0].shape == (4, 28, 28, 1)
    # Plain shards record no size.
    with pytest.raises(ValueError, match="^image_size: not given, and the stored image size is unknown"):
        libshard.Loader(str(conv / "x-train-00000-of-00001.tfrecord"), 4)


def test_shard_dataset_inherits_the_stored_size(tmp_path):
    torch = pytest.importorskip("torch")
    import libshard.torch  # noqa: F401
    conv = write_converted(tmp_path / "mnist", {"train": [(5, gray_stats(5, {"28x28": 5}))]})
    ds = libshard.torch.ShardDataset(str(conv), 4, split="train")
    images, labels = next(iter(torch.utils.data.DataLoader(ds, batch_size=None)))
    assert tuple(images.shape) == (4, 28, 28, 1)


# --- 5. batch_size and prefetch against the epoch and memory ---

def peak_memory_mb(shard, batch_size):
    """The peak virtual memory (VmPeak) of a fresh interpreter that takes one 224 x 224 batch."""
    code = """
        import sys, time, libshard
        L = libshard.Loader(sys.argv[1], int(sys.argv[2]), image_size=224)
        images, labels = next(L)
        time.sleep(0.2)  # let the ring fill
        peak = [l for l in open("/proc/self/status") if l.startswith("VmPeak:")][0].split()[1]
        print(images.shape[0], int(peak) // 1024)
    """
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(libshard.__file__)), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code), shard, str(batch_size)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    samples, peak_mb = map(int, r.stdout.split())
    assert samples == 10
    return peak_mb


def test_a_batch_size_beyond_the_dataset_costs_only_the_dataset(shard):
    # Before: batch_size=2000 allocated (prefetch + 1) buffers of 2000 samples, 903 MB at 224 x 224 x 3.
    extra = peak_memory_mb(shard, 2000) - peak_memory_mb(shard, 10)
    assert extra < 100, "batch_size 2000 on 10 samples takes %d MB more than batch_size 10" % extra
    # Far larger values were MemoryError: std::bad_alloc or ValueError: vector::_M_default_append.
    assert next(libshard.Loader(shard, 2 ** 40, image_size=8))[0].shape == (10, 8, 8, 3)


def test_buffers_beyond_memory_are_refused_naming_the_argument_and_bytes(shard):
    pages, page = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    if pages * page > 200e9:
        pytest.skip("more than 200 GB of memory: these sizes fit")
    with pytest.raises(ValueError, match=r"^batch_size: 3 buffers \(prefetch 2 \+ 1\) of 10 samples of "
                                         r"65535x65535x3 float32 would need 1\.5 TB, more than half of this "
                                         r"machine's .*; lower batch_size or prefetch$"):
        libshard.Loader(shard, 64, image_size=65535, dtype="float32")
    with pytest.raises(ValueError, match=r"^prefetch: 1099511627777 buffers .* would need "):
        libshard.Loader(shard, 2, image_size=8, prefetch=2 ** 40)


# --- 6. normalisation that overflows; integer arguments ---

@pytest.mark.parametrize("kw,value", [
    (dict(std=(1e-300,) * 3), "1e+300"),
    (dict(mean=(0.5, 1e300, 0.5)), "-1e+300"),
    (dict(std=(1e-5,) * 3, dtype="float16"), "100000"),
])
def test_normalisation_whose_results_are_not_finite_is_refused(shard, kw, value):
    kw.setdefault("dtype", "float32")
    with pytest.raises(ValueError, match=r"^mean/std: channel \d \(mean .*, std .*\) gives %s for pixel value 255, "
                                         r"beyond %s's range" % (re.escape(value), kw["dtype"])):
        libshard.Loader(shard, 2, image_size=8, **kw)
    # The same std in float32 is fine, and every value is finite.
    images = next(libshard.Loader(shard, 2, image_size=8, dtype="float32", std=(1e-5,) * 3))[0]
    assert np.isfinite(images).all()


@pytest.mark.parametrize("name,value,low,high", [
    ("seed", -1, 0, 2 ** 64 - 1), ("seed", 2 ** 64, 0, 2 ** 64 - 1), ("rank", -1, 0, 2 ** 31 - 1),
    ("world_size", 0, 1, 2 ** 31 - 1), ("threads", -1, 0, 256), ("threads", 1000, 0, 256),
    ("prefetch", -2, 0, 2 ** 63 - 1), ("worker", -1, 0, 2 ** 31 - 1), ("num_workers", -1, 1, 2 ** 31 - 1),
    ("batch_size", -5, 1, 2 ** 63 - 1), ("batch_size", 0, 1, 2 ** 63 - 1), ("channels", -1, 1, 3),
])
def test_an_integer_argument_out_of_range_is_a_value_error_naming_it(shard, name, value, low, high):
    kw = dict(image_size=8, batch_size=2)
    kw[name] = value
    with pytest.raises(ValueError) as e:
        libshard.Loader(shard, **kw)
    assert str(e.value) == "%s: expected an integer in %d..%d, got %r" % (name, low, high, value)


def test_integer_arguments_take_numpy_integers_and_refuse_other_types(shard):
    L = libshard.Loader(shard, np.int64(4), image_size=8, seed=np.uint64(2 ** 63), threads=np.int32(1))
    assert len(L) == 3
    with pytest.raises(TypeError, match=r"^seed: expected an integer in 0\.\.18446744073709551615, got str 'x'"):
        libshard.Loader(shard, 2, image_size=8, seed="x")
    with pytest.raises(TypeError, match="^batch_size: .* got float 2.0"):
        libshard.Loader(shard, 2.0, image_size=8)
    with pytest.raises(TypeError, match="^threads: .* got bool True"):
        libshard.Loader(shard, 2, image_size=8, threads=True)


def test_threads_zero_is_one_per_core_with_the_batches_of_one_thread(shard):
    # As convert and verify take it (the loader refused 0 before).
    def batches(threads):
        with libshard.Loader(shard, 2, image_size=8, shuffle=True, seed=5, threads=threads,
                             augment="random-resized-crop") as L:
            return [(b[0].copy(), b[1].copy()) for b in L]
    zero, one = batches(0), batches(1)
    assert len(zero) == len(one) == 5
    for (a, la), (b, lb) in zip(zero, one):
        assert np.array_equal(a, b) and np.array_equal(la, lb)


# --- 7. dtype as numpy and torch dtypes ---

def test_dtype_takes_numpy_and_torch_dtypes(shard):
    for dtype, want in (("float16", np.float16), (np.float32, np.float32), (np.dtype("float16"), np.float16),
                        (np.uint8, np.uint8), (np.dtype(np.uint8), np.uint8)):
        assert next(libshard.Loader(shard, 2, image_size=8, dtype=dtype))[0].dtype == want, dtype

    class FakeTorchDtype:  # what torch.float16 looks like, without importing torch
        def __str__(self):
            return "torch.float16"
    FakeTorchDtype.__module__ = "torch"
    assert next(libshard.Loader(shard, 2, image_size=8, dtype=FakeTorchDtype()))[0].dtype == np.float16
    with pytest.raises(ValueError, match='^dtype: unknown dtype "float64"'):
        libshard.Loader(shard, 2, image_size=8, dtype=np.float64)
    with pytest.raises(TypeError, match="^dtype: expected uint8, float32 or float16 as a str, a numpy dtype or a "
                                        "torch dtype, got object"):
        libshard.Loader(shard, 2, image_size=8, dtype=object())


def test_dtype_takes_torch_dtypes(shard):
    torch = pytest.importorskip("torch")
    for dtype, want in ((torch.float16, np.float16), (torch.uint8, np.uint8), (torch.float32, np.float32),
                        (torch.half, np.float16)):
        assert next(libshard.Loader(shard, 2, image_size=8, dtype=dtype))[0].dtype == want, dtype


# --- 8. plain messages ---

def test_exception_messages_carry_no_status_code_prefix(tmp_path, shard):
    cases = [
        (ValueError, lambda: libshard.Loader(shard, 2, image_size=8, layout="CHW"), "layout: "),
        (ValueError, lambda: libshard.Loader(shard, 2, image_size=8, split="train"), 'split "train"'),
        (FileNotFoundError, lambda: libshard.Loader(str(tmp_path / "missing"), 2, image_size=8), str(tmp_path)),
        (FileNotFoundError, lambda: libshard.ShardReader(str(tmp_path / "missing")), "open " + str(tmp_path)),
        (IndexError, lambda: libshard.ShardReader(shard)[99], ""),
    ]
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(open(shard, "rb").read()[:-3])
    cases.append((libshard.DataLossError, lambda: libshard.ShardReader(str(bad), use_index=False), str(bad)))
    for exc, call, start in cases:
        with pytest.raises(exc) as e:
            call()
        message = str(e.value)
        assert message.startswith(start), message
        for code in ("INVALID_ARGUMENT", "NOT_FOUND", "OUT_OF_RANGE", "DATA_LOSS", "IO_ERROR", "RESOURCE_EXHAUSTED"):
            assert code + ":" not in message, message


# --- 9. one name per operation ---

def test_state_dict_and_load_state_dict_have_no_aliases(shard):
    L = libshard.Loader(shard, 2, image_size=8)
    assert not hasattr(L, "state") and not hasattr(L, "restore")
    L.load_state_dict(dict(L.state_dict(), consumed=6))
    assert next(L).labels.tolist() == [6, 7]


# --- 10. Keras ---

def test_keras_adapter_gives_batch_i_whatever_order_keras_asks_in(tmp_path):
    path = tmp_path / "a.tfrecord"
    write_shard(path, 23)
    opts = dict(image_size=8, shuffle=True, seed=5, augment="random-resized-crop", dtype="float32")
    ds = libshard.keras.ShardDataset(str(path), 4, **opts)
    assert len(ds) == 6
    ref = libshard.Loader(str(path), 4, **opts)
    rng = random.Random(0)
    # Keras reads items 0 and 1 to learn the structure before the loop.
    first = [ds[0], ds[1]]
    for epoch in range(3):
        want = [(b.images.copy(), b.labels.copy()) for b in ref]  # a plain pass: the sequential batches
        order = list(range(len(ds)))
        rng.shuffle(order)  # fit(..., shuffle=True) asks in a shuffled order
        if epoch == 1:
            order = [0, 3, 1, 2, 5, 4]  # and reading ahead from worker threads
        got = {i: ds[i] for i in order}
        if epoch == 0:
            for i in (0, 1):
                assert np.array_equal(first[i][0], want[i][0]) and np.array_equal(first[i][1], want[i][1])
        seen = sorted(label for i in got for label in got[i][1].tolist())
        assert seen == list(range(23)), "epoch %d: %s" % (epoch, seen)
        for i in range(len(ds)):
            assert np.array_equal(got[i][0], want[i][0]), (epoch, i)
            assert np.array_equal(got[i][1], want[i][1]), (epoch, i)
        ds.on_epoch_end()
    assert ds.epoch == 3
    assert ds[-1][1].shape == (3,)  # the short last batch of epoch 3
    with pytest.raises(IndexError):
        ds[6]


def test_keras_adapter_without_keras_is_a_plain_class(tmp_path, monkeypatch):
    path = tmp_path / "a.tfrecord"
    write_shard(path, 4)
    # Where keras is installed (today's stack), a user without it is played by an import that fails.
    keras_here = importlib.util.find_spec("keras") is not None
    if keras_here:
        monkeypatch.setitem(sys.modules, "keras", None)
    ds = libshard.keras.ShardDataset(str(path), 2, image_size=8)
    assert type(ds) is libshard.keras.ShardDataset
    with pytest.raises(TypeError, match="workers: keras.utils.PyDataset arguments, but keras does not import"):
        libshard.keras.ShardDataset(str(path), 2, image_size=8, workers=2)
    with pytest.raises(ValueError, match="^buffers: "):
        libshard.keras.ShardDataset(str(path), 2, image_size=8, buffers=[])
    assert sys.modules.get("keras") is None  # never imported by the plain path


def test_keras_adapter_subclasses_py_dataset_when_keras_imports(tmp_path, monkeypatch):
    path = tmp_path / "a.tfrecord"
    write_shard(path, 4)
    # A stand-in keras module with the PyDataset base the real one has.
    import types
    fake = types.ModuleType("keras")
    fake.utils = types.SimpleNamespace()

    class PyDataset:
        def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
            self.workers = workers
    fake.utils.PyDataset = PyDataset
    monkeypatch.setitem(sys.modules, "keras", fake)
    ds = libshard.keras.ShardDataset(str(path), 2, image_size=8, workers=3)
    assert isinstance(ds, PyDataset) and isinstance(ds, libshard.keras.ShardDataset)
    assert ds.workers == 3 and len(ds) == 2 and ds[1][1].tolist() == [2, 3]


# --- issue 22: the dataset's own statistics; values on the 0..255 scale --------------------------------------

def test_mean_and_std_dataset_are_the_manifests_statistics(tmp_path):
    import json
    from tools_fixtures import make_image_folder
    make_image_folder(str(tmp_path / "pets"), splits=("train",), bad=0)
    out = str(tmp_path / "out")
    libshard.convert(str(tmp_path / "pets"), out, size=16, format="png")  # lossless: stats of what is read
    with open(os.path.join(out, "manifest.json")) as f:
        channels = json.load(f)["splits"][0]["stats"]["channels"]
    mean = [c["mean"] / 255 for c in channels]
    std = [c["std"] / 255 for c in channels]
    given = next(iter(libshard.Loader(out, 4, dtype="float32", mean=mean, std=std)))[0]
    by_name = next(iter(libshard.Loader(out, 4, dtype="float32", mean="dataset", std="dataset")))[0]
    assert np.array_equal(given, by_name)
    # Normalised with its own statistics, the whole dataset has mean ~0 and std ~1 per channel.
    every = np.concatenate([b[0] for b in libshard.Loader(out, 64, dtype="float32", mean="dataset", std="dataset")])
    assert np.allclose(every.mean(axis=(0, 1, 2), dtype=np.float64), 0, atol=1e-2)
    assert np.allclose(every.std(axis=(0, 1, 2), dtype=np.float64), 1, atol=1e-2)
    with pytest.raises(ValueError, match='mean: expected a sequence of numbers .*"dataset"'):
        libshard.Loader(out, 4, dtype="float32", mean="datset")
    with pytest.raises(ValueError, match=r'mean="dataset": the manifest has statistics for 3 channels, the loader '
                                         r'gives 1 \(use channels=3'):
        libshard.Loader(out, 4, dtype="float32", channels=1, mean="dataset")



def test_std_dataset_refuses_a_channel_constant_in_every_image(tmp_path):
    from PIL import Image
    for i in range(4):
        d = tmp_path / "src" / ("a" if i % 2 else "b")
        d.mkdir(parents=True, exist_ok=True)
        px = np.zeros((8, 8, 3), np.uint8)
        px[..., 0] = np.arange(64, dtype=np.uint8).reshape(8, 8) * (i + 1)  # red varies
        px[..., 1] = 128                                                    # green constant everywhere
        px[..., 2] = 255 - px[..., 0]
        Image.fromarray(px).save(d / f"{i}.png")
    out = str(tmp_path / "out")
    libshard.convert(str(tmp_path / "src"), out, format="png")
    # mean="dataset" alone is fine; dividing by the green channel's std of 0 is not.
    libshard.Loader(out, 2, dtype="float32", mean="dataset")
    with pytest.raises(ValueError, match=r'^std="dataset": channel 1 is constant'):
        libshard.Loader(out, 2, dtype="float32", mean="dataset", std="dataset")


def test_block_shuffle_takes_its_block_size_and_window(tmp_path):
    from shard_fixtures import write_shard
    write_shard(tmp_path / "a.tfrecord", 24)
    kw = dict(image_size=8, order="block-shuffle", seed=5)
    # Blocks of 4 consecutive records, one block a window: each batch of 4 is one block, each block once.
    batches = [sorted(b[1].tolist()) for b in libshard.Loader(str(tmp_path / "a.tfrecord"), 4, block_size=4,
                                                              window_blocks=1, **kw)]
    assert sorted(batches) == [list(range(k, k + 4)) for k in range(0, 24, 4)]
    assert batches != sorted(batches)  # the blocks are permuted
    # Two blocks a window: each batch of 8 is two whole blocks, shuffled together.
    for b in libshard.Loader(str(tmp_path / "a.tfrecord"), 8, block_size=4, window_blocks=2, **kw):
        blocks = sorted({y // 4 for y in b[1].tolist()})
        assert len(blocks) == 2 and sorted(b[1].tolist()) == [y for k in blocks for y in range(4 * k, 4 * k + 4)]
    with pytest.raises(ValueError, match="block_size"):
        libshard.Loader(str(tmp_path / "a.tfrecord"), 4, block_size=0, **kw)
    with pytest.raises(ValueError, match="window_blocks"):
        libshard.Loader(str(tmp_path / "a.tfrecord"), 4, window_blocks=70000, **kw)

def test_values_on_the_0_255_scale_are_refused_saying_so(shard):
    with pytest.raises(ValueError, match=r"^mean: 123\.675 looks like the 0\.\.255 scale"):
        libshard.Loader(shard, 2, image_size=8, dtype="float32", mean=(123.675, 116.28, 103.53))
    with pytest.raises(ValueError, match=r"^std: 58\.395 looks like the 0\.\.255 scale"):
        libshard.Loader(shard, 2, image_size=8, dtype="float32", std=(58.395, 57.12, 57.375))
    with pytest.raises(ValueError, match='no per-channel statistics'):
        libshard.Loader(shard, 2, image_size=8, dtype="float32", mean="dataset")


def test_on_error_skip_keeps_batches_full_and_names_the_skipped_records(tmp_path):
    from shard_fixtures import write_shard
    write_shard(tmp_path / "a.tfrecord", 5, 0)
    with libshard.ShardWriter(str(tmp_path / "b.tfrecord")) as w:
        w.write({"image/encoded": b"definitely not an image", "image/class/label": 99})
    sources = [str(tmp_path / "a.tfrecord"), str(tmp_path / "b.tfrecord")]
    with pytest.raises(libshard.DataLossError, match="b.tfrecord: record 0 at byte 0"):
        list(libshard.Loader(sources, 3, image_size=(12, 16)))
    loader = libshard.Loader(sources, 3, image_size=(12, 16), on_error="skip")
    labels = [int(y) for _, ys in loader for y in ys]
    assert labels == [0, 1, 2, 3, 4, 0]  # the bad sample 5 replaced by the order's next, sample 0
    assert loader.skipped == [{"sample": 5, "file": str(tmp_path / "b.tfrecord"), "record": 0, "offset": 0,
                               "reason": loader.skipped[0]["reason"]}]
    assert loader.skipped[0]["reason"]
    list(loader)  # a second epoch lists it once
    assert len(loader.skipped) == 1
    with pytest.raises(ValueError, match='on_error: expected "raise" or "skip"'):
        libshard.Loader(sources, 3, image_size=(12, 16), on_error="ignore")


def test_extras_return_each_samples_file_name_and_follow_skips(tmp_path):
    from tools_fixtures import make_image_folder
    make_image_folder(str(tmp_path / "pets"), splits=("train",), bad=0)
    out = str(tmp_path / "out")
    libshard.convert(str(tmp_path / "pets"), out, size=16)
    plain = libshard.Loader(out, 5, shuffle=True, seed=2)
    keyed = libshard.Loader(out, 5, shuffle=True, seed=2, extras=["image/filename", "image/class/label", "nothing"])
    names = {}
    for a, b in zip(plain, keyed):
        assert isinstance(b, libshard.KeyedBatch) and np.array_equal(a.images, b.images)
        assert b.keys["image/class/label"] == a.labels.tolist()
        assert b.keys["nothing"] == [None] * len(a.labels)
        for name, label in zip(b.keys["image/filename"], a.labels):
            assert isinstance(name, bytes)
            names[name.decode()] = int(label)
    # Every file once, each with its class's label (cat 0, dog 1, eel 2).
    assert len(names) == 12
    assert all(name.split("/")[1] == ("cat", "dog", "eel")[label] for name, label in names.items())
    with pytest.raises(TypeError, match="extras: expected a list"):
        libshard.Loader(out, 5, extras="image/filename")


def test_extras_name_the_sample_that_replaced_a_skipped_one(tmp_path):
    from shard_fixtures import write_shard
    write_shard(tmp_path / "a.tfrecord", 5, 0)
    with libshard.ShardWriter(str(tmp_path / "b.tfrecord")) as w:
        w.write({"image/encoded": b"definitely not an image", "image/class/label": 99})
    sources = [str(tmp_path / "a.tfrecord"), str(tmp_path / "b.tfrecord")]
    loader = libshard.Loader(sources, 3, image_size=(12, 16), on_error="skip", extras=["image/class/label"])
    for batch in loader:
        assert batch.keys["image/class/label"] == batch.labels.tolist()
