"""LitData: chunks made by litdata.optimize (the JPEG kept as `bytes`), read
by its StreamingDataset + StreamingDataLoader.

Settings from LitData's README (https://github.com/Lightning-AI/litdata:
"Speed up model training", "optimize", the StreamingDataLoader with
num_workers; the benchmark section's ImageNet recipe): optimize with
workers = cores, StreamingDataset(shuffle=True, drop_last=True) and the
StreamingDataLoader with workers = the thread budget; the image is decoded with
Pillow and transformed with torchvision in __getitem__. Shuffle: LitData's
chunk-order shuffle plus a shuffle within the chunks each worker holds.
"""
import os
import time

import contract


def _sample(item):
    jpeg, label, index = item
    return {"jpg": jpeg, "cls": label, "index": index}


def _photo(item):
    path, label = item
    return {"jpg": contract.pil_resize_jpeg(path), "cls": label}


def write(args):
    import litdata
    samples = [(j, l, i) for i, (j, l) in enumerate(contract.libshard_samples(args.shards))]
    litdata.optimize(fn=_sample, inputs=samples, output_dir=args.data, chunk_bytes="32MB", num_workers=1)
    ds = litdata.StreamingDataset(args.data)
    stored = {}
    for k in range(len(ds)):
        x = ds[k]
        stored[int(x["index"])] = x["jpg"]
    return {"same_bytes": contract.check_same_bytes(args.shards, lambda i: stored[i])}


def convert(args):
    """litdata.optimize over the photo paths, its own worker processes doing
    Pillow's resize (the README's way)."""
    import litdata
    items = contract.photo_list(args.photos)
    t0 = time.perf_counter()
    litdata.optimize(fn=_photo, inputs=items, output_dir=args.data, chunk_bytes="32MB",
                     num_workers=contract.CORES)
    return dict(contract.converted(len(items), t0), writer=f"litdata.optimize (num_workers={contract.CORES})")


def read(args):
    import litdata
    import torch
    from peer_torchvision import pil_rgb, transforms
    train = args.workload == "train"
    torch.set_num_threads(1)
    transform = transforms(args.workload)

    class Images(litdata.StreamingDataset):
        def __getitem__(self, i):
            x = super().__getitem__(i)
            return transform(pil_rgb(x["jpg"])), x["cls"]

    ds = Images(args.data, shuffle=train, drop_last=True, seed=0)
    dl = litdata.StreamingDataLoader(ds, batch_size=args.batch, num_workers=contract.CORES, drop_last=True,
                                     persistent_workers=True)
    info = {"version": litdata.__version__, "torch": torch.__version__,
            "shuffle": "chunk order + within each worker's chunks" if train else "none (sequential)",
            "settings": f"StreamingDataset + StreamingDataLoader(num_workers={contract.CORES}), Pillow decode"}

    def batches(epoch):
        for images, labels in dl:
            yield images, labels
    return contract.run_epochs(args, batches, info)


if __name__ == "__main__":
    contract.main("litdata", write=write, convert=convert, read=read)
