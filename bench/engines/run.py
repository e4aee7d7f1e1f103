"""The engines' overhead (issue 48): one image folder converted, in one run on the same cores, by

  local   libshard.convert(FOLDER, ...)                        the plain local run (the baseline)
  python  libshard.convert_samples(the folder's files, ...)    one process, through a sample pack
  spark   pyspark local[CORES]: write_samples per partition, convert per task, merge   (docs/distributed.md)
  ray     a local Ray cluster of CORES CPUs: the same two stages of tasks
  beam    Beam's DirectRunner: the same two pipelines

and prints, for each, the wall time (and the engine's own start-up apart), images a second, images a second per
core, and the ratio to the local run; every result is checked against the local run's shards (byte for byte).

    python bench/engines/run.py PHOTOS [--cores 2] [--partitions 4] [--size 160] [--engines spark,ray,beam]

Run it in a venv that sees python/stacks/engines.txt with the libshard wheel installed (tools/test_today.sh makes
one; `bench/peers/make_photos.py PHOTOS --count 2000` makes PHOTOS). Not a test: it asserts only that every
engine wrote the local run's bytes.
"""
import argparse
import filecmp
import os
import shutil
import sys
import tempfile
import time
import zlib

import libshard


def keys_of(root):
    return sorted(os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
                  for d, _, fs in os.walk(root) for f in fs)


def samples(root, keys):
    for k in keys:
        with open(os.path.join(root, k), "rb") as f:
            yield {"key": k, "image": f.read(), "label": k.split("/")[0]}


def same_shards(a, b):
    names = sorted(f for f in os.listdir(a) if ".tfrecord" in f)
    assert names == sorted(f for f in os.listdir(b) if ".tfrecord" in f), (a, b)
    for n in names:
        assert filecmp.cmp(os.path.join(a, n), os.path.join(b, n), shallow=False), n


def run_spark(root, keys, pack, out, n, cores, options):
    from pyspark.sql import SparkSession
    os.environ["PYSPARK_PYTHON"] = sys.executable
    t0 = time.perf_counter()
    spark = SparkSession.builder.master("local[%d]" % cores).config("spark.ui.enabled", "false").getOrCreate()
    spark.sparkContext.parallelize([0], 1).count()  # the workers are up
    start = time.perf_counter() - t0

    def write(index, part):
        yield libshard.write_samples(samples(root, list(part)), pack, name="photos", partition=index, partitions=n,
                                     sync=False)
    t0 = time.perf_counter()
    spark.sparkContext.parallelize(keys, n).mapPartitionsWithIndex(write).collect()
    spark.sparkContext.parallelize(range(n), n).foreach(
        lambda i: libshard.convert(pack, out, num_tasks=n, task_index=i, **options))
    libshard.merge(out)
    wall = time.perf_counter() - t0
    spark.stop()
    return start, wall


def run_ray(root, keys, pack, out, n, cores, options):
    import ray
    t0 = time.perf_counter()
    ray.init(num_cpus=cores, include_dashboard=False, log_to_driver=False)

    @ray.remote
    def write(part, index):
        return libshard.write_samples(samples(root, part), pack, name="photos", partition=index, partitions=n,
                                      sync=False)

    @ray.remote
    def convert(i):
        libshard.convert(pack, out, num_tasks=n, task_index=i, **options)
    ray.get([write.remote([], 0)])  # a worker is up (writes an empty partition 0, rewritten below)
    start = time.perf_counter() - t0
    t0 = time.perf_counter()
    ray.get([write.remote(keys[i::n], i) for i in range(n)])
    ray.get([convert.remote(i) for i in range(n)])
    libshard.merge(out)
    wall = time.perf_counter() - t0
    ray.shutdown()
    return start, wall


def run_beam(root, keys, pack, out, n, cores, options):
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions
    opts = PipelineOptions(direct_num_workers=cores, direct_running_mode="multi_processing")

    def write(index, part):
        part = [k for k in part if k is not None]
        return libshard.write_samples(samples(root, part), pack, name="photos", partition=index, partitions=n,
                                      sync=False)
    t0 = time.perf_counter()
    with beam.Pipeline(options=opts) as p:
        keyed = p | "keys" >> beam.Create(keys) | beam.Map(lambda k: (zlib.crc32(k.encode()) % n, k))
        every = p | "partitions" >> beam.Create([(i, None) for i in range(n)])
        (keyed, every) | beam.Flatten() | beam.GroupByKey() | beam.MapTuple(write)
    with beam.Pipeline(options=opts) as p:
        p | beam.Create(range(n)) | beam.Map(lambda i: libshard.convert(pack, out, num_tasks=n, task_index=i,
                                                                        **options))
    libshard.merge(out)
    return 0.0, time.perf_counter() - t0  # Beam starts its workers inside each pipeline: counted in the wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("photos")
    ap.add_argument("--cores", type=int, default=os.cpu_count())
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--size", type=int, default=160)
    ap.add_argument("--engines", default="spark,ray,beam")
    args = ap.parse_args()
    root = os.path.abspath(args.photos)
    keys = keys_of(root)
    n, cores = args.partitions, args.cores
    work = tempfile.mkdtemp(prefix="libshard-bench-engines-")
    os.environ["TMPDIR"] = tempfile.tempdir = work  # the engines' scratch files go with the rest
    os.environ["JAVA_TOOL_OPTIONS"] = "-XX:-UsePerfData -Djava.io.tmpdir=" + work  # no /tmp/hsperfdata_USER
    # Each task converts with one thread: the engine gives the parallelism (cores tasks at once).
    options = dict(size=args.size, records_per_shard=200, no_sync=True, threads=1)
    rows = []
    try:
        t0 = time.perf_counter()
        libshard.convert(root, os.path.join(work, "local"), prefix="photos", no_sync=True, size=args.size,
                         records_per_shard=200, threads=cores)
        base = time.perf_counter() - t0
        rows.append(("local (libshard.convert, %d threads)" % cores, 0.0, base))
        t0 = time.perf_counter()
        libshard.convert_samples(samples(root, keys), os.path.join(work, "python"), name="photos", no_sync=True,
                                 size=args.size, records_per_shard=200, threads=cores)
        rows.append(("python (convert_samples, %d threads)" % cores, 0.0, time.perf_counter() - t0))
        same_shards(os.path.join(work, "local"), os.path.join(work, "python"))
        runners = {"spark": run_spark, "ray": run_ray, "beam": run_beam}
        for name in args.engines.split(","):
            out = os.path.join(work, name)
            start, wall = runners[name](root, keys, os.path.join(work, name + "-pack"), out, n, cores, options)
            same_shards(os.path.join(work, "local"), out)
            rows.append(("%s (%d partitions, %d tasks)" % (name, n, n), start, wall))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("engines: %d images of %s, --size %d, %d cores (%s)" % (len(keys), args.photos, args.size, cores,
                                                               time.strftime("%Y-%m-%d")))
    print("| run | engine start s | wall s | images/s | images/s per core | vs local |")
    print("|---|---|---|---|---|---|")
    for name, start, wall in rows:
        rate = len(keys) / wall
        print("| %s | %.1f | %.2f | %.0f | %.0f | %.2f |" % (name, start, wall, rate, rate / cores, base / wall))


if __name__ == "__main__":
    main()
