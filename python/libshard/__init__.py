"""libshard: TFRecord shards to training batches.

The compiled core is :mod:`libshard._libshard`; this package re-exports it:

* :class:`Loader` -- batches of images (uint8 / float32 / float16, NHWC or NCHW,
  optionally normalised) and int64 labels, decoded by C++ threads, as :class:`Batch`
  named tuples (:class:`SegmentationBatch` with masks) of numpy arrays that own their memory.
* :class:`ShardReader` / :class:`ShardWriter` -- records and Examples of one shard.
* :class:`DataLossError` -- corrupt or truncated data (a subclass of OSError).
* :func:`convert` / :func:`verify` / :func:`inspect` -- ``shard convert`` / ``verify`` / ``inspect`` from Python
  (:mod:`libshard.tools`).
* :mod:`libshard.torch` -- ``ShardDataset``, a ``torch.utils.data.IterableDataset``
  (imported on demand: ``import libshard.torch``).
* :mod:`libshard.keras` -- ``ShardDataset``, a ``keras.utils.PyDataset`` whose item ``i`` is
  batch ``i`` of the current epoch (imported on demand: ``import libshard.keras``).

docs/reader.md has the whole API.
"""
from ._libshard import (Batch, DataLossError, EpochIterator, KeyedBatch, KeyedSegmentationBatch, Loader,
                        SegmentationBatch, ShardReader, ShardWriter, __version__)

__all__ = ["Batch", "DataLossError", "EpochIterator", "KeyedBatch", "KeyedSegmentationBatch", "Loader",
           "SegmentationBatch", "ShardReader", "ShardWriter", "__version__"]
from .tools import (ConvertProgress, ConvertResult, Fault, Inspection, ReportPage, VerifyReport,  # noqa: E402
                    convert, inspect, report, verify)
__all__ += ["ConvertProgress", "ConvertResult", "Fault", "Inspection", "ReportPage", "VerifyReport", "convert",
            "inspect", "report", "verify"]
