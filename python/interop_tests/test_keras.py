"""Keras 3 (keras from PyPI) trains through libshard.keras.ShardDataset on its torch and jax backends, each in a
process of its own (keras_fit.py): each Keras epoch gets every batch of one epoch of the Loader exactly once, the
next Keras epoch the Loader's next epoch, whatever order Keras asks in (fit(shuffle=True) shuffles the batch
order); and a compiled fit's loss goes down."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import libshard
from interop_sets import HERE

OPTIONS = dict(split="train", shuffle=True, seed=3, dtype="float32", mean=(0.5, 0.5, 0.5), std=(0.25, 0.25, 0.25))
BATCH = 8


def loader_epochs(folder, epochs):
    """Each epoch's batches of a plain pass over a Loader with OPTIONS: [[(images, labels), ...], ...]."""
    with libshard.Loader(str(folder), BATCH, **OPTIONS) as loader:
        return [[(np.array(x), np.array(y)) for x, y in loader] for _ in range(epochs)]


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_keras_fit_gets_each_batch_of_the_epoch_once_and_learns(sets, backend, tmp_path):
    folder = sets["png"].folder
    out = tmp_path / "fit.npz"
    env = dict(os.environ, KERAS_BACKEND=backend, INTEROP_OPTIONS=json.dumps(dict(OPTIONS, batch_size=BATCH)))
    done = subprocess.run([sys.executable, str(HERE / "keras_fit.py"), backend, str(folder), str(out)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-6000:]
    got = np.load(out)
    assert str(got["backend"]) == backend

    # Keras 3.15's fit() peeks at item 0 for its symbolic build and then calls on_epoch_end() once before its
    # first epoch (EpochIterator.reset()), so its epochs 0, 1 are the dataset's epochs 1, 2 (older Keras: 0, 1).
    want = loader_epochs(folder, 3)
    per_epoch = len(want[0])
    assert per_epoch == 10  # 80 samples, batch 8
    matched = []
    for epoch in range(2):
        order = []
        for step in range(per_epoch):
            x, y = got["x_%d_%d" % (epoch, step)], got["y_%d_%d" % (epoch, step)]
            assert x.shape == (BATCH, 28, 28, 3) and x.dtype == np.float32
            found = [(e, i) for e in range(3) for i, (wx, wy) in enumerate(want[e])
                     if np.array_equal(wx, x) and np.array_equal(wy, y.astype(np.int64))]
            assert len(found) == 1, "epoch %d step %d: Keras fed %s of the Loader's batches" % (epoch, step, found)
            order.append(found[0])
        epochs = {e for e, _ in order}
        assert len(epochs) == 1, "Keras epoch %d mixed the Loader's epochs %s" % (epoch, sorted(epochs))
        assert sorted(i for _, i in order) == list(range(per_epoch)), order
        matched.append(epochs.pop())
    assert matched in ([0, 1], [1, 2]), matched
    assert "x_2_0" not in got
    losses = got["losses"]
    assert np.isfinite(losses).all() and losses[-1] < losses[0], losses
