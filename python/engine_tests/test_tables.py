"""The recipes of docs/convert.md for tables users hold -- a Hugging Face `datasets` table and a Parquet file read
with pyarrow -- built from the image folder (no hub downloads): each converts to the folder's dataset, byte for
byte."""
import os
import pathlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import libshard
from conftest import OPTIONS, assert_same_dataset
from tools_fixtures import folder_rows as rows_of, sample_of as as_sample


def test_hugging_face_datasets_table(pets, tmp_path):
    import datasets
    folder, local = pets
    rows = rows_of(folder)
    # As the hub's Parquet-backed tables hold them: each image's file bytes in the table.
    table = datasets.Dataset.from_dict({
        "key": [r["key"] for r in rows],
        "image": [{"bytes": as_sample(r)["image"], "path": None} for r in rows],
        "label": [r["label"] for r in rows],
        "split": [r["split"] for r in rows],
    }, features=datasets.Features({"key": datasets.Value("string"), "image": datasets.Image(decode=False),
                                   "label": datasets.Value("string"), "split": datasets.Value("string")}))

    # The recipe: decode=False gives the stored bytes (a table built from paths holds the path instead).
    def image_of(cell):
        return cell["bytes"] if cell["bytes"] is not None else pathlib.Path(cell["path"])
    samples = ({"key": row["key"], "image": image_of(row["image"]), "label": row["label"], "split": row["split"]}
               for row in table)
    libshard.convert_samples(samples, tmp_path / "out", name="pets", **OPTIONS)
    assert_same_dataset(local, str(tmp_path / "out"))


def test_hugging_face_class_label_column_gives_integer_labels(pets, tmp_path):
    import datasets
    folder, _ = pets
    rows = [r for r in rows_of(folder) if "broken" not in r["key"]]  # decoded tables hold pictures only
    names = sorted({r["label"] for r in rows})
    table = datasets.Dataset.from_dict({
        "image": [r["path"] for r in rows],
        "label": [names.index(r["label"]) for r in rows],
    }, features=datasets.Features({"image": datasets.Image(decode=True),
                                   "label": datasets.ClassLabel(names=names)}))
    # Decoded PIL images (the table's default) are stored losslessly as PNG; ClassLabel integers stay integers.
    samples = ({"key": "%05d.png" % i, "image": row["image"], "label": row["label"]} for i, row in enumerate(table))
    r = libshard.convert_samples(samples, tmp_path / "out", format="png", **OPTIONS)
    assert r.rejected == 0 and r.manifest["stats"]["converted"] == str(len(rows))
    assert r.manifest["options"]["format"] == "png"
    labels = []
    for f in sorted(os.listdir(tmp_path / "out")):
        if f.endswith(".tfrecord"):
            reader = libshard.ShardReader(str(tmp_path / "out" / f))
            labels += [reader.example(i)["image/class/label"][0] for i in range(len(reader))]
    assert sorted(labels) == sorted(names.index(x["label"]) for x in rows)


def test_parquet_file_read_in_batches(pets, tmp_path):
    folder, local = pets
    rows = [as_sample(r) for r in rows_of(folder)]
    pq.write_table(pa.table({
        "key": [r["key"] for r in rows],
        "image": pa.array([r["image"] for r in rows], pa.binary()),
        "label": [r["label"] for r in rows],
        "split": [r["split"] for r in rows],
    }), tmp_path / "pets.parquet", row_group_size=7)

    # The recipe: the file read a batch at a time (memory bounded by the batch, not the table).
    def samples(path):
        for batch in pq.ParquetFile(path).iter_batches(batch_size=16):
            yield from batch.to_pylist()
    libshard.convert_samples(samples(tmp_path / "pets.parquet"), tmp_path / "out", name="pets", **OPTIONS)
    assert_same_dataset(local, str(tmp_path / "out"))


def test_a_table_row_of_the_wrong_type_is_named(tmp_path):
    table = pa.table({"key": ["a.png", "b.png"], "image": [b"\x89PNG", None]})
    rows = table.to_pylist()
    with pytest.raises(libshard.SampleError, match=r"sample 1 \(key 'b.png'\): image is a NoneType"):
        libshard.convert_samples(rows, tmp_path / "out")
    assert not (tmp_path / "out" / "manifest.json").exists()
