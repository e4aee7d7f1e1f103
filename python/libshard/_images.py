"""libshard.torch.ShardImages: map-style access to a libshard.Dataset, one sample per item."""
import os
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import torch
import torch.utils.data

from ._detection import _image_size, _pixel_boxes
from ._libshard import Dataset


class ShardImages(torch.utils.data.Dataset):
    """Map-style access: ``len(ds)`` samples, ``ds[i] -> (image, label)`` (``(image, label, mask)`` with
    ``masks=True``; with ``boxes=True`` a last item ``{"boxes": float32 [N, 4] in pixels (x1, y1, x2, y2),
    "labels": int64 [N]}``, torchvision's detection target: collate with ``collate_fn=lambda b: tuple(zip(*b))``)
    as torch tensors, decoded by the same image-record contract and options as the batch Loader
    (``image_size``, ``layout`` -- ``"NCHW"`` gives a ``[C, H, W]`` image --, ``dtype``, ``mean``, ``std``,
    ``augment``, ``dct_scale``, ``split``, ``keys``, ...). Use it to bring your own sampler (``WeightedRandomSampler``,
    ``Subset``, k-fold) with ``DataLoader(ds, batch_size=B, num_workers=K)``, or :class:`ElasticSampler` for the
    batch Loader's order with a global position that resumes on another number of ranks or workers.

    It is the per-sample path: each item is decoded on the calling thread (GIL released) by a
    :class:`libshard.Dataset` (no Loader, ring or threads), and batches are collated by the DataLoader. The batch
    :class:`ShardDataset` (or :class:`libshard.Loader`) is the fast path: it decodes whole batches on its own
    threads into memory handed over without a copy.

    ``i`` is the global sample number (shards in order, records in file order; every rank's). Augmentation
    draws from ``(seed, epoch, i)``: call :meth:`set_epoch` between epochs for new crops. The Dataset is opened
    on first use in each process (DataLoader workers included), so the dataset pickles as its arguments.
    """

    def __init__(self, sources: Union[str, Sequence[str]], *, seed: int = 0, **loader_options: Any) -> None:
        for k in ("buffers", "slots", "rank", "world_size", "worker", "num_workers", "shuffle", "order",
                  "drop_last", "block_size", "window_blocks"):
            if k in loader_options:
                raise ValueError("%s: not an option of ShardImages (it reads samples by number)" % k)
        if "extras" in loader_options:
            raise ValueError("extras: not an option of ShardImages (an item is (image, label[, mask])); read "
                             "features with the batches of libshard.torch.ShardDataset or libshard.Loader")
        if loader_options.get("on_error", "raise") != "raise":
            raise ValueError("on_error: not an option of ShardImages (ds[i] is sample i: a corrupt record raises "
                             "DataLossError naming it); skip bad records with libshard.torch.ShardDataset")
        self.sources = sources
        self.seed = seed
        self.loader_options = dict(loader_options)
        self._epoch = 0
        self._dataset: Optional[Dataset] = None
        self._targets: Optional[list] = None
        self._pid = -1
        probe = self.dataset
        self._len = len(probe)
        self.labels = probe.labels

    @property
    def dataset(self) -> Dataset:
        """The :class:`libshard.Dataset` behind the items (this process's own)."""
        if self._dataset is None or self._pid != os.getpid():
            options = {k: v for k, v in self.loader_options.items() if k not in ("prefetch", "on_error")}
            options.setdefault("threads", 1)
            self._dataset = Dataset(self.sources, seed=self.seed, **options)
            self._pid = os.getpid()
        return self._dataset

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state["_dataset"] = None
        state["_pid"] = -1
        return state

    def __len__(self) -> int:
        return self._len

    @property
    def targets(self) -> list:
        """``targets[i]`` is ``ds[i]``'s label, read once without decoding an image (as ``ImageFolder.targets``):
        ``WeightedRandomSampler([w[t] for t in ds.targets], n)`` balances classes."""
        if self._targets is None:
            self._targets = self.dataset.sample_labels.tolist()
        return self._targets

    def set_epoch(self, epoch: int) -> None:
        """Later items are augmented as in epoch ``epoch`` (a no-op without augmentation)."""
        if isinstance(epoch, bool) or not isinstance(epoch, int) or not 0 <= epoch < 2 ** 63:
            raise ValueError("epoch: expected an integer in 0..2**63-1, got %r" % (epoch,))
        self._epoch = epoch

    def __getitem__(self, index: int) -> Tuple[torch.Tensor, ...]:
        if isinstance(index, bool) or not hasattr(index, "__index__"):
            raise TypeError("index: expected an integer, got %r" % (index,))
        index = index.__index__()
        if index < 0:
            index += self._len
        if not 0 <= index < self._len:
            raise IndexError("index %d out of range (%d samples)" % (index, self._len))
        item = self.dataset.sample(index, self._epoch)
        out = [torch.from_numpy(item[0]), torch.tensor(item[1], dtype=torch.int64)]
        if self.loader_options.get("masks"):
            out.append(torch.from_numpy(item[2]))
        if self.loader_options.get("boxes"):
            h, w = _image_size(item[0][None])
            out.append({"boxes": _pixel_boxes(torch.from_numpy(item[-2]), h, w),
                        "labels": torch.from_numpy(item[-1])})
        return tuple(out)
