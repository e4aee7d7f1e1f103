"""CSV columns stored as record features (`shard convert --feature COLUMN:TYPE`, issue 32), read back by the
Loader's extras= under the column's name: multi-label lists, regression targets, captions."""
import json
import os
import subprocess

import numpy as np
import pytest
from PIL import Image

import libshard
from libshard.tools import convert_args
from tools_fixtures import pattern, shard_program

SHARD = shard_program()

ROWS = [  # path, label, tags (int_list), score (float), caption (bytes), box (float_list), n (int)
    ("img0.png", 0, "1 4 7", "0.5", "a bag, brown", "0.25 -1e3", "3"),
    ("img1.png", 1, "", "2", "", "", "-4"),
    ("img2.png", 0, "9", "-0.125", "x", "1.5", "0"),
    ("img3.png", 1, "2", "high", "y", "1", "5"),  # not a float: a reject
]


def write_csv(root):
    os.makedirs(root, exist_ok=True)
    lines = ["path,label,tags,score,caption,box,n"]
    for i, (path, label, tags, score, caption, box, n) in enumerate(ROWS):
        Image.fromarray(pattern(12 + i, 10, i)).save(os.path.join(root, path))
        lines.append(",".join([path, str(label), tags, score, '"%s"' % caption if "," in caption else caption, box,
                               n]))
    with open(os.path.join(root, "labels.csv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return os.path.join(root, "labels.csv")


@pytest.mark.skipif(SHARD is None, reason="needs the shard program (LIBSHARD_BUILD_DIR or PATH)")
def test_every_type_comes_back_through_extras(tmp_path):
    csv = write_csv(str(tmp_path / "in"))
    out = str(tmp_path / "out")
    r = subprocess.run([SHARD, "convert", csv, "-o", out, "-q", "--no-shuffle", "--feature", "tags:int_list",
                        "--feature", "score:float", "--feature", "caption:bytes", "--feature", "box:float_list",
                        "--feature", "n:int"], capture_output=True, text=True)
    assert r.returncode == 3, r.stderr  # img3's row is a reject
    with open(os.path.join(out, "rejects.tsv")) as f:
        assert "labels.csv:5: column 'score': 'high' is not a finite float" in f.read()
    keys = ["image/filename", "tags", "score", "caption", "box", "n"]
    got = {}
    with libshard.Loader(out, 3, image_size=8, extras=keys) as loader:
        for batch in loader:
            for i, name in enumerate(batch.keys["image/filename"]):
                got[name.decode()] = {k: batch.keys[k][i] for k in keys[1:]}
    assert sorted(got) == ["img0.png", "img1.png", "img2.png"]
    # A list column is a list in every row, whatever its count (it was 9 for one value and None for none); a
    # scalar column is its value.
    assert got["img0.png"] == {"tags": [1, 4, 7], "score": 0.5, "caption": b"a bag, brown", "box": [0.25, -1000.0],
                               "n": 3}
    assert got["img1.png"] == {"tags": [], "score": 2.0, "caption": b"", "box": [], "n": -4}
    assert got["img2.png"] == {"tags": [9], "score": -0.125, "caption": b"x", "box": [1.5], "n": 0}
    with open(os.path.join(out, "manifest.json")) as f:
        schema = {s["key"]: s for s in json.load(f)["schema"]}
    assert schema["tags"].get("list") and schema["box"].get("list")
    assert not schema["score"].get("list") and not schema["n"].get("list")


def test_libshard_convert_takes_a_feature(tmp_path):
    write_csv(str(tmp_path / "in"))
    csv = str(tmp_path / "in" / "n.csv")  # every column of a CSV is named: path, label, n only
    with open(csv, "w") as f:
        f.write("path,label,n\n" + "".join("%s,%d,%s\n" % (row[0], row[1], row[6]) for row in ROWS))
    out = str(tmp_path / "out")
    r = libshard.convert(csv, out, feature="n:int")
    assert r.manifest["options"]["features"] == ["n:int"]
    with libshard.Loader(out, 4, image_size=8, extras=["image/filename", "n"]) as loader:
        batch = next(iter(loader))
    got = dict(zip((x.decode() for x in batch.keys["image/filename"]), batch.keys["n"]))
    assert got == {"img0.png": 3, "img1.png": -4, "img2.png": 0, "img3.png": 5}
    with pytest.raises(ValueError, match="unknown type 'list'"):
        libshard.convert(csv, str(tmp_path / "bad"), feature="n:list")


@pytest.mark.skipif(SHARD is None, reason="needs the shard program (LIBSHARD_BUILD_DIR or PATH)")
def test_libshard_convert_takes_several_features_as_a_list(tmp_path):
    csv = write_csv(str(tmp_path / "in"))
    features = ["tags:int_list", "score:float", "caption:bytes", "box:float_list", "n:int"]
    assert convert_args(csv, "o", feature=features, no_shuffle=True).count("--feature") == 5
    r = libshard.convert(csv, str(tmp_path / "py"), feature=features, no_shuffle=True)
    assert r.manifest["options"]["features"] == features
    cli = subprocess.run([SHARD, "convert", csv, "-o", str(tmp_path / "cli"), "-q", "--no-shuffle"] +
                         [a for f in features for a in ("--feature", f)], capture_output=True, text=True)
    assert cli.returncode == 3, cli.stderr
    shards = sorted(f for f in os.listdir(str(tmp_path / "cli")) if f.endswith(".tfrecord"))
    assert shards and shards == sorted(f for f in os.listdir(str(tmp_path / "py")) if f.endswith(".tfrecord"))
    for name in shards:
        with open(str(tmp_path / "cli" / name), "rb") as a, open(str(tmp_path / "py" / name), "rb") as b:
            assert a.read() == b.read(), name
    # A flag that is not repeatable still refuses a sequence.
    with pytest.raises(TypeError, match="a sequence is not a flag value"):
        convert_args(csv, "o", size=(224, 160))
