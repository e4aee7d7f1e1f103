"""Run by test_keras.py, one process per Keras backend (Keras picks its backend once, when it is imported):

    python keras_fit.py BACKEND FOLDER OUT

trains Keras 3 on the backend BACKEND (torch or jax) from libshard.keras.ShardDataset over the converted set
FOLDER (split train, 80 samples of 28x28x3) and writes OUT.npz:

- x_E_S, y_E_S: what the model got at step S of epoch E of an eagerly run fit(shuffle=True) over 2 epochs: the
  inputs as a layer saw them and the targets as the loss saw them;
- losses: the per-epoch training losses of a compiled fit (Keras' default for the backend) over 4 epochs;
- backend: keras.backend.backend().

The options are test_keras.OPTIONS (passed as JSON in the environment variable INTEROP_OPTIONS).
"""
import json
import os
import sys

backend, folder, out = sys.argv[1:4]
os.environ["KERAS_BACKEND"] = backend
if backend == "torch":
    import torch  # noqa: F401 (before Keras: see conftest.py on the import order of torch and TensorFlow)
import keras  # noqa: E402
import numpy as np  # noqa: E402

import libshard.keras  # noqa: E402

options = json.loads(os.environ["INTEROP_OPTIONS"])
batch_size = options.pop("batch_size")
steps = {"x": [], "y": []}


def concrete(value):
    """VALUE as numpy, or None for a symbolic tensor (Keras builds the model and the loss on those first)."""
    if isinstance(value, keras.KerasTensor):
        return None
    try:
        return keras.ops.convert_to_numpy(value)
    except Exception:  # a tracer (jax) or another symbolic value
        return None


class RecordInputs(keras.layers.Layer):
    def call(self, x):
        got = concrete(x)
        if got is not None:
            steps["x"].append(got)
        return x


def recording_loss(y_true, y_pred):
    got = concrete(y_true)
    if got is not None:
        steps["y"].append(got)
    return keras.losses.sparse_categorical_crossentropy(y_true, y_pred)


def model(record):
    keras.utils.set_random_seed(0)
    return keras.Sequential([keras.Input((28, 28, 3))] + ([RecordInputs()] if record else []) + [
        keras.layers.Flatten(), keras.layers.Dense(10, activation="softmax")])


result = {"backend": np.array(keras.backend.backend())}

ds = libshard.keras.ShardDataset(folder, batch_size, **options)
m = model(record=True)
m.compile(optimizer=keras.optimizers.SGD(0.01), loss=recording_loss, run_eagerly=True)
m.fit(ds, epochs=2, shuffle=True, verbose=0)
ds.close()
assert len(steps["x"]) == len(steps["y"]), (len(steps["x"]), len(steps["y"]))
per_epoch = len(steps["x"]) // 2
for i, (x, y) in enumerate(zip(steps["x"], steps["y"])):
    result["x_%d_%d" % divmod(i, per_epoch)] = x
    result["y_%d_%d" % divmod(i, per_epoch)] = y

ds = libshard.keras.ShardDataset(folder, batch_size, **options)
m = model(record=False)
m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
history = m.fit(ds, epochs=4, shuffle=True, verbose=0)
ds.close()
result["losses"] = np.array(history.history["loss"])

np.savez(out, **result)
