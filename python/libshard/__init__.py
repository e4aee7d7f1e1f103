"""libshard: TFRecord shards to training batches.

The compiled core is :mod:`libshard._libshard`; this package re-exports it:

* :class:`Loader` -- batches of images (uint8 / float32 / float16, NHWC or NCHW,
  optionally normalised) and int64 labels, decoded by C++ threads, as :class:`Batch`
  named tuples (:class:`SegmentationBatch` with masks) of numpy arrays that own their memory.
* :class:`Dataset` -- the shard set and one sample decoded by its global number (no loader threads), and
  :class:`Order` -- the epoch's order and its partition among ranks and workers: the Loader's two stages
  below the batch ring, for map-style access and samplers.
* :class:`ShardReader` / :class:`ShardWriter` -- records and Examples of one shard.
* :class:`Batch`, :class:`SegmentationBatch`, :class:`DetectionBatch`, :class:`KeyedBatch`,
  :class:`KeyedSegmentationBatch` -- the Loader's batch named tuples; :class:`EpochIterator` -- ``iter(loader)``.
* :class:`DataLossError` -- corrupt or truncated data (a subclass of OSError).
* :func:`convert` / :func:`verify` / :func:`inspect` / :func:`report` -- ``shard convert`` / ``verify`` /
  ``inspect`` / ``report`` from Python, with their result types (:class:`ConvertResult`, :class:`ConvertProgress`,
  :class:`VerifyReport`, :class:`Fault`, :class:`Inspection`, :class:`ReportPage`; :mod:`libshard.tools`).
* :func:`write_samples` / :func:`convert_samples` / :func:`merge` -- conversion from samples a program holds
  (any iterable: image bytes, numpy arrays, PIL images), as a sample pack ``shard convert`` reads, one partition
  per engine task (Spark, Ray, Beam), and ``shard merge`` of the tasks (:mod:`libshard._samples`).
* :mod:`libshard.torch` -- ``ShardDataset``, a ``torch.utils.data.IterableDataset`` of batches; ``ShardImages``
  (map-style) with ``ElasticSampler`` / ``MixtureSampler``; ``detection_targets`` (imported on demand:
  ``import libshard.torch``).
* :mod:`libshard.keras` -- ``ShardDataset``, a ``keras.utils.PyDataset`` whose item ``i`` is
  batch ``i`` of the current epoch (imported on demand: ``import libshard.keras``).

docs/reader.md has the whole API. Importing checks that the compiled module can read the installed numpy's
arrays (a module built with pybind11 < 2.12 under numpy >= 2 is an ImportError saying so).
"""
import os as _os
import sys as _sys

# The compiled module and the C++ libraries it brings (Protobuf, libjpeg-turbo, ...) bind to their own symbols
# first (RTLD_DEEPBIND), all at once (RTLD_NOW): TensorFlow loads its own copy of Protobuf with RTLD_GLOBAL, and
# without this, libshard's Protobuf called TensorFlow's functions and crashed reading a manifest in any process
# that had imported tensorflow (keras's default backend) -- before or after libshard.
_dlopen_flags = _sys.getdlopenflags()
_sys.setdlopenflags(_dlopen_flags | _os.RTLD_NOW | getattr(_os, "RTLD_DEEPBIND", 0))
try:
    from . import _libshard
finally:
    _sys.setdlopenflags(_dlopen_flags)


def _check_numpy_abi(pybind11_version: str, numpy_version: str) -> None:
    """ImportError when the compiled module cannot read this numpy's arrays: pybind11 before 2.12 reads numpy 2's
    array descriptors with numpy 1's layout, so the batches it hands out would hold wrong pixels, silently."""
    def major_minor(v: str):
        parts = [int("".join(c for c in p if c.isdigit()) or 0) for p in v.split(".")[:2]]
        return tuple(parts + [0] * (2 - len(parts)))
    if major_minor(numpy_version)[0] >= 2 and major_minor(pybind11_version) < (2, 12):
        raise ImportError(
            "libshard: its compiled module was built with pybind11 %s, which cannot read numpy 2 arrays, and numpy "
            "%s is imported here (its batches would hold wrong pixels). Rebuild libshard with pybind11 >= 2.12 "
            "(pip install \"pybind11>=2.12\", then pip install . again; CMake: -Dpybind11_DIR=$(python -m "
            "pybind11 --cmakedir)), or use numpy < 2 (pip install \"numpy<2\")." % (pybind11_version, numpy_version))


def _check_numpy() -> None:
    import numpy
    _check_numpy_abi(getattr(_libshard, "_pybind11_version", "unknown"), numpy.__version__)


_check_numpy()

from ._libshard import (Batch, DataLossError, Dataset, DetectionBatch, EpochIterator, KeyedBatch,  # noqa: E402
                        KeyedSegmentationBatch, Loader, Order, SegmentationBatch, ShardReader, ShardWriter,
                        __version__)

__all__ = ["Batch", "DataLossError", "Dataset", "DetectionBatch", "EpochIterator", "KeyedBatch",
           "KeyedSegmentationBatch", "Loader", "Order", "SegmentationBatch", "ShardReader", "ShardWriter",
           "__version__"]
from .tools import (ConvertProgress, ConvertResult, Fault, Inspection, ReportPage, VerifyReport,  # noqa: E402
                    convert, inspect, report, verify)
__all__ += ["ConvertProgress", "ConvertResult", "Fault", "Inspection", "ReportPage", "VerifyReport", "convert",
            "inspect", "report", "verify"]
from ._samples import MergeResult, SampleError, convert_samples, merge, write_samples  # noqa: E402
__all__ += ["MergeResult", "SampleError", "convert_samples", "merge", "write_samples"]
