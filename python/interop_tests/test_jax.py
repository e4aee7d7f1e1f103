"""JAX (CPU) trains on libshard's batches through the path docs/reader.md gives ("JAX and other numpy loops"): the
Loader's numpy batches go to jnp.asarray and a jitted step. The arrays JAX holds are the Loader's batches, they stay
so while the Loader reuses its batch memory, and the loss goes down."""

import jax
import jax.numpy as jnp
import numpy as np

import libshard
from interop_sets import docs_block

def docs_jax_loop():
    """The JAX block of docs/reader.md, as its reader pastes it."""
    return docs_block("reader.md", r"### JAX and other numpy loops")


def softmax_regression(features, classes, lr):
    """(params, opt_state, train_step) of a softmax regression trained by plain SGD, jitted; opt_state counts
    steps. The step returns the loss before its update."""
    params = {"w": jnp.zeros((features, classes)), "b": jnp.zeros((classes,))}

    def loss_fn(params, images, labels):
        logits = images.reshape(images.shape[0], -1) @ params["w"] + params["b"]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=1))

    @jax.jit
    def step(params, opt_state, images, labels):
        loss, grads = jax.value_and_grad(loss_fn)(params, images, labels)
        params = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
        return params, opt_state + 1, loss

    return params, jnp.zeros((), jnp.int32), step


def test_the_docs_jax_loop_trains_on_the_loaders_batches(sets, tmp_path, monkeypatch):
    """docs/reader.md's loop, run as written over the PNG set (as out/manifest.json) with a real jitted step: each
    step gets the batch a second Loader with the same arguments gives (float32 [B, 224, 224, 3] normalised, the
    labels), and the loss goes down over the epochs."""
    (tmp_path / "out").symlink_to(sets["png"].folder)
    monkeypatch.chdir(tmp_path)
    params, opt_state, step = softmax_regression(224 * 224 * 3, 10, lr=2e-5)
    seen, losses = [], []

    def train_step(params, opt_state, images, labels):
        assert isinstance(images, jax.Array) and isinstance(labels, jax.Array)
        seen.append((images, labels))
        params, opt_state, loss = step(params, opt_state, images, labels)
        losses.append(float(loss))
        return params, opt_state, loss

    names = {"params": params, "opt_state": opt_state, "train_step": train_step, "epochs": 3}
    exec(compile(docs_jax_loop(), "docs/reader.md", "exec"), names)
    names["loader"].close()
    assert int(names["opt_state"]) == 3  # 80 samples, batch 128: one batch an epoch

    reference = libshard.Loader("out/manifest.json", 128, split="train", shuffle=True, seed=0,
                                image_size=(224, 224), dtype="float32", mean=(0.485, 0.456, 0.406),
                                std=(0.229, 0.224, 0.225))
    want = [(np.array(images), labels.copy()) for _ in range(3) for images, labels in reference]
    reference.close()
    assert len(want) == len(seen) == 3
    for (images, labels), (ref_images, ref_labels) in zip(seen, want):
        assert images.dtype == jnp.float32 and images.shape == (80, 224, 224, 3)
        np.testing.assert_array_equal(np.asarray(images), ref_images)
        np.testing.assert_array_equal(np.asarray(labels), ref_labels)
    assert abs(losses[0] - np.log(10)) < 1e-5 and losses[2] < losses[1] < losses[0], losses


def test_arrays_jax_holds_outlive_the_loaders_batch_memory(sets):
    """jnp.asarray of a batch may share the batch's memory on the CPU; the Loader hands a block back to its pool
    only when no array holds it, so arrays kept by JAX over three epochs of small batches (blocks reused many
    times) keep their values."""
    options = dict(split="train", shuffle=True, seed=5, dtype="float32", mean=(0.5,) * 3, std=(0.25,) * 3)
    params, opt_state, step = softmax_regression(28 * 28 * 3, 10, lr=1e-3)
    kept, epoch_losses = [], []
    with libshard.Loader(str(sets["png"].folder), 8, **options) as loader, \
            libshard.Loader(str(sets["png"].folder), 8, **options) as reference:
        for epoch in range(3):
            losses = []
            for (images, labels), (ref_images, ref_labels) in zip(loader, reference):
                x, y = jnp.asarray(images), jnp.asarray(labels)
                del images, labels
                kept.append((x, y, np.array(ref_images), ref_labels.copy()))
                params, opt_state, loss = step(params, opt_state, x, y)
                losses.append(float(loss))
            epoch_losses.append(np.mean(losses))
    assert len(kept) == 30
    for x, y, ref_images, ref_labels in kept:
        np.testing.assert_array_equal(np.asarray(x), ref_images)
        np.testing.assert_array_equal(np.asarray(y), ref_labels)
    assert epoch_losses[2] < epoch_losses[0], epoch_losses
