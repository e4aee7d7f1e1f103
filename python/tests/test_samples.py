"""libshard.write_samples / convert_samples / merge: conversion from samples a program holds (issue 48).

The samples of an image folder handed in from Python (bytes, paths, in any order and partitioning) give the shards
and indices `libshard.convert` writes for the folder, byte for byte; numpy arrays and PIL images are stored
losslessly; bad samples and an input that raises are named and leave no partition behind; a rerun resumes."""
import io
import json
import os
import pathlib

import numpy as np
import pytest
from PIL import Image

import libshard
from tools_fixtures import assert_same_shards as same_shards
from tools_fixtures import folder_rows, make_image_folder, manifest_apart_from_place as manifest_of, pattern, sample_of
from tools_fixtures import shard_files


@pytest.fixture
def pets(tmp_path):
    return make_image_folder(str(tmp_path / "pets"))


def folder_samples(root):
    """The folder's samples as a program would hold them: key (path from the root), bytes, class, split."""
    return [sample_of(r) for r in folder_rows(root)]


OPTIONS = dict(records_per_shard=3, seed=5, no_sync=True)


def test_samples_convert_to_the_folders_shards_in_any_order(pets, tmp_path):
    libshard.convert(pets, tmp_path / "folder", **OPTIONS)
    samples = folder_samples(pets)
    r = libshard.convert_samples(reversed(samples), tmp_path / "pets", **OPTIONS)
    assert r.rejected == 1 and r.manifest["stats"]["converted"] == str(len(samples) - 1)
    same_shards(tmp_path / "folder", tmp_path / "pets")
    assert manifest_of(tmp_path / "folder") == manifest_of(tmp_path / "pets")
    assert open(tmp_path / "folder" / "rejects.tsv").read() == open(tmp_path / "pets" / "rejects.tsv").read()
    assert not os.path.exists(tmp_path / "pets" / ".libshard" / "samples")  # the pack is gone
    # Paths instead of bytes, tuples instead of dicts: the same.
    tuples = [(s["key"], pathlib.Path(pets) / s["key"], s["label"], s["split"]) for s in samples]
    libshard.convert_samples(tuples, tmp_path / "bytuple", name="pets", **OPTIONS)
    same_shards(tmp_path / "folder", tmp_path / "bytuple")
    # A rerun with the same samples keeps every shard.
    again = libshard.convert_samples(samples, tmp_path / "pets", **OPTIONS)
    assert again.shards_written == 0 and again.shards_reused == r.shards_written > 0


def test_partitions_written_by_tasks_then_converted_by_tasks_and_merged(pets, tmp_path):
    libshard.convert(pets, tmp_path / "folder", **OPTIONS)
    samples = folder_samples(pets)
    pack = tmp_path / "pack"
    for p in (2, 0, 1):  # any order: an engine's tasks
        n = libshard.write_samples(samples[p::3], pack, name="pets", partition=p, partitions=3, sync=False)
        assert n == len(samples[p::3])
    out = tmp_path / "out"
    for i in (1, 0):
        libshard.convert(pack, out, num_tasks=2, task_index=i, **OPTIONS)
    with pytest.raises(RuntimeError, match="problem"):
        libshard.merge(_half(tmp_path, pack))
    m = libshard.merge(out)
    assert m.tasks == 2 and m.shards == len([f for f in shard_files(out) if f.endswith(".tfrecord")])
    same_shards(tmp_path / "folder", out)
    assert manifest_of(tmp_path / "folder") == manifest_of(out)
    v = libshard.verify(out)
    assert v.ok, v.files


def _half(tmp_path, pack):
    """A folder where only task 0 of 2 ran: merge names task 1."""
    out = tmp_path / "half"
    libshard.convert(pack, out, num_tasks=2, task_index=0, **OPTIONS)
    return out


def test_arrays_and_pil_images_are_stored_losslessly(tmp_path):
    arrays = [pattern(17, 11, s) for s in range(3)]
    gray = arrays[0][:, :, 0].copy()
    rgba = np.dstack([arrays[1], np.full((11, 17), 200, np.uint8)])
    samples = [{"key": "a/rgb%d.png" % i, "image": a, "label": 3} for i, a in enumerate(arrays)]
    samples.append({"key": "b/pil.png", "image": Image.fromarray(arrays[2]), "label": 4})
    samples.append({"key": "b/gray.png", "image": gray, "label": 4})
    samples.append({"key": "b/rgba.png", "image": rgba, "label": 4})
    samples.append({"key": "b/pal.png", "image": Image.fromarray(arrays[0]).convert("P"), "label": 4})
    r = libshard.convert_samples(samples, tmp_path / "arr", format="png", no_sync=True, channels="auto",
                                 alpha="keep")
    assert r.rejected == 0
    by_name = {}
    for f in shard_files(tmp_path / "arr"):
        if f.endswith(".tfrecord"):
            reader = libshard.ShardReader(str(tmp_path / "arr" / f))
            for i in range(len(reader)):
                ex = reader.example(i)
                with Image.open(io.BytesIO(ex["image/encoded"][0])) as im:
                    by_name[ex["image/filename"][0].decode()] = {"image": np.asarray(im),
                                                                 "label": ex["image/class/label"][0]}
    np.testing.assert_array_equal(by_name["a/rgb1.png"]["image"], arrays[1])
    np.testing.assert_array_equal(by_name["b/pil.png"]["image"], arrays[2])
    np.testing.assert_array_equal(by_name["b/gray.png"]["image"], gray)
    np.testing.assert_array_equal(by_name["b/rgba.png"]["image"], rgba)
    np.testing.assert_array_equal(by_name["b/pal.png"]["image"],
                                  np.asarray(Image.fromarray(arrays[0]).convert("P").convert("RGB")))
    assert by_name["a/rgb0.png"]["label"] == 3 and by_name["b/gray.png"]["label"] == 4


def no_partition(pack):
    return not os.path.isdir(pack) or not [f for f in os.listdir(pack) if f.endswith(".samples.tfrecord")]


def test_bad_samples_and_a_failing_input_are_named_and_write_nothing(tmp_path):
    pack = tmp_path / "pack"
    png = libshard._libshard._png_of_array(pattern(4, 4, 1))

    def raising():
        yield {"key": "ok.png", "image": png}
        raise ConnectionError("the table's server went away")

    with pytest.raises(ConnectionError) as e:
        libshard.write_samples(raising(), pack, name="x")
    assert "after 1 sample(s); partition 0 of 1 was not written" in "".join(e.value.__notes__)
    assert no_partition(pack)
    cases = [
        ([{"key": "ok.png", "image": png}, ["not", "a", "sample"]], "sample 1: a list"),
        ([{"key": "../up.png", "image": png}], r"sample 0 \(key '../up.png'\)"),
        ([{"key": "/abs.png", "image": png}], "sample 0"),
        ([{"key": 7, "image": png}], "sample 0: key is a int"),
        ([{"key": "a.png", "image": 3.5}], r"sample 0 \(key 'a.png'\): image is a float"),
        ([{"key": "a.png", "image": png, "label": 1.5}], "label is a float"),
        ([{"key": "a.png", "image": png, "label": 1}, {"key": "b.png", "image": png, "label": "cat"}],
         "mix integers and class names"),
        ([{"key": "a.png", "image": png, "split": "a/b"}], "split name"),
        ([{"key": "a.png", "image": np.zeros((4, 4), np.float32)}], "uint8 array"),
        ([{"key": "a.png", "image": png, "masks": png}], r"unknown field\(s\) \[.masks.\]"),
        ([{"key": "a.png"}], "sample 0: a sample needs a key and an image"),
        ([{"key": "a.png", "image": png, "split": 3}], r"sample 0 \(key 'a.png'\): split is a int, not a str"),
        ([{"key": "a.png", "image": np.zeros((4, 4, 5), np.uint8)}], r"shape \(H, W, C\) with C 1..4"),
    ]
    for samples, message in cases:
        with pytest.raises(libshard.SampleError, match=message):
            libshard.write_samples(samples, pack, name="x")
        assert no_partition(pack), message
    # The compiled writer takes bytes only (write_samples hands it nothing else).
    with pytest.raises(ValueError, match="image: a contiguous buffer of bytes"):
        libshard._libshard._SamplePartWriter(str(tmp_path / "raw"), "x", 0, 1).add("a.png", np.zeros(4, np.int32))
    # numpy integer labels are integers.
    libshard.write_samples([{"key": "a.png", "image": png, "label": np.int64(2)}], pack, name="x")
    assert not no_partition(pack)
    # A pack with a partition missing is named by the conversion; a folder of nothing merges to an error.
    libshard.write_samples([{"key": "b.png", "image": png}], tmp_path / "p2", name="x", partition=1, partitions=2)
    with pytest.raises(Exception, match="partition 0 of 2 is missing"):
        libshard.convert(tmp_path / "p2", tmp_path / "out2")
    with pytest.raises(FileNotFoundError):
        libshard.merge(tmp_path / "p2")


def test_masks_give_the_shards_of_a_mask_folder(tmp_path):
    images, masks = tmp_path / "seg", tmp_path / "segmasks"
    images.mkdir()
    masks.mkdir()
    arrays = {}
    for i in range(6):
        img = pattern(20 + i, 14 + i % 3, i)
        arrays["s%d.png" % i] = img[:, :, 0] % 5  # class indices 0..4
        Image.fromarray(img).save(images / ("s%d.png" % i))
        Image.fromarray(arrays["s%d.png" % i]).save(masks / ("s%d.png" % i))
    libshard.convert(images, tmp_path / "folder", masks=str(masks), **OPTIONS)
    as_files = [{"key": k, "image": (images / k).read_bytes(), "mask": (masks / k).read_bytes()} for k in arrays]
    libshard.convert_samples(as_files, tmp_path / "seg-out", name="seg", **OPTIONS)
    same_shards(tmp_path / "folder", tmp_path / "seg-out")
    # Arrays and PIL images as masks: the same pixels, so the same per-class counts.
    as_arrays = [{"key": k, "image": (images / k).read_bytes(), "mask": m if n % 2 else Image.fromarray(m)}
                 for n, (k, m) in enumerate(arrays.items())]
    r = libshard.convert_samples(as_arrays, tmp_path / "arr-out", name="seg", **OPTIONS)
    assert r.rejected == 0
    folder = json.load(open(tmp_path / "folder" / "manifest.json"))
    assert r.manifest["stats"]["mask_pixels"] == folder["stats"]["mask_pixels"]
    with pytest.raises(libshard.SampleError, match="mask is a PIL image of mode RGB"):
        libshard.write_samples([{"key": "a.png", "image": b"x", "mask": Image.new("RGB", (2, 2))}],
                               tmp_path / "bad", name="x")


def test_a_second_conversion_from_samples_into_the_same_folder_is_refused(tmp_path):
    png = libshard._libshard._png_of_array(pattern(6, 5, 2))
    refused = []

    def samples():
        # While the first writes its pack, a second one into the same folder would remove it.
        with pytest.raises(RuntimeError, match="another conversion from samples writes"):
            libshard.convert_samples([{"key": "b.png", "image": png}], tmp_path / "out")
        refused.append(True)
        yield {"key": "a.png", "image": png}
    r = libshard.convert_samples(samples(), tmp_path / "out", no_sync=True)
    assert refused and r.rejected == 0 and r.manifest["stats"]["converted"] == "1"
