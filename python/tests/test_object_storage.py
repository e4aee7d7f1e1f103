"""libshard.Loader over s3:// (a local s3rver on 127.0.0.1, the npm package
pinned in tools/s3rver) through the verified cache: the same batches as over
the local folder, no requests once the shards are cached. Objects are put
there by boto3, an independent client. Skips when node, s3rver, boto3 or the
shard program are missing, except under LOCAL_S3_REQUIRED=1 (CI)."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

import libshard

SOURCE = os.environ.get("LIBSHARD_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("LIBSHARD_BUILD_DIR") or os.path.join(SOURCE, "build")
REQUIRED = os.environ.get("LOCAL_S3_REQUIRED") == "1"


def missing(why):
    if REQUIRED:
        pytest.fail("LOCAL_S3_REQUIRED: " + why)
    pytest.skip(why)


class Server:
    """A child that prints "PORT n" and exits when its stdin closes."""

    def __init__(self, argv, log):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(log, "wb"))
        line = self.proc.stdout.readline().decode()
        if not line.startswith("PORT "):
            self.stop()
            raise RuntimeError("%s did not start: %s" % (argv[1], open(log).read()))
        self.port = int(line.split()[1])

    def stop(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def s3(tmp_path, monkeypatch):
    """s3rver with bucket "bkt" behind the tests' counting proxy; AWS_* set to reach it through the proxy."""
    if shutil.which("node") is None or not os.path.isdir(os.path.join(SOURCE, "tools/s3rver/node_modules")):
        missing("s3rver is not installed (tools/setup.sh --s3)")
    server = Server(["node", os.path.join(SOURCE, "tools/s3rver/serve.js"), str(tmp_path / "s3"), "bkt"],
                    str(tmp_path / "s3rver.log"))
    proxy = Server([sys.executable, os.path.join(SOURCE, "tests/servers/fault_proxy.py"), str(server.port)],
                   str(tmp_path / "proxy.log"))
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:%d" % proxy.port)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "S3RVER")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "S3RVER")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    # The default cache, should anything fall back to it: inside the test's folder, checked empty.
    monkeypatch.setenv("LIBSHARD_CACHE_DIR", str(tmp_path / "default-cache"))
    yield "http://127.0.0.1:%d" % server.port, "http://127.0.0.1:%d" % proxy.port
    proxy.stop()
    server.stop()


def gets(proxy):
    import json
    import urllib.request
    return json.load(urllib.request.urlopen(proxy + "/__stats__")).get("GET", 0)


def converted(tmp_path, shard_size="4KiB"):
    shard = os.path.join(BUILD, "tools", "shard")
    if not os.path.exists(shard):
        missing("no shard program at " + shard)
    rng = np.random.default_rng(5)
    for i in range(30):
        d = tmp_path / "in" / ("abc"[i % 3])
        d.mkdir(parents=True, exist_ok=True)
        Image.fromarray(rng.integers(0, 255, (20 + i % 7, 24, 3), dtype=np.uint8)).save(d / ("%d.png" % i))
    out = tmp_path / "ds"
    subprocess.run([shard, "convert", "-q", str(tmp_path / "in"), "-o", str(out), "--shard-size", shard_size,
                    "--threads", "2"], check=True)
    return out


def upload_with_boto3(endpoint, folder, prefix):
    try:
        import boto3
    except ImportError:
        missing("python3-boto3 is not installed")
    c = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="S3RVER", aws_secret_access_key="S3RVER",
                     region_name="us-east-1")
    for name in sorted(os.listdir(folder)):
        if os.path.isfile(os.path.join(folder, name)):
            c.upload_file(os.path.join(folder, name), "bkt", prefix + "/" + name)


def batches(loader, epochs):
    out = []
    for _ in range(epochs):
        out.append([(x.copy(), y.copy()) for x, y in loader])
    return out


def test_loader_over_s3_gives_the_local_batches_and_reads_nothing_more(s3, tmp_path):
    direct, proxy = s3
    out = converted(tmp_path)
    upload_with_boto3(direct, str(out), "data/ds")
    kw = dict(batch_size=4, image_size=(16, 16), shuffle=True, seed=3, threads=2)
    local = libshard.Loader(str(out), **kw)
    cache = tmp_path / "cache"
    remote = libshard.Loader("s3://bkt/data/ds", cache_dir=str(cache), **kw)
    assert gets(proxy) == 1  # the manifest: shards are fetched as the epoch reaches them
    shards = len([n for n in os.listdir(out) if n.endswith(".tfrecord")])
    assert remote.num_samples == local.num_samples == 30
    assert remote.labels == local.labels
    got, want = batches(remote, 1), batches(local, 1)
    after_first = gets(proxy)
    assert after_first == 1 + 2 * shards  # each shard and its index, once
    got, want = got + batches(remote, 1), want + batches(local, 1)
    assert len(got[0]) == len(want[0]) > 0
    for epoch_got, epoch_want in zip(got, want):
        for (x1, y1), (x2, y2) in zip(epoch_got, epoch_want):
            assert np.array_equal(x1, x2) and np.array_equal(y1, y2)
    assert gets(proxy) == after_first  # the second epoch read only the cache
    after_open = after_first
    # Another loader over the same cache (a second run): the manifest only.
    again = libshard.Loader("s3://bkt/data/ds/manifest.json", cache_dir=str(cache), **kw)
    assert gets(proxy) == after_open + 1
    assert again.num_samples == 30
    for x in (local, remote, again):
        x.close()


def test_loader_errors_name_the_object(s3, tmp_path, monkeypatch):
    direct, proxy = s3
    out = converted(tmp_path)
    upload_with_boto3(direct, str(out), "data/ds")
    with pytest.raises(ValueError, match="cache_limit 100 bytes cannot hold the largest shard"):
        libshard.Loader("s3://bkt/data/ds", batch_size=2, image_size=8, cache_dir=str(tmp_path / "c"),
                        cache_limit=100)
    with pytest.raises(FileNotFoundError, match="s3://bkt/nope/manifest.json"):
        libshard.Loader("s3://bkt/nope", batch_size=2, image_size=8, cache_dir=str(tmp_path / "c"))
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "WRONG")
    with pytest.raises(PermissionError, match="HTTP 403 SignatureDoesNotMatch") as e:
        libshard.Loader("s3://bkt/data/ds", batch_size=2, image_size=8, cache_dir=str(tmp_path / "c"))
    assert "WRONG" not in str(e.value)


def test_torch_shard_dataset_over_s3_with_workers(s3, tmp_path):
    torch = pytest.importorskip("torch")
    from libshard.torch import ShardDataset
    direct, proxy = s3
    out = converted(tmp_path)
    upload_with_boto3(direct, str(out), "data/ds")
    kw = dict(image_size=(16, 16), shuffle=True, seed=1, threads=1)
    local = ShardDataset(str(out), 4, **kw)
    remote = ShardDataset("s3://bkt/data/ds", 4, cache_dir=str(tmp_path / "cache"), **kw)

    def epoch(ds):
        dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)
        return sorted((y.tolist(), x.numpy().tobytes()) for x, y in dl)

    shards = len([n for n in os.listdir(out) if n.endswith(".tfrecord")])
    assert epoch(remote) == epoch(local)
    assert not os.path.exists(tmp_path / "default-cache")  # cache_dir reached the probe and every worker
    # The probe and the two workers each read the manifest; the shards and indexes came once.
    assert gets(proxy) == 3 + 2 * shards


def fault(proxy, mode, method, match="", count=1):
    import json
    import urllib.request
    body = json.dumps({"mode": mode, "method": method, "match": match, "count": count}).encode()
    urllib.request.urlopen(urllib.request.Request(proxy + "/__fault__", data=body, method="POST")).read()


def test_faults_on_the_way_still_give_the_local_batches_and_no_partial_file(s3, tmp_path):
    direct, proxy = s3
    out = converted(tmp_path)
    upload_with_boto3(direct, str(out), "data/ds")
    fault(proxy, "cut", "GET", ".tfrecord", 3)       # bodies cut midway
    fault(proxy, "slowdown", "GET", ".tfrecord", 2)  # 503 SlowDown
    fault(proxy, "error500", "GET", "manifest", 1)
    kw = dict(batch_size=4, image_size=(16, 16), shuffle=True, seed=9, threads=2)
    cache = tmp_path / "cache"
    remote = libshard.Loader("s3://bkt/data/ds", cache_dir=str(cache), **kw)
    local = libshard.Loader(str(out), **kw)
    for (x1, y1), (x2, y2) in zip(remote, local):
        assert np.array_equal(x1, x2) and np.array_equal(y1, y2)
    leftovers = [f for _, _, files in os.walk(cache) for f in files if ".libshard-partial-" in f]
    assert leftovers == []
    remote.close()
    local.close()


def uploaded(direct, tmp_path):
    """converted() put at s3://bkt/data/ds: its folder and the bytes of its shards and indexes."""
    out = converted(tmp_path)
    upload_with_boto3(direct, str(out), "data/ds")
    return out, sum(os.path.getsize(os.path.join(out, n)) for n in os.listdir(out) if n.endswith((".tfrecord", ".idx")))


def cached_bytes(cache):
    total = 0
    for d, _, files in os.walk(cache):
        for f in files:
            try:  # a file may be evicted between the listing and its size
                total += 0 if f.endswith(".libshard-lock") else os.path.getsize(os.path.join(d, f))
            except FileNotFoundError:
                pass
    return total


def test_extras_stream_through_a_small_cache_limit(s3, tmp_path):
    """extras= are read with the batch's pixels, inside the epoch's plan: a split about 3x cache_limit streams
    with them as without them (issue 32: they were read again after the batch, outside the plan, and the pins
    piled up until the cache refused a shard in epoch 0)."""
    direct, _ = s3
    out, total = uploaded(direct, tmp_path)
    limit, cache = total // 3, tmp_path / "cache"
    kw = dict(batch_size=2, image_size=(16, 16), threads=2, extras=["image/filename", "image/class/label"])
    remote = libshard.Loader("s3://bkt/data/ds", cache_dir=str(cache), cache_limit=limit, **kw)
    local = libshard.Loader(str(out), **kw)
    names = []
    for _ in range(2):
        for a, b in zip(remote, local):
            assert np.array_equal(a.images, b.images) and a.keys == b.keys
            assert a.keys["image/class/label"] == a.labels.tolist()
            names += a.keys["image/filename"]
            assert cached_bytes(cache) <= limit
    assert len(set(names)) == 30
    for x in (remote, local):
        x.close()


def test_loader_streams_through_a_small_cache_limit(s3, tmp_path):
    """A split about 3x cache_limit: read in order, shard by shard, evicting behind; the local batches; a global
    shuffle over it is refused naming block shuffle."""
    direct, proxy = s3
    out, total = uploaded(direct, tmp_path)
    limit, cache = total // 3, tmp_path / "cache"
    kw = dict(batch_size=2, image_size=(16, 16), threads=2)
    remote = libshard.Loader("s3://bkt/data/ds", cache_dir=str(cache), cache_limit=limit, **kw)
    local = libshard.Loader(str(out), **kw)

    def cached():
        return cached_bytes(cache)

    most = 0
    for _ in range(2):
        for (x1, y1), (x2, y2) in zip(remote, local):
            assert np.array_equal(x1, x2) and np.array_equal(y1, y2)
            most = max(most, cached())
    assert 0 < most <= limit
    shards = len([n for n in os.listdir(out) if n.endswith(".tfrecord")])
    assert gets(proxy) > 1 + 2 * shards  # evicted shards came again in the second epoch
    with pytest.raises(ValueError, match='block shuffle .*order="block-shuffle"'):
        libshard.Loader("s3://bkt/data/ds", cache_dir=str(cache), cache_limit=limit, shuffle=True, **kw)
    for x in (remote, local):
        x.close()
    # Block shuffle with blocks small enough for this split streams too (its windows span more shards than a
    # sequential read), in the same order as over the folder.
    bs = dict(kw, order="block-shuffle", block_size=2, window_blocks=2, seed=3)
    # The limit every epoch's windows fit (issue 32), as the refusals of smaller ones name it: the first
    # epoch's need, then what any epoch may need.
    limit, said = total // 3, []
    for _ in range(3):
        try:
            libshard.Loader("s3://bkt/data/ds", cache_dir=str(cache), cache_limit=limit, **bs).close()
            break
        except ValueError as e:
            said.append(str(e))
            limit = int(str(e).split("at least ")[1].split(",")[0])
    assert "in some epoch" in said[-1] and limit < total
    remote = libshard.Loader("s3://bkt/data/ds", cache_dir=str(cache), cache_limit=limit, **bs)
    local = libshard.Loader(str(out), **bs)
    labels = []
    for _ in range(2):
        for (x1, y1), (x2, y2) in zip(remote, local):
            assert np.array_equal(x1, x2) and np.array_equal(y1, y2)
            labels += y1.tolist()
            assert cached() <= limit
    assert labels != sorted(labels)  # shuffled, not sequential
    for x in (remote, local):
        x.close()


def test_convert_into_s3_uploads_what_the_program_uploads(s3, tmp_path):
    """libshard.convert(IN, "s3://b/p") is `shard convert IN -o s3://b/p`: the same library call, the objects the
    local conversion writes, manifest.json last; no local "s3:" folder (it used to write ./s3:/bkt/py and
    report success)."""
    try:
        import boto3
    except ImportError:
        missing("python3-boto3 is not installed")
    local = converted(tmp_path)  # the program's local conversion of tmp_path/in
    endpoint, _ = s3
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        r = libshard.convert(str(tmp_path / "in"), "s3://bkt/py", shard_size="4KiB", threads=2,
                             staging=str(tmp_path / "staging"))
    finally:
        os.chdir(cwd)
    assert not (tmp_path / "s3:").exists()
    assert r.output == "s3://bkt/py"
    assert r.manifest_path == "s3://bkt/py/manifest.json"
    assert r.shards and all(s.startswith("s3://bkt/py/") for s in r.shards)
    c = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="S3RVER", aws_secret_access_key="S3RVER",
                     region_name="us-east-1")
    keys = {o["Key"] for o in c.list_objects_v2(Bucket="bkt", Prefix="py/").get("Contents", [])}
    for name in sorted(os.listdir(local)):
        if name == "manifest.json" or not os.path.isfile(os.path.join(local, name)):
            continue
        assert "py/" + name in keys
        body = c.get_object(Bucket="bkt", Key="py/" + name)["Body"].read()
        assert body == open(os.path.join(local, name), "rb").read(), name
    assert "py/manifest.json" in keys
    # Shards go up and leave the staging folder as they are written.
    assert not any(n.endswith(".tfrecord") for n in os.listdir(tmp_path / "staging"))
    # A rerun resumes from the objects: nothing converted again.
    again = libshard.convert(str(tmp_path / "in"), "s3://bkt/py", shard_size="4KiB", threads=2,
                             staging=str(tmp_path / "staging"))
    assert again.shards_written == 0 and again.shards_reused == r.shards_written


def test_verify_over_s3_names_the_objects_as_the_program_does(s3, tmp_path):
    """libshard.verify("s3://b/p") is `shard verify --json s3://b/p`: the library's typed call over the staged
    objects, every path the object's URL (never the temporary folder), the program's document."""
    import json
    local = converted(tmp_path)
    endpoint, _ = s3
    upload_with_boto3(endpoint, str(local), "ds")
    rep = libshard.verify("s3://bkt/ds")
    assert rep.ok, rep.faults
    assert rep.summary["files"] == len([n for n in os.listdir(local) if n.endswith(".tfrecord")]) > 1
    assert all(f["path"].startswith("s3://bkt/ds/") for f in rep.files)
    assert [m["path"] for m in rep.json["manifests"]] == ["s3://bkt/ds/manifest.json"]
    cli = subprocess.run([os.path.join(BUILD, "tools", "shard"), "verify", "--json", "s3://bkt/ds"],
                         capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    doc = json.loads(cli.stdout)
    for d in (doc, rep.json):
        d["summary"].pop("seconds")
        d["summary"].pop("mb_per_s")
    assert rep.json == doc
    with pytest.raises(ValueError, match="shard verify: .*s3://bkt/typo"):
        libshard.verify("s3://bkt/typo")
    with pytest.raises(ValueError, match="checked on its own"):
        libshard.verify(["s3://bkt/ds", str(local)])


def uploaded_and_staging(s3, tmp_path, monkeypatch):
    """A converted folder uploaded as s3://bkt/ds, and TMPDIR (where the library stages) at an empty folder:
    (the local folder, the staging folder)."""
    local = converted(tmp_path)
    upload_with_boto3(s3[0], str(local), "ds")
    staging = tmp_path / "staging"
    staging.mkdir()
    monkeypatch.setenv("TMPDIR", str(staging))
    return local, staging


def test_report_over_s3_is_the_programs_page_naming_the_objects(s3, tmp_path, monkeypatch):
    """libshard.report("s3://b/p", out) is `shard report s3://b/p -o out`: the dataset staged by the library,
    the page the local folder's, naming the objects (never the temporary folder, which is gone after)."""
    local, staging = uploaded_and_staging(s3, tmp_path, monkeypatch)
    page = libshard.report("s3://bkt/ds", tmp_path / "remote.html", seed=2)
    assert page == str(tmp_path / "remote.html")
    mine = libshard.report(local, tmp_path / "local.html", seed=2)
    with open(mine, encoding="utf-8") as f:
        want = f.read().replace(str(local), "s3://bkt/ds")
    assert page._repr_html_() == want and "s3://bkt/ds" in want
    cli = subprocess.run([os.path.join(BUILD, "tools", "shard"), "report", "-q", "s3://bkt/ds", "-o",
                          str(tmp_path / "program.html"), "--seed", "2"], capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    with open(tmp_path / "program.html", encoding="utf-8") as f:
        assert f.read() == want
    assert os.listdir(staging) == []
    with pytest.raises(ValueError, match="shard report: s3://bkt/ds: .*output"):
        libshard.report("s3://bkt/ds")
    with pytest.raises(ValueError, match="shard report: .*s3://bkt/typo"):
        libshard.report("s3://bkt/typo", tmp_path / "typo.html")


def test_inspect_over_s3_is_the_local_files_summary_naming_the_object(s3, tmp_path, monkeypatch):
    """libshard.inspect("s3://b/p/x.tfrecord") is `shard inspect --json` of it: the library stages the object, the
    summary is the local file's, naming the URL; the records as dicts are for local files only."""
    local, staging = uploaded_and_staging(s3, tmp_path, monkeypatch)
    shard = sorted(n for n in os.listdir(local) if n.endswith(".tfrecord"))[0]
    got = libshard.inspect("s3://bkt/ds/" + shard, n=2)
    want = libshard.inspect(os.path.join(local, shard), n=2)
    assert got.file == "s3://bkt/ds/" + shard and got.records == want.records > 0
    assert got._replace(file=want.file, first_examples=want.first_examples) == want
    assert got.first_examples == [] and len(want.first_examples) == 2
    assert os.listdir(staging) == []
    with pytest.raises(ValueError, match="shard inspect: .*s3://bkt/ds/none.tfrecord"):
        libshard.inspect("s3://bkt/ds/none.tfrecord")


@pytest.fixture
def lying_s3(tmp_path, monkeypatch):
    """tests/servers/lying_s3.py (an S3 look-alike that lies when told to); AWS_* set to reach it anonymously."""
    server = Server([sys.executable, os.path.join(SOURCE, "tests/servers/lying_s3.py")], str(tmp_path / "lying.log"))
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:%d" % server.port)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("LIBSHARD_CACHE_DIR", str(tmp_path / "default-cache"))
    yield "http://127.0.0.1:%d" % server.port
    server.stop()


def lie(endpoint, **what):
    import json
    import urllib.request
    urllib.request.urlopen(urllib.request.Request(endpoint + "/__lie__", data=json.dumps(what).encode()))


def put_folder(endpoint, folder, prefix):
    import urllib.request
    for name in sorted(os.listdir(folder)):
        if os.path.isfile(os.path.join(folder, name)):
            with open(os.path.join(folder, name), "rb") as f:
                req = urllib.request.Request("%s/bkt/%s/%s" % (endpoint, prefix, name), data=f.read(), method="PUT")
            urllib.request.urlopen(req)


def test_close_after_ctrl_c_does_not_wait_for_slow_downloads(lying_s3, tmp_path, request):
    """A server dripping 1.5 KB/s (above the stall limit): Ctrl-C in next(), then close() returns within
    seconds, not when the transfers end; nothing half-downloaded is left looking complete."""
    import signal
    import threading
    import time
    out = converted(tmp_path, shard_size="1MiB")  # one shard of ~45 KB: 30 s at 1.5 KB/s
    put_folder(lying_s3, str(out), "data/ds")
    lie(lying_s3, lie="drip", method="GET", match=".tfrecord", count=1000, rate=1500)
    cache = tmp_path / "cache"
    loader = libshard.Loader("s3://bkt/data/ds", batch_size=4, image_size=(16, 16), threads=2,
                             cache_dir=str(cache))
    # Python's own handler, also when the suite runs in the background (SIGINT ignored then).
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, saved))
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        next(iter(loader))
    t0 = time.monotonic()
    loader.close()
    took = time.monotonic() - t0
    assert took < 3, "close() took %.1f s" % took
    for root, _, files in os.walk(cache):
        for name in files:
            assert name.endswith(".libshard-lock") or ".libshard-partial-" in name, name


def test_convert_from_a_bucket_gives_the_shards_of_its_local_copy(s3, tmp_path):
    """libshard.convert("s3://bkt/raw/"): the objects listed and read by GET convert as the folder they came from."""
    from tools_fixtures import assert_same_shards, make_image_folder
    direct, _ = s3
    raw = make_image_folder(str(tmp_path / "raw"))
    for root, _, files in os.walk(raw):
        if files:
            upload_with_boto3(direct, root, "raw/" + os.path.relpath(root, raw))
    options = dict(records_per_shard=3, seed=4, no_sync=True)
    local = libshard.convert(raw, tmp_path / "local", **options)
    remote = libshard.convert("s3://bkt/raw/", tmp_path / "remote", **options)
    assert remote.layout.text == local.layout.text and remote.rejected == local.rejected == 1
    assert_same_shards(str(tmp_path / "local"), str(tmp_path / "remote"))
    with pytest.raises(ValueError, match="only an s3:// prefix can be listed"):
        libshard.convert("https://127.0.0.1:1/raw/", tmp_path / "web")
