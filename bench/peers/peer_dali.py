"""NVIDIA DALI, CPU-only pipeline (device="cpu", device_id=None), reading
libshard's TFRecord shards as they are.

Settings from DALI's docs: the TFRecord reader (fn.readers.tfrecord, with the
index files its tfrecord2idx makes; https://docs.nvidia.com/deeplearning/dali/
user-guide/docs/examples/general/data_loading/dataloading_tfrecord.html), its
ResNet-50 recipe (docs/examples/use_cases/pytorch/resnet50/main.py:
fn.decoders.image_random_crop, the fused decode + random crop that decodes only
the window, then fn.resize to 224 and a coin-flip mirror) and num_threads = the
thread budget (pipeline_def). Eval: the stored shorter side is 256, so the
recipe's resize_shorter=256 + centre crop is fn.decoders.image_crop, a fused
centre-window decode. Output: uint8 HWC (DALI's decoders' layout).
Shuffle: the reader's random_shuffle, a buffer of initial_fill=1024 samples
(DALI's default). Batches straddle epochs (the reader loops): each "epoch" is
epoch_size // batch batches, the drop_last count.
"""
import os

import contract


def write(args):
    """DALI reads libshard's TFRecords; it only needs its own index files
    (one "offset size" line per record, as DALI's tfrecord2idx writes)."""
    os.makedirs(args.data, exist_ok=True)
    for path in contract.tfrecord_files(args.shards):
        with open(os.path.join(args.data, os.path.basename(path) + ".dali.idx"), "w") as f:
            for _, offset, size in contract.tfrecord_records(path, with_offsets=True):
                f.write(f"{offset} {size}\n")
    return {"same_bytes": {"checked": 0, "mismatched": 0, "note": "reads libshard's TFRecord files themselves"},
            "note": "reads libshard's TFRecords as they are"}


def read(args):
    import nvidia.dali as dali
    import nvidia.dali.fn as fn
    import nvidia.dali.tfrecord as tfrec
    import nvidia.dali.types as types
    train = args.workload == "train"
    files = contract.tfrecord_files(args.shards)
    index = [os.path.join(args.data, os.path.basename(p) + ".dali.idx") for p in files]
    size = contract.SIZE

    @dali.pipeline_def(batch_size=args.batch, num_threads=contract.CORES, device_id=None, seed=0,
                       prefetch_queue_depth=2)
    def pipeline():
        inputs = fn.readers.tfrecord(
            path=files, index_path=index, random_shuffle=train, name="Reader",
            features={"image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
                      "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1)})
        jpegs, labels = inputs["image/encoded"], inputs["image/class/label"]
        if train:
            images = fn.decoders.image_random_crop(jpegs, device="cpu", output_type=types.RGB,
                                                   random_area=list(contract.SCALE),
                                                   random_aspect_ratio=list(contract.RATIO), num_attempts=10)
            images = fn.resize(images, device="cpu", resize_x=size, resize_y=size,
                               interp_type=types.INTERP_LINEAR, antialias=False)
            images = fn.flip(images, device="cpu", horizontal=fn.random.coin_flip(probability=0.5))
        else:
            images = fn.decoders.image_crop(jpegs, device="cpu", output_type=types.RGB, crop=(size, size),
                                            crop_pos_x=0.5, crop_pos_y=0.5)
        return images, labels

    pipe = pipeline()
    pipe.build()
    per_epoch = pipe.epoch_size("Reader") // args.batch
    info = {"version": dali.__version__,
            "shuffle": "buffer (initial_fill 1024)" if train else "none (sequential)",
            "settings": f"CPU pipeline, num_threads={contract.CORES}, "
                        + ("decoders.image_random_crop + resize + flip" if train else "decoders.image_crop")}

    def batches(epoch):
        for _ in range(per_epoch):
            images, labels = pipe.run()
            yield images.as_array(), labels.as_array()
    return contract.run_epochs(args, batches, info)


if __name__ == "__main__":
    contract.main("dali", write=write, read=read)
