"""libshard: the baseline row, read the way a user trains with it.

Variants:
* `dataset` (default): libshard.torch.ShardDataset into a torch DataLoader with
  num_workers=0 and threads = all cores, the setting docs/reader.md
  ("Which setting", "PyTorch: libshard.torch.ShardDataset") calls the fastest:
  the Loader's C++ threads decode and the batches are handed over without a copy.
* `loader`: libshard.Loader iterated directly from Python (the C++ loop's rate
  with only a Python `for` around it).

Output: uint8 NCHW, the layout docs/reader.md recommends for a GPU loop
("Pinned memory and GPUs": load uint8 NCHW, normalise on the GPU), as FFCV and
DALI are used. Eval: the stored images have a shorter side of 256, so
"shorter side 256, centre 224" is resize="crop-or-pad" to 224 (a centre crop,
no rescale). Train: augment="random-resized-crop" (torchvision's scale and
ratio, with a horizontal flip) and the global shuffle (a new permutation of all
samples every epoch).

Writing: libshard's format is the reference, made by `shard convert` in
run.sh; `convert` here is not used (run.sh times `shard convert` itself).
"""
import os

import contract


def read(args):
    import libshard
    options = dict(split="train", image_size=contract.SIZE, layout="NCHW", dtype="uint8",
                   threads=contract.CORES, drop_last=True)
    if args.workload == "train":
        options.update(augment="random-resized-crop", shuffle=True, seed=0)
    else:
        options.update(resize="crop-or-pad", shuffle=False)
    info = {"version": libshard.__version__, "shuffle": "global (a permutation per epoch)" if args.workload == "train"
            else "none (sequential)"}
    if args.variant == "loader":
        loader = libshard.Loader(args.shards, args.batch, **options)
        info["settings"] = f"libshard.Loader threads={contract.CORES}, uint8 NCHW, iterated from Python"

        def batches(epoch):
            loader.set_epoch(epoch) if hasattr(loader, "set_epoch") else None
            for b in loader:
                yield b[0], b[1]
    else:
        import torch
        import libshard.torch
        torch.set_num_threads(contract.CORES)
        ds = libshard.torch.ShardDataset(args.shards, args.batch, **options)
        dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=0)
        info["settings"] = (f"ShardDataset(threads={contract.CORES}, uint8 NCHW) + DataLoader(batch_size=None, "
                            "num_workers=0)")
        info["torch"] = torch.__version__

        def batches(epoch):
            ds.set_epoch(epoch)
            for images, labels in dl:
                yield images, labels
    return contract.run_epochs(args, batches, info)


if __name__ == "__main__":
    contract.main("libshard", read=read)
