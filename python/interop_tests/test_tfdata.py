"""tf.data reads the shards `shard convert` writes: TFRecordDataset (which checks both CRCs of every record),
parse_single_example and TensorFlow's own decoders, compared with libshard's Loader and ShardReader record for
record, over the classification, segmentation and detection sets (interop_sets.make_sets); the detection records
as the TF Object Detection API's TfExampleDecoder reads them, and label_map.pbtxt as its StringIntLabelMap."""
import hashlib
import json
import os
import runpy
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from google.protobuf import text_format
from PIL import Image

import libshard
from interop_sets import HERE, MASK_SIZE, coco_boxes_after_letterbox, docs_block, label_map_class, loader_samples


# research/object_detection/data_decoders/tf_example_decoder.py (tensorflow/models), TfExampleDecoder's
# keys_to_features without the optional groups (masks, keypoints, DensePose, tracks, context features), written
# with tf.io names for tf.FixedLenFeature / tf.VarLenFeature.
OD_API_SPEC = {
    "image/encoded": tf.io.FixedLenFeature((), tf.string, default_value=""),
    "image/format": tf.io.FixedLenFeature((), tf.string, default_value="jpeg"),
    "image/filename": tf.io.FixedLenFeature((), tf.string, default_value=""),
    "image/key/sha256": tf.io.FixedLenFeature((), tf.string, default_value=""),
    "image/source_id": tf.io.FixedLenFeature((), tf.string, default_value=""),
    "image/height": tf.io.FixedLenFeature((), tf.int64, default_value=1),
    "image/width": tf.io.FixedLenFeature((), tf.int64, default_value=1),
    "image/class/text": tf.io.VarLenFeature(tf.string),
    "image/class/label": tf.io.VarLenFeature(tf.int64),
    "image/neg_category_ids": tf.io.VarLenFeature(tf.int64),
    "image/not_exhaustive_category_ids": tf.io.VarLenFeature(tf.int64),
    "image/class/confidence": tf.io.VarLenFeature(tf.float32),
    "image/object/bbox/xmin": tf.io.VarLenFeature(tf.float32),
    "image/object/bbox/xmax": tf.io.VarLenFeature(tf.float32),
    "image/object/bbox/ymin": tf.io.VarLenFeature(tf.float32),
    "image/object/bbox/ymax": tf.io.VarLenFeature(tf.float32),
    "image/object/class/label": tf.io.VarLenFeature(tf.int64),
    "image/object/class/text": tf.io.VarLenFeature(tf.string),
    "image/object/area": tf.io.VarLenFeature(tf.float32),
    "image/object/is_crowd": tf.io.VarLenFeature(tf.int64),
    "image/object/difficult": tf.io.VarLenFeature(tf.int64),
    "image/object/group_of": tf.io.VarLenFeature(tf.int64),
    "image/object/weight": tf.io.VarLenFeature(tf.float32),
}
# The keys of that spec that `shard convert --coco / --yolo` writes (docs/convert.md, Records). The decoder's
# defaults stand for the others: the image-level classes and the Open Images fields (neg_category_ids, not_exhaustive_category_ids, confidence, group_of, weight).
OD_API_KEYS_WRITTEN = ["image/encoded", "image/format", "image/filename", "image/source_id", "image/key/sha256",
                       "image/height",
                       "image/width", "image/object/bbox/xmin", "image/object/bbox/xmax", "image/object/bbox/ymin",
                       "image/object/bbox/ymax", "image/object/class/label", "image/object/class/text",
                       "image/object/area", "image/object/is_crowd", "image/object/difficult"]

# TensorFlow's decode_jpeg defaults to libjpeg's fast integer IDCT (dct_method "" is INTEGER_FAST); libshard
# decodes with the accurate one, libjpeg-turbo's default. Decoded with INTEGER_ACCURATE the pixels are equal; with
# TensorFlow's default they differ by the IDCT's rounding, a few levels at most on these 28x28 q90 images.
JPEG_FAST_IDCT_MAX_DIFF = 12
JPEG_FAST_IDCT_MEAN_DIFF = 1.0


def docs_recipe():
    """The tf.data recipe of docs/formats.md ("Reading libshard shards elsewhere"), as its reader pastes it."""
    return docs_block("formats.md", r"<!-- test: fake-tensorflow -->")


def run_docs_recipe(folder, tmp_path, monkeypatch):
    """Runs the recipe with real TensorFlow from a folder where `out` is FOLDER; returns its names (spec, parse,
    ds). It runs from a file of its own, so that AutoGraph finds parse()'s source, as it would in a user's."""
    (tmp_path / "out").symlink_to(folder)
    (tmp_path / "recipe.py").write_text(docs_recipe())
    monkeypatch.chdir(tmp_path)
    return runpy.run_path(str(tmp_path / "recipe.py"))


def tf_records(paths):
    """The records of PATHS through tf.data.TFRecordDataset, as bytes."""
    return [r.numpy() for r in tf.data.TFRecordDataset(paths)]


def label_names(converted):
    return {int(e["label"]): e["name"] for e in converted.manifest["labels"]}


@pytest.mark.parametrize("name", ["png", "jpeg"])
def test_the_docs_tf_data_recipe_reads_what_the_loader_reads(sets, name, tmp_path, monkeypatch):
    """docs/formats.md's spec and parse() over the train shards (its glob), with real TensorFlow: every record
    parses, its image and label are the Loader's, and the informational keys say what the image is."""
    converted = sets[name]
    recipe = run_docs_recipe(converted.folder, tmp_path, monkeypatch)
    got = [(image.numpy(), int(label)) for image, label in recipe["ds"]]
    ref = loader_samples(converted.folder, "train")
    assert len(got) == converted.records("train") == len(ref["labels"]) == 80
    assert [label for _, label in got] == ref["labels"].tolist()
    images = np.stack([image for image, _ in got])
    assert images.shape == ref["images"].shape == (80, 28, 28, 3)
    diff = np.abs(images.astype(int) - ref["images"])
    if name == "png":
        assert diff.max() == 0
    else:  # decode_image's JPEG path is decode_jpeg with TensorFlow's default (fast) IDCT: see above
        assert diff.max() <= JPEG_FAST_IDCT_MAX_DIFF and diff.mean() <= JPEG_FAST_IDCT_MEAN_DIFF, (
            diff.max(), diff.mean())

    names = label_names(converted)
    for record in tf_records(converted.shards("train")):
        ex = {k: v.numpy() for k, v in tf.io.parse_single_example(record, recipe["spec"]).items()
              if not isinstance(v, tf.SparseTensor)}
        assert ex["image/format"] == name.encode()
        assert (ex["image/height"], ex["image/width"], ex["image/channels"]) == (28, 28, 3)
        assert ex["image/colorspace"] == b"RGB"
        assert ex["image/class/text"].decode() == names[ex["image/class/label"]]
        source = HERE.parents[1] / "samples" / "images" / ex["image/filename"].decode()
        assert ex["image/key/sha256"].decode() == hashlib.sha256(source.read_bytes()).hexdigest()


def test_jpeg_decoded_by_tensorflow_with_the_accurate_idct_equals_the_loader(sets):
    """The same JPEG bytes decoded by TensorFlow (INTEGER_ACCURATE) and by libshard give the same pixels."""
    converted = sets["jpeg"]
    for split in converted.splits:
        ref = loader_samples(converted.folder, split)
        spec = {"image/encoded": tf.io.FixedLenFeature([], tf.string),
                "image/class/label": tf.io.FixedLenFeature([], tf.int64)}
        images, labels = [], []
        for record in tf_records(converted.shards(split)):
            ex = tf.io.parse_single_example(record, spec)
            images.append(tf.io.decode_jpeg(ex["image/encoded"], channels=3, dct_method="INTEGER_ACCURATE").numpy())
            labels.append(int(ex["image/class/label"]))
        assert labels == ref["labels"].tolist()
        np.testing.assert_array_equal(np.stack(images), ref["images"])


@pytest.mark.parametrize("name", ["jpeg", "png", "raw", "raw_zst", "raw_up_zst", "masks", "coco", "yolo"])
def test_tf_record_dataset_reads_every_record_as_shard_reader_does(sets, name):
    """TFRecordDataset checks the length and data CRC of every record: it reads every shard of every set, and
    each record's bytes are ShardReader's."""
    converted = sets[name]
    for split in converted.splits:
        total = 0
        for path in converted.shards(split):
            reader = libshard.ShardReader(path)
            got = tf_records([path])
            assert len(got) == len(reader)
            assert all(got[i] == reader[i] for i in range(len(reader)))
            total += len(got)
        assert total == converted.records(split)


def test_tensorflow_refuses_a_record_whose_crc_does_not_match(sets, tmp_path):
    """The negative control for the test above: one byte changed in a record's data (or its length) and
    TensorFlow stops with DataLossError at that record's offset, as libshard does."""
    path = sets["png"].shards("train")[1]
    offsets = [int(line.split()[0]) for line in open(path + ".idx")]
    # TensorFlow names the offset of the part whose CRC failed (the data starts 12 bytes in), libshard the record's.
    for where, field, tf_offset in ((offsets[3] + 12 + 20, "data", offsets[3] + 12),
                                    (offsets[3] + 2, "length", offsets[3])):
        bad = tmp_path / ("bad-%s.tfrecord" % field)
        shutil.copyfile(path, bad)
        with open(bad, "r+b") as f:
            f.seek(where)
            byte = f.read(1)
            f.seek(where)
            f.write(bytes([byte[0] ^ 0x10]))
        with pytest.raises(tf.errors.DataLossError, match="corrupted record at %d " % tf_offset):
            tf_records([str(bad)])
        with pytest.raises(libshard.DataLossError, match="at byte %d" % offsets[3]):
            reader = libshard.ShardReader(str(bad), use_index=False)
            [reader[i] for i in range(len(reader))]


def test_masks_decode_with_decode_png_as_the_loader_and_the_sources_have_them(sets):
    """The segmentation set: image and class-index mask, each decode_png'd by TensorFlow, equal the Loader's
    (masks=True) and the PNGs the set was made from, pixel for pixel."""
    converted = sets["masks"]
    images_dir, masks_dir = converted.sources
    ref = loader_samples(converted.folder, "train", masks=True)
    spec = {"image/encoded": tf.io.FixedLenFeature([], tf.string),
            "image/filename": tf.io.FixedLenFeature([], tf.string),
            "image/segmentation/class/encoded": tf.io.FixedLenFeature([], tf.string),
            "image/segmentation/class/format": tf.io.FixedLenFeature([], tf.string)}
    records = tf_records(converted.shards("train"))
    assert len(records) == len(ref["labels"]) == 24
    for i, record in enumerate(records):
        ex = tf.io.parse_single_example(record, spec)
        assert ex["image/segmentation/class/format"].numpy() == b"png"
        image = tf.io.decode_png(ex["image/encoded"], channels=3).numpy()
        mask = tf.io.decode_png(ex["image/segmentation/class/encoded"], channels=1).numpy()[..., 0]
        assert mask.shape == MASK_SIZE
        name = ex["image/filename"].numpy().decode()
        np.testing.assert_array_equal(image, np.asarray(Image.open(images_dir / name)))
        np.testing.assert_array_equal(mask, np.asarray(Image.open(masks_dir / name)))
        np.testing.assert_array_equal(image, ref["images"][i])
        np.testing.assert_array_equal(mask, ref["masks"][i])
    assert set(np.unique(ref["masks"])) == {0, 1, 2, 3}


def od_api_decode(record):
    """A record as TfExampleDecoder.decode gives its main fields: the image as slim's Image handler decodes it
    (decode_raw for "raw"/"RAW", else decode_jpeg when is_jpeg, else decode_image, 3 channels), groundtruth boxes
    as its BoundingBox handler stacks them ([ymin, xmin, ymax, xmax]), classes from image/object/class/label."""
    ex = tf.io.parse_single_example(record, OD_API_SPEC)
    dense = {k: (tf.sparse.to_dense(v) if isinstance(v, tf.SparseTensor) else v).numpy() for k, v in ex.items()}
    buffer = ex["image/encoded"]
    if dense["image/format"] in (b"raw", b"RAW"):
        image = tf.io.decode_raw(buffer, tf.uint8)
    elif tf.io.is_jpeg(buffer):
        image = tf.io.decode_jpeg(buffer, channels=3)
    else:
        image = tf.io.decode_image(buffer, channels=3)
    dense["image"] = image.numpy()
    dense["groundtruth_boxes"] = np.stack([dense["image/object/bbox/" + k] for k in ("ymin", "xmin", "ymax",
                                                                                     "xmax")], axis=1)
    return dense


@pytest.mark.parametrize("name", ["coco", "yolo"])
def test_detection_records_read_as_the_object_detection_api_decoder_reads_them(sets, name):
    """`shard convert --coco / --yolo` records under the OD API's feature spec: they carry the keys it reads, the
    image decodes to 64x64x3, and the boxes and classes are the Loader's (boxes=True) and the annotations' own
    after the converter's letterbox."""
    converted = sets[name]
    expected = coco_boxes_after_letterbox()
    instances = json.loads((HERE.parents[1] / "samples" / "boxes" / "instances.json").read_text())
    coco_ids = {image["file_name"]: image["id"] for image in instances["images"]}
    seen = boxes_seen = 0
    for split in converted.splits:
        ref = loader_samples(converted.folder, split, boxes=True)
        records = tf_records(converted.shards(split))
        assert len(records) == len(ref["labels"]) == converted.records(split)
        for i, record in enumerate(records):
            n = int(ref["box_counts"][i])  # 0 for val/0012.png, an image without objects
            keys = set(tf.train.Example.FromString(record).features.feature)
            written = [k for k in OD_API_KEYS_WRITTEN if n or not k.startswith("image/object/")]
            assert set(written) <= keys, sorted(set(written) - keys)
            ex = od_api_decode(record)
            assert ex["image/format"] == b"png" and (ex["image/height"], ex["image/width"]) == (64, 64)
            assert ex["image"].shape == (64, 64, 3)
            np.testing.assert_array_equal(ex["image"], ref["images"][i])
            boxes = ex["groundtruth_boxes"]
            assert boxes.shape == (n, 4)
            np.testing.assert_allclose(boxes[:, [1, 0, 3, 2]], ref["boxes"][i, :n], atol=1e-6)
            np.testing.assert_array_equal(ex["image/object/class/label"], ref["box_labels"][i, :n])
            # The annotations' boxes, letterboxed (YOLO's files hold 6 decimals, hence the tolerance).
            want = sorted(expected[os.path.basename(ex["image/filename"].decode())])
            got = sorted(zip(ex["image/object/class/label"].tolist(), *boxes[:, [1, 0, 3, 2]].T.tolist()))
            assert [w[0] for w in want] == [g[0] for g in got]
            np.testing.assert_allclose(np.reshape([w[1:] for w in want], (n, 4)),
                                       np.reshape([g[1:] for g in got], (n, 4)), atol=2e-5)
            # area: in stored-image pixels; no box here is cut by the letterbox.
            pixels = (boxes[:, 3] - boxes[:, 1]) * (boxes[:, 2] - boxes[:, 0]) * 64 * 64
            np.testing.assert_allclose(ex["image/object/area"], pixels, rtol=2e-3)
            assert (ex["image/object/is_crowd"] == 0).all() and (ex["image/object/difficult"] == 0).all()
            # image/source_id, what the API's COCO evaluator keys detections by: COCO's image id; for YOLO the
            # path from the input root, as image/filename.
            if name == "coco":
                assert ex["image/source_id"] == str(coco_ids[os.path.basename(ex["image/filename"].decode())]).encode()
            else:
                assert ex["image/source_id"] == ex["image/filename"] != b""
            seen += 1
            boxes_seen += n
    assert seen == 12 and boxes_seen == 22  # samples/boxes: 22 boxes in 12 images


@pytest.mark.parametrize("name", ["coco", "yolo"])
def test_label_map_pbtxt_parses_as_the_object_detection_apis_string_int_label_map(sets, name, tmp_path):
    """label_map.pbtxt parsed with the OD API's own message (text_format, as label_map_util.load_labelmap does)
    passes that function's check (ids >= 1; 0 only for 'background'), says what manifest.json's object_labels say,
    and maps every record's image/object/class/text to its image/object/class/label (what the decoder's
    label_map_proto_file path computes)."""
    converted = sets[name]
    label_map = text_format.Parse((converted.folder / "label_map.pbtxt").read_text(), label_map_class(tmp_path)())
    for item in label_map.item:
        assert item.id >= 1 or (item.id == 0 and item.name == "background"), item
    ids = {item.name: item.id for item in label_map.item}
    assert len(ids) == len(label_map.item) == len({item.id for item in label_map.item})
    assert {int(e["label"]): e["name"] for e in converted.manifest["object_labels"]} == {
        v: k for k, v in ids.items()}
    assert ids == {"square": 1, "disc": 2, "triangle": 3}
    for split in converted.splits:
        for record in tf_records(converted.shards(split)):
            ex = od_api_decode(record)
            texts = [t.decode() for t in ex["image/object/class/text"]]
            assert [ids[t] for t in texts] == ex["image/object/class/label"].tolist()


def test_stored_raw_arrays_decode_with_decode_raw(sets, tmp_path, monkeypatch):
    """`--format raw --zstd-level 0`: the docs' spec and decode_raw + reshape by image/shape give the Loader's
    pixels exactly."""
    converted = sets["raw"]
    spec = run_docs_recipe(converted.folder, tmp_path, monkeypatch)["spec"]
    for split in converted.splits:
        ref = loader_samples(converted.folder, split)
        images = []
        for record in tf_records(converted.shards(split)):
            ex = tf.io.parse_single_example(record, spec)
            assert ex["image/format"].numpy() == b"raw" and ex["image/dtype"].numpy() == b"uint8"
            shape = tf.sparse.to_dense(ex["image/shape"])
            images.append(tf.reshape(tf.io.decode_raw(ex["image/encoded"], tf.uint8), shape).numpy())
        np.testing.assert_array_equal(np.stack(images), ref["images"])


@pytest.mark.parametrize("name,image_format", [("raw_zst", b"raw.zst"), ("raw_up_zst", b"raw.up.zst")])
def test_zstd_raw_arrays_have_no_tensorflow_decoder(sets, name, image_format):
    """`--format raw` with zstd: TensorFlow reads the records (framing, CRCs, Example) but none of its decoders
    reads the array: the bytes are a zstd frame, decode_image refuses them and decode_raw gives the frame's bytes,
    not the h*w*c samples. docs/formats.md says so."""
    converted = sets[name]
    spec = {"image/encoded": tf.io.FixedLenFeature([], tf.string),
            "image/format": tf.io.FixedLenFeature([], tf.string),
            "image/shape": tf.io.FixedLenFeature([3], tf.int64)}
    records = tf_records(converted.shards("train"))
    assert len(records) == 80
    for record in records[:5]:
        ex = tf.io.parse_single_example(record, spec)
        assert ex["image/format"].numpy() == image_format
        encoded = ex["image/encoded"].numpy()
        assert encoded[:4] == b"\x28\xb5\x2f\xfd"  # zstd's frame magic
        with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown image file format"):
            tf.io.decode_image(encoded)
        assert tf.io.decode_raw(encoded, tf.uint8).shape[0] != int(np.prod(ex["image/shape"].numpy()))


@pytest.mark.parametrize("first", ["libshard", "tensorflow"])
def test_libshard_reads_manifests_in_a_process_that_imported_tensorflow(sets, first, tmp_path):
    """A training script that imports TensorFlow and libshard, in either order, reads a manifest (Loader),
    converts and verifies: the three read or write manifest.json through libshard's Protobuf, which must not bind to
    the copy TensorFlow loads with RTLD_GLOBAL (it did, and crashed, before libshard/__init__.py loaded its module
    with RTLD_DEEPBIND). Run in a process of its own: the failure is a crash. test_one_process.py compares the
    Loader's first batch in more import orders."""
    script = "\n".join([
        "import %s" % ", ".join([first, "tensorflow" if first == "libshard" else "libshard"]),
        "with libshard.Loader(%r, 16, split='train') as loader:" % str(sets["png"].folder),
        "    assert sum(len(labels) for _, labels in loader) == 80",
        "result = libshard.convert(%r, %r, format='png')" % (str(HERE.parents[1] / "samples" / "boxes" / "images"),
                                                            str(tmp_path / "converted")),
        "assert result.converted == 12 and libshard.verify(%r).ok" % str(tmp_path / "converted"),
    ])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, "exit %d\n%s" % (done.returncode, done.stderr[-3000:])
