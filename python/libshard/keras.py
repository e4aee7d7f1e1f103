"""libshard for Keras: a ``keras.utils.PyDataset`` over a :class:`libshard.Loader`.

    import keras, libshard.keras
    ds = libshard.keras.ShardDataset("out/manifest.json", 64, split="train", shuffle=True, seed=0,
                                     image_size=(224, 224), dtype="float32",
                                     mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))
    model.fit(ds, epochs=10)

Keras asks a ``PyDataset`` for ``ds[i]`` and may do so in any order: it reads items ahead to learn the
structure, shuffles the batch order with ``shuffle=True`` and reads ahead from worker threads. A Loader is a
stream, so a ``__getitem__`` that ignores ``i`` would skip or repeat batches. Here ``ds[i]`` is always batch
``i`` of the current epoch -- the same images, labels and augmentation that batch ``i`` of a plain pass over the
Loader gives -- so each sample is seen exactly once per epoch whatever order Keras asks in.
``on_epoch_end()`` (Keras calls it) moves to the next epoch's order and augmentation.

How: when ``i`` is the Loader's next batch it is simply taken; a batch a little ahead (``read_ahead``) is
reached by taking the ones before it into a small cache, so both in-order and read-ahead access cost no seek;
any other ``i`` repositions the Loader with ``load_state_dict`` (its prefetched batches are dropped, nothing
is wrong). The batches own their memory, so cached ones stay valid.

Keras is not imported when this module is: the class works on its own (``len``, ``[i]``, ``on_epoch_end``),
and when ``keras`` imports, the object made is a subclass of ``keras.utils.PyDataset`` (``workers``,
``use_multiprocessing`` and ``max_queue_size`` go to it). Leave ``use_multiprocessing`` off: the Loader decodes
in its own C++ threads already, and cannot be pickled into worker processes.
"""
import threading
from typing import Any, Dict, Optional, Tuple

import libshard

__all__ = ["ShardDataset"]

_KERAS_ARGS = ("workers", "use_multiprocessing", "max_queue_size")
_keras_classes: Dict[type, type] = {}


def _keras_base() -> Optional[type]:
    try:
        import keras  # noqa: F401 (only when a ShardDataset is made)
        return keras.utils.PyDataset
    except Exception:  # keras missing or broken: the plain class
        return None


class ShardDataset:
    """A ``keras.utils.PyDataset`` whose item ``i`` is batch ``i`` of the current epoch of a Loader.

    Args:
        sources, batch_size, **loader_options: as :class:`libshard.Loader` (``split``, ``shuffle``, ``seed``,
            ``image_size``, ``dtype``, ``mean``, ``std``, ``augment``, ``threads``, ...; not ``buffers``).
        read_ahead: how far past the Loader's position an index may be and still be reached by reading the
            batches before it into the cache (default 4); farther ones seek.
        epoch: the epoch to start at (default 0); ``on_epoch_end()`` adds one.
        workers, use_multiprocessing, max_queue_size: passed to ``keras.utils.PyDataset`` when keras is there.

    Items are ``(images, labels)`` numpy arrays (with ``masks=True``: ``(images, masks)``, what a
    segmentation model trains on).
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> "ShardDataset":
        if cls is ShardDataset:
            base = _keras_base()
            if base is not None:
                if base not in _keras_classes:
                    _keras_classes[base] = type("ShardDataset", (ShardDataset, base),
                                                {"__module__": __name__, "__doc__": ShardDataset.__doc__})
                cls = _keras_classes[base]
        return object.__new__(cls)

    def __init__(self, sources: Any, batch_size: int, *, read_ahead: int = 4, epoch: int = 0,
                 **options: Any) -> None:
        keras_args = {k: options.pop(k) for k in _KERAS_ARGS if k in options}
        if len(type(self).__mro__) > 2:
            super().__init__(**keras_args)  # keras.utils.PyDataset
        elif keras_args:
            raise TypeError("%s: keras.utils.PyDataset arguments, but keras does not import here"
                            % ", ".join(sorted(keras_args)))
        if "buffers" in options:
            raise ValueError("buffers: not with libshard.keras (cached batches must own their memory)")
        if not isinstance(read_ahead, int) or read_ahead < 0:
            raise ValueError("read_ahead: expected an integer >= 0, got %r" % (read_ahead,))
        self._masks = bool(options.get("masks", False))
        self._loader = libshard.Loader(sources, batch_size, **options)
        self._len = len(self._loader)
        self._read_ahead = read_ahead
        self._lock = threading.Lock()
        self._cache: Dict[Tuple[int, int], Any] = {}
        self.set_epoch(epoch)

    # --- what Keras calls ---

    def __len__(self) -> int:
        """Batches per epoch."""
        return self._len

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """Batch ``index`` of the current epoch (negative indices count from the end)."""
        i = int(index)
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError("batch %d of an epoch of %d batches" % (index, self._len))
        with self._lock:
            batch = self._take(self._epoch, i)
        if self._masks:
            return batch[0], batch[2]
        return batch[0], batch[1]

    def on_epoch_end(self) -> None:
        """The next items come from the next epoch (its order and augmentation)."""
        self.set_epoch(self._epoch + 1)

    # --- the rest ---

    @property
    def epoch(self) -> int:
        """The epoch items come from."""
        return self._epoch

    def set_epoch(self, epoch: int) -> None:
        """Items come from epoch ``epoch`` from now on (e.g. after resuming a model at that epoch)."""
        if not isinstance(epoch, int) or epoch < 0:
            raise ValueError("epoch: expected an integer >= 0, got %r" % (epoch,))
        with self._lock:
            self._epoch = epoch
            self._cache = {k: v for k, v in self._cache.items() if k[0] == epoch}

    @property
    def loader(self) -> "libshard.Loader":
        """The Loader batches come from (``labels``, ``num_samples``)."""
        return self._loader

    def close(self) -> None:
        """Stops the Loader's threads."""
        self._loader.close()
        self._cache.clear()

    def _take(self, epoch: int, i: int) -> Any:
        cached = self._cache.pop((epoch, i), None)
        if cached is not None:
            return cached
        state = self._loader.state_dict()
        # Batch i of an epoch starts at global sample i * batch_size * world_size (the state's position).
        per_batch = state["batch_size"] * state["world_size"]
        at_epoch, at = state["epoch"], -(-state["consumed"] // per_batch)
        if at == self._len:  # the end of an epoch is the next one's start
            at_epoch, at = at_epoch + 1, 0
        if at_epoch != epoch or not at <= i <= at + self._read_ahead:
            self._loader.load_state_dict(dict(state, epoch=epoch, consumed=min(state["samples"], i * per_batch)))
            at = i
        while at < i:  # read ahead into the cache: Keras asks for these soon
            self._cache[(epoch, at)] = next(self._loader)
            at += 1
        return next(self._loader)
