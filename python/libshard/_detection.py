"""Detection boxes as torchvision takes them: normalised (xmin, ymin, xmax, ymax) to pixels of the output
image, for ShardDataset's batches (:func:`detection_targets`) and ShardImages' items alike."""
from typing import Optional, Tuple

import torch

_BOX_FIELDS = ("boxes", "box_labels", "box_counts")


def _image_size(images) -> Tuple[int, int]:
    """(height, width) of a batch's images, NHWC or NCHW (channels 1 or 3)."""
    shape = tuple(images.shape)
    nhwc, nchw = shape[-1] in (1, 3), shape[1] in (1, 3)
    if nhwc == nchw:
        raise ValueError("detection_targets: cannot tell the layout of images of shape %s: give image_size="
                         "(height, width)" % (shape,))
    return (shape[1], shape[2]) if nhwc else (shape[2], shape[3])


def _pixel_boxes(boxes: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """[..., 4] normalised boxes as float32 pixels of a ``height`` x ``width`` image."""
    scale = torch.tensor([width, height, width, height], dtype=torch.float32, device=boxes.device)
    return boxes.float() * scale


def detection_targets(batch, image_size: Optional[Tuple[int, int]] = None) -> list:
    """A ``boxes=True`` batch's boxes as torchvision's detection targets: one dict per sample, ``{"boxes":
    float32 [N, 4] (x1, y1, x2, y2 in pixels of the output image), "labels": int64 [N]}``, on the batch's
    device; what ``fasterrcnn_resnet50_fpn``, ``retinanet``, ``ssd`` and ``maskrcnn`` take in training::

        images, labels, boxes, box_labels, box_counts = batch
        loss = model(list(images.float() / 255), libshard.torch.detection_targets(batch))

    ``image_size``: ``(height, width)``; default from the images' shape (NHWC or NCHW)."""
    for f in _BOX_FIELDS:
        if not hasattr(batch, f):
            raise ValueError("detection_targets: the batch has no %s (make the loader with boxes=True)" % f)
    boxes, labels = torch.as_tensor(batch.boxes), torch.as_tensor(batch.box_labels)
    counts = torch.as_tensor(batch.box_counts).tolist()
    h, w = image_size if image_size is not None else _image_size(batch.images)
    return [{"boxes": _pixel_boxes(boxes[i, :n], h, w), "labels": labels[i, :n]} for i, n in enumerate(counts)]
