"""tf.data: libshard's TFRecord shards read as they are by TensorFlow.

Settings from the tf.data performance guide (https://www.tensorflow.org/guide/data_performance:
parallel interleave of the files, parallel map, AUTOTUNE everywhere, prefetch at
the end) and TensorFlow's ResNet input pipeline (tensorflow/models official/
legacy/image_classification/preprocessing.py, https://github.com/tensorflow/models):
tf.image.decode_and_crop_jpeg, so only the window is decoded, with
tf.image.sample_distorted_bounding_box for the train crop. The thread budget:
the private thread pool of the pipeline and the op pools set to the cores.

Eval: the stored images have a shorter side of 256, so the recipe's
`_decode_and_center_crop` (224/(224+32) of the shorter side, centred) is a
224x224 centre window, decoded alone. Train: sample_distorted_bounding_box
with torchvision's scale and ratio (area 0.08-1, aspect 3/4-4/3, 10 tries,
min_object_covered 0 so any area qualifies), decode_and_crop_jpeg, bilinear
resize to 224, random_flip_left_right, rounded back to uint8. Shuffle: the
file order, then a 10 000-record buffer, as the recipe (more than this
dataset holds, so a global shuffle here; a buffer on a larger one).

dct_method="INTEGER_ACCURATE": TensorFlow's default ("", libjpeg's fast integer
IDCT) gives other pixels than every other reader here (libjpeg-turbo's
accurate IDCT, as Pillow, libshard, DALI and FFCV decode): measured on these
JPEGs, red and blue 1.2-1.8 levels darker per image, enough to fail the eval
check. With INTEGER_ACCURATE tf.data returns Pillow's pixels exactly.
"""
import time

import contract


DCT = "INTEGER_ACCURATE"


def _tf():
    import os
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    tf.config.threading.set_inter_op_parallelism_threads(contract.CORES)
    tf.config.threading.set_intra_op_parallelism_threads(contract.CORES)
    return tf



def write(args):
    """tf.data reads libshard's shards unchanged: check that the bytes it
    parses are libshard's (through TensorFlow's own parser)."""
    tf = _tf()
    feats = {"image/encoded": tf.io.FixedLenFeature([], tf.string)}
    records = tf.data.TFRecordDataset(contract.tfrecord_files(args.shards))
    stored = [tf.io.parse_single_example(r, feats)["image/encoded"].numpy() for r in records]
    return {"same_bytes": contract.check_same_bytes(args.shards, lambda i: stored[i]),
            "note": "reads libshard's TFRecords as they are"}


def convert(args):
    """tf.data has no image writer: Pillow resizes in a pool, tf.io.TFRecordWriter
    writes tf.train.Examples (as TensorFlow's build_imagenet_data does)."""
    import os
    tf = _tf()
    os.makedirs(args.data, exist_ok=True)
    t0 = time.perf_counter()
    n = 0
    with tf.io.TFRecordWriter(os.path.join(args.data, "train.tfrecord")) as w:
        for _, jpeg, label in contract.resized_photos(args.photos):
            ex = tf.train.Example(features=tf.train.Features(feature={
                "image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(value=[jpeg])),
                "image/class/label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label]))}))
            w.write(ex.SerializeToString())
            n += 1
    return dict(contract.converted(n, t0), writer="Pillow pool + tf.io.TFRecordWriter")


def read(args):
    tf = _tf()
    train = args.workload == "train"
    AUTOTUNE = tf.data.AUTOTUNE
    size = contract.SIZE
    feats = {"image/encoded": tf.io.FixedLenFeature([], tf.string),
             "image/class/label": tf.io.FixedLenFeature([], tf.int64, default_value=-1)}

    def decode(record):
        ex = tf.io.parse_single_example(record, feats)
        jpeg = ex["image/encoded"]
        shape = tf.io.extract_jpeg_shape(jpeg)
        if train:
            begin, box, _ = tf.image.sample_distorted_bounding_box(
                shape, bounding_boxes=tf.constant([0.0, 0.0, 1.0, 1.0], shape=[1, 1, 4]),
                min_object_covered=0.0, aspect_ratio_range=contract.RATIO, area_range=contract.SCALE,
                max_attempts=10, use_image_if_no_bounding_boxes=True)
            oy, ox, _ = tf.unstack(begin)
            h, w, _ = tf.unstack(box)
            img = tf.image.decode_and_crop_jpeg(jpeg, tf.stack([oy, ox, h, w]), channels=3, dct_method=DCT)
            img = tf.image.resize(img, [size, size], method="bilinear")
            img = tf.image.random_flip_left_right(img)
            img = tf.cast(tf.clip_by_value(tf.round(img), 0, 255), tf.uint8)
        else:
            oy, ox = (shape[0] - size) // 2, (shape[1] - size) // 2  # floor, as libshard and FFCV
            img = tf.image.decode_and_crop_jpeg(jpeg, tf.stack([oy, ox, size, size]), channels=3, dct_method=DCT)
            img = tf.ensure_shape(img, [size, size, 3])
        return img, ex["image/class/label"]

    files = contract.tfrecord_files(args.shards)
    ds = tf.data.Dataset.from_tensor_slices(files)
    if train:
        ds = ds.shuffle(len(files))
    ds = ds.interleave(tf.data.TFRecordDataset, cycle_length=min(len(files), 8), num_parallel_calls=AUTOTUNE,
                       deterministic=not train)
    if train:
        ds = ds.shuffle(10_000)
    ds = ds.map(decode, num_parallel_calls=AUTOTUNE, deterministic=not train)
    ds = ds.batch(args.batch, drop_remainder=True).prefetch(AUTOTUNE)
    options = tf.data.Options()
    options.threading.private_threadpool_size = contract.CORES
    ds = ds.with_options(options)
    info = {"version": tf.__version__,
            "shuffle": "files + 10 000-record buffer (global here)" if train else "none (sequential)",
            "settings": f"interleave + map(AUTOTUNE) + batch + prefetch, private pool {contract.CORES} threads, "
                        "decode_and_crop_jpeg"}

    def batches(epoch):
        for images, labels in ds:
            yield images, labels
    return contract.run_epochs(args, batches, info)


if __name__ == "__main__":
    contract.main("tfdata", write=write, convert=convert, read=read)
