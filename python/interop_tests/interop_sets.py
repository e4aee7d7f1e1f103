"""Shared by the interop tests: the sets `shard convert` writes for them, libshard's view of those sets (the Loader,
the raw records), and the Object Detection API's label map message compiled from the .proto beside this file."""
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parents[1] / "samples"

MASK_CLASSES = 4
MASK_SIZE = (20, 24)  # height, width of the segmentation set's images
BOX_SIZE = 64  # the detection sets are letterboxed to 64x64


def docs_block(doc, after):
    """The first python block after the line matching ``after`` in docs/DOC, as its reader pastes it."""
    text = (HERE.parents[1] / "docs" / doc).read_text()
    found = re.search(after + r"\n.*?```python\n(.*?)```", text, re.S)
    assert found, "docs/%s: no python block after %r" % (doc, after)
    return found.group(1)


def shard_program():
    """The `shard` on PATH; the test fails (not skips) without one."""
    found = shutil.which("shard")
    if found is None:
        pytest.fail("shard is not on PATH: put the installed wheel's bin (or build/tools) first on PATH")
    return found


def convert(source, output, *flags):
    """`shard convert SOURCE -o OUTPUT FLAGS...`, which must convert every input (exit 0)."""
    cmd = [shard_program(), "convert", str(source), "-o", str(output), "-q", "--threads", "2"]
    cmd += [str(f) for f in flags]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, "%s: exit %d\n%s%s" % (" ".join(cmd), done.returncode, done.stdout, done.stderr)
    return ConvertedSet(Path(output))


class ConvertedSet:
    """A folder `shard convert` wrote: its manifest, and each split's shards in manifest order (the Loader's global
    sample order is these shards one after another, each in file order)."""

    def __init__(self, folder):
        self.folder = folder
        self.manifest = json.loads((folder / "manifest.json").read_text())
        self.splits = [s["name"] for s in self.manifest["splits"]]

    def _split(self, split):
        (entry,) = [s for s in self.manifest["splits"] if s["name"] == split]
        return entry

    def shards(self, split):
        entry = self._split(split)
        return [str(self.folder / s["file"]) for s in sorted(entry["shards"], key=lambda s: int(s["index"]))]

    def records(self, split):
        return int(self._split(split)["records"])

    def examples(self, split):
        """Every record of the split as libshard.ShardReader parses it ({key: [values]}, CRCs checked), in the
        Loader's order."""
        import libshard
        out = []
        for path in self.shards(split):
            reader = libshard.ShardReader(path)
            out += [reader.example(i) for i in range(len(reader))]
        return out


def make_sets(root):
    """Every set the readers read, converted into ROOT: name -> ConvertedSet.

    - jpeg, png: samples/images (Fashion-MNIST PNGs, 28x28 gray, stored RGB; train 80 / val 20, 10 classes) as
      JPEG q90 and as PNG;
    - raw, raw_zst, raw_up_zst: the same as raw arrays: stored (`--zstd-level 0`), zstd, zstd after the Up filter;
    - masks: a small segmentation set made here (image + class-index mask pairs, PNG), `sources` set to its folders;
    - coco, yolo: samples/boxes (12 PNGs of shapes, 128x96) with its COCO and YOLO boxes, letterboxed to 64x64.
    Several shards per split (`--records-per-shard`), so the readers cross shard boundaries and read several .idx.
    """
    images, boxes = SAMPLES / "images", SAMPLES / "boxes"
    made = {
        "jpeg": convert(images, root / "jpeg", "--format", "jpeg", "--records-per-shard", 16),
        "png": convert(images, root / "png", "--format", "png", "--records-per-shard", 16),
        "raw": convert(images, root / "raw", "--format", "raw", "--zstd-level", 0, "--records-per-shard", 32),
        "raw_zst": convert(images, root / "raw_zst", "--format", "raw", "--records-per-shard", 32),
        "raw_up_zst": convert(images, root / "raw_up_zst", "--format", "raw", "--raw-filter", "up", "--zstd-level", 1,
                              "--records-per-shard", 32),
    }
    seg_images, seg_masks = make_mask_folders(root / "seg")
    made["masks"] = convert(seg_images, root / "masks", "--masks", seg_masks, "--format", "png",
                            "--records-per-shard", 10)
    made["masks"].sources = (seg_images, seg_masks)
    for kind, annotations in (("coco", boxes / "instances.json"), ("yolo", boxes / "data.yaml")):
        made[kind] = convert(boxes / "images", root / kind, "--" + kind, annotations, "--format", "png",
                             "--size", BOX_SIZE, "--resize-mode", "letterbox", "--records-per-shard", 4)
    return made


def make_mask_folders(root):
    """ROOT/images/{a,b}/NNNN.png (24x20 RGB noise) and ROOT/masks/{a,b}/NNNN.png (8-bit gray class indices 0..3:
    a rectangle of each class 1..3 over 0), 12 pairs per class; returns (images folder, masks folder)."""
    rng = np.random.default_rng(42)
    h, w = MASK_SIZE
    for cls in ("a", "b"):
        (root / "images" / cls).mkdir(parents=True)
        (root / "masks" / cls).mkdir(parents=True)
        for i in range(12):
            Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(
                root / "images" / cls / ("%04d.png" % i))
            mask = np.zeros((h, w), np.uint8)
            for c in range(1, MASK_CLASSES):
                y0, x0 = int(rng.integers(0, h - 4)), int(rng.integers(0, w - 4))
                mask[y0:y0 + int(rng.integers(2, h - y0)), x0:x0 + int(rng.integers(2, w - x0))] = c
            Image.fromarray(mask).save(root / "masks" / cls / ("%04d.png" % i))
    return root / "images", root / "masks"


def loader_samples(folder, split, **options):
    """Every sample of a split through libshard.Loader in sequential order (the stored size, uint8 NHWC unless
    options say otherwise), batches concatenated: {field name of the batch: numpy array}."""
    import libshard
    fields = {}
    with libshard.Loader(str(folder), 16, split=split, threads=2, **options) as loader:
        for batch in loader:
            for name, value in zip(batch._fields, batch):
                fields.setdefault(name, []).append(np.array(value))
    return {name: np.concatenate(parts) for name, parts in fields.items()}


def loader_boxes(samples, i):
    """Sample i's boxes from loader_samples(..., boxes=True): (float32 [N, 4] xmin, ymin, xmax, ymax; int64 [N])."""
    n = int(samples["box_counts"][i])
    return samples["boxes"][i, :n], samples["box_labels"][i, :n]


def coco_boxes_after_letterbox():
    """samples/boxes/instances.json's boxes as the letterboxed 64x64 records must hold them: {file name: [(label,
    xmin, ymin, xmax, ymax)]}, normalised. 128x96 scales by 1/2 to 64x48, padded by 8 rows above and below."""
    coco = json.loads((SAMPLES / "boxes" / "instances.json").read_text())
    names = {im["id"]: im["file_name"] for im in coco["images"]}
    sizes = {im["id"]: (im["width"], im["height"]) for im in coco["images"]}
    out = {name: [] for name in names.values()}
    for a in coco["annotations"]:
        w, h = sizes[a["image_id"]]
        scale = min(BOX_SIZE / w, BOX_SIZE / h)
        pad_x, pad_y = (BOX_SIZE - w * scale) / 2, (BOX_SIZE - h * scale) / 2
        x, y, bw, bh = a["bbox"]
        out[names[a["image_id"]]].append((a["category_id"], (x * scale + pad_x) / BOX_SIZE,
                                          (y * scale + pad_y) / BOX_SIZE, ((x + bw) * scale + pad_x) / BOX_SIZE,
                                          ((y + bh) * scale + pad_y) / BOX_SIZE))
    return out


def label_map_class(tmp_path):
    """object_detection.protos.StringIntLabelMap, compiled from string_int_label_map.proto (a copy of the Object
    Detection API's) by protoc into a descriptor set and built with protobuf's message factory (no generated code,
    so protoc's version need not match the protobuf runtime's)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    protoc = shutil.which("protoc")
    if protoc is None:
        pytest.fail("protoc is not on PATH (Debian: protobuf-compiler, which tools/setup.sh installs)")
    out = tmp_path / "string_int_label_map.desc"
    subprocess.run([protoc, "-I", str(HERE), "--include_imports", "--descriptor_set_out", str(out),
                    str(HERE / "string_int_label_map.proto")], check=True, timeout=60)
    pool = descriptor_pool.DescriptorPool()
    for f in descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file:
        pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("object_detection.protos.StringIntLabelMap"))
