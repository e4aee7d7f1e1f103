"""Elastic resume for libshard.torch: the helpers that turn a rank's batch count into the global position
(SampleOrder's rule: docs/reader.md, "Changing the number of GPUs"), and :class:`ElasticSampler`, the batch
Loader's order and partition for the map-style ShardImages."""
from typing import TYPE_CHECKING, Any, Dict, Iterator, Optional, Tuple

import torch
import torch.utils.data

from ._libshard import Loader

if TYPE_CHECKING:
    from .torch import ShardImages

# The keys of a Loader state that define the epoch's global order: a saved state must match them.
_IDENTITY = ("seed", "order", "block_size", "window_blocks", "samples", "dataset")


def _rank_batches(samples: int, start: int, batch: int, world: int, drop_last: bool) -> int:
    """A rank's batches in the rest of an epoch of ``samples`` from global offset ``start`` (SampleOrder's cut:
    drop_last drops the incomplete global batch, else the rest is padded to a multiple of ``world``)."""
    rest = max(0, samples - start)
    if drop_last:
        return rest // (batch * world)
    return (-(-rest // world) + batch - 1) // batch


def _consumed(samples: int, start: int, rank_batches: int, batch: int, world: int) -> int:
    """Samples of the epoch's global order all ranks have consumed after ``rank_batches`` batches each from
    ``start`` (SampleOrder::GlobalConsumed; padding does not count)."""
    return start + min(max(0, samples - start), rank_batches * batch * world)


def _check_state(identity: Dict[str, Any], state: Dict[str, Any]) -> Tuple[int, int]:
    """(epoch, consumed) of a saved state; ValueError naming the field for another dataset, seed or order."""
    for k in ("epoch", "consumed") + tuple(identity):
        if k not in state:
            raise ValueError('state: lacks "%s"' % k)
    for k, here in identity.items():
        if state[k] != here:
            raise ValueError('state["%s"]: saved by a dataset with another %s (%r, here %r): it cannot continue here'
                             % (k, k, state[k], here))
    for k in ("epoch", "consumed"):
        v = state[k]
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError("state: %s must be an integer, got %r" % (k, v))
    if not 0 <= state["consumed"] <= identity["samples"]:
        raise ValueError("state: consumed %d is outside 0..%d" % (state["consumed"], identity["samples"]))
    if not 0 <= state["epoch"] < 2 ** 63:
        raise ValueError("state: epoch %d is outside 0..2**63-1" % state["epoch"])
    return int(state["epoch"]), int(state["consumed"])


def _epoch_start(epoch: int, resume: Optional[Tuple[int, int]]) -> Tuple[int, int, Optional[Tuple[int, int]]]:
    """set_epoch(epoch): (epoch, where its pass starts, the loaded position still to resume): a loaded
    (epoch, consumed) is kept for its own epoch, any other epoch starts at 0."""
    if isinstance(epoch, bool) or not isinstance(epoch, int) or not 0 <= epoch < 2 ** 63:
        raise ValueError("epoch: expected an integer in 0..2**63-1, got %r" % (epoch,))
    if resume is not None and resume[0] == epoch:
        return int(epoch), resume[1], resume
    return int(epoch), 0, None


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
    global-batch-major (docs/reader.md), so its state is the Loader's and ShardDataset's: any of them, on any
    shape, loads it. ``set_epoch`` / ``state_dict`` / ``load_state_dict`` behave as ShardDataset's.
    """

    def __init__(self, dataset: "ShardImages", batch_size: int, *, rank: Optional[int] = None,
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
            from .torch import default_rank_and_world_size
            rank, world_size = default_rank_and_world_size()
        self.batch_size, self.rank, self.world_size, self.drop_last = batch_size, int(rank), int(world_size), drop_last
        options = {k: v for k, v in dataset.loader_options.items() if k not in ("threads", "prefetch")}
        self._loader = Loader(dataset.sources, batch_size, seed=dataset.seed, rank=self.rank,
                              world_size=self.world_size, shuffle=shuffle, drop_last=drop_last, threads=1, prefetch=1,
                              **order_options, **options)
        self._identity = {k: v for k, v in self._loader.state_dict().items() if k in _IDENTITY}
        self._epoch, self._start = 0, 0
        self._resume: Optional[Tuple[int, int]] = None

    def __iter__(self) -> Iterator[int]:
        return iter(self._loader.epoch_samples(self._epoch, self._start).tolist())

    def __len__(self) -> int:
        """This rank's samples in the current epoch from where it resumes (padding included)."""
        return len(self._loader.epoch_samples(self._epoch, self._start))

    def set_epoch(self, epoch: int) -> None:
        """As :meth:`ShardDataset.set_epoch` (a loaded position of that epoch is kept)."""
        self._epoch, self._start, self._resume = _epoch_start(epoch, self._resume)

    def state_dict(self, batch: int) -> Dict[str, Any]:
        """The global position after ``batch`` batches of this pass (``step + 1``), as
        :meth:`ShardDataset.state_dict`."""
        if isinstance(batch, bool) or not isinstance(batch, int):
            raise ValueError("batch: expected an integer, got %r" % (batch,))
        samples = self._identity["samples"]
        left = _rank_batches(samples, self._start, self.batch_size, self.world_size, self.drop_last)
        if not 0 <= batch <= left:
            raise ValueError("batch: %d batches consumed is outside the epoch's %d batches from sample %d"
                             % (batch, left, self._start))
        return dict(self._identity, epoch=self._epoch,
                    consumed=_consumed(samples, self._start, batch, self.batch_size, self.world_size),
                    rank=self.rank, world_size=self.world_size, batch_size=self.batch_size, skipped=[])

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """As :meth:`ShardDataset.load_state_dict`."""
        self._epoch, self._start = _check_state(self._identity, state)
        self._resume = (self._epoch, self._start)
