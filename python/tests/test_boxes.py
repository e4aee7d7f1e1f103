"""Loader(boxes=True), ShardDataset / ShardImages with boxes and libshard.torch.detection_targets: records with
rectangles drawn where their boxes say; the returned boxes must frame the rectangles found again in the returned
pixels (+-1 px) under every resize mode, random-resized-crop and the flip."""
import io

import numpy as np
import pytest
from PIL import Image

import libshard

# Per sample: [x0, y0, x1, y1, label] in pixels of a 96x72 image; label 1 red, 2 green, 3 blue.
SAMPLES = [
    [(10, 8, 30, 28, 1), (50, 20, 90, 40, 2), (30, 50, 60, 70, 3)],
    [(0, 0, 24, 18, 3), (70, 40, 96, 72, 1)],
    None,  # a record without box keys
    [(40, 10, 56, 62, 2)],
]


def write_box_shard(path, samples=SAMPLES, bad=None):
    with libshard.ShardWriter(str(path)) as w:
        for i, boxes in enumerate(samples):
            px = np.zeros((72, 96, 3), np.uint8)
            features = {"image/class/label": i}
            if boxes is not None:
                for x0, y0, x1, y1, label in boxes:
                    px[y0:y1, x0:x1, label - 1] = 255
                features.update({"image/object/bbox/xmin": [b[0] / 96 for b in boxes],
                                 "image/object/bbox/ymin": [b[1] / 72 for b in boxes],
                                 "image/object/bbox/xmax": [b[2] / 96 for b in boxes],
                                 "image/object/bbox/ymax": [b[3] / 72 for b in boxes],
                                 "image/object/class/label": [b[4] for b in boxes]})
            if bad is not None and i == 1:
                features.update(bad)
            buf = io.BytesIO()
            Image.fromarray(px).save(buf, format="PNG")
            features["image/encoded"] = buf.getvalue()
            w.write(features)
    return str(path)


def found(image, label):
    """[x0, y0, x1, y1) of the pixels of `label`'s colour in an H x W x 3 image, or None."""
    c = label - 1
    on = (image[..., c] > 127) & (np.delete(image, c, axis=-1) <= 127).all(-1)
    ys, xs = np.nonzero(on)
    if len(xs) == 0:
        return None
    return xs.min(), ys.min(), xs.max() + 1, ys.max() + 1


def check_batch(images, boxes, box_labels, counts):
    h, w = images.shape[1:3]
    for i in range(len(images)):
        labels = set()
        for k in range(counts[i]):
            label = int(box_labels[i, k])
            labels.add(label)
            f = found(images[i], label)
            assert f is not None, (i, label)
            np.testing.assert_allclose(boxes[i, k] * [w, h, w, h], f, atol=1.0, err_msg="sample %d" % i)
        assert (box_labels[i, counts[i]:] == -1).all() and (boxes[i, counts[i]:] == 0).all()


@pytest.mark.parametrize("resize,size", [("center-crop", (48, 48)), ("stretch", (60, 40)), ("letterbox", (48, 48)),
                                         ("crop-or-pad", (80, 64))])
def test_boxes_follow_every_resize_mode(tmp_path, resize, size):
    path = write_box_shard(tmp_path / "b.tfrecord")
    with libshard.Loader(path, 4, image_size=size, resize=resize, boxes=True) as loader:
        batch = next(iter(loader))
    assert type(batch).__name__ == "DetectionBatch"
    assert batch._fields == ("images", "labels", "boxes", "box_labels", "box_counts")
    assert batch.boxes.dtype == np.float32 and batch.boxes.shape == (4, 100, 4)
    assert batch.box_labels.dtype == np.int64 and batch.box_labels.shape == (4, 100)
    assert batch.box_counts[2] == 0
    check_batch(batch.images, batch.boxes, batch.box_labels, batch.box_counts)


def test_random_resized_crop_and_flip_move_the_boxes(tmp_path):
    path = write_box_shard(tmp_path / "b.tfrecord", SAMPLES * 6)
    with libshard.Loader(path, 24, image_size=64, augment="random-resized-crop", seed=3, boxes=True,
                         max_boxes=4) as loader:
        batch = next(iter(loader))
    assert batch.boxes.shape == (24, 4, 4)
    check_batch(batch.images, batch.boxes, batch.box_labels, batch.box_counts)
    # Some boxes were dropped by the crops: fewer than the records hold.
    assert batch.box_counts.sum() < sum(len(s or []) for s in SAMPLES * 6)


def test_masks_and_extras_come_with_the_boxes(tmp_path):
    path = write_box_shard(tmp_path / "b.tfrecord")
    with libshard.Loader(path, 2, image_size=32, boxes=True, extras=["image/class/label"]) as loader:
        batch = next(iter(loader))
    assert type(batch).__name__ == "KeyedDetectionBatch"
    assert batch._fields[-1] == "keys" and batch.keys["image/class/label"] == [0, 1]


def test_box_options_are_checked(tmp_path):
    path = write_box_shard(tmp_path / "b.tfrecord")
    with pytest.raises(ValueError, match="max_boxes"):
        libshard.Loader(path, 2, image_size=32, boxes=True, max_boxes=0)
    with pytest.raises(ValueError, match="box_min_visible"):
        libshard.Loader(path, 2, image_size=32, boxes=True, box_min_visible=1.5)
    with pytest.raises(TypeError, match="box_min_visible"):
        libshard.Loader(path, 2, image_size=32, boxes=True, box_min_visible="0.3")


def test_malformed_boxes_are_data_loss_or_skipped(tmp_path):
    path = write_box_shard(tmp_path / "b.tfrecord", bad={"image/object/bbox/xmax": [0.5]})
    with libshard.Loader(path, 4, image_size=32, boxes=True) as loader:
        with pytest.raises(libshard.DataLossError, match=r"b\.tfrecord: record 1 at byte \d+.*unequal box lists"):
            next(iter(loader))
    with libshard.Loader(path, 4, image_size=32, boxes=True, on_error="skip") as loader:
        next(iter(loader))
        assert [s["record"] for s in loader.skipped] == [1]


torch = pytest.importorskip("torch")
import libshard.torch  # noqa: E402


def test_detection_targets_are_torchvisions_format(tmp_path):
    path = write_box_shard(tmp_path / "b.tfrecord")
    ds = libshard.torch.ShardDataset(path, 4, image_size=(60, 40), resize="stretch", boxes=True, layout="NCHW")
    batch = next(iter(torch.utils.data.DataLoader(ds, batch_size=None)))
    targets = libshard.torch.detection_targets(batch)
    assert len(targets) == 4 and [len(t["boxes"]) for t in targets] == [3, 2, 0, 1]
    for t in targets:
        assert t["boxes"].dtype == torch.float32 and t["boxes"].shape[1:] == (4,)
        assert t["labels"].dtype == torch.int64 and t["labels"].shape == t["boxes"].shape[:1]
        assert (t["boxes"][:, 2:] > t["boxes"][:, :2]).all()  # what GeneralizedRCNN asserts
    # In pixels of the 40 x 60 output: sample 0's red box (10..30 of 96, 8..28 of 72).
    np.testing.assert_allclose(targets[0]["boxes"][0].numpy(), [10 * 40 / 96, 8 * 60 / 72, 30 * 40 / 96, 28 * 60 / 72],
                               rtol=1e-5)
    tv = pytest.importorskip("torchvision")
    from torchvision.models.detection import fasterrcnn_mobilenet_v3_large_fpn
    # No weights (nothing downloaded): the model only checks and uses the targets.
    model = fasterrcnn_mobilenet_v3_large_fpn(weights=None, weights_backbone=None, num_classes=4, min_size=60,
                                              max_size=60)
    assert tv is not None
    model.train()
    losses = model([img.float() / 255 for img in batch.images], targets)
    assert {"loss_classifier", "loss_box_reg", "loss_objectness", "loss_rpn_box_reg"} <= set(losses)
    assert all(torch.isfinite(v) for v in losses.values())


def test_shard_dataset_workers_send_the_boxes(tmp_path):
    path = write_box_shard(tmp_path / "b.tfrecord", SAMPLES * 2)
    ds = libshard.torch.ShardDataset(path, 4, image_size=48, boxes=True)
    batches = list(torch.utils.data.DataLoader(ds, batch_size=None, num_workers=1))
    assert [type(b).__name__ for b in batches] == ["DetectionBatch"] * 2
    for b in batches:
        check_batch(b.images.numpy(), b.boxes.numpy(), b.box_labels.numpy(), b.box_counts.numpy())
    assert [int(c) for c in batches[0].box_counts] == [3, 2, 0, 1]


def test_shard_images_gives_a_detection_target(tmp_path):
    path = write_box_shard(tmp_path / "b.tfrecord")
    ds = libshard.torch.ShardImages(path, image_size=(72, 96), boxes=True)
    image, label, target = ds[0]
    assert image.shape == (72, 96, 3) and int(label) == 0
    np.testing.assert_allclose(target["boxes"].numpy(), [[10, 8, 30, 28], [50, 20, 90, 40], [30, 50, 60, 70]],
                               atol=1e-4)
    assert target["labels"].tolist() == [1, 2, 3]
    assert len(ds[2][2]["boxes"]) == 0
    loader = torch.utils.data.DataLoader(ds, batch_size=2, collate_fn=lambda b: tuple(zip(*b)))
    images, labels, targets = next(iter(loader))
    assert len(targets) == 2 and targets[1]["labels"].tolist() == [3, 1]


def test_a_converted_coco_set_reads_with_its_boxes(tmp_path):
    """samples/boxes converted with --coco (the converter's side), read with boxes=True: every shape's box
    frames its pixels; labels are the manifest's object label map's."""
    import os
    samples = os.path.join(os.environ.get("LIBSHARD_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")),
                           "samples", "boxes")
    out = str(tmp_path / "out")
    libshard.convert(os.path.join(samples, "images"), out, coco=os.path.join(samples, "instances.json"), size=64)
    with libshard.Loader(os.path.join(out, "manifest.json"), 8, split="train", image_size=48, boxes=True) as loader:
        batch = next(iter(loader))
    assert batch.box_counts.sum() > 0
    assert set(batch.box_labels[batch.box_labels >= 0].tolist()) <= {1, 2, 3}
    targets = libshard.torch.detection_targets(batch)
    assert sum(len(t["boxes"]) for t in targets) == batch.box_counts.sum()
    assert all(((t["boxes"] >= 0) & (t["boxes"] <= 48)).all() for t in targets)
