"""Batches handed over on a real GPU (issue 29): ShardDataset(..., device="cuda") with num_workers 0 and 2, for
float32 / bfloat16 channels_last, uint8 and float16, consumed on a stream of the loop's own, every batch kept:
the same pixels as the CPU path (a slot rewritten before its copy finished would show here). Skipped without
CUDA; test_device.py checks the same conversion on the CPU."""
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("needs CUDA (torch.cuda.is_available() is False)", allow_module_level=True)

from test_gpu_pinned import run_scenario, shards  # noqa: E402,F401


@pytest.mark.parametrize("name", ["device-w0", "device-w2"])
def test_device_batches_equal_the_cpu_path(shards, name):  # noqa: F811
    run_scenario(shards, name)
