"""PyTorch front end: :class:`ShardDataset`, a ``torch.utils.data.IterableDataset`` of whole batches.

    import torch, libshard.torch
    ds = libshard.torch.ShardDataset("out/manifest.json", 256, split="train", shuffle=True, seed=0,
                                     image_size=(224, 224), augment="random-resized-crop",
                                     layout="NCHW", dtype="float32",
                                     mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))
    dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=4, pin_memory=True)
    for epoch in range(epochs):
        ds.set_epoch(epoch)
        for images, labels in dl:   # float32 [B, 3, 224, 224], int64 [B]
            ...

Each item is a batch ``(images, labels)`` (``(images, labels, masks)`` with ``masks=True``) of torch tensors made
with ``torch.from_numpy`` from the Loader's arrays: decoding, layout, dtype and normalisation happen in the
Loader's C++ threads, and no copy is added. docs/reader.md has the details.
"""
import os
from typing import Any, Dict, Iterator, Optional, Sequence, Tuple, Union

import torch
import torch.utils.data

from ._libshard import Loader

__all__ = ["ShardDataset", "default_rank_and_world_size"]

# Loader arguments that ShardDataset sets itself.
_OWN = ("rank", "world_size", "worker", "num_workers", "shuffle", "seed", "drop_last")


def default_rank_and_world_size() -> Tuple[int, int]:
    """The data-parallel ``(rank, world_size)``: ``torch.distributed``'s when it is initialised, else the
    ``RANK`` and ``WORLD_SIZE`` environment variables (as set by torchrun), else ``(0, 1)``."""
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        try:
            return int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        except ValueError:
            raise ValueError("RANK=%r, WORLD_SIZE=%r: expected integers"
                             % (os.environ["RANK"], os.environ["WORLD_SIZE"])) from None
    return 0, 1


class ShardDataset(torch.utils.data.IterableDataset):
    """Batches of torch tensors from shards, split by data-parallel rank and by DataLoader worker.

    Use it with ``DataLoader(ds, batch_size=None, num_workers=K)``: the dataset yields whole batches.

    Partitioning: the epoch's sample order (a function of ``seed`` and the epoch) is cut into ``world_size``
    parts as by ``DistributedSampler`` (see ``drop_last``); this rank's batches are then dealt round-robin to
    the DataLoader's workers (``torch.utils.data.get_worker_info()``), worker ``w`` taking batches
    ``w, w + K, ...``. The DataLoader, which takes one batch from each worker in turn, therefore yields the
    rank's batches in order, and one epoch over K workers yields each sample of the rank exactly once.

    Epochs: as with ``DistributedSampler``, call :meth:`set_epoch` before each epoch; iterating again without
    it repeats the same epoch. (With ``persistent_workers=True`` the workers keep the epoch they started with:
    leave it off.)

    The Loader is created on first iteration inside each worker process, so the dataset pickles (for
    ``spawn``) as its arguments only.
    """

    def __init__(self, sources: Union[str, Sequence[str]], batch_size: int, *, rank: Optional[int] = None,
                 world_size: Optional[int] = None, shuffle: bool = False, seed: int = 0, drop_last: bool = False,
                 **loader_options: Any) -> None:
        """
        Args:
            sources: shard files, folders, globs or a ``manifest.json`` (with ``split=``), or ``s3://`` /
                ``https://`` locations (``cache_dir=``, ``cache_limit=``), as for ``Loader``. Each worker opens
                its own Loader; the cache downloads each shard once per node.
            batch_size: samples per batch.
            rank: this process's data-parallel rank. Default: ``torch.distributed.get_rank()`` when initialised,
                else the ``RANK`` environment variable, else 0.
            world_size: number of data-parallel ranks. Default: ``torch.distributed.get_world_size()`` when
                initialised, else ``WORLD_SIZE``, else 1.
            shuffle: a new full permutation each epoch (from ``seed`` and the epoch). Default: False.
            seed: shuffle and augmentation seed; must be the same on every rank. Default: 0.
            drop_last: False: every rank gets ``ceil(n / world_size)`` samples (the order padded by repeating
                its first samples) and its last batch may be short. True: ``floor(n / world_size)`` samples
                each, disjoint across ranks, short last batch dropped.
            **loader_options: the other keyword arguments of ``libshard.Loader`` (``image_size``, ``augment``,
                ``layout``, ``dtype``, ``mean``, ``std``, ``threads``, ``split``, ``keys``, ``masks``, ...).
                ``buffers=`` only makes sense with ``num_workers=0`` (the arrays are reused batch after batch).
        """
        super().__init__()
        for k in _OWN:
            if k in loader_options:
                raise ValueError("%s: not a Loader option here (ShardDataset sets it)" % k)
        if (rank is None) != (world_size is None):
            raise ValueError("rank and world_size: give both or neither")
        if rank is None:
            rank, world_size = default_rank_and_world_size()
        self.sources = sources
        self.batch_size = batch_size
        self.rank = int(rank)
        self.world_size = int(world_size)
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        self.loader_options = dict(loader_options)
        self._epoch = 0
        self._start_batch = 0   # where the next iteration starts (load_state_dict)
        self._yielded = 0       # batches yielded in this process during the current iteration
        self._loader: Optional[Loader] = None
        self._loader_split: Optional[Tuple[int, int]] = None
        # Opens the sources now (errors at construction, not in a worker) and counts the rank's batches with
        # a loader of 1x1 uint8 images that decodes nothing.
        probe_options = {k: v for k, v in self.loader_options.items()
                         if k in ("order", "io", "verify_crc", "split", "keys", "cache_dir", "cache_limit")}
        probe = self._make_loader(worker=0, num_workers=1, image_size=(1, 1), threads=1, prefetch=0,
                                  **probe_options)
        self._len = len(probe)
        self.num_samples = probe.num_samples
        self.labels = probe.labels

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state["_loader"] = None  # not picklable; each process makes its own
        state["_loader_split"] = None
        return state

    def _make_loader(self, worker: int, num_workers: int, **options: Any) -> Loader:
        return Loader(self.sources, self.batch_size, rank=self.rank, world_size=self.world_size,
                      shuffle=self.shuffle, seed=self.seed, drop_last=self.drop_last, worker=worker,
                      num_workers=num_workers, **options)

    def __len__(self) -> int:
        """Batches per epoch for this rank: the total over all DataLoader workers (so ``len(DataLoader)`` is
        right); one worker yields about ``len(ds) / num_workers`` of them."""
        return self._len

    def set_epoch(self, epoch: int) -> None:
        """The next iteration yields epoch ``epoch`` (its order and its augmentation) from its first batch."""
        if epoch < 0:
            raise ValueError("epoch: must be >= 0, got %d" % epoch)
        self._epoch = int(epoch)
        self._start_batch = 0

    def state_dict(self, batch: Optional[int] = None) -> Dict[str, Any]:
        """The position to resume from: ``{"epoch", "batch", "seed", "rank", "world_size", "batches_per_epoch"}``.

        Args:
            batch: batches of this epoch already consumed. Default: the number this object has yielded in the
                current iteration in this process (right for ``num_workers=0``). With DataLoader workers the
                iteration runs in the worker processes: pass the training loop's step within the epoch.
        """
        if batch is None:
            batch = self._start_batch + self._yielded
        if not 0 <= batch <= self._len:
            raise ValueError("batch: %d is outside 0..%d (batches per epoch)" % (batch, self._len))
        return {"epoch": self._epoch, "batch": int(batch), "seed": self.seed, "rank": self.rank,
                "world_size": self.world_size, "batches_per_epoch": self._len}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """The next iteration continues at ``state``'s position: the same remaining batches with the same
        contents as the run that saved it (set_epoch() afterwards starts over at another epoch)."""
        for k in ("epoch", "batch", "seed", "rank", "world_size", "batches_per_epoch"):
            if k not in state:
                raise ValueError('state: lacks "%s"' % k)
        if (state["seed"], state["rank"], state["world_size"], state["batches_per_epoch"]) != \
                (self.seed, self.rank, self.world_size, self._len):
            raise ValueError("state: saved by a dataset with another seed, rank, world_size or batch count")
        if not 0 <= state["batch"] <= self._len:
            raise ValueError("state: batch %d is outside 0..%d" % (state["batch"], self._len))
        self._epoch = int(state["epoch"])
        self._start_batch = int(state["batch"])

    def __iter__(self) -> Iterator[Tuple[torch.Tensor, ...]]:
        info = torch.utils.data.get_worker_info()
        w, k = (info.id, info.num_workers) if info is not None else (0, 1)
        n = self._start_batch
        # The DataLoader asks worker 0, 1, ... in turn from here: worker w must yield the rank's batches
        # n + w, n + w + k, ..., which are loader worker j's batches from index (n + w) // k on.
        j = (n + w) % k
        if self._loader is None or self._loader_split != (j, k):
            self._loader = None
            self._loader = self._make_loader(worker=j, num_workers=k, **self.loader_options)
            self._loader_split = (j, k)
        loader = self._loader
        first = (n + w) // k
        self._yielded = 0
        if first >= len(loader):
            return
        saved = loader.state_dict()
        saved.update(epoch=self._epoch, batch=first)
        loader.load_state_dict(saved)
        for batch in loader:
            self._yielded += 1
            yield tuple(torch.from_numpy(a) for a in batch)
        # A finished epoch: the next iteration starts the epoch set by set_epoch() from its start.
        self._start_batch = 0
        self._yielded = 0
