"""A torchvision detection model (torch 2.x) trains on the detection sets through libshard.torch.ShardDataset and
detection_targets: the targets are the records' boxes in pixels and their labels, torchvision accepts them, and
training steps run with a finite loss that changes the weights."""
import numpy as np
import pytest
import torch
from torchvision.models.detection import fasterrcnn_mobilenet_v3_large_fpn

import libshard.torch
from interop_sets import BOX_SIZE


def record_boxes(example):
    """A record's boxes as torchvision wants them, (x1, y1, x2, y2) in pixels of the 64x64 image, and labels."""
    corners = [example["image/object/bbox/" + k] for k in ("xmin", "ymin", "xmax", "ymax")]
    return (np.stack(corners, axis=1).astype(np.float32) * BOX_SIZE,
            np.array(example["image/object/class/label"], np.int64))


@pytest.mark.parametrize("name", ["coco", "yolo"])
def test_detection_targets_are_the_records_boxes_in_pixels(sets, name):
    """Sequential order, no augmentation, images already 64x64: the targets of each batch are the boxes and
    labels libshard.ShardReader reads from the same records, scaled to pixels."""
    converted = sets[name]
    for split in converted.splits:
        examples = converted.examples(split)
        ds = libshard.torch.ShardDataset(str(converted.folder), 4, split=split, layout="NCHW", boxes=True)
        targets = []
        for batch in torch.utils.data.DataLoader(ds, batch_size=None):
            assert batch.images.shape[1:] == (3, BOX_SIZE, BOX_SIZE)
            targets += libshard.torch.detection_targets(batch)
        assert len(targets) == len(examples) == converted.records(split)
        for target, example in zip(targets, examples):
            boxes, labels = record_boxes(example)
            assert target["boxes"].dtype == torch.float32 and target["labels"].dtype == torch.int64
            np.testing.assert_allclose(target["boxes"].numpy(), boxes, atol=1e-4)
            np.testing.assert_array_equal(target["labels"].numpy(), labels)


@pytest.mark.parametrize("augment", ["none", "random-resized-crop"])
def test_a_torchvision_detection_model_trains_on_detection_targets(sets, augment):
    """fasterrcnn_mobilenet_v3_large_fpn (no weights; 4 classes: background and the 3 shapes) takes the images and
    targets in training mode (it refuses boxes without positive width and height), gives finite losses, the SGD
    steps change its weights, and in eval mode it returns one detection dict per image."""
    torch.manual_seed(0)
    model = fasterrcnn_mobilenet_v3_large_fpn(weights=None, weights_backbone=None, num_classes=4,
                                              min_size=BOX_SIZE, max_size=BOX_SIZE)
    model.train()
    before = [p.detach().clone() for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01)
    ds = libshard.torch.ShardDataset(str(sets["coco"].folder), 4, split="train", shuffle=True, seed=1,
                                     layout="NCHW", boxes=True, augment=augment, image_size=BOX_SIZE)
    steps = 0
    for epoch in range(2):
        ds.set_epoch(epoch)
        for batch in torch.utils.data.DataLoader(ds, batch_size=None):
            images = list(batch.images.float() / 255)
            targets = libshard.torch.detection_targets(batch)
            assert all(((t["labels"] >= 1) & (t["labels"] <= 3)).all() for t in targets)
            losses = model(images, targets)
            assert set(losses) >= {"loss_classifier", "loss_box_reg", "loss_objectness", "loss_rpn_box_reg"}
            loss = sum(losses.values())
            assert torch.isfinite(loss), losses
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps += 1
    assert steps == 4  # 8 training images, batch 4, 2 epochs
    after = [p.detach() for p in model.parameters() if p.requires_grad]
    assert any(not torch.equal(a, b) for a, b in zip(before, after))
    model.eval()
    with torch.no_grad():
        detections = model(images)
    assert len(detections) == len(images) and all(set(d) == {"boxes", "labels", "scores"} for d in detections)
