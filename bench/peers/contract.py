"""The contract every peer's reader is held to, shared by all peer modules.

Each peer module (peer_*.py) runs in its own venv, where only numpy and Pillow
are sure to be present besides the peer itself, so this file uses nothing else.
It holds:

* the workload (sizes, batch, epochs, thread budget) so no peer gets a
  different one by accident;
* a small TFRecord + tf.train.Example reader, so a peer's writer can take the
  very JPEG bytes libshard stored without importing libshard or TensorFlow;
* the timing loop: a warm-up epoch that also collects the output check (per
  channel means and the first batch for the contact sheet), then timed epochs
  with wall time and the CPU time of this process and all its descendants;
* the command line every peer module shares (`write`, `convert`, `read`).
"""
import argparse
import hashlib
import json
import os
import struct
import sys
import time

import numpy as np

# --- the workload ----------------------------------------------------------
SIZE = 224  # output height and width
RESIZE = 256  # shorter side of the stored images (libshard's convert) = eval's resize
JPEG_QUALITY = 90
SCALE = (0.08, 1.0)  # random-resized-crop, torchvision's defaults
RATIO = (3.0 / 4.0, 4.0 / 3.0)
BATCH = 256
SMOKE_BATCH = 32
WARMUP_EPOCHS = 1  # excluded from the rate; it also gathers the output check
TIMED_EPOCHS = 3
SMOKE_TIMED_EPOCHS = 1
CORES = os.cpu_count() or 1  # the thread budget: every peer gets all the cores and no more

# Output check against libshard's means (0..255 levels). Eval reads the same
# images with the same centre crop, so the means must nearly agree (the centre
# of an odd margin rounds either way, drop_last may drop other images). Train
# crops at random: one epoch's mean over n images moves by about 30/sqrt(n).
EVAL_TOLERANCE = 1.5
TRAIN_TOLERANCE = 4.0
SMOKE_TRAIN_TOLERANCE = 10.0

IMAGE_KEY = b"image/encoded"
LABEL_KEY = b"image/class/label"


# --- TFRecord and tf.train.Example, read without TensorFlow -----------------
def tfrecord_files(shards_dir):
    """libshard's shard files in manifest order (sorted names): PREFIX-SPLIT-NNNNN-of-MMMMM.tfrecord, not the .idx
    and .labels files beside them."""
    names = sorted(n for n in os.listdir(shards_dir) if n.endswith(".tfrecord"))
    return [os.path.join(shards_dir, n) for n in names]


def tfrecord_records(path, with_offsets=False):
    """Yields each record's payload (and its offset and framed size): the
    framing is u64 length, u32 masked CRC, data, u32 CRC (CRCs not checked
    here: `shard verify` does that)."""
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos < len(data):
        (length,) = struct.unpack_from("<Q", data, pos)
        payload = data[pos + 12:pos + 12 + length]
        yield (payload, pos, 16 + length) if with_offsets else payload
        pos += 16 + length


def _varint(buf, pos):
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def _fields(buf):
    """(field number, wire type, value) of one protobuf message; value is
    bytes for length-delimited fields, an int for varints."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            n, pos = _varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"protobuf wire type {wire} not supported")
        yield number, wire, value


def parse_example(payload):
    """(JPEG bytes, label) from a tf.train.Example: Example.features(1) ->
    Features.feature(1) map entries (key 1, Feature 2); Feature.bytes_list(1)
    and int64_list(3) hold value(1), the ints packed or not."""
    image, label = None, -1
    for _, _, features in _fields(payload):
        for _, _, entry in _fields(features):
            key = value = None
            for n, _, v in _fields(entry):
                key, value = (v, value) if n == 1 else (key, v)
            if key == IMAGE_KEY:
                for n, _, lst in _fields(value):
                    if n == 1:
                        image = next(v for m, _, v in _fields(lst) if m == 1)
            elif key == LABEL_KEY:
                for n, _, lst in _fields(value):
                    if n == 3:
                        for m, wire, v in _fields(lst):
                            if m == 1:
                                label = _varint(v, 0)[0] if wire == 2 else v
    return bytes(image), int(label)


def libshard_samples(shards_dir):
    """Every (jpeg, label) libshard stored, in its shards' order."""
    for path in tfrecord_files(shards_dir):
        for payload in tfrecord_records(path):
            yield parse_example(payload)


def sha256(data):
    return hashlib.sha256(bytes(data)).hexdigest()


def check_same_bytes(shards_dir, read_back, count=64):
    """SHA-256 of a sample of a peer's stored images against libshard's.
    read_back(i) gives the bytes the peer stored for libshard's sample i."""
    samples = list(libshard_samples(shards_dir))
    step = max(1, len(samples) // count)
    picked = list(range(0, len(samples), step))[:count]
    bad = [i for i in picked if sha256(read_back(i)) != sha256(samples[i][0])]
    return {"checked": len(picked), "mismatched": len(bad), "first_bad": bad[:5]}


# --- timing ----------------------------------------------------------------
def _proc_times(pid):
    """utime + stime + cutime + cstime of one process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def cpu_seconds():
    """CPU time of this process and every live descendant, plus the reaped
    ones (their time is in their parent's cutime): DataLoader workers, DALI's
    and tf.data's threads all count, whether the workers live or die."""
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(name))
            except (OSError, ValueError, IndexError):
                pass  # a process that ended while we looked
    total, todo = 0.0, [os.getpid()]
    while todo:
        pid = todo.pop()
        try:
            total += _proc_times(pid)
        except OSError:
            pass
        todo.extend(children.get(pid, []))
    return total


def to_hwc(images):
    """A batch as a numpy uint8 N x H x W x 3 array, whatever layout the peer gives."""
    a = np.asarray(images)
    if a.ndim == 4 and a.shape[1] == 3 and a.shape[-1] != 3:
        a = a.transpose(0, 2, 3, 1)
    return a


def layout_of(images):
    a = np.asarray(images)
    return "NCHW" if a.ndim == 4 and a.shape[1] == 3 and a.shape[-1] != 3 else "NHWC"


def contact_sheet(images, path, columns=8, rows=4):
    """The first batch's first images in a grid, so a wrong crop, a BGR swap or
    a transposed layout shows at a glance."""
    from PIL import Image
    a = to_hwc(images)[:columns * rows]
    rows = -(-len(a) // columns)
    h, w = a.shape[1:3]
    sheet = np.zeros((rows * h, columns * w, 3), np.uint8)
    for i, img in enumerate(a):
        r, c = divmod(i, columns)
        sheet[r * h:(r + 1) * h, c * w:(c + 1) * w] = img
    Image.fromarray(sheet).save(path)


def drop_caches():
    """Empties the page cache (root only); False where not allowed."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def run_epochs(args, epoch_batches, info):
    """Runs the warm-up and timed epochs. epoch_batches(epoch) yields
    (images, labels) batches of the contract's size; images may be any array
    numpy.asarray takes (torch / tf tensors on the CPU, numpy arrays).
    Returns the result record the driver collects."""
    result = dict(info, peer=args.peer, workload=args.workload, round=args.round, batch=args.batch)
    warm = 0 if args.cold else WARMUP_EPOCHS
    sums, pixels, first = np.zeros(3), 0, None
    for epoch in range(warm):
        n = 0
        for images, _ in epoch_batches(epoch):
            a = to_hwc(images)
            if first is None:
                first = a.copy()
                result["layout"] = layout_of(images)
                result["shape"] = list(np.asarray(images).shape)
                result["dtype"] = str(np.asarray(images).dtype)
            sums += a.reshape(-1, 3).sum(axis=0, dtype=np.uint64)
            pixels += a.shape[0] * a.shape[1] * a.shape[2]
            n += 1
            if args.max_batches and n >= args.max_batches:
                break
    if first is not None:
        result["mean"] = (sums / pixels).round(3).tolist()
        if args.sheet:
            contact_sheet(first, args.sheet)
    if args.cold:
        result["cold"] = drop_caches()
    images = batches = 0
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    for epoch in range(warm, warm + args.epochs):
        n = 0
        for x, _ in epoch_batches(epoch):
            images += len(x)
            n += 1
            if args.max_batches and n >= args.max_batches:
                break
        batches += n
    seconds, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
    result.update(images=images, batches=batches, seconds=round(seconds, 3),
                  img_s=round(images / seconds, 1) if seconds else None,
                  core_ms_per_img=round(1000 * cpu / images, 3) if images else None,
                  cpu_seconds=round(cpu, 2), cores=CORES, epochs=args.epochs)
    return result


# --- the command line every peer module shares -------------------------------
def main(peer, write=None, convert=None, read=None):
    """`peer_x.py write|convert|read ...`: each prints nothing but its JSON
    record (to --json), so the driver collects the results even from a peer
    that fails (the error's first line)."""
    p = argparse.ArgumentParser(prog=f"peer_{peer}.py")
    p.add_argument("command", choices=["write", "convert", "read"])
    p.add_argument("--shards", help="libshard's converted dataset (its train split folder of shards)")
    p.add_argument("--data", help="the peer's copy of the dataset (made by write)")
    p.add_argument("--photos", help="the raw photos (convert)")
    p.add_argument("--workload", choices=["eval", "train"], default="eval")
    p.add_argument("--variant", default="")
    p.add_argument("--batch", type=int, default=BATCH)
    p.add_argument("--epochs", type=int, default=TIMED_EPOCHS)
    p.add_argument("--max-batches", type=int, default=0, help="stop each epoch after N batches (smoke)")
    p.add_argument("--round", type=int, default=1)
    p.add_argument("--cold", action="store_true", help="drop the page cache, time the first epoch")
    p.add_argument("--sheet", help="contact sheet PNG of the first batch")
    p.add_argument("--json", required=True)
    args = p.parse_args()
    args.peer = peer + (f"-{args.variant}" if args.variant else "")
    fn = {"write": write, "convert": convert, "read": read}[args.command]
    try:
        if fn is None:
            result = {"skipped": f"{peer} has no {args.command} step"}
        else:
            t0 = time.perf_counter()
            result = fn(args) or {}
            result.setdefault("seconds", round(time.perf_counter() - t0, 3))
    except BaseException as e:  # a peer that fails is a row saying why, not a crash of the driver
        line = (str(e).strip().splitlines() or [""])[0]
        result = {"error": f"{type(e).__name__}: {line}"[:300]}
        import traceback
        traceback.print_exc()
    result.setdefault("peer", args.peer)
    result.setdefault("command", args.command)
    result.setdefault("workload", args.workload)
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    if "error" in result:
        print(f"{args.peer} {args.command}: {result['error']}", file=sys.stderr)
    sys.exit(1 if "error" in result else 0)


def pil_resize_jpeg(path):
    """A raw photo as the peers without their own resizer store it: shorter
    side RESIZE (bilinear, Pillow's draft() shrink-on-load first, as
    performance.md's Pillow baseline), JPEG q90. The conversion row's work."""
    import io
    from PIL import Image
    with Image.open(path) as im:
        w, h = im.size
        scale = RESIZE / min(w, h)
        size = (max(1, round(w * scale)), max(1, round(h * scale)))
        im.draft("RGB", size)
        im = im.convert("RGB").resize(size, Image.BILINEAR)
        out = io.BytesIO()
        im.save(out, "JPEG", quality=JPEG_QUALITY)
        return out.getvalue()


def photo_list(photos_dir):
    """(path, label) of an ImageFolder-style tree (a folder per class), sorted."""
    classes = sorted(d for d in os.listdir(photos_dir) if os.path.isdir(os.path.join(photos_dir, d)))
    items = []
    for label, c in enumerate(classes):
        for n in sorted(os.listdir(os.path.join(photos_dir, c))):
            items.append((os.path.join(photos_dir, c, n), label))
    return items


def resized_photos(photos_dir, processes=CORES):
    """(index, jpeg, label) of every raw photo, resized by pil_resize_jpeg in
    a pool of CORES processes, in order: the conversion row of a peer that has
    no image resizer of its own feeds its writer from this."""
    from multiprocessing import Pool
    items = photo_list(photos_dir)
    with Pool(processes) as pool:
        for i, jpeg in enumerate(pool.imap(pil_resize_jpeg, [p for p, _ in items], chunksize=16)):
            yield i, jpeg, items[i][1]


def converted(result_images, seconds_start):
    """The conversion row's record: images and images per second."""
    import time as _t
    seconds = _t.perf_counter() - seconds_start
    return {"images": result_images, "seconds": round(seconds, 3), "img_s": round(result_images / seconds, 1)}


def pil_train_crop(img, rng):
    """Random-resized-crop + horizontal flip with Pillow and numpy only, the
    box drawn as torchvision's RandomResizedCrop.get_params does (10 tries,
    then the centre crop clamped to the ratio): for a peer without image ops
    (Grain). Returns uint8 HWC."""
    import math
    from PIL import Image
    w, h = img.size
    area = w * h
    log_r = (math.log(RATIO[0]), math.log(RATIO[1]))
    for _ in range(10):
        target = area * rng.uniform(*SCALE)
        aspect = math.exp(rng.uniform(*log_r))
        cw, ch = int(round(math.sqrt(target * aspect))), int(round(math.sqrt(target / aspect)))
        if 0 < cw <= w and 0 < ch <= h:
            x, y = rng.randint(0, w - cw), rng.randint(0, h - ch)
            break
    else:
        r = w / h
        cw, ch = (w, int(round(w / RATIO[0]))) if r < RATIO[0] else (int(round(h * RATIO[1])), h) if r > RATIO[1] \
            else (w, h)
        x, y = (w - cw) // 2, (h - ch) // 2
    out = img.resize((SIZE, SIZE), Image.BILINEAR, box=(x, y, x + cw, y + ch))
    if rng.random() < 0.5:
        out = out.transpose(Image.FLIP_LEFT_RIGHT)
    return np.asarray(out)


def pil_eval_crop(img):
    """The centre SIZE x SIZE of an image whose shorter side is RESIZE (torchvision's CenterCrop offsets)."""
    w, h = img.size
    x, y = int(round((w - SIZE) / 2.0)), int(round((h - SIZE) / 2.0))
    return np.asarray(img.crop((x, y, x + SIZE, y + SIZE)))
