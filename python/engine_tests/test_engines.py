"""Spark, Ray and Beam run a conversion from samples (docs/distributed.md's recipes, as written there) with 1, 3
and 8 partitions, and a task killed mid-way and retried by the engine still gives the same bytes."""
import os

import pytest

import libshard
from conftest import OPTIONS, assert_same_dataset
from tools_fixtures import folder_rows as rows_of, sample_of as as_sample

PARTITIONS = [1, 3, 8]


# --- Spark ------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    import sys

    from pyspark.sql import SparkSession
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers run this venv's Python
    s = (SparkSession.builder.master("local[2,3]")  # 2 cores; a failed task is tried up to 3 times
         .config("spark.ui.enabled", "false")
         .config("spark.local.dir", str(tmp_path_factory.mktemp("spark")))
         .getOrCreate())
    yield s
    s.stop()


def spark_convert(spark, rows, pack, out, n, kill=None):
    """The recipe: stage 1 writes partition i of the pack in task i, stage 2 converts task i's shards, merge."""
    def write(index, part):
        if kill is not None:
            part = kill(index, part)
        yield libshard.write_samples((as_sample(r) for r in part), pack, name="pets", partition=index,
                                     partitions=n)
    written = spark.sparkContext.parallelize(rows, n).mapPartitionsWithIndex(write).collect()
    assert sum(written) == len(rows)

    def convert(i):
        libshard.convert(pack, out, num_tasks=n, task_index=i, **OPTIONS)
    spark.sparkContext.parallelize(range(n), n).foreach(convert)
    return libshard.merge(out)


@pytest.mark.parametrize("n", PARTITIONS)
def test_spark(spark, pets, tmp_path, n):
    folder, local = pets
    m = spark_convert(spark, rows_of(folder), str(tmp_path / "pack"), str(tmp_path / "out"), n)
    assert m.tasks == n
    assert_same_dataset(local, str(tmp_path / "out"))


def test_spark_task_killed_mid_way_and_retried(spark, pets, tmp_path):
    folder, local = pets

    def kill(index, part):
        from pyspark import TaskContext
        first = TaskContext.get().attemptNumber() == 0
        for i, row in enumerate(part):
            if index == 1 and first and i == 2:
                os._exit(1)  # the Python worker dies with the partition half-written
            yield row
    spark_convert(spark, rows_of(folder), str(tmp_path / "pack"), str(tmp_path / "out"), 3, kill=kill)
    assert_same_dataset(local, str(tmp_path / "out"))
    assert not [f for f in os.listdir(tmp_path / "pack") if "partial" in f]


# --- Ray --------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ray_cluster(private_tmp):
    import ray
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=os.path.join(private_tmp, "ray"),
             runtime_env={"env_vars": {"PYTHONPATH": os.environ["PYTHONPATH"]}})
    yield ray
    ray.shutdown()


def ray_convert(ray, rows, pack, out, n, attempts_dir=None):
    @ray.remote(max_retries=2)  # a worker that dies is retried
    def write(part, index):
        if attempts_dir is not None and index == 1 and not os.path.exists(os.path.join(attempts_dir, "killed")):
            open(os.path.join(attempts_dir, "killed"), "w").close()
            samples = (as_sample(r) for r in part)
            next(samples)
            os._exit(1)
        return libshard.write_samples((as_sample(r) for r in part), pack, name="pets", partition=index,
                                      partitions=n)

    @ray.remote
    def convert(i):
        libshard.convert(pack, out, num_tasks=n, task_index=i, **OPTIONS)

    parts = [rows[i::n] for i in range(n)]
    assert sum(ray.get([write.remote(parts[i], i) for i in range(n)])) == len(rows)
    ray.get([convert.remote(i) for i in range(n)])
    return libshard.merge(out)


@pytest.mark.parametrize("n", PARTITIONS)
def test_ray(ray_cluster, pets, tmp_path, n):
    folder, local = pets
    m = ray_convert(ray_cluster, rows_of(folder), str(tmp_path / "pack"), str(tmp_path / "out"), n)
    assert m.tasks == n
    assert_same_dataset(local, str(tmp_path / "out"))


def test_ray_worker_killed_and_retried(ray_cluster, pets, tmp_path):
    folder, local = pets
    ray_convert(ray_cluster, rows_of(folder), str(tmp_path / "pack"), str(tmp_path / "out"), 3,
                attempts_dir=str(tmp_path))
    assert os.path.exists(tmp_path / "killed")
    assert_same_dataset(local, str(tmp_path / "out"))


# --- Beam -------------------------------------------------------------------------------------------------------

def beam_convert(rows, pack, out, n, fail_once=None, options=None):
    import apache_beam as beam

    def write(index, part):
        part = [r for r in part if r is not None]
        if fail_once is not None and index == 1 and not os.path.exists(fail_once):
            open(fail_once, "w").close()
            raise RuntimeError("a worker lost mid-way")
        return libshard.write_samples((as_sample(r) for r in part), pack, name="pets", partition=index,
                                      partitions=n)

    with beam.Pipeline("DirectRunner", options=options) as p:
        keyed = p | "rows" >> beam.Create(rows) | beam.Map(lambda r: (libshard_partition(r["key"], n), r))
        every = p | "partitions" >> beam.Create([(i, None) for i in range(n)])  # so an empty partition is written
        ((keyed, every) | beam.Flatten() | beam.GroupByKey() | beam.MapTuple(write))
    with beam.Pipeline("DirectRunner", options=options) as p:
        (p | beam.Create(range(n))
         | beam.Map(lambda i: libshard.convert(pack, out, num_tasks=n, task_index=i, **OPTIONS)))
    return libshard.merge(out)


def libshard_partition(key, n):
    """A stable partition of a key (any rule does: the result does not depend on the partitioning)."""
    import zlib
    return zlib.crc32(key.encode()) % n


@pytest.mark.parametrize("n", PARTITIONS)
def test_beam(pets, tmp_path, n):
    folder, local = pets
    m = beam_convert(rows_of(folder), str(tmp_path / "pack"), str(tmp_path / "out"), n)
    assert m.tasks == n
    assert_same_dataset(local, str(tmp_path / "out"))


def test_beam_pipeline_failed_mid_way_then_run_again(pets, tmp_path):
    folder, local = pets
    with pytest.raises(Exception, match="a worker lost mid-way"):
        beam_convert(rows_of(folder), str(tmp_path / "pack"), str(tmp_path / "out"), 3,
                     fail_once=str(tmp_path / "failed"))
    beam_convert(rows_of(folder), str(tmp_path / "pack"), str(tmp_path / "out"), 3)
    assert_same_dataset(local, str(tmp_path / "out"))


def test_beam_bundles_run_twice_give_the_same_bytes(pets, tmp_path):
    """Beam's own idempotence check: every bundle (a partition's write, a task's conversion) is run again."""
    from apache_beam.options.pipeline_options import PipelineOptions
    folder, local = pets
    beam_convert(rows_of(folder), str(tmp_path / "pack"), str(tmp_path / "out"), 3,
                 options=PipelineOptions(direct_runner_bundle_repeat=1))
    assert_same_dataset(local, str(tmp_path / "out"))
