"""How training code uses a Loader: iteration and streaming, peeking, resume
validation, caller buffers, threads, fork, close and interrupts, splits and
paths. Cases that could hang or crash run in a subprocess with a timeout, so a
regression fails instead of stopping the suite."""
import gc
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings
import zlib
import struct
import itertools

import numpy as np
import pytest
from PIL import Image

import libshard

def png_bytes(arr):
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


def write_shard(path, n, first_label=0, size=8, masks=False):
    """n PNG records of size x size pixels, labels first_label..; pixel value = label."""
    with libshard.ShardWriter(path) as w:
        for i in range(n):
            label = first_label + i
            features = {"image/encoded": png_bytes(np.full((size, size, 3), label % 256, np.uint8)),
                        "image/format": "png", "image/class/label": label}
            if masks:
                features["image/segmentation/class/encoded"] = png_bytes(np.full((size, size), 1, np.uint8))
                features["image/segmentation/class/format"] = "png"
            w.write(features)


@pytest.fixture
def shard(tmp_path):
    path = str(tmp_path / "a.tfrecord")
    write_shard(path, 10)
    return path


def labels_of(batches):
    return [b[1].tolist() for b in batches]


def run_py(code, *args, timeout=60):
    """Runs `code` in a fresh interpreter (this one's) that imports the same libshard."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(libshard.__file__), env.get("PYTHONPATH", "")])
    try:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)] + list(args), env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail("timed out after %ss (a hang); output: %r %r" % (timeout, e.stdout, e.stderr))


# --- iteration: for ends at the epoch, next() streams, peeking is harmless ---

def test_plain_next_streams_across_epochs_and_for_ends_at_the_epoch(shard):
    L = libshard.Loader(shard, batch_size=4, image_size=(8, 8))
    assert len(L) == 3
    stream = [next(L)[1].tolist() for _ in range(7)]  # Keras' fit() with a generator does this
    assert stream == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] * 2 + [[0, 1, 2, 3]]
    assert L.state_dict()["epoch"] == 2 and L.state_dict()["consumed"] == 4
    assert labels_of(L) == [[4, 5, 6, 7], [8, 9]]  # for: the rest of epoch 2, then stops
    assert labels_of(L) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]  # epoch 3


def test_peeking_does_not_shorten_the_epoch(shard):
    L = libshard.Loader(shard, batch_size=4, image_size=(8, 8))
    images, labels = next(iter(L))  # look at one batch
    assert labels.tolist() == [0, 1, 2, 3]
    assert labels_of(L) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]  # the whole epoch all the same
    assert L.state_dict()["epoch"] == 1
    # A break replays the unfinished pass, as a new DataLoader iterator would start afresh.
    for _, lb in L:
        break
    assert labels_of(L) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    # A pass that took every batch is done, even without seeing StopIteration.
    assert labels_of(itertools.islice(iter(L), 3)) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert L.state_dict()["epoch"] == 3
    # After load_state_dict() a pass starts at the restored batch.
    L.load_state_dict(dict(L.state_dict(), consumed=8))
    assert labels_of(L) == [[8, 9]]
    # A replaced iterator says so.
    it = iter(L)
    next(it)
    iter(L)
    with pytest.raises(RuntimeError, match="replaced by a later iter"):
        next(it)


# --- load_state_dict() validation ---

@pytest.mark.parametrize("key,value,message", [
    ("epoch", 2**64 - 1, r'state\["epoch"\] must be an integer in 0..9223372036854775807, got 18446744073709551615'),
    ("epoch", 2**63, r'state\["epoch"\] must be an integer in 0..9223372036854775807, got 9223372036854775808'),
    ("epoch", -1, r'state\["epoch"\] must be an integer in 0..9223372036854775807, got -1'),
    ("consumed", 7, r'state\["consumed"\] must be an integer in 0..6, got 7'),
    ("consumed", -2, r'state\["consumed"\] must be an integer in 0..6, got -2'),
    ("consumed", 1.0, r'state\["consumed"\] must be an integer in 0..6, got a float \(1.0\)'),
    ("consumed", True, r'state\["consumed"\] must be an integer in 0..6, got a bool \(True\)'),
    ("seed", -1, r'state\["seed"\] must be an integer'),
])
def test_restore_refuses_values_out_of_range(tmp_path, key, value, message):
    path = str(tmp_path / "a.tfrecord")
    write_shard(path, 6)
    L = libshard.Loader(path, batch_size=2, image_size=(8, 8))
    state = L.state_dict()
    state[key] = value
    with pytest.raises(ValueError, match=message):
        L.load_state_dict(state)
    assert labels_of(L) == [[0, 1], [2, 3], [4, 5]]  # untouched
    L.load_state_dict(dict(L.state_dict(), epoch=2**63 - 1, consumed=4))  # the last epoch is a real one
    assert next(L)[1].tolist() == [4, 5]


# --- caller buffers ---

def test_buffers_are_held_for_the_loaders_life(shard):
    n = 2 * 8 * 8 * 3
    raw = [(bytearray(n), np.zeros(2, np.int64)) for _ in range(3)]
    L = libshard.Loader(shard, batch_size=2, image_size=(8, 8), buffers=raw)
    with pytest.raises(BufferError):
        raw[0][0].extend(b"x" * 100000)  # would move the memory the loader writes to
    arr = raw[1][1]
    with pytest.raises(ValueError):
        arr.resize(1000)
    got = [(im.copy(), lb.copy()) for im, lb in L]
    assert [lb.tolist() for _, lb in got] == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    assert all((im[i] == lb[i]).all() for im, lb in got for i in range(2))
    L.close()
    raw[0][0].extend(b"x")  # let go at close()


def test_buffers_from_objects_that_convert_to_fresh_arrays(shard):
    class Fresh:  # __array__ returns a new array each time: the loader must keep the one it writes to
        def __init__(self, shape, dtype):
            self.shape, self.dtype = shape, dtype

        def __array__(self, dtype=None):
            return np.zeros(self.shape, self.dtype)

    bufs = [(Fresh((2, 8, 8, 3), np.uint8), Fresh(2, np.int64)) for _ in range(2)]
    L = libshard.Loader(shard, batch_size=2, image_size=(8, 8), buffers=bufs)
    gc.collect()
    np.zeros(10**6, np.uint8)  # reuse freed memory, if any was freed
    got = [(im.copy(), lb.copy()) for im, lb in L]
    assert [lb.tolist() for _, lb in got] == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    assert all((im[i] == lb[i]).all() for im, lb in got for i in range(2))


def test_buffers_that_share_memory_are_refused(shard):
    a = np.zeros((2, 8, 8, 3), np.uint8)
    lab = [np.zeros(2, np.int64) for _ in range(2)]
    with pytest.raises(ValueError, match=r"buffers\[1\] images shares memory with buffers\[0\] images"):
        libshard.Loader(shard, batch_size=2, image_size=(8, 8), buffers=[(a, lab[0]), (a, lab[1])])
    big = np.zeros(3 * 384, np.uint8)
    with pytest.raises(ValueError, match="shares memory"):  # overlapping views of one array
        libshard.Loader(shard, batch_size=2, image_size=(8, 8),
                        buffers=[(big[0:384], lab[0]), (big[100:484], lab[1])])
    with pytest.raises(ValueError, match=r"buffers\[0\] labels shares memory with buffers\[0\] images"):
        libshard.Loader(shard, batch_size=2, image_size=(8, 8),
                        buffers=[(big[0:384], big[0:16].view(np.int64))])
    with pytest.raises(ValueError, match=r"^buffers\[0\] images must be a writable C-contiguous array of 384 uint8$"):
        libshard.Loader(shard, batch_size=2, image_size=(8, 8), buffers=[("x", lab[0])])
    with pytest.raises(TypeError, match=r"buffers: expected \(images, labels\[, masks\]\) tuples, got int"):
        libshard.Loader(shard, batch_size=2, image_size=(8, 8), buffers=[7])
    # Disjoint parts of one array are fine.
    L = libshard.Loader(shard, batch_size=2, image_size=(8, 8),
                        buffers=[(big[0:384], lab[0]), (big[384:768], lab[1])])
    assert labels_of(L) == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]


def test_torch_tensors_as_buffers(shard):
    torch = pytest.importorskip("torch")
    tensors = [(torch.zeros((2, 8, 8, 3), dtype=torch.uint8), torch.zeros(2, dtype=torch.int64))
               for _ in range(3)]
    L = libshard.Loader(shard, batch_size=2, image_size=(8, 8), buffers=tensors)
    images, labels = next(L)
    assert labels.tolist() == [0, 1]
    assert tensors[0][1].tolist() == [0, 1]  # written into the tensor's own memory
    assert int(tensors[0][0][1, 0, 0, 0]) == 1
    with pytest.raises(RuntimeError):
        tensors[0][0].resize_(10**6)  # its storage cannot move while the loader holds it


# --- threads, fork, close, interrupts, exit ---

def test_two_threads_share_one_loader(tmp_path):
    path = str(tmp_path / "a.tfrecord")
    write_shard(path, 40)
    r = run_py("""
        import threading, libshard, sys
        L = libshard.Loader(sys.argv[1], batch_size=2, image_size=(8, 8), threads=2)
        seen = [[], []]
        def work(k):
            for _ in range(40):  # 80 batches in all: 4 epochs
                im, lb = next(L)
                assert (im[:, 0, 0, 0] == lb).all()
                seen[k].extend(lb.tolist())
        ts = [threading.Thread(target=work, args=(k,)) for k in range(2)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        counts = sorted(set((seen[0] + seen[1]).count(x) for x in range(40)))
        print("counts", counts)
        L.close()
    """, path)
    assert r.returncode == 0, r.stderr
    assert "counts [4]" in r.stdout  # every sample exactly once per epoch, 4 epochs


def test_a_fork_child_uses_the_loader(tmp_path):
    path = str(tmp_path / "a.tfrecord")
    write_shard(path, 30)
    r = run_py("""
        import os, sys, libshard
        p = sys.argv[1]
        L = libshard.Loader(p, batch_size=3, image_size=(8, 8), threads=2, shuffle=True, seed=4)
        ref = libshard.Loader(p, batch_size=3, image_size=(8, 8), threads=2, shuffle=True, seed=4)
        want = [lb.tolist() for _, lb in ref][2:]
        it = iter(L)
        next(it); next(it)  # the producer is running and has batches prefetched
        pids = []
        for k in range(3):
            pid = os.fork()
            if pid == 0:
                ok = [lb.tolist() for _, lb in it] == want
                if k == 1:
                    L.close()
                os._exit(0 if ok else 3)
            pids.append(pid)
        codes = [os.waitpid(pid, 0)[1] for pid in pids]
        print("children", codes)
        print("parent", [lb.tolist() for _, lb in it] == want)
    """, path)
    assert r.returncode == 0, r.stderr
    assert "children [0, 0, 0]" in r.stdout and "parent True" in r.stdout


def test_close_and_with_join_the_loader(shard):
    with libshard.Loader(shard, batch_size=2, image_size=(8, 8)) as L:
        assert next(L)[1].tolist() == [0, 1]
    with pytest.raises(ValueError, match="the Loader is closed"):
        next(L)
    with pytest.raises(ValueError, match="the Loader is closed"):
        iter(L)
    L.close()  # again: nothing to do
    assert len(L) == 5 and L.num_samples == 10


def huge_png(width, height):
    """A gray 8-bit PNG of zeros, compressed row by row (never width*height in memory at once)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    z = zlib.compressobj(9)
    row = b"\0" * (width + 1)
    body = b"".join(z.compress(row) for _ in range(height)) + z.flush()
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)) +
            chunk(b"IDAT", body) + chunk(b"IEND", b""))


def test_keyboard_interrupt_while_waiting_for_a_batch(tmp_path):
    path = str(tmp_path / "slow.tfrecord")
    with libshard.ShardWriter(path) as w:
        big = huge_png(6000, 6000)
        for i in range(200):  # minutes of decoding on one thread
            w.write({"image/encoded": big, "image/class/label": i})
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import signal, sys, time, libshard
        signal.signal(signal.SIGINT, signal.default_int_handler)  # also under a suite run in the background
        L = libshard.Loader(sys.argv[1], batch_size=200, image_size=(8, 8), threads=1)
        print("waiting", flush=True)
        try:
            next(L)
            print("got a batch")
        except KeyboardInterrupt:
            t = time.monotonic()
            print("interrupted", flush=True)
            L.close()
            print("closed in %.1f s" % (time.monotonic() - t), flush=True)
    """), path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, PYTHONPATH=os.path.dirname(libshard.__file__)))
    assert proc.stdout.readline() == "waiting\n"
    time.sleep(0.5)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("next() could not be interrupted")
    assert proc.returncode == 0, err
    assert out.startswith("interrupted\nclosed in "), out
    assert time.monotonic() - sent < 10


@pytest.mark.parametrize("ending", [
    "del L", "pass", "for b in L: break",
    "import threading; threading.Thread(target=lambda: [next(L) for _ in range(1000)], daemon=True).start()"])
def test_a_loader_left_mid_epoch_never_hangs_the_exit(tmp_path, ending):
    path = str(tmp_path / "a.tfrecord")
    write_shard(path, 200, size=64)
    r = run_py("""
        import sys, libshard
        L = libshard.Loader(sys.argv[1], batch_size=4, image_size=(64, 64), threads=2, prefetch=8)
        next(L)
        %s
        print("end")
    """ % ending, path)
    assert r.returncode == 0 and r.stdout == "end\n", r.stderr


# --- out of memory ---

def test_out_of_memory_decoding_is_a_memory_error(tmp_path):
    path = str(tmp_path / "huge.tfrecord")
    with libshard.ShardWriter(path) as w:  # 9000 x 9000 gray: 81 MB of pixels from a few KB
        w.write({"image/encoded": huge_png(9000, 9000), "image/class/label": 0})
    r = run_py("""
        import resource, sys, libshard
        L = libshard.Loader(%r, batch_size=1, image_size=(8, 8), threads=1)
        used = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
        resource.setrlimit(resource.RLIMIT_AS, (used + (48 << 20), used + (48 << 20)))
        try:
            next(L)
        except MemoryError as e:
            print("MemoryError:", e)
    """ % path, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "MemoryError: out of memory decoding %s record 0\n" % path


# --- sources: manifests, folders, splits, masks, image_size, paths ---

def write_converted(tmp_path, masks=False):
    """A converter-like output folder: two splits and a manifest with a schema."""
    out = tmp_path / "out"
    out.mkdir()
    write_shard(str(out / "train-00000-of-00001.tfrecord"), 6, masks=masks)
    write_shard(str(out / "test-00000-of-00001.tfrecord"), 2, first_label=100, masks=masks)
    schema = [{"key": "image/encoded", "kind": "bytes", "required": True},
              {"key": "image/class/label", "kind": "int64", "required": True},
              {"key": "image/segmentation/class/encoded", "kind": "bytes", "required": masks}]
    manifest = {"format": "libshard.manifest/1", "complete": True, "labels": [{"label": "0", "name": "cat"}],
                "schema": schema,
                "splits": [{"name": "train", "records": "6",
                            "shards": [{"file": "train-00000-of-00001.tfrecord", "records": "6"}]},
                           {"name": "test", "records": "2",
                            "shards": [{"file": "test-00000-of-00001.tfrecord", "records": "2"}]}]}
    (out / "manifest.json").write_text(json.dumps(manifest))
    return out


def test_splits_of_a_manifest_and_of_a_folder(tmp_path):
    out = write_converted(tmp_path)
    with pytest.raises(ValueError, match=r"the manifest has splits train, test; pick one"):
        libshard.Loader([str(out / "manifest.json")], batch_size=2, image_size=(8, 8))
    train = libshard.Loader([str(out)], batch_size=2, image_size=(8, 8), split="train")  # the folder: its manifest
    assert train.num_samples == 6 and train.labels == [(0, "cat")]
    test = libshard.Loader(out / "manifest.json", batch_size=2, image_size=(8, 8), split="test")
    assert labels_of(test) == [[100, 101]]
    assert libshard.Loader(str(out), batch_size=2, image_size=(8, 8), split="*").num_samples == 8
    with pytest.raises(ValueError, match=r'no split named "val" \(the manifest has train, test\)'):
        libshard.Loader(str(out), batch_size=2, image_size=(8, 8), split="val")
    with pytest.raises(ValueError, match='split "train" needs a manifest.json'):
        libshard.Loader(str(out / "train-00000-of-00001.tfrecord"), batch_size=2, image_size=(8, 8), split="train")


def test_masks_refused_when_the_manifest_has_none(tmp_path):
    out = write_converted(tmp_path)
    with pytest.raises(ValueError, match='masks requested, but the manifest.s schema has no '
                                         '"image/segmentation/class/encoded"'):
        libshard.Loader(str(out), batch_size=2, image_size=(8, 8), split="train", masks=True)
    # Without a manifest nothing is known before the first batch.
    L = libshard.Loader(str(out / "train-00000-of-00001.tfrecord"), batch_size=2, image_size=(8, 8), masks=True)
    with pytest.raises(OSError, match="no mask in feature"):
        next(L)


def test_masks_from_a_manifest_that_has_them(tmp_path):
    out = write_converted(tmp_path, masks=True)
    images, labels, masks = next(libshard.Loader(str(out), batch_size=2, image_size=(8, 8), split="train", masks=True))
    assert masks.shape == (2, 8, 8) and (masks == 1).all()


def test_image_size_int_or_pair(shard):
    assert next(libshard.Loader(shard, batch_size=2, image_size=8))[0].shape == (2, 8, 8, 3)
    assert next(libshard.Loader(shard, batch_size=2, image_size=[4, 6]))[0].shape == (2, 4, 6, 3)
    with pytest.raises(TypeError, match=r"image_size: expected an int or a \(height, width\) pair of ints, got 'big'"):
        libshard.Loader(shard, batch_size=2, image_size="big")
    with pytest.raises(TypeError, match="image_size"):
        libshard.Loader(shard, batch_size=2, image_size=(8, 8, 3))
    with pytest.raises(ValueError, match=r"image_size: 0 is not in 1..65535"):
        libshard.Loader(shard, batch_size=2, image_size=0)


def test_bytes_and_pathlike_paths(tmp_path):
    raw_dir = os.fsencode(str(tmp_path))
    name = raw_dir + b"/caf\xe9-\xff.tfrecord"  # not UTF-8
    write_shard(name, 3)
    assert os.path.exists(name) and os.path.exists(name + b".idx")
    r = libshard.ShardReader(name)
    assert len(r) == 3 and os.fsencode(r.path) == name
    assert len(libshard.ShardReader(os.fsdecode(name))) == 3  # str with surrogate escapes: the same file
    L = libshard.Loader([name], batch_size=3, image_size=(8, 8))
    assert labels_of(L) == [[0, 1, 2]]
    assert libshard.Loader(tmp_path, batch_size=3, image_size=(8, 8)).num_samples == 3  # os.PathLike folder
    with pytest.raises(OSError, match=r"caf\\xe9-\\xff.tfrecord"):  # messages keep the bytes, escaped
        libshard.ShardReader(raw_dir + b"/caf\xe9-\xff.tfrecord.idx")
    with pytest.raises(TypeError, match=r"files\[1\]: expected str, bytes or os.PathLike, got int"):
        libshard.Loader([name, 3], batch_size=3, image_size=(8, 8))
    with pytest.raises(TypeError, match="path: expected str, bytes or os.PathLike, got float"):
        libshard.ShardReader(1.5)


def test_shard_writer_leaves_nothing_on_a_write_error(tmp_path):
    path = str(tmp_path / "full.tfrecord")
    r = run_py("""
        import resource, signal, libshard
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))  # a disk that fills at 4 KB
        w = libshard.ShardWriter(%r)
        try:
            for i in range(100):
                w.write({"image/encoded": b"x" * 1000, "image/class/label": i})
            w.close()
            print("no error")
        except OSError as e:
            print("OSError")
    """ % path, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "OSError\n"
    assert os.listdir(tmp_path) == []  # no empty or partial shard, no temporary file


def test_shard_writer_publishes_at_close_and_warns_when_never_closed(tmp_path):
    path = str(tmp_path / "a.tfrecord")
    w = libshard.ShardWriter(path)
    w.write({"image/class/label": 1})
    assert not os.path.exists(path)  # written under a hidden temporary name until close()
    w.close()
    assert sorted(os.listdir(tmp_path)) == ["a.tfrecord", "a.tfrecord.idx"]
    with pytest.raises(ValueError, match="is closed"):
        w.write({"image/class/label": 2})
    w2 = libshard.ShardWriter(str(tmp_path / "b.tfrecord"))
    w2.write({"image/class/label": 1})
    with pytest.warns(ResourceWarning, match=r"ShardWriter\(.*b.tfrecord\) was not closed"):
        del w2
        gc.collect()
    assert len(libshard.ShardReader(str(tmp_path / "b.tfrecord"))) == 1
    with pytest.raises(KeyError):
        with libshard.ShardWriter(str(tmp_path / "c.tfrecord")) as w3:
            w3.write({"image/class/label": 1})
            raise KeyError("the block failed")
    assert sorted(os.listdir(tmp_path)) == ["a.tfrecord", "a.tfrecord.idx", "b.tfrecord", "b.tfrecord.idx"]


def test_shard_writer_names_the_feature_of_a_bad_value(tmp_path):
    with libshard.ShardWriter(str(tmp_path / "a.tfrecord")) as w:
        with pytest.raises(TypeError, match=r'feature "label" value 1: expected an int like the first value, got str'):
            w.write({"label": [1, "two"]})
        with pytest.raises(ValueError, match=r'feature "label" value 0: 1180591620717411303424 does not fit in an int64'):
            w.write({"label": 2**70})
        with pytest.raises(TypeError, match=r'feature "x": values must be bytes, str, int or float, got dict'):
            w.write({"x": {}})
        with pytest.raises(TypeError, match=r'feature "s" value 1: expected bytes or str like the first value, got float'):
            w.write({"s": [b"a", 1.5]})
        w.write({"label": [1, True], "score": [0.5, 2]})
    assert libshard.ShardReader(str(tmp_path / "a.tfrecord")).example(0) == {"label": [1, 1], "score": [0.5, 2.0]}
