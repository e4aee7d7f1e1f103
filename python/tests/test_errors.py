"""Exception types: DataLossError for bad data, OSError for I/O, ValueError for bad arguments."""
import re

import numpy as np
import pytest

import libshard


def write(path, records):
    with libshard.ShardWriter(str(path)) as w:
        for r in records:
            w.write(r)


def test_data_loss_error_is_an_oserror_subclass_of_its_own():
    assert issubclass(libshard.DataLossError, OSError)
    assert libshard.DataLossError is not OSError
    assert libshard.DataLossError.__module__ == "libshard"
    assert "byte offset" in libshard.DataLossError.__doc__


def test_a_corrupt_record_is_data_loss_naming_file_and_offset(tmp_path):
    path = tmp_path / "a.tfrecord"
    write(path, [{"a": b"x" * 100}, {"a": b"y" * 100}])
    data = bytearray(path.read_bytes())
    data[129 + 12 + 50] ^= 1  # record 1 (at byte 129): a payload byte
    path.write_bytes(bytes(data))
    r = libshard.ShardReader(str(path))
    assert r[0]
    with pytest.raises(libshard.DataLossError, match=re.escape(str(path)) + ".*byte 129"):
        r[1]


def test_a_truncated_file_is_data_loss(tmp_path):
    path = tmp_path / "t.tfrecord"
    write(path, [{"a": b"x" * 100}, {"a": b"y" * 100}])
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(libshard.DataLossError, match=re.escape(str(path)) + ": truncated record at byte 129: length 113 needs 129 bytes, 109 remain"):
        libshard.ShardReader(str(path), use_index=False)


@pytest.mark.parametrize("payload,message", [
    (b"garbage" * 10, re.escape("record 0 at byte 0: image/encoded (70 bytes) is neither PNG nor JPEG")),
    (b"\xff\xd8\xff\xe0" + b"x" * 50, "record 0 at byte 0: jpeg does not decode: JPEG: truncated"),
])
def test_an_undecodable_sample_is_data_loss(tmp_path, payload, message):
    path = tmp_path / "g.tfrecord"
    write(path, [{"image/encoded": payload, "image/class/label": 1}])
    with pytest.raises(libshard.DataLossError, match=re.escape(str(path)) + ": " + message):
        next(iter(libshard.Loader(str(path), 1, image_size=(8, 8))))


def test_io_failures_are_plain_oserrors(tmp_path):
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(OSError, match="Not a directory") as e:
        libshard.ShardWriter(str(tmp_path / "file" / "x.tfrecord"))
    assert not isinstance(e.value, libshard.DataLossError)
    with pytest.raises(FileNotFoundError):
        libshard.ShardReader(str(tmp_path / "missing.tfrecord"))


@pytest.mark.parametrize("source,message", [
    ("missing.tfrecord", "missing.tfrecord: no such file or folder"),
    ("missing", "missing: no such file or folder"),
    ("nothing-*.tfrecord", "nothing-*.tfrecord: no file matches"),
    ("missing/manifest.json", "missing/manifest.json"),
])
def test_a_missing_loader_source_is_file_not_found(tmp_path, source, message):
    write(tmp_path / "a.tfrecord", [{"image/encoded": b"x"}])
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / message))):
        libshard.Loader([str(tmp_path / "a.tfrecord"), str(tmp_path / source)], 1)


def test_a_folder_without_shards_is_a_value_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=re.escape(str(tmp_path / "empty")) + ": no TFRecord files in this folder"):
        libshard.Loader(str(tmp_path / "empty"), 1)


def test_bad_arguments_are_value_errors(tmp_path):
    path = tmp_path / "a.tfrecord"
    write(path, [{"image/encoded": b"x"}])
    for kw in (dict(io="carrier-pigeon"), dict(order="backwards"), dict(augment="jitter"), dict(resize="fit"),
               dict(dtype="float64"), dict(layout="HWC"), dict(keys={"colour": "c"}),
               dict(buffers=[(np.zeros(3, np.uint8),)])):
        name = next(iter(kw))
        with pytest.raises(ValueError, match="^%s: " % name):
            libshard.Loader(str(path), 1, image_size=8, **kw)
    with pytest.raises(ValueError, match="io"):
        libshard.ShardReader(str(path), io="carrier-pigeon")


@pytest.mark.parametrize("listed", ["../other/x.tfrecord", "ABSOLUTE"])
def test_a_manifest_naming_a_file_outside_its_folder_is_a_value_error(tmp_path, listed):
    import json
    (tmp_path / "other").mkdir()
    (tmp_path / "ds").mkdir()
    write(tmp_path / "other" / "x.tfrecord", [{"image/encoded": b"x", "image/class/label": 0}])
    if listed == "ABSOLUTE":
        listed = str(tmp_path / "other" / "x.tfrecord")
    manifest = {"format": "libshard.manifest/1", "complete": True, "stats": {"converted": 1},
                "splits": [{"name": "train", "records": 1, "shards": [{"file": listed, "records": 1}]}]}
    (tmp_path / "ds" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match=re.escape(f'manifest.json: split "train" lists "{listed}", '
                                                   "outside the manifest's folder")):
        libshard.Loader(str(tmp_path / "ds"), 1)


def test_a_manifest_of_no_records_says_no_samples(tmp_path):
    import json
    manifest = {"format": "libshard.manifest/1", "complete": True, "splits": [{"name": "train", "records": 0}]}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match=re.escape("no samples: the sources hold 0 records (no shards)")):
        libshard.Loader(str(tmp_path), 1)
