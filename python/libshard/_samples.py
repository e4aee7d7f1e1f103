"""Conversion from samples a program holds: ``libshard.write_samples``, ``libshard.convert_samples`` and
``libshard.merge`` (docs/convert.md, "Inputs from programs"; docs/distributed.md for Spark, Ray and Beam).

A sample is a mapping (or a tuple ``(key, image[, label[, split]])``) with:

* ``key`` -- its path in the dataset (``"cat/001.jpg"``): a relative path of plain parts, the record's
  ``image/filename``, what orders the samples (never a path on disk);
* ``image`` -- the image: its file's bytes (``bytes``, ``bytearray``, ``memoryview``: JPEG, PNG, WebP, ... as
  ``shard convert`` reads files), a ``uint8`` numpy array ``(H, W)`` or ``(H, W, C)`` with C 1..4, a PIL image
  (both stored losslessly as PNG), or a file path (``os.PathLike``; its bytes are read);
* ``label`` -- optional: an ``int`` (kept as given) or a ``str`` class name (classes numbered 0..K-1 in sorted
  order, as class folders are); one kind per dataset;
* ``split`` -- optional: ``"train"``, ``"val"``, ...; default ``"train"``;
* ``mask`` -- optional: the segmentation mask of class indices, as ``image`` (a PNG file's bytes, a uint8 array
  ``(H, W)``, a PIL image of mode ``L`` or ``P`` -- its palette indices -- or a path), stored as a mask file is.

The samples go into a *sample pack* (one partition: two TFRecord files, committed by a rename once complete)
that ``shard convert`` reads as it reads a folder: a pack of the same keys, bytes, labels and splits as a folder
converts to the same shards and indices byte for byte, whatever the order or the partitioning of the samples.
"""
import numbers
import os
import shutil
from typing import Any, Iterable, Iterator, List, NamedTuple, Optional

from . import _libshard
from .tools import PathLike, ConvertResult, convert


class MergeResult(NamedTuple):
    """What ``libshard.merge`` did: the merged manifest's path (or URL), the tasks and shards it put together."""
    manifest: str
    tasks: int
    shards: int


class SampleError(ValueError):
    """A sample that cannot be stored: the message names its index in the input and its key."""


def _image_bytes(image: Any, where: str, what: str = "image") -> Any:
    if isinstance(image, (bytes, bytearray, memoryview)):
        return memoryview(image).cast("B") if isinstance(image, memoryview) else image
    if isinstance(image, os.PathLike):
        with open(image, "rb") as f:
            return f.read()
    mod = type(image).__module__ or ""
    if mod.startswith("numpy"):
        return _libshard._png_of_array(image)
    if mod.startswith("PIL."):
        import numpy
        if what == "mask":
            if image.mode not in ("L", "P"):
                raise SampleError("%s: mask is a PIL image of mode %s; give class indices (mode L or P)"
                                  % (where, image.mode))
            return _libshard._png_of_array(numpy.asarray(image))
        if image.mode not in ("L", "LA", "RGB", "RGBA"):
            image = image.convert("RGBA" if "A" in image.mode or "transparency" in image.info else "RGB")
        return _libshard._png_of_array(numpy.asarray(image))
    raise SampleError("%s: %s is a %s; give its file's bytes, a uint8 numpy array, a PIL image or a file path"
                      % (where, what, type(image).__name__))


def _fields(sample: Any, index: int):
    if isinstance(sample, dict):
        unknown = set(sample) - {"key", "image", "label", "split", "mask"}
        if unknown:
            raise SampleError("sample %d: unknown field(s) %s (key, image, label, split, mask)"
                              % (index, sorted(unknown)))
        if "key" not in sample or "image" not in sample:
            raise SampleError("sample %d: a sample needs a key and an image" % index)
        return sample["key"], sample["image"], sample.get("label"), sample.get("split"), sample.get("mask")
    if isinstance(sample, tuple) and 2 <= len(sample) <= 4:
        return tuple(sample) + (None,) * (5 - len(sample))
    raise SampleError("sample %d: a %s; give a dict with key and image (label, split, mask) or a tuple "
                      "(key, image[, label[, split]])" % (index, type(sample).__name__))


def _noted(samples: Iterable[Any], partition: int, partitions: int) -> Iterator[Any]:
    """`samples`, with a note on what the input raises: after which sample, and that nothing was written."""
    it = iter(samples)
    n = 0
    while True:
        try:
            sample = next(it)
        except StopIteration:
            return
        except Exception as e:
            e.add_note("libshard.write_samples: the input raised after %d sample(s); partition %d of %d was not "
                       "written" % (n, partition, partitions))
            raise
        n += 1
        yield sample


def write_samples(samples: Iterable[Any], pack: PathLike, *, name: str, partition: int = 0, partitions: int = 1,
                  sync: bool = True) -> int:
    """Writes ``samples`` as partition ``partition`` of ``partitions`` of the sample pack in the folder ``pack``
    (made if missing), for ``libshard.convert(pack, output, ...)`` or ``shard convert PACK -o OUTPUT``; returns
    how many were written.

    ``name`` is the dataset's name: the shards' default prefix (``name-train-00000-of-00004.tfrecord``); every
    partition of one pack must give the same. This is the partition entry point of an engine's task
    (docs/distributed.md): each task writes its part of the input under its own partition number; a task retried
    or run twice writes its partition again, whole, replacing the earlier attempt's (the same bytes for the same
    samples), and a task killed mid-way leaves no partition behind, only temporary files its retry removes.
    ``sync`` (default True) makes the partition's files durable (fsync) before they are renamed into place.

    Raises SampleError (a ValueError) naming the sample's index and key for a sample that is not of the shapes
    above, a key that is not a relative path of plain parts, or a bad label or split; what the iterable raises
    passes through. Either way the partition is not written (an earlier complete attempt of it stays).
    """
    writer = _libshard._SamplePartWriter(pack, name, partition, partitions, sync)
    try:
        for i, sample in enumerate(_noted(samples, partition, partitions)):
            key, image, label, split, mask = _fields(sample, i)
            if not isinstance(key, str):
                raise SampleError("sample %d: key is a %s, not a str" % (i, type(key).__name__))
            where = "sample %d (key %r)" % (i, key)
            if isinstance(label, numbers.Integral) and not isinstance(label, bool):
                label = int(label)  # numpy's and arrow's integers too
            elif label is not None and not isinstance(label, str):
                raise SampleError("%s: label is a %s: give an int or a class name" % (where, type(label).__name__))
            if split is not None and not isinstance(split, str):
                raise SampleError("%s: split is a %s, not a str" % (where, type(split).__name__))
            try:
                writer.add(key, _image_bytes(image, where), split or "",
                           label if isinstance(label, int) else -1, label if isinstance(label, str) else "",
                           None if mask is None else _image_bytes(mask, where, "mask"))
            except ValueError as e:
                raise SampleError(str(e)) from None
        count = writer.samples
        writer.commit()
        return count
    finally:
        writer.abandon()


def convert_samples(samples: Iterable[Any], output: PathLike, *, name: Optional[str] = None,
                    **options: Any) -> ConvertResult:
    """Converts the samples of an iterable to shards in ``output``: what ``shard convert`` writes for a folder
    (shards, indices, manifest.json, rejects.tsv, the leak check's duplicates.tsv; ``libshard.report`` reads it),
    in one process.

    The samples are first written into a sample pack in ``output``'s hidden state folder
    (``.libshard/samples``), converted as ``libshard.convert`` converts a folder (``options`` are its flags:
    ``size=224``, ``records_per_shard=1000``, ...), and the pack is removed afterwards, done or not. The result
    depends on the samples, not on their order. A rerun with the same samples (an input that can be replayed)
    resumes: complete shards are kept. ``name`` is the shards' prefix (default: ``output``'s folder name).
    Raises SampleError for a bad sample (nothing converted), RuntimeError when another ``convert_samples`` writes
    ``output`` now (one at a time: each holds ``output/.libshard/samples.lock``), and what ``libshard.convert``
    raises.
    """
    import fcntl
    out = os.fspath(output)
    out_text = os.fsdecode(out)
    name = name or os.path.basename(os.path.normpath(os.path.abspath(out_text)))
    state = os.path.join(out_text, ".libshard")
    pack = os.path.join(state, "samples")
    os.makedirs(state, exist_ok=True)
    # One convert_samples a folder at a time: a second one would remove the pack the first is converting.
    with open(os.path.join(state, "samples.lock"), "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RuntimeError("libshard.convert_samples: another conversion from samples writes %s now"
                               % out_text) from None
        shutil.rmtree(pack, ignore_errors=True)
        try:
            write_samples(samples, pack, name=name, sync=False)
            return convert(pack, out, **options)
        finally:
            shutil.rmtree(pack, ignore_errors=True)


def merge(output: PathLike) -> MergeResult:
    """``shard merge OUTPUT``: puts the tasks of a split conversion (``convert(..., num_tasks=N, task_index=I)``)
    in a folder or an ``s3://`` prefix together into one manifest.json. Raises RuntimeError listing what is
    missing or damaged (nothing written: rerun those tasks), FileNotFoundError when there is no task to merge."""
    problems, manifest, tasks, shards = _libshard._merge(output)
    if problems:
        raise RuntimeError("shard merge %s: %d problem(s):\n  %s" % (os.fsdecode(os.fspath(output)), len(problems),
                                                                      "\n  ".join(problems)))
    return MergeResult(manifest, tasks, shards)


__all__: List[str] = ["MergeResult", "SampleError", "convert_samples", "merge", "write_samples"]
