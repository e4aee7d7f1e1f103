#!/usr/bin/python3
"""Generates tests/image/golden/ reference data with Pillow (run once, outputs
committed). Usage: /usr/bin/python3 tests/image/make_golden.py [SHARED_DIR]

Each golden set is a TSV index plus one zlib-compressed blob of uint8 samples:
  <set>.tsv      name  width  height  channels  block  tolerance  offset
  <set>.bin.zz   zlib stream; the samples of entry i start at `offset`
`block` > 1 means the values are block means: the reference image cut into
block x block tiles (partial tiles at the right/bottom edges), each channel
averaged and rounded half up. `tolerance` is the largest absolute difference
allowed per value (0 = exact).
"""
import io
import os
import sys
import zlib

import numpy as np
from PIL import Image, ImageOps

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "golden")
SHARED = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "..", "shared")


class GoldenSet:
    def __init__(self, name):
        self.name, self.rows, self.blob = name, [], bytearray()

    def add(self, name, arr, block=1, tol=0):
        arr = np.asarray(arr)
        if arr.ndim == 2:
            arr = arr[:, :, None]
        h, w, c = arr.shape
        vals = block_means(arr, block) if block > 1 else arr.astype(np.uint8)
        self.rows.append(f"{name}\t{w}\t{h}\t{c}\t{block}\t{tol}\t{len(self.blob)}")
        self.blob += vals.astype(np.uint8).tobytes()

    def write(self):
        with open(os.path.join(OUT, self.name + ".tsv"), "w") as f:
            f.write("name\twidth\theight\tchannels\tblock\ttolerance\toffset\n")
            f.write("\n".join(self.rows) + "\n")
        with open(os.path.join(OUT, self.name + ".bin.zz"), "wb") as f:
            f.write(zlib.compress(bytes(self.blob), 9))


def block_means(arr, b):
    h, w, c = arr.shape
    bh, bw = -(-h // b), -(-w // b)
    out = np.zeros((bh, bw, c), np.uint8)
    a = arr.astype(np.float64)
    for by in range(bh):
        for bx in range(bw):
            tile = a[by * b:(by + 1) * b, bx * b:(bx + 1) * b]
            out[by, bx] = np.floor(tile.reshape(-1, c).mean(axis=0) + 0.5)
    return out


def png_reference(path):
    """RGBA8 under the decode.h policy: 16-bit -> round(v / 257)."""
    im = Image.open(path)
    im.load()
    if im.mode in ("I;16", "I;16B", "I"):  # 16-bit gray: Pillow keeps all bits
        a = np.array(im).astype(np.int64)
        g = (2 * a + 257) // 514
        alpha = np.full(a.shape, 255)
        t = im.info.get("transparency")
        if t is not None:
            alpha[a == t] = 0
        return np.dstack([g, g, g, alpha]).astype(np.uint8)
    rgba = np.array(im.convert("RGBA"))
    depth = int(os.path.basename(path)[-6:-4]) if os.path.basename(path)[-6:-4].isdigit() else 8
    t = im.info.get("transparency")
    if im.mode in ("L", "1") and isinstance(t, int) and depth < 8:
        # Pillow keeps the tRNS value at the stored depth but scales the
        # samples to 8 bits, so it never matches: apply it here.
        rgba[:, :, 3] = np.where(np.array(im.convert("L")) == t * 255 // (2 ** depth - 1), 0, 255)
    return rgba


def make_pngsuite():
    d = os.path.join(SHARED, "interop", "pngsuite")
    gs = GoldenSet("pngsuite")
    for name in sorted(os.listdir(d)):
        if not name.endswith(".png") or name.startswith("x"):
            continue
        depth16 = "16" in name[-6:-4]
        gs.add(name, png_reference(os.path.join(d, name)), 1, 1 if depth16 else 0)
    gs.write()


JPEG_DECODABLE = [
    "exif_Landscape_0.jpg", "exif_Landscape_1.jpg", "exif_Landscape_3.jpg",
    "exif_Landscape_6.jpg", "exif_Landscape_8.jpg", "jpegdecoder_16bit-qtables.jpg",
    "jpegdecoder_extraneous-data.jpg", "jpegdecoder_mozilla_jpg-cmyk-1.jpg",
    "jpegdecoder_mozilla_jpg-cmyk-2.jpg", "jpegdecoder_mozilla_jpg-gray.jpg",
    "jpegdecoder_mozilla_jpg-progressive.jpg", "jpegdecoder_mozilla_jpg-size-15x15.jpg",
    "jpegdecoder_mozilla_jpg-size-1x1.jpg", "jpegdecoder_mozilla_jpg-size-33x33.jpg",
    "jpegdecoder_progressive3.jpg",
    "jpegdecoder_progressive-missing-dc.jpg", "jpegdecoder_restarts.jpg", "jpegdecoder_rgb.jpg",
    "jpegdecoder_ycck.jpg", "libjpegturbo_testimgari.jpg", "libjpegturbo_testorig.jpg",
]


def make_jpeg():
    d = os.path.join(SHARED, "interop", "jpeg")
    gs = GoldenSet("jpeg")
    for name in JPEG_DECODABLE:
        im = Image.open(os.path.join(d, name))
        cmyk = im.mode == "CMYK"
        im = ImageOps.exif_transpose(im).convert("RGB")
        arr = np.array(im)
        block = max(1, -(-max(arr.shape[:2]) // 64))
        # CMYK -> RGB: Pillow rounds (255 - K) - C(255 - K)/255, we round C'K'/255.
        gs.add(name, arr, block, 2 if cmyk else 1)
    # The other EXIF orientations, from Landscape_1 with its tag rewritten
    # (golden.cc PatchExifOrientation does the same in the tests).
    raw = open(os.path.join(d, "exif_Landscape_1.jpg"), "rb").read()
    for v in (2, 4, 5, 7, 9):
        p = raw.find(b"\x01\x12\x00\x03")
        patched = raw[:p + 8] + bytes([v >> 8, v & 0xFF]) + raw[p + 10:]
        im = ImageOps.exif_transpose(Image.open(io.BytesIO(patched))).convert("RGB")
        gs.add(f"exif_Landscape_1.jpg@{v}", np.array(im), 29, 1)
    gs.write()


def synthetic_photo(w, h, seed):
    """Smooth gradients, a few hard edges and mild noise: photo-like content."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    r = 128 + 100 * np.sin(x / 9.0) * np.cos(y / 13.0)
    g = 255 * x / w * 0.7 + 40 * (((x // 11) + (y // 7)) % 2)
    b = 200 * ((x - w / 2) ** 2 + (y - h / 2) ** 2 < (min(w, h) / 3) ** 2) + 30
    img = np.dstack([r, g, b]) + rng.normal(0, 6, (h, w, 3))
    return np.clip(np.round(img), 0, 255).astype(np.uint8)


FILTERS = {"nearest": Image.NEAREST, "area": Image.BOX, "bilinear": Image.BILINEAR,
           "bicubic": Image.BICUBIC, "lanczos3": Image.LANCZOS}
SIZES = [(40, 30), (150, 131), (61, 100)]
BOX = (10.5, 3.25, 80.75, 70.0)


def make_resize():
    src = synthetic_photo(97, 83, 1234)
    Image.fromarray(src).save(os.path.join(OUT, "resize_input.png"), optimize=True)
    alpha = np.clip(np.mgrid[0:83, 0:97][1] * 3, 0, 255).astype(np.uint8)
    rgba = np.dstack([src, alpha])
    Image.fromarray(rgba, "RGBA").save(os.path.join(OUT, "resize_input_rgba.png"), optimize=True)
    gs = GoldenSet("resize")
    for fname, f in FILTERS.items():
        im = Image.fromarray(src)
        for (w, h) in SIZES:
            gs.add(f"{fname}/{w}x{h}", np.array(im.resize((w, h), f)))
        gs.add(f"{fname}/box32x32", np.array(im.resize((32, 32), f, box=BOX)))
        gs.add(f"{fname}/rgba40x30", np.array(Image.fromarray(rgba, "RGBA").resize((40, 30), f)))
    gs.write()


def mask16_values(w, h):
    """The values of mask_gray16.png: classes 0..6 in diagonal bands, 255 (ignore) in a corner."""
    y, x = np.mgrid[0:h, 0:w]
    v = (x + 2 * y) // 5 % 7
    v[:4, :4] = 255
    return v.astype(np.uint16)


def make_masks():
    """A 16-bit gray label PNG (what many annotation tools write) whose values are classes <= 255."""
    im = Image.fromarray(mask16_values(29, 17), "I;16")
    im.save(os.path.join(OUT, "mask_gray16.png"))


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    make_pngsuite()
    make_jpeg()
    make_resize()
    make_masks()
