"""Labels without decoding (Loader.sample_labels, ShardDataset.targets, ShardImages.targets) and split slicing
in TFDS's syntax (split="train[:10%]"): what users coming from torchvision and TFDS reach for first (issue 32)."""
import json
from collections import Counter

import numpy as np
import pytest

import libshard

torch = pytest.importorskip("torch")
import libshard.torch  # noqa: E402
from shard_fixtures import write_shard  # noqa: E402
from torch.utils.data import DataLoader, WeightedRandomSampler  # noqa: E402


@pytest.fixture
def shards(tmp_path):
    write_shard(tmp_path / "d-0.tfrecord", 9, 0)
    write_shard(tmp_path / "d-1.tfrecord", 8, 9)
    return [str(tmp_path / "d-0.tfrecord"), str(tmp_path / "d-1.tfrecord")]


def test_sample_labels_are_the_labels_the_batches_give(shards):
    loader = libshard.Loader(shards, 4, shuffle=True, seed=3, image_size=8)
    labels = loader.sample_labels
    assert labels.dtype == np.int64 and labels.shape == (loader.num_samples,) == (17,)
    assert not labels.flags.writeable
    yielded = np.concatenate([b.labels for b in loader])
    order = loader.global_order(0)
    assert np.array_equal(yielded, labels[order])  # sample order: the labels sorted by sample number
    assert sorted(order.tolist()) == list(range(17))
    assert loader.sample_labels is labels  # read once


def test_targets_of_shard_images_and_shard_dataset(shards):
    images = libshard.torch.ShardImages(shards, image_size=(12, 16))
    assert images.targets == [int(images[i][1]) for i in range(len(images))] == list(range(17))
    ds = libshard.torch.ShardDataset(shards, 5, shuffle=True, seed=2, image_size=8)
    yielded = [int(y) for _, labels in DataLoader(ds, batch_size=None) for y in labels]
    order = libshard.Loader(shards, 5, shuffle=True, seed=2, image_size=8).global_order(0)
    assert yielded == [ds.targets[i] for i in order]
    # Class-balanced sampling, as over ImageFolder.targets: the odd classes only.
    counts = Counter(images.targets)
    weights = [float(t % 2) / counts[t] for t in images.targets]
    sampler = WeightedRandomSampler(weights, 30, generator=torch.Generator().manual_seed(0))
    assert all(int(y) % 2 for _, ys in DataLoader(images, batch_size=6, sampler=sampler) for y in ys)


@pytest.mark.parametrize("values", [[], [7], [-1, 3, 3, 999, -1], [0, 2**40], [-2**63, 2**63 - 1],
                                    list(range(0, 5000, 3)) * 3])
def test_targets_list_is_tolist_for_every_span(values):
    # ShardDataset.targets' list shares one int object a label value; a span past 2^20 is plain tolist().
    for dtype in (np.int64, np.int32):
        if values and max(abs(v) for v in values) >= 2**31 and dtype is np.int32:
            continue
        a = np.array(values, dtype=dtype)
        got = libshard._libshard._labels_list(a[::-1][::-1])
        assert got == a.tolist() and all(type(v) is int for v in got)


def test_targets_of_a_mixture_are_its_sample_numbering(tmp_path):
    write_shard(tmp_path / "a.tfrecord", 4, 100)
    write_shard(tmp_path / "b.tfrecord", 3, 200)
    ds = libshard.torch.ShardDataset([str(tmp_path / "a.tfrecord"), str(tmp_path / "b.tfrecord")], 2,
                                     weights=[1, 1], label_maps="keep", image_size=8)
    assert ds.targets == [100, 101, 102, 103, 200, 201, 202]


def test_no_image_is_decoded(tmp_path):
    """Records whose image bytes decode as nothing still give their labels (and the decode refuses them)."""
    path = str(tmp_path / "bad.tfrecord")
    with libshard.ShardWriter(path) as w:
        for label in (3, 1, 4):
            w.write({"image/encoded": b"\x89PNG\r\n\x1a\n truncated", "image/class/label": label})
        w.write({"image/encoded": b"no label either"})
    assert libshard.Loader(path, 2, image_size=8).sample_labels.tolist() == [3, 1, 4, -1]
    images = libshard.torch.ShardImages(path, image_size=8)
    assert images.targets == [3, 1, 4, -1]
    with pytest.raises(libshard.DataLossError):
        images[0]


def test_a_label_of_another_kind_is_data_loss_naming_the_record(tmp_path):
    path = str(tmp_path / "f.tfrecord")
    with libshard.ShardWriter(path) as w:
        w.write({"image/encoded": b"x", "image/class/label": 1})
        w.write({"image/encoded": b"x", "image/class/label": 0.5})
    with pytest.raises(libshard.DataLossError, match=r"f\.tfrecord: record 1 at byte \d+: feature "
                                                      r"\"image/class/label\" is float_list, expected int64_list"):
        libshard.Loader(path, 1, image_size=8).sample_labels


@pytest.fixture
def splits(tmp_path):
    """A manifest of split train (samples 0..19 in shards of 12 and 8) and val (100..104)."""
    write_shard(tmp_path / "train-00000-of-00002.tfrecord", 12, 0)
    write_shard(tmp_path / "train-00001-of-00002.tfrecord", 8, 12)
    write_shard(tmp_path / "val-00000-of-00001.tfrecord", 5, 100)
    shard = lambda name, n: {"file": name, "records": str(n)}  # noqa: E731
    (tmp_path / "manifest.json").write_text(json.dumps({
        "format": "libshard.manifest/1", "complete": True,
        "splits": [{"name": "train", "records": "20", "shards": [shard("train-00000-of-00002.tfrecord", 12),
                                                                 shard("train-00001-of-00002.tfrecord", 8)]},
                   {"name": "val", "records": "5", "shards": [shard("val-00000-of-00001.tfrecord", 5)]}]}))
    return str(tmp_path)


@pytest.mark.parametrize("split, want", [
    ("train[:10%]", [0, 1]), ("train[10%:]", list(range(2, 20))), ("val[:3]", [100, 101, 102]),
    ("train[10:14]", [10, 11, 12, 13]), ("train[-5%:]", [19]), ("train[:12.5%]", [0, 1]),  # 2.5 -> 2
    ("train[:37.5%]", list(range(8))), ("*[18:21]", [18, 19, 100])])  # 7.5 -> 8
def test_split_slices_in_every_face(splits, split, want):
    loader = libshard.Loader(splits, 1, split=split, image_size=8)
    assert loader.num_samples == len(want)
    assert [int(b.labels[0]) for b in loader] == want
    assert libshard.torch.ShardImages(splits, split=split, image_size=8).targets == want
    ds = libshard.torch.ShardDataset(splits, 3, split=split, image_size=8)
    assert sorted(int(y) for _, ys in DataLoader(ds, batch_size=None) for y in ys) == want


def test_a_slice_is_the_same_set_before_any_shuffle(splits):
    a = libshard.Loader(splits, 4, split="train[25%:75%]", shuffle=True, seed=1, image_size=8)
    b = libshard.Loader(splits, 4, split="train[25%:75%]", shuffle=True, seed=9, image_size=8)
    seen = [sorted(np.concatenate([x.labels for x in ld]).tolist()) for ld in (a, b)]
    assert seen[0] == seen[1] == list(range(5, 15))
    # A saved position belongs to its slice.
    other = libshard.Loader(splits, 4, split="train[30%:80%]", shuffle=True, seed=1, image_size=8)
    with pytest.raises(ValueError, match=r'state\["dataset"\]'):
        other.load_state_dict(a.state_dict())


@pytest.mark.parametrize("split, message", [
    ("train[5]", r'split "train\[5\]": one index; a slice is \[FROM:TO\]'),
    ("train[:10%", r'split "train\[:10%": no closing \]'),
    ("train[10%:15]", r'split "train\[10%:15\]": FROM and TO mix a percentage and a sample number'),
    ("train+val", r'split "train\+val": unions of splits \(\+\) are not supported'),
    ("val[:500]", r'manifest.json: split "val\[:500\]": sample 500 is beyond the split\'s 5 samples'),
    ("train[15:5]", r'split "train\[15:5\]": selects no sample of the split\'s 20 \(samples 15..5\)'),
    ("test[:10%]", r'no split named "test" \(the manifest has train, val\)')])
def test_bad_slices_are_value_errors_naming_the_split_string(splits, split, message):
    for make in (lambda: libshard.Loader(splits, 1, split=split, image_size=8),
                 lambda: libshard.torch.ShardImages(splits, split=split, image_size=8),
                 lambda: libshard.torch.ShardDataset(splits, 1, split=split, image_size=8)):
        with pytest.raises(ValueError, match=message):
            make()
