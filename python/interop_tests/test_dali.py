"""NVIDIA DALI reads the shards `shard convert` writes: fn.readers.tfrecord over the shards with libshard's own
.idx files, in a CPU-only pipeline (device_id=None, fn.decoders.image on the CPU), every image decoded and compared
with libshard's Loader record for record; and DALI's own tfrecord2idx writes the .idx files libshard writes."""
import runpy
import sys
from importlib import metadata

import numpy as np
import pytest
import nvidia.dali.tfrecord as tfrec
from nvidia.dali import fn, pipeline_def, types

from interop_sets import MASK_SIZE, loader_samples

BATCH = 16


def dali_read(paths, features, outputs, count):
    """The first COUNT samples of a CPU-only DALI pipeline reading PATHS (and PATH.idx, libshard's index) in file
    order: a list of one tuple of numpy arrays per sample, OUTPUTS(reader's dict) giving the pipeline's outputs."""

    @pipeline_def(batch_size=BATCH, num_threads=2, device_id=None, seed=0, prefetch_queue_depth=1)
    def pipeline():
        inputs = fn.readers.tfrecord(path=paths, index_path=[p + ".idx" for p in paths], features=features,
                                     random_shuffle=False, name="reader")
        return outputs(inputs)

    pipe = pipeline()
    pipe.build()
    # DALI counts the records from the .idx files it was given.
    assert pipe.reader_meta("reader")["epoch_size"] == count
    rows = []
    while len(rows) < count:
        out = pipe.run()
        rows += [tuple(np.array(o.at(j)) for o in out) for j in range(BATCH)]
    del pipe
    return rows[:count]


def string_feature():
    return tfrec.FixedLenFeature((), tfrec.string, "")


@pytest.mark.parametrize("name", ["png", "jpeg"])
def test_dali_decodes_the_classification_sets_as_the_loader_does(sets, name):
    """Every image of both splits decoded by DALI's CPU decoder (for JPEG, libjpeg-turbo with the accurate IDCT,
    as libshard's: the same pixels) and every label equal the Loader's."""
    converted = sets[name]
    for split in converted.splits:
        ref = loader_samples(converted.folder, split)
        rows = dali_read(converted.shards(split),
                         {"image/encoded": string_feature(),
                          "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1)},
                         lambda r: (fn.decoders.image(r["image/encoded"], device="cpu", output_type=types.RGB),
                                    r["image/class/label"]),
                         converted.records(split))
        assert [int(label[0]) for _, label in rows] == ref["labels"].tolist()
        images = np.stack([image for image, _ in rows])
        assert images.shape == ref["images"].shape and images.dtype == np.uint8
        np.testing.assert_array_equal(images, ref["images"])


def test_dali_decodes_images_and_masks_of_the_segmentation_set(sets):
    """Image and class-index mask (a gray PNG, decoded as GRAY) of every record equal the Loader's masks=True."""
    converted = sets["masks"]
    ref = loader_samples(converted.folder, "train", masks=True)
    rows = dali_read(converted.shards("train"),
                     {"image/encoded": string_feature(), "image/segmentation/class/encoded": string_feature()},
                     lambda r: (fn.decoders.image(r["image/encoded"], device="cpu", output_type=types.RGB),
                                fn.decoders.image(r["image/segmentation/class/encoded"], device="cpu",
                                                  output_type=types.GRAY)),
                     converted.records("train"))
    np.testing.assert_array_equal(np.stack([image for image, _ in rows]), ref["images"])
    masks = np.stack([mask for _, mask in rows])
    assert masks.shape == (24,) + MASK_SIZE + (1,)
    np.testing.assert_array_equal(masks[..., 0], ref["masks"])


@pytest.mark.parametrize("name", ["coco", "yolo"])
def test_dali_reads_the_detection_boxes_the_loader_reads(sets, name):
    """The Object Detection API's box keys as DALI VarLenFeatures: per record the boxes and classes equal the
    Loader's (boxes=True), and the image decodes to the Loader's pixels."""
    converted = sets[name]
    keys = ["image/object/bbox/xmin", "image/object/bbox/ymin", "image/object/bbox/xmax", "image/object/bbox/ymax"]
    features = {k: tfrec.VarLenFeature(tfrec.float32, 0.0) for k in keys}
    features["image/object/class/label"] = tfrec.VarLenFeature(tfrec.int64, 0)
    features["image/encoded"] = string_feature()
    boxes_seen = 0
    for split in converted.splits:
        ref = loader_samples(converted.folder, split, boxes=True)
        rows = dali_read(converted.shards(split), features,
                         lambda r: tuple([fn.decoders.image(r["image/encoded"], device="cpu", output_type=types.RGB),
                                          r["image/object/class/label"]] + [r[k] for k in keys]),
                         converted.records(split))
        for i, (image, labels, *corners) in enumerate(rows):
            n = int(ref["box_counts"][i])  # 0 for val/0012.png, an image without objects
            np.testing.assert_array_equal(image, ref["images"][i])
            assert labels.shape == (n,) and all(c.shape == (n,) for c in corners)
            np.testing.assert_array_equal(labels, ref["box_labels"][i, :n])
            np.testing.assert_allclose(np.stack(corners, axis=1).reshape(n, 4), ref["boxes"][i, :n], atol=1e-6)
            boxes_seen += n
    assert boxes_seen == 22  # samples/boxes: 22 boxes in 12 images


def test_dali_reshapes_stored_raw_arrays_to_the_loaders_pixels(sets):
    """`--format raw --zstd-level 0`: image/encoded reshaped by image/shape in DALI is the Loader's image."""
    converted = sets["raw"]
    for split in converted.splits:
        ref = loader_samples(converted.folder, split)
        rows = dali_read(converted.shards(split),
                         {"image/encoded": string_feature(), "image/shape": tfrec.FixedLenFeature([3], tfrec.int64,
                                                                                                 0)},
                         lambda r: (fn.reshape(r["image/encoded"], shape=fn.cast(r["image/shape"],
                                                                                  dtype=types.INT32)),),
                         converted.records(split))
        np.testing.assert_array_equal(np.stack([image for (image,) in rows]), ref["images"])


def tfrecord2idx():
    """DALI's tfrecord2idx script, from the installed nvidia-dali distribution's files."""
    for dist in metadata.distributions():
        if (dist.metadata["Name"] or "").lower().startswith("nvidia-dali"):
            for f in dist.files or []:
                if f.name == "tfrecord2idx":
                    return str(f.locate())
    pytest.fail("tfrecord2idx: not among the files of an installed nvidia-dali distribution")


@pytest.mark.parametrize("name", ["jpeg", "masks", "coco"])
def test_dalis_tfrecord2idx_writes_the_index_libshard_writes(sets, name, tmp_path, monkeypatch):
    """libshard's .idx beside each shard is byte for byte what DALI's own indexer writes for it. The script runs
    in this process (runpy), as its command line would run it: a process each would import TensorFlow each time."""
    script = tfrecord2idx()
    converted = sets[name]
    for split in converted.splits:
        for path in converted.shards(split):
            out = tmp_path / "dali.idx"
            monkeypatch.setattr(sys, "argv", [script, path, str(out)])
            runpy.run_path(script, run_name="__main__")
            assert out.read_bytes() == open(path + ".idx", "rb").read(), path
