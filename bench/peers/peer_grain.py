"""Grain (optional peer): ArrayRecord files of libshard's JPEG bytes, read by
grain's MapDataset with worker processes.

Settings from Grain's docs (https://google-grain.readthedocs.io/, "Dataset
basics", "Performance & debugging"): ArrayRecordDataSource, MapDataset with a
global shuffle (.shuffle(seed), a permutation of the indices), .map for the
decode + crop, .batch(drop_remainder=True), to_iter_dataset with ReadOptions
and .mp_prefetch(MultiprocessingOptions(num_workers=cores)) to move the
decoding into processes. Grain's default of 16 read threads is set down to
the thread budget. Grain has no image ops: Pillow decodes, and contract.py's
numpy/Pillow crops follow torchvision's box sampling.
"""
import os
import struct

import contract


def _pack(jpeg, label):
    return struct.pack("<q", label) + jpeg


def write(args):
    from array_record.python.array_record_module import ArrayRecordReader, ArrayRecordWriter
    os.makedirs(args.data, exist_ok=True)
    path = os.path.join(args.data, "data.array_record")
    w = ArrayRecordWriter(path, "group_size:1")  # group_size 1: random access to each record
    for jpeg, label in contract.libshard_samples(args.shards):
        w.write(_pack(jpeg, label))
    w.close()
    r = ArrayRecordReader(path)
    return {"same_bytes": contract.check_same_bytes(args.shards, lambda i: r.read([i])[0][8:])}


class _Decode:
    def __init__(self, train):
        self.train = train

    def __call__(self, record):
        import io
        import random
        from PIL import Image
        (label,) = struct.unpack_from("<q", record)
        with Image.open(io.BytesIO(record[8:])) as im:
            img = im.convert("RGB")
        if self.train:
            return contract.pil_train_crop(img, random), label
        return contract.pil_eval_crop(img), label


def read(args):
    import grain
    train = args.workload == "train"
    source = grain.sources.ArrayRecordDataSource([os.path.join(args.data, "data.array_record")])
    version = getattr(grain, "__version__", "?")
    info = {"version": version, "shuffle": "global (index permutation per epoch)" if train else "none (sequential)",
            "settings": f"MapDataset + mp_prefetch(num_workers={contract.CORES}), ReadOptions(num_threads="
                        f"{contract.CORES}), Pillow decode"}

    def batches(epoch):
        ds = grain.MapDataset.source(source)
        if train:
            ds = ds.shuffle(seed=epoch)
        ds = ds.map(_Decode(train)).batch(args.batch, drop_remainder=True)
        it = ds.to_iter_dataset(grain.ReadOptions(num_threads=contract.CORES, prefetch_buffer_size=2 * args.batch))
        it = it.mp_prefetch(grain.MultiprocessingOptions(num_workers=contract.CORES))
        for images, labels in it:
            yield images, labels
    return contract.run_epochs(args, batches, info)


if __name__ == "__main__":
    contract.main("grain", write=write, read=read)
