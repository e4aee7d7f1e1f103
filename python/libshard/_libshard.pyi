"""Type stubs for libshard._libshard, the compiled core of the libshard package (re-exported by ``libshard``)."""
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str
"""The libshard version (CMakeLists.txt's project() VERSION), the same as ``shard --version``."""


class DataLossError(OSError):
    """Corrupt or truncated data: a bad length or data CRC, a record cut short, an Example that does not parse,
    an image that does not decode. The message names the file and, where there is one, the byte offset.

    A subclass of OSError, so ``except OSError`` still catches every file problem; plain OSError (not this
    class) is raised for I/O failures (a read error, a permission problem), FileNotFoundError for a missing
    file, ValueError for bad arguments."""


class ShardReader:
    """Random access to the records of one TFRecord shard (through its ``.idx`` when present)."""

    def __init__(self, path: str, io: str = "mmap", verify_crc: bool = True, use_index: bool = True,
                 direct_io: bool = False) -> None:
        """Opens a shard.

        Args:
            path: the TFRecord file.
            io: ``"mmap"`` (map the file) or ``"pread"`` (read each record).
            verify_crc: check both CRCs of every record read.
            use_index: use ``path + ".idx"`` when it exists; otherwise the file is scanned once.
            direct_io: with ``io="pread"``, bypass the page cache (O_DIRECT).

        Raises:
            FileNotFoundError: no such file. DataLossError: not a valid TFRecord file (offset named).
            ValueError: an unknown ``io``.
        """

    def __len__(self) -> int:
        """The number of records."""

    def __getitem__(self, index: int) -> bytes:
        """Record ``index`` (negative counts from the end) as bytes. IndexError when out of range."""

    def example(self, index: int) -> Dict[str, List[Union[bytes, int, float]]]:
        """Record ``index`` parsed as a tf.train.Example: feature key -> list of bytes / int / float values.

        Args:
            index: the record number (negative counts from the end).
        """

    @property
    def path(self) -> str:
        """The shard's path."""

    @property
    def index_used(self) -> bool:
        """True when the record offsets came from the ``.idx`` file rather than a scan."""


class ShardWriter:
    """Writes a TFRecord shard of tf.train.Examples (and its DALI-compatible ``.idx``). A context manager."""

    def __init__(self, path: str, index: bool = True) -> None:
        """Creates ``path``.

        Args:
            path: the shard to write.
            index: also write ``path + ".idx"``.
        """

    def write(self, features: Mapping[str, Any]) -> None:
        """Writes one Example.

        Args:
            features: ``{key: value}``, a value being bytes, str, int, float or a non-empty list of one of
                these kinds (str is stored as bytes, bool as int64).
        """

    def write_record(self, data: bytes) -> None:
        """Writes one record of arbitrary bytes.

        Args:
            data: the record's payload.
        """

    def close(self) -> None:
        """Flushes and closes the shard (and its index); errors are raised here."""

    def __enter__(self) -> "ShardWriter": ...

    def __exit__(self, *exc: Any) -> None: ...


class Batch(Tuple[npt.NDArray[Any], npt.NDArray[np.int64]]):
    """A batch (a named tuple): ``images`` in the Loader's layout and dtype, ``labels`` int64 ``[B]``. The arrays
    own their memory (their ``base`` holds the Loader's block): keep them as long as you like."""
    images: npt.NDArray[Any]
    labels: npt.NDArray[np.int64]


class KeyedBatch(Tuple[npt.NDArray[Any], npt.NDArray[np.int64], Dict[str, List[Any]]]):
    """A batch with ``extras=``: ``images``, ``labels`` and ``keys``, ``{feature key: [value per sample]}`` (a
    feature with one value gives it: bytes, int or float; several a list; none None)."""
    images: npt.NDArray[Any]
    labels: npt.NDArray[np.int64]
    keys: Dict[str, List[Any]]


class KeyedSegmentationBatch(Tuple[npt.NDArray[Any], npt.NDArray[np.int64], npt.NDArray[np.uint8],
                                   Dict[str, List[Any]]]):
    """A batch with ``masks=True`` and ``extras=``: ``images``, ``labels``, ``masks`` and ``keys``."""
    images: npt.NDArray[Any]
    labels: npt.NDArray[np.int64]
    masks: npt.NDArray[np.uint8]
    keys: Dict[str, List[Any]]


class SegmentationBatch(Tuple[npt.NDArray[Any], npt.NDArray[np.int64], npt.NDArray[np.uint8]]):
    """A batch with ``masks=True`` (a named tuple): ``images``, ``labels`` and ``masks`` uint8 ``[B, H, W]``."""
    images: npt.NDArray[Any]
    labels: npt.NDArray[np.int64]
    masks: npt.NDArray[np.uint8]


class DetectionBatch(Tuple[npt.NDArray[Any], npt.NDArray[np.int64], npt.NDArray[np.float32],
                           npt.NDArray[np.int64], npt.NDArray[np.int32]]):
    """A batch with ``boxes=True`` (a named tuple): ``images``, ``labels``, ``boxes`` float32 ``[B, M, 4]``
    (xmin, ymin, xmax, ymax in 0..1 of the output image, zeros past a count), ``box_labels`` int64 ``[B, M]``
    (``image/object/class/label``, -1 past a count), ``box_counts`` int32 ``[B]``; M is ``max_boxes``. With
    ``masks=True`` and / or ``extras=`` too: ``SegmentationDetectionBatch`` (``masks`` after ``labels``),
    ``KeyedDetectionBatch`` / ``KeyedSegmentationDetectionBatch`` (``keys`` last). Each box moved with the
    pixels (docs/reader.md); ``libshard.torch.detection_targets`` turns it into torchvision's targets."""
    images: npt.NDArray[Any]
    labels: npt.NDArray[np.int64]
    boxes: npt.NDArray[np.float32]
    box_labels: npt.NDArray[np.int64]
    box_counts: npt.NDArray[np.int32]


class Dataset:
    """The shard set and one sample by its global number, without a :class:`Loader`, its ring or its threads
    (docs/reader.md, "Stages"): ``len(ds)`` samples, ``ds[i]`` / ``ds.sample(i, epoch)`` decoded on the calling
    thread with the GIL released, with the Loader's geometry, augmentation (drawn from ``(seed, epoch, i)``),
    layout and dtype, so ``ds.sample(i, e)`` is the sample a Loader's batch of epoch ``e`` holds for ``i``;
    ``labels`` and ``sample_labels`` without decoding an image. :class:`Order` gives its order and partition.
    What ``libshard.torch.ShardImages`` is built on. Immutable; safe to share between threads."""

    def __init__(self, sources: Union[str, Sequence[Union[str, Sequence[str]]]], **options: Any) -> None:
        """
        Args:
            sources: as for :class:`Loader` (paths, folders, globs, a ``manifest.json``, ``s3://`` / ``https://``
                locations; with ``weights=``, one element per source of a mixture).
            **options: :class:`Loader`'s keywords for the shard set and one sample -- ``image_size``,
                ``channels``, ``augment``, ``resize``, ``layout``, ``dtype``, ``mean``, ``std``, ``masks``,
                ``boxes``, ``max_boxes``, ``box_min_visible``, ``dct_scale``, ``split``, ``keys``, ``io``,
                ``verify_crc``, ``cache_dir``, ``cache_limit``, ``weights``, ``samples_per_epoch``,
                ``label_maps``, ``threads`` (for ``sample_labels``) and ``seed`` (augmentation). ValueError for
                the order's, the partition's and the batch's (``shuffle``, ``order``, ``rank``, ``world_size``,
                ``drop_last``, ``worker``, ``num_workers``, ``block_size``, ``window_blocks``: :class:`Order`'s;
                ``batch_size``, ``prefetch``, ``buffers``, ``slots``, ``extras``, ``on_error``: the Loader's).
        """

    def __len__(self) -> int:
        """Samples in the dataset."""

    def __getitem__(self, index: int) -> Tuple[Any, ...]:
        """``sample(index)``; a negative index counts from the end.

        Args:
            index: the global sample number.
        """

    def sample(self, index: int, epoch: int = 0) -> Tuple[Any, ...]:
        """One sample, as :meth:`Loader.sample`: ``(image, label[, mask][, boxes, box_labels])``.

        Args:
            index: the global sample number, 0..len-1 (shards in order, records in file order).
            epoch: the epoch whose augmentation to apply. Default: 0.

        Raises:
            IndexError: an index out of range. DataLossError: a record that does not decode.
        """

    @property
    def num_samples(self) -> int:
        """Samples in the dataset (``len(ds)``)."""

    @property
    def labels(self) -> List[Tuple[int, str]]:
        """The manifest's label map as ``[(label, name)]`` (empty without a manifest)."""

    @property
    def sample_labels(self) -> np.ndarray:
        """Every sample's label, as :attr:`Loader.sample_labels` (read on each access)."""

    @property
    def identity(self) -> str:
        """What a saved position names the dataset by (``state_dict()["dataset"]``)."""

    @property
    def seed(self) -> int:
        """The augmentation seed; :class:`Order`'s default seed."""

    @property
    def image_shape(self) -> Tuple[int, int, int]:
        """One sample's image shape: ``(H, W, C)``, or ``(C, H, W)`` with ``layout="NCHW"``."""


class Order:
    """An epoch's sample order and its partition among data-parallel ranks and loader workers: the
    :class:`Loader`'s rule (docs/reader.md, "Partitioning"), the project's one, without a Loader. The epoch's
    global order (sequential, shuffle or block-shuffle from ``(seed, epoch)``; a mixture's interleave for a
    :class:`Dataset` made with ``weights=``) is consumed in global batches of ``batch_size * world_size``, rank
    ``r`` taking the ``r``-th ``batch_size`` slice of each; without ``drop_last`` the order is padded to a
    multiple of ``world_size`` from its start; a rank's batches go round-robin to ``num_workers`` workers. An
    epoch may start at a global offset ``start`` (elastic resume: the rest of the order cut anew). With
    ``batch_size=1`` this is ``DistributedSampler``'s strided cut. What the samplers of ``libshard.torch`` and
    ``ShardDataset.state_dict`` are built on. Pure arithmetic; thread-safe; pickles unless made from a
    mixture."""

    def __init__(self, dataset: Union[int, Dataset], batch_size: int = 1, *, rank: int = 0, world_size: int = 1,
                 shuffle: bool = False, order: Optional[str] = None, seed: Optional[int] = None,
                 block_size: int = 256, window_blocks: int = 4, drop_last: bool = False, worker: int = 0,
                 num_workers: int = 1) -> None:
        """
        Args:
            dataset: a :class:`Dataset` (its size, its mixture's order, its identity) or a number of samples.
            batch_size: samples per batch of one rank. Default: 1.
            rank, world_size: this rank and the number of ranks. Default: 0 of 1.
            shuffle, order, block_size, window_blocks, drop_last: as for :class:`Loader`.
            seed: the order's seed. Default (None): the Dataset's seed, or 0 for a number of samples.
            worker, num_workers: this loader worker and the number of them. Default: 0 of 1.
        """

    def __len__(self) -> int:
        """This rank's samples in a whole epoch (padding included; before the worker split)."""

    @property
    def samples(self) -> int:
        """Samples in the epoch's global order (a mixture's ``samples_per_epoch``)."""

    @property
    def identity(self) -> Dict[str, Any]:
        """What defines the epoch's order, as a saved state holds it: ``{"seed", "order", "block_size",
        "window_blocks", "permutation", "samples"}`` and, made from a Dataset, ``"dataset"``."""

    def global_order(self, epoch: int = 0) -> npt.NDArray[np.uint64]:
        """The epoch's order of global sample numbers over all ranks.

        Args:
            epoch: the epoch. Default: 0.
        """

    def epoch_samples(self, epoch: int = 0, start: int = 0) -> npt.NDArray[np.uint64]:
        """This rank's global sample numbers in ``epoch`` from the global offset ``start``: its batches one
        after another (before the worker split), as :meth:`Loader.epoch_samples`.

        Args:
            epoch: the epoch. Default: 0.
            start: samples of the epoch's global order consumed before. Default: 0.
        """

    def samples_per_rank(self, start: int = 0) -> int:
        """This rank's samples from ``start`` (padding included).

        Args:
            start: the global offset. Default: 0.
        """

    def rank_batches(self, start: int = 0) -> int:
        """This rank's batches from ``start`` (before the worker split).

        Args:
            start: the global offset. Default: 0.
        """

    def batches_per_epoch(self, start: int = 0) -> int:
        """This worker's batches from ``start``.

        Args:
            start: the global offset. Default: 0.
        """

    def consumed(self, start: int, batches: int) -> int:
        """Samples of the epoch's global order all ranks have consumed once each had ``batches`` batches from
        ``start`` (padding not counted): the ``consumed`` of a saved state.

        Args:
            start: the global offset the pass began at.
            batches: batches each rank has consumed since (0..rank_batches(start); ValueError past it).
        """


class Loader:
    """Batches of images and int64 labels from shards, decoded by C++ threads, ``prefetch`` batches ahead.

    ``for batch in loader`` yields the rest of the current epoch of :class:`Batch` ``(images, labels)``
    (:class:`SegmentationBatch` ``(images, labels, masks)`` with ``masks=True``), arrays that own their memory
    (no copy: the memory the decode threads wrote, returned to the loader's pool when the last array dies):
    images ``[B, H, W, C]`` (``layout="NHWC"``) or ``[B, C, H, W]`` (``"NCHW"``) of ``dtype``; labels int64
    ``[B]`` (-1 where a record has none); masks uint8 ``[B, H, W]``. The last batch of an epoch may be short.
    The next ``for`` loop continues with the next epoch; a pass left unfinished (a peek with
    ``next(iter(loader))``, a ``break``) is replayed by the next ``iter()``. Plain ``next(loader)`` streams
    batches across epochs (Keras-style generators). Batch contents are a pure function of the sources, the
    options and the position (epoch, batch), whatever ``threads`` is. ``close()`` or a ``with`` block stops the
    loader's threads; one Loader may be shared by threads (one batch at a time) and used in a fork child.
    """

    def __init__(self, sources: Union[str, Sequence[Union[str, Sequence[str]]]], batch_size: int, *,
                 image_size: Union[None, int, Tuple[int, int]] = None, shuffle: bool = False, seed: int = 0,
                 rank: int = 0, world_size: int = 1, threads: int = 2, augment: str = "none", drop_last: bool = False,
                 channels: Optional[int] = None, order: str = "", prefetch: int = 2, io: str = "mmap",
                 verify_crc: bool = True,
                 split: str = "", keys: Mapping[str, str] = {}, resize: str = "center-crop", masks: bool = False,
                 worker: int = 0, num_workers: int = 1,
                 buffers: Optional[Sequence[Tuple[np.ndarray, ...]]] = None, layout: str = "NHWC",
                 dtype: Union[str, np.dtype, type, Any] = "uint8", mean: Union[Sequence[float], str, None] = None,
                 std: Union[Sequence[float], str, None] = None, slots: Optional[Any] = None,
                 cache_dir: Optional[str] = None, cache_limit: int = 0, on_error: str = "raise",
                 extras: Optional[Sequence[str]] = None, block_size: int = 256, window_blocks: int = 4,
                 dct_scale: bool = True, boxes: bool = False, max_boxes: int = 100,
                 box_min_visible: float = 0.3, weights: Optional[Sequence[float]] = None,
                 samples_per_epoch: Optional[int] = None, label_maps: str = "error") -> None:
        """Opens the sources and sets up the decode threads (they start on the first batch).

        Args:
            sources: shard files, folders (their ``*.tfrecord``), globs, or a ``manifest.json``; one str or a list;
                or ``s3://BUCKET/PREFIX`` (``.../manifest.json``) and ``https://...``, read through ``cache_dir``.
                A file reached twice (the same folder twice, a manifest and one of its shards, a glob and its
                folder, a link and its target) is a ValueError naming both; so is an unfinished conversion (a
                partial manifest, a folder with the converter's ``.libshard/`` but no ``manifest.json``, a folder
                or glob whose ``-NNNNN-of-MMMMM`` shards miss some numbers).
            batch_size: samples per batch (> 0). The loader's own buffers hold at most the largest batch an epoch
                gives; buffers beyond half the machine's memory are a ValueError naming the bytes.
            image_size: ``(height, width)`` of every output image, or one int for a square. None (default): the
                stored size, when the manifest says every image has one (else ValueError naming the sizes).
            shuffle: a full permutation of the samples each epoch, drawn from ``(seed, epoch)``.
            seed: shuffle and augmentation seed (0..2**64 - 1); the same on every rank.
            rank: this data-parallel rank, ``0 <= rank < world_size``.
            world_size: number of data-parallel ranks: the epoch's global order is consumed in global batches of
                ``batch_size * world_size`` samples, rank ``r`` taking the ``r``-th ``batch_size`` slice of each.
            threads: decode threads, 0..256; 0 is one per core (as ``convert`` and ``verify`` take it).
            augment: ``"none"`` or ``"random-resized-crop"`` (torchvision's parameters, plus a horizontal flip
                with probability 1/2), per sample from ``(seed, epoch, sample)``.
            drop_last: False: the order is padded to a multiple of ``world_size`` by repeating its first
                samples; the last global batch may be short, cut evenly among the ranks. True: the incomplete
                last global batch is dropped; ranks' samples are disjoint.
            channels: 3 (RGB) or 1 (gray). None (default): 1 when the manifest says every image is stored
                gray, else 3.
            order: ``"sequential"``, ``"shuffle"`` or ``"block-shuffle"``; overrides ``shuffle`` when given.
                Block shuffle (FFCV's quasi-random order) cuts the samples into blocks of ``block_size``
                consecutive records (1..2**31 - 1, default 256), permutes the blocks, and shuffles the samples
                of each ``window_blocks`` consecutive blocks together (1..65536, default 4): reads stay within
                a few blocks at a time, which is what lets a remote dataset larger than ``cache_limit`` stream.
            prefetch: batches decoded ahead of the consumer (owned buffers only).
            io: ``"mmap"`` or ``"pread"``.
            verify_crc: check both CRCs of every record.
            split: with a ``manifest.json`` (or a folder holding one), the split to read (e.g. ``"train"``);
                required when the manifest has several, ``"*"`` for all of them. A slice in TFDS's syntax reads
                part of it, the same samples on every run: ``"train[:10%]"``, ``"train[10%:]"``,
                ``"val[:500]"``, ``"train[100:200]"``, ``"train[-5%:]"`` (of the split's samples in manifest
                order, before any shuffle; percentages rounded as TFDS does). Bad syntax, a boundary beyond the
                split or an empty slice is a ValueError naming the split string.
            keys: feature keys by role, for files written by other tools: ``{"image": ..., "label": ...,
                "format": ..., "shape": ..., "dtype": ..., "mask": ..., "mask_format": ...}``. With a manifest, a
                key it does not list is a ValueError naming the keys it has.
            resize: how an image of another size reaches ``image_size`` without augmentation:
                ``"center-crop"``, ``"stretch"``, ``"letterbox"`` or ``"crop-or-pad"``.
            masks: also produce segmentation masks (uint8 ``[B, H, W]``, same geometry, nearest neighbour).
            worker: this loader worker, ``0 <= worker < num_workers``.
            num_workers: loader workers splitting this rank's batches round-robin (worker w: batches w, w+K, ...).
            buffers: caller-owned batch memory (e.g. pinned tensors' ``.numpy()``), used in turn as the ring:
                a list of ``(images, labels[, masks])`` writable C-contiguous arrays of ``batch_size * H * W * C``
                values of ``dtype``, ``batch_size`` int64, ``batch_size * H * W`` uint8. Batches are then views
                into them, valid until the loader reuses the buffer.
            layout: ``"NHWC"`` (channels last) or ``"NCHW"`` (channels first). Masks are unaffected.
            dtype: ``"uint8"`` (decoded values), ``"float32"`` or ``"float16"``: ``(x / 255 - mean) / std``; or
                the numpy or torch dtype of the same name (``np.float32``, ``np.dtype("float16")``,
                ``torch.uint8``).
            mean: per-channel means on the 0..1 scale (torchvision's ``Normalize``), ``channels`` values;
                float dtypes only; or ``"dataset"``: the per-channel means manifest.json records (divided by
                255; a gray dataset's one value for every channel). Default: 0. A value beyond 1 (the 0..255
                scale) is a ValueError.
            std: per-channel standard deviations on the 0..1 scale, non-zero, or ``"dataset"``. Default: 1. Values
                beyond 1, or whose results are not finite in ``dtype`` (float16: beyond 65504), are a ValueError.
            slots: internal (``libshard.torch``): a ``_SlotSet`` of shared-memory or pinned batch slots that
                batches are decoded into while one is free. Not with ``buffers``.
            cache_dir: where shards of ``s3://`` and ``https://`` sources are cached, each checked against the
                manifest's size and CRC-32C as it downloads (docs/object_storage.md). Default:
                ``$LIBSHARD_CACHE_DIR``, else ``~/.cache/libshard``.
            cache_limit: most bytes the cache may hold (0: no limit). Shards are downloaded ahead of the epoch's
                order as it runs; when this loader's part is larger than the limit they stream through the cache
                (evicted once read): sequential or ``order="block-shuffle"`` only (``shuffle=True`` is then a
                MemoryError naming block shuffle), and a limit that cannot hold one batch's shards plus one
                downloading ahead is a MemoryError with the bytes needed (docs/object_storage.md).
            on_error: ``"raise"`` (a record that fails the image-record contract fails its batch with
                DataLossError) or ``"skip"`` (it is listed in :attr:`skipped` and the next sample of the epoch's
                global order takes its place, so the batch stays full, whatever the partition). Other errors raise either way.
            extras: feature keys returned with each batch (e.g. ``["image/filename", "image/key/sha256"]``): batches
                are then :class:`KeyedBatch` ``(images, labels, keys)``, ``keys`` a dict of one value per sample,
                to trace a prediction to its source file. A key the manifest's schema marks a list (an
                ``int_list`` / ``float_list`` column, the object boxes) is a list in every row; any other is its
                value when a record has one, a list for several, None for none.
            dct_scale: decode a JPEG with DCT scaling (1/2, 1/4, 1/8) when the region the resize reads covers at
                least twice ``image_size`` both ways (with or without augmentation): several times faster on large
                photos, a mean absolute difference of a few levels from the full-scale decode (docs/performance.md).
                False: every JPEG decoded at full scale, the exact pixels. Default: True.
            boxes: also return each sample's detection boxes (the Object Detection API's
                ``image/object/bbox/*`` and ``image/object/class/label``): batches are then
                :class:`DetectionBatch` ``(images, labels, boxes, box_labels, box_counts)``, the boxes moved by the
                same resize, crop and flip as the pixels; a box cut by a crop is clipped, one keeping less than
                ``box_min_visible`` of its area dropped. A record without box keys has zero boxes; malformed ones
                (unequal lengths, NaN, outside 0..1, min > max) are bad data (``on_error``). Default: False.
            max_boxes: boxes per sample in the padded arrays, 1..100000; a sample with more keeps its first
                ``max_boxes``. Default: 100.
            box_min_visible: fraction of a box's area that must stay inside a crop (0..1). Default: 0.3.
            weights: a weighted mixture (docs/reader.md): each element of ``sources`` is then one source (a
                dataset: a folder, a manifest, ``s3://...``, or a list of them) and ``weights`` has one number per
                source (>= 0, normalised). Every window of the epoch's order holds each source in proportion to its
                weight within 2 samples (a deterministic interleave by ``seed``); within a source, samples come
                without replacement in its own order, and a source that runs out starts its next pass
                (upsampling). ``extras=["source"]`` gives each sample's source index. A ``mixture.json`` source
                is a mixture without ``weights=``. Default: None (the sources are one dataset).
            samples_per_epoch: with ``weights``: samples in an epoch's order (all ranks). Default: the sum of the
                sources' sizes.
            label_maps: with ``weights``: sources whose manifests' label maps differ are a ValueError naming
                both and the difference (``"error"``), remapped by class name into one map sorted by name
                (``"merge"``; :attr:`labels` is that map), or read as stored (``"keep"``). Default: ``"error"``.

        Raises:
            ValueError: a bad argument (the message names it; an integer argument out of range too).
            TypeError: an argument of the wrong type (naming it). FileNotFoundError: a missing source.
            DataLossError: a corrupt shard or manifest.
        """

    def __len__(self) -> int:
        """Batches per epoch (for this rank and worker)."""

    def __iter__(self) -> "EpochIterator":
        """A pass over the rest of the current epoch (an unfinished earlier pass is replayed)."""

    def __next__(self) -> Union[Batch, SegmentationBatch]:
        """The next batch of the stream, across epochs (never StopIteration). Raises DataLossError (naming
        file, record and offset) for a sample that does not decode, MemoryError when decoding runs out of
        memory."""

    def close(self) -> None:
        """Stops and joins the loader's threads and lets go of ``buffers``; later use raises ValueError."""

    def __enter__(self) -> "Loader":
        """The loader itself; the ``with`` block's end calls :meth:`close`."""

    def __exit__(self, *exc: Any) -> None:
        """Calls :meth:`close`."""

    def global_order(self, epoch: int = 0) -> np.ndarray:
        """The global sample numbers of epoch ``epoch``'s order over all ranks (uint64; a mixture's interleave
        with ``weights=``), before the cut into ranks and workers: what a sampler of
        :class:`libshard.torch.ShardImages` follows."""

    def state_dict(self) -> Dict[str, Any]:
        """The global position of the next batch: ``{"epoch", "consumed", "seed", "order", "block_size",
        "window_blocks", "permutation", "samples", "dataset", "rank", "world_size", "batch_size", "skipped"}``. ``consumed`` is
        the number of samples of the epoch's global order all ranks together have consumed (the same on every
        rank at the same step); ``samples`` and ``dataset`` identify the dataset; ``skipped`` lists the records
        skipped so far (``on_error="skip"``). ValueError with ``num_workers > 1``: a worker sees only its share
        of the rank's batches (the consumer counts; see ``libshard.torch.ShardDataset``)."""

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continues at a :meth:`state_dict`'s global position: the samples of the epoch not yet consumed are cut
        anew for this loader's ``world_size``, ``rank``, ``num_workers`` and ``batch_size``, each once among the
        ranks; the next epoch is the saving run's next. With the global batch (``batch_size * world_size``)
        unchanged the following global batches are the saving run's, sample for sample. ``skipped`` records
        join :attr:`skipped`.

        Args:
            state: a dict from :meth:`state_dict` of a loader over the same dataset, seed and order.

        Raises:
            ValueError: naming the field: a state of another dataset, seed or order, or values out of range.
        """

    @property
    def labels(self) -> List[Tuple[int, str]]:
        """The manifest's label map as ``[(label, name)]`` (empty without a manifest)."""

    @property
    def sample_labels(self) -> np.ndarray:
        """Every sample's label: read-only int64 ``[num_samples]`` in global sample order (a mixture's labels
        remapped as its batches' are), read from each record's label feature without decoding an image (-1 for
        a record without one); what ``torch.utils.data.WeightedRandomSampler`` and class-balanced sampling
        need. Read on first use (one pass over the records' bytes on ``threads`` threads; a remote dataset's
        shards are downloaded), then kept. DataLossError naming the record for a corrupt one or a label that
        is not int64."""

    def sample(self, index: int, epoch: int = 0) -> Tuple[Any, ...]:
        """One sample by global number, decoded on the calling thread with the GIL released: ``(image, label)``
        (``(image, label, mask)`` with ``masks=True``; ``boxes`` float32 ``[N, 4]`` and ``box_labels`` int64
        ``[N]`` after those with ``boxes=True``), the image in the batches' layout and dtype without the
        batch axis, its augmentation drawn from ``(seed, epoch, index)``. What ``libshard.torch.ShardImages``
        builds on.

        Args:
            index: the global sample number, 0..num_samples-1 (shards in order, records in file order).
            epoch: the epoch whose augmentation to apply. Default: 0.

        Raises:
            IndexError: an index out of range. DataLossError: a record that does not decode.
        """

    def epoch_samples(self, epoch: int, consumed: int = 0) -> npt.NDArray[np.uint64]:
        """This rank's global sample numbers in ``epoch`` from the epoch's global offset ``consumed`` on: its
        batches one after another (before the worker split), as a sampler yields them
        (``libshard.torch.ElasticSampler``)."""

    @property
    def skipped(self) -> List[Dict[str, Any]]:
        """Records skipped with ``on_error="skip"``, each once (those of a loaded state included):
        ``[{"sample", "file", "record", "offset", "reason"}]``."""

    @property
    def batch_shape(self) -> Tuple[int, int, int]:
        """Bytes of one full batch: ``(image bytes, labels, mask bytes)``."""

    @property
    def num_samples(self) -> int:
        """Samples in the dataset (all ranks and workers; before drop_last)."""

    @property
    def normalization(self) -> Tuple[List[float], List[float]]:
        """``(mean, std)``: the per-channel values the decode threads apply, ``mean="dataset"`` /
        ``std="dataset"`` resolved from the manifests; ``([], [])`` without normalisation."""


class EpochIterator:
    """One pass over an epoch of a :class:`Loader` (what ``iter(loader)`` returns)."""

    def __iter__(self) -> "EpochIterator":
        """The iterator itself."""

    def __next__(self) -> Union[Batch, SegmentationBatch]:
        """The next batch of the pass; StopIteration at the end of the epoch. RuntimeError when a later
        ``iter(loader)`` replaced this pass."""


# ShardDataset.targets' list (python/libshard/torch.py).
def _labels_list(labels: npt.NDArray[np.int64]) -> List[int]:
    """``labels.tolist()`` built with one int object a distinct value (class labels), not one an item."""

# The typed calls behind libshard.convert / verify / inspect / report (python/libshard/tools.py, whose public
# functions and result types are documented there).
def _convert_flags() -> List[Tuple[str, bool, bool, bool]]:
    """The options of ``shard convert``: (name without dashes, takes_value, positional, repeatable) for each."""

def _convert(options: Sequence[Tuple[str, Union[str, bytes]]], progress: Optional[Any] = None) -> Dict[str, Any]:
    """``shard convert`` with the flags ``options``, (name without dashes, text) pairs (a switch's text "true"),
    without the GIL; ``progress`` gets a dict of ConvertProgress's fields at most every 100 ms, on the calling
    thread. ValueError for a usage error (the program's message)."""

def _verify(paths: Sequence[Union[str, bytes]], manifest: Union[str, bytes], no_manifest: bool, decode: bool,
            records_only: bool, no_index: bool, allow_empty: bool, compression: str, threads: int,
            max_pixels: Optional[int], max_record_length: Optional[int]) -> Tuple[bytes, int]:
    """The library's verify call without the GIL: (the ``shard verify --json`` document, the same text the
    program prints, as UTF-8 JSON; the program's exit status). ValueError for a usage error (the program's
    message)."""

def _inspect(file: Union[str, bytes], show: int, compression: str) -> bytes:
    """``remote::InspectObject`` without the GIL (an ``s3://`` / ``https://`` object staged first): the
    ``shard inspect --json`` document, the same text the program prints, as UTF-8 JSON. ValueError for an
    unreadable file or a bad option (the program's message)."""

def _report(dataset: Union[str, bytes], output: Union[str, bytes], thumbnails: Optional[int],
            max_classes: Optional[int], thumbnail_size: Optional[int], seed: Optional[int], verify: bool,
            decode: bool, threads: int) -> str:
    """``remote::WriteDatasetReport`` without the GIL (an ``s3://`` / ``https://`` dataset staged first): the
    path of the page written. ValueError when it cannot be written (the program's message)."""

def _is_mixture_file(path: Union[str, bytes]) -> bool:
    """Whether the JSON file ``path`` says it is a mixture (``libshard.mixture/1``); an unreadable file is not."""

# Sample packs and merge (python/libshard/_samples.py: write_samples, convert_samples, merge).
class _SamplePartWriter:
    """``convert::SamplePartWriter``: partition ``part`` of ``parts`` of the sample pack in ``folder``."""
    def __init__(self, folder: Union[str, bytes], name: str, part: int, parts: int,
                 sync: bool = True) -> None: ...
    def add(self, key: str, image: Any, split: str = "", label: int = -1, class_name: str = "",
            mask: Optional[Any] = None) -> None:
        """Appends one sample (its image's bytes, its mask's PNG bytes or None); ValueError naming the sample for a
        bad key, split or label."""
    def commit(self) -> None:
        """Closes the partition's files and renames them into place (the .samples file last)."""
    def abandon(self) -> None:
        """Drops an uncommitted partition: its temporary files are removed."""
    @property
    def samples(self) -> int: ...

def _png_of_array(array: npt.NDArray[np.uint8]) -> bytes:
    """Lossless PNG bytes of a uint8 (H, W) or (H, W, C) array, C 1..4."""

def _merge(output: Union[str, bytes]) -> Tuple[List[str], str, int, int]:
    """``shard merge`` of a folder or s3:// prefix: (problems, manifest path or URL, tasks, shards)."""
