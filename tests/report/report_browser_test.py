"""`shard report` pages checked in a real browser (headless Debian chromium).

Two datasets are converted with the `shard` under test: the bundled Fashion-MNIST
sample folder (samples/images) and a small segmentation set made here (colour
masks with a class_dict.csv, sources larger than a thumbnail). Each report is
loaded from a file:// URL; the DOM is compared with manifest.json, every <img>
must have decoded, the page must hold no script and no http(s) URL, it must fit
400 px without sideways scrolling, screenshots at 1280 and 400 px must not be
blank, and each segmentation overlay is compared pixel by pixel with the mask
it was made from.

Without chromium the test exits 77 (skipped); with LOCAL_BROWSER_REQUIRED=1
(CI, after tools/setup.sh --browser) it fails instead. REPORT_SCREENSHOT_DIR,
when set, keeps the screenshots there (to look at them).
Environment: SHARD (the binary), LIBSHARD_SOURCE_DIR, LIBSHARD_TEST_TMPDIR.
"""

import base64
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser  # noqa: E402

from PIL import Image  # noqa: E402

SHARD = os.environ.get("SHARD", "shard")
SOURCE = os.environ.get("LIBSHARD_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
THUMBS = 4

# Colour masks: class_dict.csv colours (CamVid style) and where each class
# lies in a W x H source mask: sky on top, road below on the left, car on the
# right; the bottom-right corner has a colour not in the map (-> ignore).
W, H = 160, 120
CLASSES = [("sky", (128, 128, 128)), ("road", (128, 64, 128)), ("car", (64, 0, 128))]
IGNORE = 255


def mask_index(x, y, shift):
    """The class index at source pixel (x, y) of mask number `shift`."""
    if y < 40 + shift:
        return 0
    if x < 60 + 2 * shift:
        return 1
    if y >= 100 and x >= 140:
        return IGNORE
    return 2


def make_segmentation_set(root, index_masks=False):
    """Colour masks with a class_dict.csv, or (index_masks) gray PNGs of class indices."""
    root = os.path.join(root, "index" if index_masks else "colour")
    images = os.path.join(root, "seg")
    masks = os.path.join(root, "seg_masks")
    os.makedirs(masks)
    for cls in ("street", "field"):
        os.makedirs(os.path.join(images, cls))
    for i in range(6):
        cls = "street" if i % 2 == 0 else "field"
        img = Image.new("RGB", (W, H))
        px = img.load()
        for y in range(H):
            for x in range(W):
                px[x, y] = ((x * 3 + i * 20) % 256, (y * 2) % 256, (x + y) % 256)
        img.save(os.path.join(images, cls, "img%d.png" % i))
        m = Image.new("L" if index_masks else "RGB", (W, H))
        mp = m.load()
        for y in range(H):
            for x in range(W):
                k = mask_index(x, y, i)
                if index_masks:
                    mp[x, y] = k
                else:
                    mp[x, y] = (1, 2, 3) if k == IGNORE else CLASSES[k][1]
        m.save(os.path.join(masks, "img%d.png" % i))
    with open(os.path.join(root, "class_dict.csv"), "w") as f:
        f.write("name,r,g,b\n")
        for name, (r, g, b) in CLASSES:
            f.write("%s,%d,%d,%d\n" % (name, r, g, b))
    return images, masks, os.path.join(root, "class_dict.csv")


def make_leaky_set(root):
    """train/ with 6 distinct pictures; val/ with copies of 3 of them (exact, JPEG q60, 0.75x) and 2 others."""
    import random
    rng = random.Random(33)
    pictures = []
    for i in range(8):
        im = Image.new("RGB", (192, 144), tuple(rng.randrange(256) for _ in range(3)))
        for _ in range(5):  # large blocks of colour: distinct layouts, far apart as hashes
            x, y = rng.randrange(150), rng.randrange(110)
            im.paste(tuple(rng.randrange(256) for _ in range(3)), (x, y, x + 30 + rng.randrange(80), y + 30 + rng.randrange(60)))
        pictures.append(im)
    for split in ("train", "val"):
        os.makedirs(os.path.join(root, split, "things"))
    for i in range(6):
        pictures[i].save(os.path.join(root, "train", "things", "t%d.png" % i))
    pictures[0].save(os.path.join(root, "val", "things", "copy of t0.png"))
    pictures[1].save(os.path.join(root, "val", "things", "t1 again.jpg"), quality=60)
    pictures[2].resize((144, 108), Image.BILINEAR).save(os.path.join(root, "val", "things", "t2 smaller.png"))
    pictures[6].save(os.path.join(root, "val", "things", "v6.png"))
    pictures[7].save(os.path.join(root, "val", "things", "v7.png"))


def run(*args):
    p = subprocess.run([SHARD, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise AssertionError("shard %s: exit %d\n%s" % (" ".join(args), p.returncode, p.stderr))
    return p


DOM_SCRIPT = r"""
(() => {
  const q = (s, root) => [...(root || document).querySelectorAll(s)];
  return {
    images: q('img').map(i => ({complete: i.complete, nw: i.naturalWidth, nh: i.naturalHeight, cls: i.className})),
    urls: q('[src],[href]').map(e => e.getAttribute('src') || e.getAttribute('href')),
    scripts: document.scripts.length,
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: innerWidth,
    splits: q('section.split').map(s => ({
      name: s.dataset.split, records: +s.dataset.records,
      samples: s.querySelector('.t-samples').textContent,
      bars: q('.class-balance g.bar', s).map(g => [g.dataset.key, +g.dataset.count, g.querySelector('tspan.name').textContent]),
      grids: q('.grid', s).map(g => ({cls: g.dataset.class, files: q('figure', g).map(f => f.title)})),
    })),
    legend: q('li.legend-item').map(li => {
      const sw = li.querySelector('.swatch'), cs = getComputedStyle(sw);
      return {index: +li.dataset.index, color: li.dataset.color, bg: cs.backgroundColor, border: cs.borderTopColor,
              text: li.textContent};
    }),
    verify: (document.getElementById('verify-result') || {}).textContent || null,
    verifyFaults: (document.getElementById('verify-result') || {dataset: {}}).dataset.faults,
    more: q('section.split > p.more').map(p => p.textContent),
    charts: q('svg.chart').map(s => ({title: (s.querySelector('title') || {}).textContent, texts: q('text', s).length})),
    duplicates: Object.assign({}, (document.getElementById('duplicate-counts') || {dataset: {}}).dataset),
    leakPairs: q('.leak-pair').map(p => ({kind: p.dataset.kind, distance: p.dataset.distance,
      figures: q('figure', p).map(f => {
        const img = f.querySelector('img'), r = img ? img.getBoundingClientRect() : null;
        return {split: f.dataset.split, file: f.dataset.file, caption: f.querySelector('figcaption').textContent,
                decoded: !!img && img.complete && img.naturalWidth > 0, src: img ? img.getAttribute('src') : '',
                left: r ? r.left : 0, top: r ? r.top : 0, width: r ? r.width : 0};
      })})),
  };
})()
"""


def rgb(css):
    m = re.match(r"rgb\((\d+), (\d+), (\d+)\)", css)
    return tuple(int(v) for v in m.groups())


def luminance(c):
    def lin(v):
        s = v / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4
    return 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2])


def contrast(a, b):
    la, lb = luminance(a), luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def decode_data_url(url):
    head, data = url.split(",", 1)
    return Image.open(io.BytesIO(base64.b64decode(data)))


class ReportBrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="report-browser-", dir=os.environ.get("LIBSHARD_TEST_TMPDIR") or None)
        try:
            cls.make_pages()
        except BaseException:
            cls.tearDownClass()  # unittest does not call it when setUpClass fails
            raise

    @classmethod
    def make_pages(cls):
        cls.shots = os.environ.get("REPORT_SCREENSHOT_DIR") or os.path.join(cls.tmp, "shots")
        os.makedirs(cls.shots, exist_ok=True)
        cls.fashion = os.path.join(cls.tmp, "fashion")
        run("convert", os.path.join(SOURCE, "samples", "images"), "-o", cls.fashion, "--records-per-shard", "32",
            "--seed", "1", "-q")
        run("report", cls.fashion, "--verify", "--thumbnails", str(THUMBS), "-q")
        seg_in, seg_masks, class_dict = make_segmentation_set(cls.tmp)
        cls.seg = os.path.join(cls.tmp, "seg_out")
        p = subprocess.run([SHARD, "convert", seg_in, "-o", cls.seg, "--masks", seg_masks, "--mask-labels", class_dict,
                            "--unknown-color", "ignore", "--format", "png", "-q", "--report"],
                           stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise AssertionError("shard convert --report: exit %d\n%s" % (p.returncode, p.stderr))
        # Index masks: the report's own palette.
        seg_in, seg_masks, _ = make_segmentation_set(cls.tmp, index_masks=True)
        cls.index_seg = os.path.join(cls.tmp, "index_out")
        run("convert", seg_in, "-o", cls.index_seg, "--masks", seg_masks, "--format", "png", "-q")
        run("report", cls.index_seg, "-q")
        # The fashion shards described with 10,000 classes.
        cls.many = os.path.join(cls.tmp, "many")
        shutil.copytree(cls.fashion, cls.many)
        with open(os.path.join(cls.many, "manifest.json")) as f:
            m = json.load(f)
        m["labels"] = [{"label": str(i), "name": "class_%05d" % i} for i in range(10000)]
        for split in m["splits"]:
            split["stats"]["labels"] = [{"label": str(i), "count": str(1 + (i * 7919) % 1000)} for i in range(10000)]
        with open(os.path.join(cls.many, "manifest.json"), "w") as f:
            json.dump(m, f)
        run("report", cls.many, "-q")
        # Leaks: train images, and in val an exact copy, a JPEG re-encode and a resized copy of three of them.
        cls.leaky = os.path.join(cls.tmp, "leaky")
        make_leaky_set(os.path.join(cls.tmp, "leaky_in"))
        run("convert", os.path.join(cls.tmp, "leaky_in"), "-o", cls.leaky, "-q")
        run("report", cls.leaky, "-q")
        cls.browser = browser.Browser()
        cls.results = {}
        for name, folder in (("fashion", cls.fashion), ("seg", cls.seg), ("index", cls.index_seg), ("many", cls.many),
                             ("leaky", cls.leaky)):
            url = "file://" + os.path.join(folder, "report.html")
            for width in (1280, 400):
                cls.browser.open(url, width, 900)
                dom = cls.browser.evaluate(DOM_SCRIPT)
                shot = cls.browser.screenshot(full_page=(width == 1280))
                path = os.path.join(cls.shots, "%s-%d.png" % (name, width))
                with open(path, "wb") as f:
                    f.write(shot)
                cls.results[(name, width)] = (dom, path)

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "browser", None):
            cls.browser.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def manifest(self, folder):
        with open(os.path.join(folder, "manifest.json")) as f:
            return json.load(f)

    def test_class_names_and_counts_equal_the_manifest(self):
        m = self.manifest(self.fashion)
        names = {int(l["label"]): l["name"] for l in m["labels"]}
        dom, _ = self.results[("fashion", 1280)]
        self.assertEqual([s["name"] for s in dom["splits"]], [s["name"] for s in m["splits"]])
        for split, shown in zip(m["splits"], dom["splits"]):
            self.assertEqual(shown["records"], int(split["records"]))
            self.assertEqual(shown["samples"].replace(",", ""), split["records"])
            want = {names[int(l["label"])]: int(l["count"]) for l in split["stats"]["labels"]}
            got = {key: count for key, count, _ in shown["bars"]}
            self.assertEqual(got, want)
            for key, _, label_text in shown["bars"]:
                self.assertEqual(label_text, key)  # the name is drawn, not only an attribute
            # Thumbnails: THUMBS per class (or all of a smaller class), names on hover.
            self.assertEqual(sorted(g["cls"] for g in shown["grids"]), sorted(want))
            for g in shown["grids"]:
                self.assertEqual(len(g["files"]), min(THUMBS, want[g["cls"]]), g)
                for f in g["files"]:
                    self.assertTrue(os.path.isfile(os.path.join(SOURCE, "samples", "images", f)), f)
                    self.assertIn("/" + g["cls"] + "/", "/" + f)

    def test_every_image_decoded(self):
        for key, (dom, _) in self.results.items():
            if key[0] != "many":  # its 40 largest classes are not in the shards
                self.assertGreater(len(dom["images"]), 0, key)
            for img in dom["images"]:
                self.assertTrue(img["complete"], (key, img))
                self.assertGreater(img["nw"], 0, (key, img))

    def test_offline_no_script_no_network_url(self):
        for key, (dom, _) in self.results.items():
            self.assertEqual(dom["scripts"], 0, key)
            for u in dom["urls"]:
                self.assertFalse(re.match(r"\s*(https?:|//)", u, re.I), (key, u[:80]))
        for folder in (self.fashion, self.seg, self.index_seg, self.many, self.leaky):
            with open(os.path.join(folder, "report.html")) as f:
                text = f.read()
            self.assertIsNone(re.search(r"""(src|href)\s*=\s*["']?\s*(https?:|//)""", text, re.I))
            self.assertNotIn("<script", text.lower())
            self.assertNotIn("@import", text)
            self.assertLess(len(text), 3_000_000)

    def test_charts_have_titles_and_text(self):
        for key, (dom, _) in self.results.items():
            self.assertTrue(dom["charts"], key)
            for c in dom["charts"]:
                self.assertTrue(c["title"], (key, c))
                self.assertGreater(c["texts"], 0, (key, c))

    def test_verify_result_shown(self):
        dom, _ = self.results[("fashion", 1280)]
        self.assertEqual(dom["verifyFaults"], "0")
        self.assertTrue(dom["verify"].startswith("verified:"), dom["verify"])

    def test_fits_400_px_without_sideways_scrolling(self):
        for name in ("fashion", "seg", "index", "many", "leaky"):
            dom, _ = self.results[(name, 400)]
            self.assertEqual(dom["innerWidth"], 400)
            self.assertLessEqual(dom["scrollWidth"], 400, name)

    def test_screenshots_not_blank(self):
        for key, (_, path) in self.results.items():
            im = Image.open(path).convert("RGB")
            self.assertEqual(im.size[0], key[1], key)
            small = im.resize((im.size[0] // 4, im.size[1] // 4))
            pixels = list(small.getdata())
            non_white = sum(1 for p in pixels if min(p) < 235)
            self.assertGreater(non_white / len(pixels), 0.02, key)
            self.assertGreater(len(set(pixels)), 64, key)

    def test_segmentation_overlay_matches_mask(self):
        m = self.manifest(self.seg)
        self.assertEqual([c["name"] for c in m["mask_classes"]], [c[0] for c in CLASSES])
        dom, _ = self.results[("seg", 1280)]
        colors = {l["index"]: l["color"] for l in dom["legend"]}
        self.assertEqual(sorted(colors), [0, 1, 2])
        for i, (name, col) in enumerate(CLASSES):
            self.assertEqual(colors[i], "#%02x%02x%02x" % col)
        # Every legend swatch is outlined in a colour that contrasts with it.
        for l in dom["legend"]:
            self.assertGreaterEqual(contrast(rgb(l["bg"]), rgb(l["border"])), 3.0, l)
            self.assertIn(CLASSES[l["index"]][0], l["text"])
        with open(os.path.join(self.seg, "report.html")) as f:
            html = f.read()
        figures = re.findall(r'<figure title="([^"]+)"[^>]*><div class="thumb"><img class="image[^"]*" width="(\d+)" '
                             r'height="(\d+)"[^>]*src="([^"]+)"><img class="overlay"[^>]*src="([^"]+)">', html)
        self.assertEqual(len(figures), 6)
        for file, w, h, image_url, overlay_url in figures:
            shift = int(re.search(r"img(\d+)\.png", file).group(1))
            thumb, overlay = decode_data_url(image_url), decode_data_url(overlay_url).convert("RGBA")
            self.assertEqual(thumb.size, overlay.size)
            tw, th = overlay.size
            self.assertEqual((tw, th), (int(w), int(h)))
            self.assertEqual(max(tw, th), 112)  # 160x120 sources are scaled down
            px = overlay.load()
            checked = 0
            for y in range(th):
                for x in range(tw):
                    # Nearest neighbour: the source pixel under the centre.
                    sx, sy = int((x + 0.5) * W / tw), int((y + 0.5) * H / th)
                    around = {mask_index(min(max(sx + dx, 0), W - 1), min(max(sy + dy, 0), H - 1), shift)
                              for dx in (-2, 0, 2) for dy in (-2, 0, 2)}
                    if len(around) > 1:
                        continue  # a class boundary: either side is right
                    k = around.pop()
                    if k == IGNORE:
                        self.assertEqual(px[x, y][3], 0, (file, x, y))
                    else:
                        self.assertEqual(px[x, y], CLASSES[k][1] + (255,), (file, x, y))
                    checked += 1
            self.assertGreater(checked, tw * th * 0.8)

    def test_index_mask_palette_contrasts_with_the_page(self):
        dom, _ = self.results[("index", 1280)]
        self.assertEqual(sorted(l["index"] for l in dom["legend"]), [0, 1, 2])
        colors = set()
        for l in dom["legend"]:
            swatch = rgb(l["bg"])
            colors.add(swatch)
            self.assertGreaterEqual(contrast(swatch, (255, 255, 255)), 3.0, l)
            self.assertGreaterEqual(contrast(swatch, rgb(l["border"])), 3.0, l)
        self.assertEqual(len(colors), 3)
        self.assertEqual(len(dom["images"]), 12)  # 6 thumbnails, each with its overlay

    def test_ten_thousand_classes_stay_readable(self):
        for width in (1280, 400):
            dom, _ = self.results[("many", width)]
            self.assertLessEqual(dom["scrollWidth"], width)
            for split in dom["splits"]:
                self.assertEqual(len(split["bars"]), 40)
                self.assertEqual(split["bars"][0][1], 1000)  # the largest first
            # Per split: under the chart, and under the thumbnails.
            self.assertEqual(len(dom["more"]), 2 * len(dom["splits"]), dom["more"])
            self.assertTrue(all(m.startswith("and 9,960 more classes (") for m in dom["more"]), dom["more"])

    def test_leaked_pairs_side_by_side_with_both_thumbnails(self):
        m = self.manifest(self.leaky)
        with open(os.path.join(self.leaky, "duplicates.tsv")) as f:
            rows = [line.rstrip("\n").split("\t") for line in f][1:]
        leaks = [r for r in rows if r[2] != r[4]]
        self.assertEqual(int(m["duplicates"]["leaks"]), len(leaks))
        self.assertEqual(sorted(r[5] for r in leaks),
                         ["val/things/copy of t0.png", "val/things/t1 again.jpg", "val/things/t2 smaller.png"])
        for width in (1280, 400):
            dom, _ = self.results[("leaky", width)]
            self.assertEqual(dom["duplicates"]["leaks"], str(m["duplicates"]["leaks"]))
            self.assertEqual(dom["duplicates"]["within"], str(m["duplicates"].get("within", 0)))
            shown = [(p["kind"], p["distance"], p["figures"][0]["split"], p["figures"][0]["file"],
                      p["figures"][1]["split"], p["figures"][1]["file"]) for p in dom["leakPairs"]]
            self.assertEqual(shown, [tuple(r) for r in leaks])
            for p in dom["leakPairs"]:
                a, b = p["figures"]
                self.assertTrue(a["decoded"] and b["decoded"], p)
                self.assertTrue(a["caption"].startswith("train") and b["caption"].startswith("val"), p)
                self.assertGreater(a["width"], 20, p)
                if width == 1280:  # side by side
                    self.assertAlmostEqual(a["top"], b["top"], delta=1)
                    self.assertLess(a["left"] + a["width"], b["left"] + 1)
                # Each thumbnail is its own image: the copy's looks like its original.
                ta = decode_data_url(a["src"]).convert("L").resize((16, 16))
                tb = decode_data_url(b["src"]).convert("L").resize((16, 16))
                diff = sum(abs(x - y) for x, y in zip(ta.getdata(), tb.getdata())) / 256
                self.assertLess(diff, 24, p)

    def test_segmentation_pixel_histogram_and_thumbnail_sizes(self):
        m = self.manifest(self.seg)
        with open(os.path.join(self.seg, "report.html")) as f:
            html = f.read()
        self.assertIn("Mask pixels per class", html)
        for entry in m["stats"]["mask_pixels"]:
            self.assertIn('data-count="%s"' % entry["count"], html)


def main():
    if not browser.find_chromium():
        msg = "report_browser_test: no chromium on PATH (tools/setup.sh --browser installs it)"
        if os.environ.get("LOCAL_BROWSER_REQUIRED") == "1":
            print(msg + "; FAILED (LOCAL_BROWSER_REQUIRED=1)", file=sys.stderr)
            return 1
        print(msg + "; skipped", file=sys.stderr)
        return 77
    result = unittest.main(exit=False, verbosity=2).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
