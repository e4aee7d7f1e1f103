"""python -m libshard.bench on the CPU with a tiny model (issue 29): on a small converted set and the same images
as a folder, it prints the training rates (synthetic ceiling, libshard's feed, torchvision's ImageFolder), the
loader alone per thread count, the share of time spent waiting for data and the threads the feed needs."""
import json
import re
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchvision")
import libshard  # noqa: E402
from tools_fixtures import make_image_folder  # noqa: E402


def test_the_bench_runs_on_the_cpu_and_prints_every_figure(tmp_path):
    make_image_folder(str(tmp_path / "pets"), splits=("train",), per_class=6, bad=0)
    libshard.convert(str(tmp_path / "pets" / "train"), str(tmp_path / "out"), size=32, no_sync=True)
    r = subprocess.run([sys.executable, "-m", "libshard.bench", str(tmp_path / "out"), "--model", "tiny",
                        "--device", "cpu", "--batch-size", "4", "--image-size", "32", "--seconds", "0.3",
                        "--warmup", "1", "--threads", "1,2", "--feed-threads", "2", "--workers", "0",
                        "--compare-folder", str(tmp_path / "pets" / "train"), "--json", str(tmp_path / "r.json")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    number = r"\s+([0-9]+\.[0-9])"
    ceiling = float(re.search(r"synthetic batch on the device \(the ceiling\)" + number, out).group(1))
    fed = re.search(r"libshard feed \(device=, 2 threads\)" + number + r"\s+([0-9.]+) of the ceiling", out)
    tv = re.search(r"torchvision ImageFolder \(0 workers\)" + number + r"\s+([0-9.]+) of the ceiling", out)
    assert ceiling > 0 and fed and tv, out
    assert float(fed.group(2)) == pytest.approx(float(fed.group(1)) / ceiling, abs=2e-3)
    for t in (1, 2):
        assert re.search(r"threads=%d\s+[0-9]+\.[0-9]\s+[0-9]+ per thread" % t, out), out
    assert re.search(r"waiting for data: [0-9]+\.[0-9]% of the cpu's time with libshard's feed", out), out
    assert re.search(r"the feed needs (about )?[0-9]+ threads?(\(s\))? to keep tiny busy here", out), out
    saved = json.loads((tmp_path / "r.json").read_text())
    assert saved["model"] == "tiny" and set(saved["loader_by_threads"]) == {"1", "2"}
    assert saved["train_libshard"] == pytest.approx(float(fed.group(1)), abs=0.06)
    assert 0 <= saved["waiting_share"] <= 1 and saved["threads_needed"] >= 1


def test_the_bench_refuses_cuda_without_it(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    r = subprocess.run([sys.executable, "-m", "libshard.bench", str(tmp_path), "--device", "cuda"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--device cuda: CUDA is not available here" in r.stderr
