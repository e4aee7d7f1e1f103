"""Batches handed over on the device: ``ShardDataset(..., device="cuda")`` (docs/gpu.md).

The Loader decodes uint8 NHWC into page-locked slots (a quarter of float32's bytes over PCIe, no float work in
the decode threads); :class:`DeviceFeed` copies each batch to the device on a side stream, converts it there to
the asked ``dtype`` / ``mean`` / ``std`` / ``layout`` / ``memory_format``, records an event, and makes the
consumer's stream (the current stream of the thread that takes the batch) wait on that event -- the FFCV
pattern. The host batch (and so its slot) is held until its copy has finished (the event), so a slot is never
rewritten while the copy still reads it. ``device="cpu"`` runs the same conversion without streams.

A float value is ``x * scale[c] + bias[c]`` in float32 with ``scale = 1 / (255 std)`` and ``bias = -mean / std``
(each rounded once to float32), the Loader's own float32 formula (docs/reader.md), so float32 batches equal the
Loader's; float16 and bfloat16 are that float32 value rounded to the dtype.
"""
import collections
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np
import torch

_DTYPES = {"uint8": torch.uint8, "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def _dtype_name(dtype: Any) -> str:
    if isinstance(dtype, torch.dtype):
        name = str(dtype)[len("torch."):]
    elif isinstance(dtype, str):
        name = dtype
    else:
        try:
            name = np.dtype(dtype).name
        except TypeError:
            name = repr(dtype)
    name = {"float": "float32", "half": "float16"}.get(name, name)
    if name not in _DTYPES:
        raise ValueError("dtype: with device=, expected uint8, float32, float16 or bfloat16, got %r" % (dtype,))
    return name


def _values(v: Any, what: str) -> Any:
    """None, "dataset" (resolved by :func:`resolve` once the probe Loader has read the manifests) or floats."""
    if v is None or v == "dataset":
        return v
    if isinstance(v, str):
        raise ValueError('%s: expected a sequence of numbers (one per channel), "dataset" or None, got %r'
                         % (what, v))
    try:
        return tuple(float(x) for x in v)
    except (TypeError, ValueError):
        raise ValueError("%s: expected a sequence of numbers (one per channel), got %r" % (what, v)) from None


def device_options(device: Any, memory_format: Any, options: Dict[str, Any]):
    """Splits ShardDataset's options for ``device=``: returns ``(spec, loader_options, probe_options,
    probe_itemsize)``: the :class:`DeviceFeed` arguments, the workers' Loader options (uint8 NHWC, no mean /
    std), the options of the probe Loader that checks the user's values, and its pixel size in bytes.
    ValueError for a bad value, naming the argument."""
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError('device: expected "cuda", "cuda:N", "cpu" or a torch.device, got %r' % (device,)) from None
    if dev.type not in ("cuda", "cpu"):
        raise ValueError("device: %r: only cuda and cpu devices are supported" % (device,))
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device: %r, but CUDA is not available here (torch.cuda.is_available() is False: torch "
                         "built without CUDA, or no GPU visible); use device=\"cpu\" or leave device unset"
                         % (device,))
    if memory_format not in (None, torch.contiguous_format, torch.channels_last):
        raise ValueError("memory_format: expected torch.channels_last or torch.contiguous_format, got %r"
                         % (memory_format,))
    channels_last = memory_format is torch.channels_last
    layout = options.get("layout", "NCHW" if channels_last else "NHWC")
    if layout not in ("NHWC", "NCHW"):
        raise ValueError('layout: unknown layout "%s" (expected NHWC or NCHW)' % (layout,))
    if channels_last and layout != "NCHW":
        raise ValueError("memory_format: torch.channels_last is an NCHW tensor with NHWC strides; "
                         'layout="%s" contradicts it' % layout)
    dtype = _dtype_name(options.get("dtype", "uint8"))
    mean, std = _values(options.get("mean"), "mean"), _values(options.get("std"), "std")
    spec = (str(dev), dtype, mean, std, layout, channels_last)
    loader = {k: v for k, v in options.items() if k not in ("dtype", "mean", "std", "layout")}
    loader.update(dtype="uint8", layout="NHWC")
    probe = dict(options)  # the Loader checks the values (channel count, finite results) as it would its own
    probe.update(layout=layout, dtype="float32" if dtype == "bfloat16" else dtype)
    return spec, loader, probe, np.dtype(probe["dtype"]).itemsize


def resolve(spec: Tuple, normalization: Tuple[Sequence[float], Sequence[float]]) -> Tuple:
    """``spec`` with ``mean="dataset"`` / ``std="dataset"`` replaced by the values the probe Loader resolved
    (``Loader.normalization``)."""
    device, dtype, mean, std, layout, channels_last = spec
    if mean == "dataset":
        mean = tuple(float(x) for x in normalization[0])
    if std == "dataset":
        std = tuple(float(x) for x in normalization[1])
    return (device, dtype, mean, std, layout, channels_last)


class DeviceFeed:
    """Copies host batches (uint8 NHWC named tuples of tensors) to ``device`` and converts them there (see the
    module docstring). Made once per dataset and process; called on the thread that hands the batch to the
    training loop."""

    def __init__(self, device: str, dtype: str, mean: Optional[Sequence[float]], std: Optional[Sequence[float]],
                 layout: str, channels_last: bool, max_pending: int = 2) -> None:
        self.device = torch.device(device)
        if self.device.type == "cuda" and self.device.index is None:
            self.device = torch.device("cuda", torch.cuda.current_device())
        self.dtype = _DTYPES[dtype]
        self.mean, self.std, self.layout, self.channels_last = mean, std, layout, channels_last
        self.max_pending = max_pending
        self._stream = torch.cuda.Stream(self.device) if self.device.type == "cuda" else None
        self._pending: "collections.deque" = collections.deque()  # (event, host batch) until its copy is done
        self._scale_bias: Dict[int, Tuple[torch.Tensor, torch.Tensor]] = {}

    def _coefficients(self, channels: int) -> Tuple[torch.Tensor, torch.Tensor]:
        sb = self._scale_bias.get(channels)
        if sb is None:
            mean = self.mean if self.mean is not None else (0.0,) * channels
            std = self.std if self.std is not None else (1.0,) * channels
            if len(mean) == 1:
                mean = tuple(mean) * channels
            if len(std) == 1:
                std = tuple(std) * channels
            scale = np.array([1.0 / (255.0 * s) for s in std], np.float64).astype(np.float32)
            bias = np.array([-m / s for m, s in zip(mean, std)], np.float64).astype(np.float32)
            shape = (1, channels, 1, 1) if self.layout == "NCHW" else (channels,)
            sb = tuple(torch.from_numpy(a).reshape(shape).to(self.device) for a in (scale, bias))
            self._scale_bias[channels] = sb
        return sb

    def _convert(self, x: torch.Tensor) -> torch.Tensor:
        """uint8 [B, H, W, C] on the device -> the asked dtype and layout."""
        channels = x.shape[-1]
        if self.layout == "NCHW":
            x = x.permute(0, 3, 1, 2)                  # NHWC strides: channels_last as it is
            if not self.channels_last:
                x = x.contiguous()                     # transposed as uint8, a quarter of the bytes
        if self.dtype == torch.uint8:
            return x
        scale, bias = self._coefficients(channels)
        y = x.to(torch.float32)
        y.mul_(scale).add_(bias)                       # two roundings, as the Loader's x * scale + bias
        return y if self.dtype == torch.float32 else y.to(self.dtype)

    def __call__(self, batch: Any) -> Any:
        fields = batch._fields
        host = [v for name, v in zip(fields, batch) if name != "keys"]
        if self._stream is None:
            out = [self._convert(host[0].to(self.device))] + [t.to(self.device) for t in host[1:]]
        else:
            consumer = torch.cuda.current_stream(self.device)
            with torch.cuda.stream(self._stream):
                out = [self._convert(host[0].to(self.device, non_blocking=True))]
                out += [t.to(self.device, non_blocking=True) for t in host[1:]]
                done = torch.cuda.Event()
                done.record(self._stream)
            consumer.wait_event(done)
            for t in out:
                t.record_stream(consumer)  # made on the side stream, used on the consumer's
            self._pending.append((done, batch))
            self._release_finished()
        if "keys" in fields:
            out.append(batch.keys)
        return type(batch)(*out)

    def _release_finished(self) -> None:
        """Lets go of host batches whose copy has finished (their slots are then reused); waits for the
        oldest when more than ``max_pending`` are held."""
        while self._pending and (len(self._pending) > self.max_pending or self._pending[0][0].query()):
            done, _ = self._pending.popleft()
            done.synchronize()

    def pending(self) -> int:
        """Host batches still held for a copy in flight."""
        return len(self._pending)
