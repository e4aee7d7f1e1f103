"""Shards written by `shard convert`, read back without libshard: TFRecord
framing and masked CRC-32C checked in pure Python, every record parsed with
Python's protobuf using TensorFlow's own example.proto (Python code generated
by protoc at build time), and compared with manifest.json and the sources.

Environment (set by ctest): SHARD_BIN, LIBSHARD_PY_PROTO_DIR (protoc
--python_out folder), LIBSHARD_SOURCE_DIR.
"""
import hashlib
import json
import os
import struct
import subprocess
import sys

import pytest

pytest.importorskip("google.protobuf")
sys.path.insert(0, os.environ.get("LIBSHARD_PY_PROTO_DIR", ""))
example_pb2 = pytest.importorskip("tensorflow.core.example.example_pb2")

SHARD_BIN = os.environ.get("SHARD_BIN", "")
SOURCE_DIR = os.environ.get("LIBSHARD_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SAMPLES = os.path.join(SOURCE_DIR, "samples", "images")


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def read_tfrecords(path):
    """(offset, framed size, payload) for each record; asserts every CRC."""
    with open(path, "rb") as f:
        data = f.read()
    out = []
    pos = 0
    while pos < len(data):
        assert len(data) - pos >= 12, f"{path}: truncated header at {pos}"
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        assert length_crc == masked_crc(header), f"{path}: length CRC at {pos}"
        end = pos + 12 + length + 4
        assert end <= len(data), f"{path}: truncated record at {pos}"
        payload = data[pos + 12:pos + 12 + length]
        (data_crc,) = struct.unpack("<I", data[end - 4:end])
        assert data_crc == masked_crc(payload), f"{path}: data CRC at {pos}"
        out.append((pos, end - pos, payload))
        pos = end
    return out


def test_crc32c_known_answers():
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0
    assert crc32c(bytes(32)) == 0x8A9136AA


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    if not SHARD_BIN or not os.path.exists(SHARD_BIN):
        pytest.skip("SHARD_BIN not set")
    out = str(tmp_path_factory.mktemp("convert") / "out")
    r = subprocess.run([SHARD_BIN, "convert", "-q", SAMPLES, "-o", out, "--size", "64",
                        "--records-per-shard", "16"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with open(os.path.join(out, "manifest.json")) as f:
        manifest = json.load(f)
    return out, manifest


def test_every_record_parses_with_tensorflow_proto(converted):
    out, manifest = converted
    assert manifest["format"] == "libshard.manifest/1"
    names = {int(l["label"]): l["name"] for l in manifest["labels"]}
    assert sorted(names.values()) == sorted(os.listdir(os.path.join(SAMPLES, "train")))
    seen = {}
    total = 0
    for split in manifest["splits"]:
        records_in_split = 0
        assert int(split["shard_count"]) == len(split["shards"])
        for shard in split["shards"]:
            path = os.path.join(out, shard["file"])
            with open(path, "rb") as f:
                raw = f.read()
            assert int(shard["bytes"]) == len(raw)
            assert shard["checksum"] == "crc32c:%08x" % crc32c(raw)
            records = read_tfrecords(path)
            assert len(records) == int(shard["records"])
            # The DALI index: "offset size" per record.
            with open(os.path.join(out, shard["index_file"])) as f:
                idx = [tuple(map(int, line.split())) for line in f if line.strip()]
            assert idx == [(off, size) for off, size, _ in records]
            for _, _, payload in records:
                ex = example_pb2.Example()
                ex.ParseFromString(payload)
                feat = ex.features.feature
                filename = feat["image/filename"].bytes_list.value[0].decode()
                label = feat["image/class/label"].int64_list.value[0]
                text = feat["image/class/text"].bytes_list.value[0].decode()
                assert filename.startswith(split["name"] + "/")
                assert filename.split("/")[1] == text == names[label]
                assert feat["image/format"].bytes_list.value[0] == b"jpeg"
                assert feat["image/height"].int64_list.value[0] == 64
                assert feat["image/width"].int64_list.value[0] == 64
                assert feat["image/channels"].int64_list.value[0] == 3
                assert feat["image/colorspace"].bytes_list.value[0] == b"RGB"
                encoded = feat["image/encoded"].bytes_list.value[0]
                assert encoded[:3] == b"\xff\xd8\xff"
                with open(os.path.join(SAMPLES, filename), "rb") as f:
                    sha = hashlib.sha256(f.read()).hexdigest()
                assert feat["image/key/sha256"].bytes_list.value[0].decode() == sha
                # The serialization round-trips through TF's message type.
                assert example_pb2.Example.FromString(ex.SerializeToString()) == ex
                assert filename not in seen
                seen[filename] = label
                records_in_split += 1
        assert records_in_split == int(split["records"])
        total += records_in_split
    assert total == int(manifest["stats"]["converted"])
    sources = set()
    for root, _, files in os.walk(SAMPLES):
        for name in files:
            sources.add(os.path.relpath(os.path.join(root, name), SAMPLES))
    rejected = {r["path"] for r in manifest["rejects"]}
    assert set(seen) == sources - rejected
    counts = {}
    for label in seen.values():
        counts[label] = counts.get(label, 0) + 1
    assert {int(l["label"]): int(l["count"]) for l in manifest["stats"]["labels"]} == counts
