#!/usr/bin/python3
"""Makes the small detection sample samples/boxes/ (docs/convert.md,
"Detection boxes"): PNG images of filled shapes on a plain background, their
boxes as a COCO instances.json and as YOLO label files with data.yaml.

    boxes/images/{train,val}/NNNN.png   128x96 RGB
    boxes/instances.json                COCO: every image of both splits
    boxes/labels/{train,val}/NNNN.txt   YOLO: class cx cy w h (normalised)
    boxes/data.yaml                     YOLO class names

Standard library only (PNG written with zlib), deterministic; the output is
committed. Run with /usr/bin/python3 samples/make_boxes.py.
"""
import json
import os
import random
import struct
import zlib

W, H = 128, 96
CLASSES = ["square", "disc", "triangle"]  # COCO ids 1..3, YOLO classes 0..2
COLOURS = [(220, 40, 40), (40, 160, 60), (40, 70, 220)]
SPLITS = {"train": 8, "val": 4}


def png(pixels):
    raw = b"".join(b"\0" + bytes(row) for row in pixels)

    def chunk(kind, data):
        c = struct.pack(">I", len(data)) + kind + data
        return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def inside(kind, x, y, box):
    x0, y0, x1, y1 = box
    if kind == 0:
        return True
    cx, cy, rx, ry = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2
    if kind == 1:
        return ((x + 0.5 - cx) / rx) ** 2 + ((y + 0.5 - cy) / ry) ** 2 <= 1
    # triangle: apex at the top middle, base along the bottom edge
    t = (y + 0.5 - y0) / (y1 - y0)
    return abs(x + 0.5 - cx) <= t * rx


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "boxes")
    rng = random.Random(33)
    coco = {"images": [], "annotations": [],
            "categories": [{"id": i + 1, "name": n, "supercategory": "shape"} for i, n in enumerate(CLASSES)]}
    n = 0
    for split, count in SPLITS.items():
        for d in ("images", "labels"):
            os.makedirs(os.path.join(root, d, split), exist_ok=True)
        for _ in range(count):
            n += 1
            name = "%04d" % n
            pixels = [[200 + (x + y) % 8 for x in range(W) for _ in range(3)] for y in range(H)]
            objects = [] if (split == "val" and n == sum(SPLITS.values())) else \
                [(rng.randrange(3), ) for _ in range(rng.randint(1, 3))]
            boxes = []
            for (kind, ) in objects:
                w, h = rng.randint(14, 40), rng.randint(14, 36)
                x0, y0 = rng.randint(0, W - w), rng.randint(0, H - h)
                box = (x0, y0, x0 + w, y0 + h)
                for y in range(y0, y0 + h):
                    for x in range(x0, x0 + w):
                        if inside(kind, x, y, box):
                            pixels[y][3 * x:3 * x + 3] = COLOURS[kind]
                boxes.append((kind, box))
            with open(os.path.join(root, "images", split, name + ".png"), "wb") as f:
                f.write(png(pixels))
            image_id = n
            coco["images"].append({"id": image_id, "file_name": name + ".png", "width": W, "height": H})
            lines = []
            for kind, (x0, y0, x1, y1) in boxes:
                coco["annotations"].append({"id": len(coco["annotations"]) + 1, "image_id": image_id,
                                            "category_id": kind + 1, "bbox": [x0, y0, x1 - x0, y1 - y0],
                                            "area": (x1 - x0) * (y1 - y0), "iscrowd": 0})
                lines.append("%d %.6f %.6f %.6f %.6f" % (kind, (x0 + x1) / 2 / W, (y0 + y1) / 2 / H,
                                                         (x1 - x0) / W, (y1 - y0) / H))
            if lines:  # an image without objects has no label file (YOLO's background image)
                with open(os.path.join(root, "labels", split, name + ".txt"), "w") as f:
                    f.write("\n".join(lines) + "\n")
    with open(os.path.join(root, "instances.json"), "w") as f:
        json.dump(coco, f, indent=1)
        f.write("\n")
    with open(os.path.join(root, "data.yaml"), "w") as f:
        f.write("# YOLO dataset description (ultralytics): images/{train,val}, labels/{train,val}\n")
        f.write("path: .\ntrain: images/train\nval: images/val\nnames:\n")
        for i, c in enumerate(CLASSES):
            f.write("  %d: %s\n" % (i, c))


if __name__ == "__main__":
    main()
