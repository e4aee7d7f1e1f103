"""MosaicML Streaming: MDS shards (a `bytes` column for the JPEG, an `int`
label) read by StreamingDataset in a torch DataLoader.

Settings from Streaming's docs (https://docs.mosaicml.com/projects/streaming/,
"Dataset format: MDS", "Shuffling" and "Performance tuning"): MDSWriter
without compression (JPEGs do not compress), StreamingDataset over the local
copy (local=, no remote) with its default shuffle (py1e), batch_size given to
the dataset so its partitioning matches the loader's, and a DataLoader with
workers = the thread budget; the image is decoded with Pillow and transformed
with torchvision in the dataset's __getitem__, as the docs' ImageNet example.
"""
import os
import time

import contract


def _clean():
    # Streaming keeps its state in named shared memory; a previous run killed
    # midway leaves some behind and the next dataset refuses to start.
    from streaming.base.util import clean_stale_shared_memory
    clean_stale_shared_memory()


def write(args):
    from streaming import MDSWriter, StreamingDataset
    with MDSWriter(out=args.data, columns={"jpg": "bytes", "cls": "int"}, compression=None,
                   size_limit="32mb") as w:
        for jpeg, label in contract.libshard_samples(args.shards):
            w.write({"jpg": jpeg, "cls": label})
    _clean()
    ds = StreamingDataset(local=args.data, shuffle=False, batch_size=1)
    return {"same_bytes": contract.check_same_bytes(args.shards, lambda i: ds.get_item(i)["jpg"])}


def convert(args):
    """MDSWriter (one process, as the docs write) fed by Pillow's resize in a pool."""
    from streaming import MDSWriter
    t0 = time.perf_counter()
    n = 0
    with MDSWriter(out=args.data, columns={"jpg": "bytes", "cls": "int"}, compression=None,
                   size_limit="32mb") as w:
        for _, jpeg, label in contract.resized_photos(args.photos):
            w.write({"jpg": jpeg, "cls": label})
            n += 1
    return dict(contract.converted(n, t0), writer="Pillow pool + MDSWriter")


def read(args):
    import streaming
    import torch
    from streaming import StreamingDataset
    from peer_torchvision import pil_rgb, transforms
    train = args.workload == "train"
    torch.set_num_threads(1)
    _clean()
    transform = transforms(args.workload)

    class Images(StreamingDataset):
        def __getitem__(self, i):
            x = super().__getitem__(i)
            return transform(pil_rgb(x["jpg"])), x["cls"]

    ds = Images(local=args.data, shuffle=train, shuffle_seed=0, batch_size=args.batch)
    dl = torch.utils.data.DataLoader(ds, batch_size=args.batch, num_workers=contract.CORES, drop_last=True,
                                     persistent_workers=True)
    info = {"version": streaming.__version__, "torch": torch.__version__,
            # py1e shuffles within blocks of shuffle_block_size samples (default
            # max(4M / canonical nodes, 2^18)): more than this dataset, so global here.
            "shuffle": f"{ds.shuffle_algo} (blocks of {ds.shuffle_block_size or 'the default 2^18+'} samples: "
                       "global here)" if train
            else "none (sequential)",
            "settings": f"StreamingDataset (local) + DataLoader(num_workers={contract.CORES}), Pillow decode"}

    def batches(epoch):
        for images, labels in dl:
            yield images, labels
    return contract.run_epochs(args, batches, info)


if __name__ == "__main__":
    contract.main("mds", write=write, convert=convert, read=read)
