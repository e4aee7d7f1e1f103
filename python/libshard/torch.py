"""PyTorch front end: :class:`ShardDataset`, a ``torch.utils.data.IterableDataset`` of whole batches.

    import torch, libshard.torch
    ds = libshard.torch.ShardDataset("out/manifest.json", 256, split="train", shuffle=True, seed=0,
                                     image_size=(224, 224), augment="random-resized-crop",
                                     layout="NCHW", dtype="float32",
                                     mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))
    dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=0)   # the Loader's threads decode
    for epoch in range(start_epoch, epochs):
        ds.set_epoch(epoch)
        for step, (images, labels) in enumerate(dl):   # float32 [B, 3, 224, 224], int64 [B]
            ...
            state = ds.state_dict(batch=step + 1)      # resume: ds.load_state_dict(state)

Each item is a :class:`libshard.Batch` ``(images, labels)`` (:class:`libshard.SegmentationBatch` with
``masks=True``) of torch tensors. Decoding, layout, dtype and normalisation happen in the Loader's C++ threads,
and no copy is added on the way to the training loop:

* ``num_workers=0``: the tensors are the Loader's own batch memory (``torch.from_numpy``), recycled once the
  training loop lets go of a batch.
* ``num_workers=K``: each worker decodes into a segment of shared-memory batch slots that lives as long as the
  dataset object, and the trainer maps it once; a batch crosses as a slot number, and its slot is reused only
  after the trainer has let go of every tensor of that batch. With no slot free (a loop that keeps batches),
  batches go in fresh memory, as torch sends any tensor: never overwritten data.

With ``device="cuda"`` the batches arrive on the GPU instead: decoded as uint8 into page-locked slots, copied
and converted to ``dtype`` / ``mean`` / ``std`` / ``layout`` / ``memory_format`` on a side stream that the loop's
stream waits on (:mod:`libshard._device`; docs/gpu.md). Page-locking of worker segments goes through one owner,
:mod:`libshard._cuda_host`, and the process's segments through :mod:`libshard._segments`.

docs/reader.md has the details and figures.
"""
import os
import secrets
import warnings
import weakref
from typing import Any, Dict, Iterator, Optional, Sequence, Tuple, Union

import numpy as np
import torch
import torch.utils.data

from . import _device, _libshard, _segments
from ._detection import _BOX_FIELDS, detection_targets
from ._distributed import default_rank_and_world_size
from ._images import ShardImages
from ._libshard import Batch, KeyedBatch, KeyedSegmentationBatch, Loader, Order, SegmentationBatch, _SlotSet
from ._resume import _IDENTITY, _check_state, _consumed_after, _epoch_start
from ._samplers import ElasticSampler, MixtureSampler
from ._skip_log import _SKIPS

__all__ = ["ElasticSampler", "MixtureSampler", "ShardDataset", "ShardImages", "default_rank_and_world_size",
           "detection_targets"]

# Loader arguments that ShardDataset sets itself.
_OWN = ("rank", "world_size", "worker", "num_workers", "shuffle", "seed", "drop_last", "buffers", "slots")


def _fields(masks: bool, keys: bool = False, boxes: bool = False):
    """The batch named tuple of these fields (the Loader's: images, labels[, masks][, boxes...][, keys])."""
    return getattr(_libshard, ("Keyed" if keys else "") + ("Segmentation" if masks else "") +
                   ("Detection" if boxes else "") + "Batch")


def _to_torch(batch):
    """A Loader batch (numpy arrays, and `keys` with extras=) as the same named tuple of torch tensors."""
    fields = batch._fields
    return type(batch)(*(value if name == "keys" else torch.from_numpy(value) for name, value in zip(fields, batch)))


def _rebuild_shared(path: str, slot: int, token: int, spec: Tuple, uid: str, pin: bool, keys=None,
                    device: Optional[Tuple] = None, skipped=None, boxes=None):
    """Trainer side of a batch sent by slot: tensors over the mapped slot, freed when the last one dies (with
    ``device``: that batch on the device, the slot held until its copy is done)."""
    _segments.TRAINER.mark_from_workers(uid)
    _SKIPS.note(uid, skipped)
    mapped = _segments.TRAINER.segment(path, pin)
    seg = mapped.slots
    seg.mark_received(slot, token)
    whole = np.frombuffer(seg.lease(slot, token), dtype=np.uint8)  # its base is the lease
    if mapped.registration is not None:
        whole = np.asarray(_segments.Held(whole, mapped.registration))  # registered while it lives
    image_dtype, image_shape, labels_at, masks_at, masks_shape = spec
    image_dtype = np.dtype(image_dtype)
    n = image_shape[0]
    images = whole[:int(np.prod(image_shape)) * image_dtype.itemsize].view(image_dtype).reshape(image_shape)
    tensors = [torch.from_numpy(images), torch.from_numpy(whole[labels_at:labels_at + 8 * n].view(np.int64))]
    if masks_at is not None:
        tensors.append(torch.from_numpy(whole[masks_at:masks_at + int(np.prod(masks_shape))].reshape(masks_shape)))
    if boxes is not None:
        tensors.extend(boxes)
    if keys is not None:
        tensors.append(keys)
    batch = _fields(masks_at is not None, keys is not None, boxes is not None)(*tensors)
    return _segments.TRAINER.feed(uid, device)(batch) if device is not None else batch


def _rebuild_plain(tensors: Tuple[torch.Tensor, ...], uid: str, keys=None, device: Optional[Tuple] = None,
                   skipped=None, boxes=None):
    _segments.TRAINER.mark_from_workers(uid)
    _SKIPS.note(uid, skipped)
    batch = _fields(len(tensors) == 3, keys is not None, boxes is not None)(
        *(tensors + (tuple(boxes) if boxes is not None else ()) + ((keys,) if keys is not None else ())))
    return _segments.TRAINER.feed(uid, device)(batch) if device is not None else batch


class _WorkerBatch:
    """What a DataLoader worker yields: pickled to the trainer as a slot reference (or, for a batch outside
    the slots, as plain tensors). torch's default_convert passes it through untouched."""
    __slots__ = ("batch", "path", "uid", "pin", "device", "skipped")

    def __init__(self, batch, path: Optional[str], uid: str, pin: bool, device: Optional[Tuple], skipped=None):
        self.batch, self.path, self.uid, self.pin, self.device = batch, path, uid, pin, device
        self.skipped = skipped  # records the worker skipped since its last batch (on_error="skip")

    def __reduce__(self):
        fields = self.batch._fields
        images, labels = self.batch.images, self.batch.labels
        masks = "masks" in fields
        keys = self.batch.keys if "keys" in fields else None
        # Boxes are small: pickled as tensors beside the slot reference.
        boxes = tuple(torch.from_numpy(getattr(self.batch, f)) for f in _BOX_FIELDS) if "boxes" in fields else None
        owner = images.base
        if self.path is not None and getattr(owner, "slot", -1) >= 0:
            owner.hand_off()
            labels_at = labels.ctypes.data - images.ctypes.data
            masks_at = (self.batch.masks.ctypes.data - images.ctypes.data) if masks else None
            spec = (images.dtype.str, images.shape, labels_at, masks_at, self.batch.masks.shape if masks else None)
            return (_rebuild_shared, (self.path, owner.slot, owner.token, spec, self.uid, self.pin, keys,
                                      self.device, self.skipped, boxes))
        arrays = (images, labels) + ((self.batch.masks,) if masks else ())
        return (_rebuild_plain, (tuple(torch.from_numpy(a) for a in arrays), self.uid, keys, self.device, self.skipped,
                                 boxes))


def _refuse_collation(batch, *, collate_fn_map=None):
    raise TypeError("libshard: a DataLoader is collating libshard batches into a batch of %d batches (each item of "
                    "ShardDataset is already a whole batch, which would come out as [%d, B, ...]): write "
                    "DataLoader(ds, batch_size=None, ...)" % (len(batch), len(batch)))


def _register_collation_refusal() -> None:
    """DataLoader's default auto-collation (batch_size=1 unless told otherwise) over ShardDataset's batches
    would stack them silently into [1, B, C, H, W]: torch's collate map sends libshard batch types here."""
    try:
        from torch.utils.data._utils.collate import default_collate_fn_map
    except ImportError:  # torch before 1.13: no collate map to extend
        return
    for t in (Batch, SegmentationBatch, KeyedBatch, KeyedSegmentationBatch, _WorkerBatch) + tuple(
            _fields(m, k, True) for m in (False, True) for k in (False, True)):
        default_collate_fn_map.setdefault(t, _refuse_collation)


_register_collation_refusal()


class ShardDataset(torch.utils.data.IterableDataset):
    """Batches of torch tensors from shards, split by data-parallel rank and by DataLoader worker.

    Use it with ``DataLoader(ds, batch_size=None, num_workers=K)``: the dataset yields whole batches.
    ``num_workers=0`` is the fastest setting: the Loader's own C++ threads (``threads=``) decode, and the
    batches are the Loader's memory. With workers, batches cross processes in shared memory without a copy.

    Partitioning: the epoch's global sample order (a function of ``seed`` and the epoch) is consumed in global
    batches of ``batch_size * world_size`` samples, rank ``r`` taking the ``r``-th ``batch_size`` slice of each
    (see ``drop_last``; docs/reader.md); this rank's batches are then dealt round-robin to the DataLoader's
    workers (``torch.utils.data.get_worker_info()``), worker ``w`` taking batches ``w, w + K, ...``. The
    DataLoader, which takes one batch from each worker in turn, therefore yields the rank's batches in order,
    and one epoch over K workers yields each sample of the rank exactly once.

    Epochs and resume: call :meth:`set_epoch` before each epoch (it reaches persistent workers too); iterating
    again without it repeats the same epoch. :meth:`state_dict` / :meth:`load_state_dict` save and restore the
    global position (the samples all ranks have consumed), which another ``world_size``, ``rank``,
    ``batch_size`` or number of DataLoader workers may load; see their docs for the loop that resumes exactly.

    The Loader is created on first iteration inside each worker process, so the dataset pickles (for
    ``spawn``) as its arguments only.
    """

    def __init__(self, sources: Union[str, Sequence[str]], batch_size: int, *, rank: Optional[int] = None,
                 world_size: Optional[int] = None, shuffle: bool = False, seed: int = 0, drop_last: bool = False,
                 pin_memory: bool = False, worker_slots: int = 8, device: Any = None, memory_format: Any = None,
                 **loader_options: Any) -> None:
        """
        Args:
            sources: shard files, folders, globs or a ``manifest.json`` (with ``split=``), or ``s3://`` /
                ``https://`` locations (``cache_dir=``, ``cache_limit=``), as for ``Loader``. Each worker opens
                its own Loader, which downloads only the shards its part of the epoch reads, ahead of its
                order; the cache downloads each shard once per node. ``cache_limit=`` bounds the shared cache
                folder while each worker plans only for its own shards: give it room for every worker's.
            batch_size: samples per batch.
            rank: this process's data-parallel rank. Default: ``torch.distributed.get_rank()`` when initialised,
                else the ``RANK`` environment variable, else 0.
            world_size: number of data-parallel ranks. Default: ``torch.distributed.get_world_size()`` when
                initialised, else ``WORLD_SIZE``, else 1.
            shuffle: a new full permutation each epoch (from ``seed`` and the epoch). Default: False.
            seed: shuffle and augmentation seed; must be the same on every rank. Default: 0.
            drop_last: False: the order is padded to a multiple of ``world_size`` by repeating its first samples,
                and the last global batch may be short (cut evenly among the ranks). True: the incomplete last
                global batch (fewer than ``batch_size * world_size`` samples) is dropped; ranks' samples are
                disjoint.
            pin_memory: hand out batches in page-locked memory where CUDA is available, so that
                ``x.cuda(non_blocking=True)`` needs no staging copy; without CUDA a warning, as DataLoader's
                ``pin_memory`` gives, and ordinary memory. Default: False.
            worker_slots: shared-memory batch slots per DataLoader worker (each one batch); a worker whose
                slots are all in use (batches the trainer still holds, or in flight) sends fresh memory
                instead. Default: 8 (the Loader's ring, DataLoader's prefetch and two held by the loop).
            device: ``"cuda"`` (``"cuda:N"``, a ``torch.device``): batches arrive on the device, already in
                ``dtype`` (uint8, float32, float16 or bfloat16) with ``mean`` / ``std`` and ``layout`` /
                ``memory_format`` -- the Loader decodes uint8 into page-locked slots, and each batch is copied and
                converted on a side stream that the consumer's current stream waits on (docs/gpu.md). Leave
                DataLoader's own ``pin_memory`` off then. ``"cpu"`` runs the same conversion on the CPU. ValueError
                for ``"cuda"`` without CUDA. Default: None (the Loader's batches as they are).
            memory_format: with ``device=``: ``torch.channels_last`` gives NCHW-shaped batches with NHWC strides
                (what a channels_last model takes, with no transpose at all). Default: contiguous.
            **loader_options: the other keyword arguments of ``libshard.Loader`` (``image_size``, ``augment``,
                ``layout``, ``dtype``, ``mean``, ``std``, ``threads``, ``split``, ``keys``, ``masks``, ``boxes``,
                ``dct_scale``, ...).
        """
        super().__init__()
        for k in _OWN:
            if k in loader_options:
                raise ValueError("%s: not a Loader option here (ShardDataset sets it)" % k)
        if (rank is None) != (world_size is None):
            raise ValueError("rank and world_size: give both or neither")
        if isinstance(worker_slots, bool) or not isinstance(worker_slots, int) or not 1 <= worker_slots <= 1024:
            raise ValueError("worker_slots: expected an integer in 1..1024, got %r" % (worker_slots,))
        probe_options, itemsize = dict(loader_options), 1
        self._device: Optional[Tuple] = None  # DeviceFeed's arguments with device=
        if device is not None:
            self._device, loader_options, probe_options, itemsize = _device.device_options(
                device, memory_format, loader_options)
        elif memory_format is not None:
            raise ValueError("memory_format: only with device= (the Loader's own batches are contiguous)")
        if rank is None:
            rank, world_size = default_rank_and_world_size()
        self.sources = sources
        self.batch_size = batch_size
        self.rank = int(rank)
        self.world_size = int(world_size)
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        self.pin_memory = bool(pin_memory) or (self._device is not None and self._device[0].startswith("cuda"))
        self.worker_slots = worker_slots
        self.loader_options = dict(loader_options)
        self._epoch = 0
        self._start = 0            # samples of the epoch's global order consumed where the current pass started
        self._finished = False     # the last pass in this process ran to the epoch's end
        self._resume: Optional[Tuple[int, int]] = None  # (epoch, consumed) from load_state_dict, until used
        self._yielded = 0          # batches yielded in this process during the current iteration
        # [epoch, start]: how set_epoch() / load_state_dict() reach workers, persistent ones too.
        self._shared = torch.zeros(2, dtype=torch.int64).share_memory_()
        self._uid = secrets.token_hex(6)
        self._owner_pid = os.getpid()
        self._loader: Optional[Loader] = None
        self._targets: Optional[list] = None
        self._loader_split: Optional[Tuple[int, int]] = None
        self._pinned: Optional[Any] = None  # num_workers=0 with pin_memory: the pinned _SlotSet
        if pin_memory and not torch.cuda.is_available():
            warnings.warn("pin_memory=True but CUDA is not available: batches are in ordinary memory")
        # Opens the sources now (errors at construction, not in a worker); a Loader decodes nothing before
        # its first batch, and allocates no batch memory.
        probe = self._make_loader(worker=0, num_workers=1, threads=1, prefetch=1,
                                  **{k: v for k, v in probe_options.items() if k not in ("threads", "prefetch")})
        self._len = len(probe)
        # What defines the epoch's global order: a saved state must match it (Loader.load_state_dict).
        self._identity = {k: v for k, v in probe.state_dict().items() if k in _IDENTITY}
        # The partition arithmetic of this rank (the Loader's rule; picklable, made from the sample count).
        self._order = Order(self._identity["samples"], batch_size, rank=self.rank, world_size=self.world_size,
                            drop_last=drop_last, seed=self._identity["seed"], order=self._identity["order"],
                            block_size=self._identity["block_size"], window_blocks=self._identity["window_blocks"])
        self.num_samples = probe.num_samples
        self.labels = probe.labels
        image_bytes, labels, mask_bytes = probe.batch_shape
        self._batch_shape = (image_bytes // itemsize, labels, mask_bytes)  # with device=: the uint8 batch
        if self._device is not None:
            self._device = _device.resolve(self._device, probe.normalization)  # mean="dataset" as the Loader reads it
        probe.close()
        _segments.remove_stale_segments()
        weakref.finalize(self, _segments.remove_segments, self._owner_pid, self._uid)

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state["_loader"] = None  # not picklable; each process makes its own
        state["_loader_split"] = None
        state["_pinned"] = None
        return state

    def _make_loader(self, worker: int, num_workers: int, **options: Any) -> Loader:
        return Loader(self.sources, self.batch_size, rank=self.rank, world_size=self.world_size,
                      shuffle=self.shuffle, seed=self.seed, drop_last=self.drop_last, worker=worker,
                      num_workers=num_workers, **options)

    @property
    def skipped(self) -> list:
        """With ``on_error="skip"``: the records skipped so far, ``[{file, record, offset, reason}]``, each
        once, gathered from DataLoader workers too (each arrives with the first batch a worker sends after
        skipping it). Each file also gives one warning."""
        return _SKIPS.records(self._uid)

    @property
    def targets(self) -> list:
        """Every sample's label, ``targets[i]`` that of global sample ``i`` (all ranks'), as ``ImageFolder.targets``:
        read once without decoding an image, from the shards' labels sidecars where ``shard convert`` wrote them
        (:attr:`libshard.Loader.sample_labels`), e.g. for class weights."""
        if self._targets is None:
            with self._make_loader(worker=0, num_workers=1, prefetch=1, **self.loader_options) as loader:
                self._targets = _libshard._labels_list(loader.sample_labels)
        return self._targets

    def __len__(self) -> int:
        """Batches per epoch for this rank: the total over all DataLoader workers (so ``len(DataLoader)`` is
        right); one worker yields about ``len(ds) / num_workers`` of them."""
        return self._len

    def _publish(self) -> None:
        self._shared[0] = self._epoch
        self._shared[1] = self._start

    def set_epoch(self, epoch: int) -> None:
        """The next iteration yields epoch ``epoch`` (its order and its augmentation) from its first batch --
        unless ``epoch`` is the epoch of a :meth:`load_state_dict` not yet resumed, which then continues at
        the loaded batch (so the usual ``for epoch in range(start, n): ds.set_epoch(epoch)`` loop resumes
        exactly). Reaches DataLoader workers, persistent ones too."""
        self._epoch, self._start, self._resume = _epoch_start(epoch, self._resume)
        self._yielded = 0
        self._finished = False
        _segments.TRAINER.reset_from_workers(self._uid)
        self._publish()

    def state_dict(self, batch: Optional[int] = None) -> Dict[str, Any]:
        """The global position to resume from: ``{"epoch", "consumed", "seed", "order", "block_size",
        "window_blocks", "permutation", "samples", "dataset", "rank", "world_size", "batch_size", "skipped"}`` -- ``consumed``
        is the number of samples of the epoch's global order all ranks have consumed, the same on every rank at
        the same step. Any ``world_size``, ``rank``, ``batch_size`` or number of DataLoader workers may load it
        (docs/reader.md, "Changing the number of GPUs").

        Args:
            batch: batches consumed in the current pass over the DataLoader (``step + 1`` in
                ``for step, b in enumerate(dl)``), counted from where the pass started (a resumed pass
                included): what the loop received, not what workers decoded ahead. Default: the batches this
                object yielded in this process (``num_workers=0``). With DataLoader workers the batches are
                produced in the worker processes, so ``batch=`` is required there (ValueError otherwise).
        """
        if batch is None:
            if _segments.TRAINER.from_workers(self._uid):
                raise ValueError("state_dict: batches come from DataLoader workers here; pass batch=, the number "
                                 "of batches of this pass the loop has consumed (step + 1)")
            batch = self._yielded
        consumed = _consumed_after(self._order, self._start, batch)
        return dict(self._identity, epoch=self._epoch, consumed=consumed, rank=self.rank,
                    world_size=self.world_size, batch_size=self.batch_size, skipped=self.skipped)

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """The next iteration continues at ``state``'s global position: the samples of the epoch not yet
        consumed, cut anew among this dataset's ranks and workers (with the global batch unchanged, the very
        batches of the run that saved it). A following ``set_epoch(state["epoch"])`` keeps that position (the
        resume loop); ``set_epoch`` of another epoch starts that epoch from its start. ValueError naming the
        field for a state of another dataset, seed or order."""
        self._epoch, self._start = _check_state(self._identity, state)
        self._resume = (self._epoch, self._start)
        self._yielded = 0
        self._finished = False
        _SKIPS.note(self._uid, state.get("skipped") or [], warn=False)
        _segments.TRAINER.reset_from_workers(self._uid)
        self._publish()

    # --- iteration -----------------------------------------------------------------------------------------

    def _worker_segment(self, worker_id: int):
        """This worker's slot segment (made by the first worker process of this id, reused by later ones: its
        pages stay in memory, so a non-persistent worker pays no page faults at an epoch's start)."""
        path = os.path.join(_segments.SEGMENT_DIR, "%s%d-%s-w%d.slots"
                            % (_segments.SEGMENT_PREFIX, self._owner_pid, self._uid, worker_id))
        seg = _segments.WORKER.segments.get(path)
        if seg is not None:
            return path, seg
        image_bytes, labels, mask_bytes = self._batch_shape
        try:
            try:
                seg = _SlotSet.open(path)
                if seg.shape != (image_bytes, labels, mask_bytes):
                    raise ValueError("%s: made for another batch shape" % path)
                seg.reclaim_orphans()
            except FileNotFoundError:
                seg = _SlotSet.create(path, self.worker_slots, image_bytes, labels, mask_bytes)
        except OSError as e:
            warnings.warn("libshard: no shared-memory batch slots (%s); batches go through torch's own sharing, "
                          "which copies each one" % e)
            return None, None
        _segments.WORKER.segments[path] = seg
        return path, seg

    def _pinned_slots(self):
        if self._pinned is None:
            image_bytes, labels, mask_bytes = self._batch_shape
            size = _SlotSet.slot_bytes_for(image_bytes, labels, mask_bytes)
            buffers = [torch.empty(size, dtype=torch.uint8, pin_memory=True).numpy()
                       for _ in range(self.worker_slots)]
            self._pinned = _SlotSet.from_buffers(buffers, image_bytes, labels, mask_bytes)
        return self._pinned

    def __iter__(self) -> Iterator[Tuple[torch.Tensor, ...]]:
        info = torch.utils.data.get_worker_info()
        w, k = (info.id, info.num_workers) if info is not None else (0, 1)
        if info is not None:
            # A worker reads what set_epoch() / load_state_dict() last said in the trainer.
            self._epoch, self._start = int(self._shared[0]), int(self._shared[1])
        elif self._finished:
            # Iterating again after a whole pass, without set_epoch(): the same epoch from its start.
            self._resume = None
            self._start = 0
            self._finished = False
            self._publish()
        epoch, start = self._epoch, self._start
        # The rest of the epoch from `start` is cut anew for this rank, and its batches dealt to the workers
        # round-robin: the DataLoader, asking worker 0, 1, ... in turn, gets them in order.
        path, slots = None, None
        if info is not None:
            path, slots = self._worker_segment(w)
        elif self.pin_memory and torch.cuda.is_available():
            slots = self._pinned_slots()
        if self._loader is None or self._loader_split != (w, k):
            self._loader = None
            options = dict(self.loader_options)
            if slots is not None:
                options["slots"] = slots
            self._loader = self._make_loader(worker=w, num_workers=k, **options)
            self._loader_split = (w, k)
            self._skips_sent = 0  # of self._loader.skipped
        loader = self._loader
        self._yielded = 0
        if self._order.rank_batches(start) <= w:
            return  # no batch of the rest is this worker's
        loader.load_state_dict(dict(self._identity, epoch=epoch, consumed=start))
        skip = self.loader_options.get("on_error") == "skip"
        for batch in loader:
            self._yielded += 1
            new = None
            if skip:  # what the loader skipped since the last batch, to the dataset (in the trainer)
                new = loader.skipped[self._skips_sent:]
                self._skips_sent += len(new)
            if info is not None:
                yield _WorkerBatch(batch, path, self._uid, self.pin_memory, self._device, new)
            elif self._device is not None:
                _SKIPS.note(self._uid, new)
                yield _segments.TRAINER.feed(self._uid, self._device)(_to_torch(batch))
            else:
                _SKIPS.note(self._uid, new)
                yield _to_torch(batch)
        if info is None:
            # A finished pass in this process: state_dict() now says "the epoch's end", and iterating again
            # without set_epoch() repeats this epoch from its start.
            self._resume = None
            self._finished = True
