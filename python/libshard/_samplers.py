"""libshard.torch's samplers for :class:`ShardImages`: :class:`ElasticSampler` (the batch Loader's order and
partition, resumable on another shape) and :class:`MixtureSampler` (an epoch's order, e.g. a weighted mixture's
interleave, cut per sample). Both are :class:`libshard.Order`: no rank arithmetic of their own."""
from typing import Any, Dict, Iterator, Optional, Tuple

import torch.utils.data

from ._distributed import default_rank_and_world_size
from ._images import ShardImages
from ._libshard import Order
from ._resume import _IDENTITY, _check_state, _consumed_after, _epoch_start


class ElasticSampler(torch.utils.data.Sampler):
    """The batch Loader's order and partition for :class:`ShardImages`: this rank's global sample numbers, epoch by
    epoch, with a resumable global position.

        sampler = libshard.torch.ElasticSampler(images, 64, shuffle=True)       # rank / world size as ShardDataset
        dl = DataLoader(images, batch_size=64, sampler=sampler, num_workers=4)
        sampler.load_state_dict(ckpt["data"])       # saved on any world_size, batch_size or worker count
        for epoch in range(ckpt["data"]["epoch"], epochs):
            sampler.set_epoch(epoch)
            for step, (x, y) in enumerate(dl):
                ... sampler.state_dict(batch=step + 1) ...

    The DataLoader must batch by the same ``batch_size``. The order is the epoch's global order cut
    global-batch-major (:class:`libshard.Order`, docs/reader.md), so its state is the Loader's and ShardDataset's:
    any of them, on any shape, loads it. ``set_epoch`` / ``state_dict`` / ``load_state_dict`` behave as
    ShardDataset's.
    """

    def __init__(self, dataset: ShardImages, batch_size: int, *, rank: Optional[int] = None,
                 world_size: Optional[int] = None, shuffle: bool = False, drop_last: bool = False,
                 **order_options: Any) -> None:
        """
        Args:
            dataset: the :class:`ShardImages` it samples (its sources, split and seed).
            batch_size: the DataLoader's batch size.
            rank, world_size: as :class:`ShardDataset` (torch.distributed, ``RANK`` / ``WORLD_SIZE``, or 0 / 1).
            shuffle, drop_last: as :class:`ShardDataset`.
            **order_options: ``order``, ``block_size``, ``window_blocks`` (as ``libshard.Loader``).
        """
        for k in order_options:
            if k not in ("order", "block_size", "window_blocks"):
                raise ValueError("%s: not an option of ElasticSampler (order, block_size, window_blocks)" % k)
        if (rank is None) != (world_size is None):
            raise ValueError("rank and world_size: give both or neither")
        if rank is None:
            rank, world_size = default_rank_and_world_size()
        self.batch_size, self.rank, self.world_size, self.drop_last = batch_size, int(rank), int(world_size), drop_last
        self._order = Order(dataset.dataset, batch_size, seed=dataset.seed, rank=self.rank,
                            world_size=self.world_size, shuffle=shuffle, drop_last=drop_last, **order_options)
        self._identity = {k: v for k, v in self._order.identity.items() if k in _IDENTITY}
        self._epoch, self._start = 0, 0
        self._resume: Optional[Tuple[int, int]] = None

    def __iter__(self) -> Iterator[int]:
        return iter(self._order.epoch_samples(self._epoch, self._start).tolist())

    def __len__(self) -> int:
        """This rank's samples in the current epoch from where it resumes (padding included)."""
        return self._order.samples_per_rank(self._start)

    def set_epoch(self, epoch: int) -> None:
        """As :meth:`ShardDataset.set_epoch` (a loaded position of that epoch is kept)."""
        self._epoch, self._start, self._resume = _epoch_start(epoch, self._resume)

    def state_dict(self, batch: int) -> Dict[str, Any]:
        """The global position after ``batch`` batches of this pass (``step + 1``), as
        :meth:`ShardDataset.state_dict`."""
        return dict(self._identity, epoch=self._epoch, consumed=_consumed_after(self._order, self._start, batch),
                    rank=self.rank, world_size=self.world_size, batch_size=self.batch_size, skipped=[])

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """As :meth:`ShardDataset.load_state_dict`."""
        self._epoch, self._start = _check_state(self._identity, state)
        self._resume = (self._epoch, self._start)


class MixtureSampler(torch.utils.data.Sampler):
    """The sample order of a :class:`ShardImages` made with ``weights=`` (a weighted mixture, docs/reader.md):
    each epoch's weighted interleave of the sources, each source's samples without replacement pass after pass,
    as the batch ``Loader`` reads it. Use ``DataLoader(ds, batch_size=B, sampler=MixtureSampler(ds))`` and call
    :meth:`set_epoch` (and ``ds.set_epoch``) between epochs. Without ``weights=`` it is the dataset's plain
    order (shuffled with ``shuffle=True``).

    ``rank`` / ``world_size`` cut the epoch's order per sample by the project's one rule
    (:class:`libshard.Order` with ``batch_size=1``): rank ``r`` takes positions ``r, r + world_size, ...``, the
    order padded to a multiple of ``world_size`` from its start -- ``DistributedSampler``'s strided cut without
    ``drop_last``, ``ceil(n / world_size)`` samples each.
    """

    def __init__(self, dataset: ShardImages, *, shuffle: bool = True, rank: int = 0, world_size: int = 1) -> None:
        if not isinstance(dataset, ShardImages):
            raise TypeError("dataset: expected a libshard.torch.ShardImages, got %s" % type(dataset).__name__)
        if not (isinstance(world_size, int) and world_size >= 1 and isinstance(rank, int) and 0 <= rank < world_size):
            raise ValueError("rank %r is not in [0, world_size %r)" % (rank, world_size))
        self._order = Order(dataset.dataset, 1, seed=dataset.seed, shuffle=shuffle, rank=rank, world_size=world_size)
        self._epoch = 0

    def set_epoch(self, epoch: int) -> None:
        """Later iterations follow epoch ``epoch``'s order."""
        if isinstance(epoch, bool) or not isinstance(epoch, int) or not 0 <= epoch < 2 ** 63:
            raise ValueError("epoch: expected an integer in 0..2**63-1, got %r" % (epoch,))
        self._epoch = epoch

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self) -> Iterator[int]:
        return iter(self._order.epoch_samples(self._epoch).tolist())

    def __getstate__(self) -> Dict[str, Any]:
        raise TypeError("MixtureSampler stays in the main process (DataLoader workers get its indices)")
