"""libshard.torch.MixtureSampler: a ShardImages' epoch order (a weighted mixture's interleave) as a sampler."""
from typing import Any, Dict, Iterator

import torch.utils.data

from ._libshard import Loader


class MixtureSampler(torch.utils.data.Sampler):
    """The sample order of a :class:`ShardImages` made with ``weights=`` (a weighted mixture, docs/reader.md):
    each epoch's weighted interleave of the sources, each source's samples without replacement pass after pass,
    as the batch ``Loader`` reads it. Use ``DataLoader(ds, batch_size=B, sampler=MixtureSampler(ds))`` and call
    :meth:`set_epoch` (and ``ds.set_epoch``) between epochs. Without ``weights=`` it is the dataset's plain
    order (shuffled with ``shuffle=True``).

    ``rank`` / ``world_size`` cut the epoch's order as ``DistributedSampler`` does without ``drop_last``:
    ``ceil(n / world_size)`` consecutive positions each, the last part padded from the order's start.
    """

    def __init__(self, dataset: "ShardImages", *, shuffle: bool = True, rank: int = 0, world_size: int = 1) -> None:
        from .torch import ShardImages
        if not isinstance(dataset, ShardImages):
            raise TypeError("dataset: expected a libshard.torch.ShardImages, got %s" % type(dataset).__name__)
        if not (isinstance(world_size, int) and world_size >= 1 and isinstance(rank, int) and 0 <= rank < world_size):
            raise ValueError("rank %r is not in [0, world_size %r)" % (rank, world_size))
        options = dict(dataset.loader_options)
        options["threads"], options["prefetch"] = 1, 1
        # A Loader decodes nothing before its first batch: this one only draws the order.
        self._loader = Loader(dataset.sources, 1, seed=dataset.seed, shuffle=shuffle, **options)
        self._n = len(self._loader.global_order(0))
        self._rank, self._world_size = rank, world_size
        self._epoch = 0

    def set_epoch(self, epoch: int) -> None:
        """Later iterations follow epoch ``epoch``'s order."""
        if isinstance(epoch, bool) or not isinstance(epoch, int) or not 0 <= epoch < 2 ** 63:
            raise ValueError("epoch: expected an integer in 0..2**63-1, got %r" % (epoch,))
        self._epoch = epoch

    def __len__(self) -> int:
        return -(-self._n // self._world_size)

    def __iter__(self) -> Iterator[int]:
        order = self._loader.global_order(self._epoch)
        if len(order) == 0:
            return iter(())
        per = len(self)
        begin = self._rank * per
        return iter(int(order[(begin + i) % len(order)]) for i in range(per))

    def __getstate__(self) -> Dict[str, Any]:
        raise TypeError("MixtureSampler stays in the main process (DataLoader workers get its indices)")
