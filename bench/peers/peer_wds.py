"""WebDataset: tar shards of `.jpg` + `.cls` members, read through its
WebLoader (a torch DataLoader) with workers = the thread budget.

Settings from WebDataset's docs (https://github.com/webdataset/webdataset,
README "WebDataset for PyTorch" and docs/ "multi-node" / "generate-wds"):
shards split across workers (split_by_worker), shard shuffle plus a sample
shuffle buffer for training, decode("pil"), torchvision transforms in the
workers, batching inside the workers (.batched, partial=False: each worker
drops its own remainder) and WebLoader(batch_size=None). Shuffle: shard
order + a 1 000-sample buffer, the docs' example size.
"""
import glob
import os
import tarfile
import time

import contract


def write(args):
    """libshard's JPEG bytes as `KEY.jpg` members, 16 shards (so every worker
    gets the same share)."""
    import webdataset as wds
    os.makedirs(args.data, exist_ok=True)
    samples = list(contract.libshard_samples(args.shards))
    per_shard = -(-len(samples) // 16)
    with wds.ShardWriter(os.path.join(args.data, "shard-%05d.tar"), maxcount=per_shard, verbose=0) as sink:
        for i, (jpeg, label) in enumerate(samples):
            sink.write({"__key__": f"{i:07d}", "jpg": jpeg, "cls": label})
    stored = {}
    for path in sorted(glob.glob(os.path.join(args.data, "*.tar"))):
        with tarfile.open(path) as t:
            for m in t.getmembers():
                if m.name.endswith(".jpg"):
                    stored[int(m.name.split(".")[0])] = t.extractfile(m).read()
    return {"same_bytes": contract.check_same_bytes(args.shards, lambda i: stored[i])}


def convert(args):
    """Its ShardWriter fed by Pillow's resize in a pool of processes."""
    import webdataset as wds
    os.makedirs(args.data, exist_ok=True)
    t0 = time.perf_counter()
    n = 0
    with wds.ShardWriter(os.path.join(args.data, "shard-%05d.tar"), maxcount=1000, verbose=0) as sink:
        for i, jpeg, label in contract.resized_photos(args.photos):
            sink.write({"__key__": f"{i:07d}", "jpg": jpeg, "cls": label})
            n += 1
    return dict(contract.converted(n, t0), writer="Pillow pool + wds.ShardWriter")


def read(args):
    import torch
    import webdataset as wds
    from peer_torchvision import transforms
    train = args.workload == "train"
    torch.set_num_threads(1)
    urls = sorted(glob.glob(os.path.join(args.data, "*.tar")))
    ds = wds.WebDataset(urls, shardshuffle=len(urls) if train else False, nodesplitter=None,
                        workersplitter=wds.split_by_worker, empty_check=False)
    if train:
        ds = ds.shuffle(1000)
    ds = ds.decode("pil").to_tuple("jpg", "cls").map_tuple(transforms(args.workload), int)
    ds = ds.batched(args.batch, partial=False)
    dl = wds.WebLoader(ds, batch_size=None, num_workers=contract.CORES, persistent_workers=True)
    info = {"version": getattr(wds, "__version__", "?"), "torch": torch.__version__,
            "shuffle": "shards + 1 000-sample buffer" if train else "none (sequential per worker)",
            "settings": f"WebDataset decode('pil') + batched in workers, WebLoader(num_workers={contract.CORES})"}

    def batches(epoch):
        for images, labels in dl:
            yield images, labels
    return contract.run_epochs(args, batches, info)


if __name__ == "__main__":
    contract.main("wds", write=write, convert=convert, read=read)
