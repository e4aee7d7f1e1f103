// `shard-bench s3`: the object-storage speed goals of issue 20, each as a
// ratio against a baseline measured in the same run, over a running
// S3-compatible server named by AWS_ENDPOINT_URL (e.g. s3rver on loopback:
// `node tools/s3rver/serve.js DIR BUCKET`, then AWS_ENDPOINT_URL=http://127.0.0.1:PORT
// AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER):
//
//   convert    `shard convert` of N 224x224 JPEG photos into s3:// (local
//              staging + upload as shards finish) vs into a local folder
//              (goal: >= 0.8x)
//   cache fill every shard of the s3:// copy fetched into an empty cache
//              through Dataset::OpenShard (C downloads at once) vs `curl`
//              fetching the same objects with C parallel connections
//              (goal: >= 0.9x)
//   cold epoch open + one epoch of 224x224 uint8 batches over s3:// with an
//              empty cache (shards downloaded ahead of the epoch's order as
//              it runs) vs the same over the local folder (goal: >= 0.8x)
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

#include "bench.h"
#include "bench_util.h"
#include "cli_checks.h"
#include "libshard/convert/converter.h"
#include "libshard/image/encode.h"
#include "libshard/image/image.h"
#include "libshard/reader/batch_loader.h"
#include "libshard/reader/dataset.h"
#include "libshard/remote/uploader.h"
#include "libshard/store/object_store.h"
#include "libshard/util/byte_size.h"

namespace shard_tool {
namespace {

namespace fs = std::filesystem;
using libshard::Status;
using libshard::remote::ShardUploader;

struct S3BenchOptions {
  std::string bucket;
  std::string prefix = "shard-bench";
  size_t images = 1200;
  std::string shard_size = "4MiB";
  int connections = 8;
  int threads = 2;
  int server_pid = 0;  // the server's process, for its CPU time (0: not measured)
};

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// CPU seconds (user + system) this process has used.
double SelfCpu() {
  struct rusage u;
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

// CPU seconds (user + system) process `pid` has used (/proc/PID/stat), 0 when unknown.
double ProcessCpu(int pid) {
  if (pid <= 0) return 0;
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (f == nullptr) return 0;
  char buf[2048];
  const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');  // after the command name
  unsigned long long utime = 0, stime = 0;
  if (p == nullptr ||
      std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2) {
    return 0;
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// Seconds of one epoch of 224x224 uint8 batches over `ds`.
double Epoch(std::shared_ptr<const libshard::reader::Dataset> ds, int threads, Status* err) {
  libshard::reader::BatchLoaderOptions lo;
  lo.batch_size = 64;
  lo.threads = threads;
  const double t0 = Now();
  auto loader = libshard::reader::BatchLoader::Create(ds, lo);
  if (!loader.ok()) {
    *err = loader.status();
    return -1;
  }
  for (uint64_t b = 0; b < (*loader)->batches_per_epoch(); ++b) {
    libshard::reader::Batch batch;
    if (Status s = (*loader)->Next(&batch); !s.ok()) *err = s;
  }
  return Now() - t0;
}

int Run(const S3BenchOptions& opt) {
  namespace convert = libshard::convert;
  namespace reader = libshard::reader;
  const char* endpoint = std::getenv("AWS_ENDPOINT_URL");
  if (endpoint == nullptr || opt.bucket.empty()) {
    std::cerr << "shard-bench s3: set AWS_ENDPOINT_URL (and AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY) to a "
                 "running S3-compatible server and give --bucket\n";
    return kExitUsage;
  }
  char templ[] = "/tmp/shard-bench-s3-XXXXXX";
  if (::mkdtemp(templ) == nullptr) return kExitFailure;
  const std::string dir = templ;
  struct Cleanup {
    std::string d;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  } cleanup{dir};
  // The photos, as an image folder.
  libshard::image::JpegEncodeOptions jo;
  jo.quality = 90;
  uint64_t jpeg_bytes = 0;
  for (size_t i = 0; i < opt.images; ++i) {
    auto j = libshard::image::EncodeJpeg(PhotoLike224(static_cast<int>(i)), jo);
    if (!j.ok()) return kExitFailure;
    const std::string cls = dir + "/in/class" + std::to_string(i % 4);
    fs::create_directories(cls);
    std::FILE* f = std::fopen((cls + "/" + std::to_string(i) + ".jpg").c_str(), "wb");
    std::fwrite(j->data(), 1, j->size(), f);
    std::fclose(f);
    jpeg_bytes += j->size();
  }
  auto options = [&](const std::string& out) {
    convert::ConvertOptions o;
    o.input = dir + "/in";
    o.output = out;
    o.threads = opt.threads;
    o.plan.shard_size_bytes = libshard::util::ParseByteSize(opt.shard_size).value();
    return o;
  };
  // 1. convert: local folder vs s3:// (staging + upload as shards finish).
  double t0 = Now();
  double cpu0 = SelfCpu();
  auto local = convert::Convert(options(dir + "/local"));
  const double convert_local = Now() - t0, cpu_local = SelfCpu() - cpu0;
  if (!local.ok()) {
    std::cerr << "shard-bench s3: " << local.status() << "\n";
    return kExitFailure;
  }
  const std::string url = "s3://" + opt.bucket + "/" + opt.prefix + "-" + std::to_string(::getpid());
  t0 = Now();
  const double convert_s3_start = t0;
  cpu0 = SelfCpu();
  const double server0 = ProcessCpu(opt.server_pid);
  auto uploader = ShardUploader::Start(url, dir + "/staging");
  if (!uploader.ok()) {
    std::cerr << "shard-bench s3: " << uploader.status() << "\n";
    return kExitFailure;
  }
  convert::ConvertOptions so = options(dir + "/staging");
  ShardUploader* up_ptr = uploader->get();
  so.shard_elsewhere = [up_ptr](const std::string& file, std::string* why) { return up_ptr->ShardUpHere(file, why); };
  so.on_shard_written = [up_ptr](const libshard::ShardEntry& e) { return up_ptr->ShardWritten(e); };
  auto staged = convert::Convert(so, [](const convert::Progress&) {});
  const double converted_at = Now();
  Status up = staged.ok() ? (*uploader)->Finish(true) : staged.status();
  const double convert_s3 = Now() - t0, cpu_s3 = SelfCpu() - cpu0, cpu_server = ProcessCpu(opt.server_pid) - server0;
  if (!up.ok()) {
    std::cerr << "shard-bench s3: " << up << "\n";
    return kExitFailure;
  }
  // 2. cache fill vs curl with the same number of connections.
  std::vector<std::string> shards;
  uint64_t shard_bytes = 0;
  for (const auto& e : fs::directory_iterator(dir + "/local")) {
    const std::string n = e.path().filename().string();
    if (n.size() > 9 && n.substr(n.size() - 9) == ".tfrecord") {
      shards.push_back(n);
      shard_bytes += fs::file_size(e.path());
    }
  }
  std::string curl = "curl -sS --no-progress-meter --fail --parallel --parallel-max " + std::to_string(opt.connections);
  const char* key = std::getenv("AWS_ACCESS_KEY_ID");
  const char* secret = std::getenv("AWS_SECRET_ACCESS_KEY");
  if (key != nullptr && secret != nullptr) {
    const char* region = std::getenv("AWS_REGION");
    curl += std::string(" --aws-sigv4 aws:amz:") + (region ? region : "us-east-1") + ":s3 --user " + key + ":" +
            secret + " -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD'";
  }
  fs::create_directories(dir + "/curl");
  const std::string http_prefix = std::string(endpoint) + "/" + opt.bucket + "/" + url.substr(6 + opt.bucket.size());
  for (const std::string& s : shards) curl += " -o " + dir + "/curl/" + s + " " + http_prefix + "/" + s;
  t0 = Now();
  const int curl_rc = std::system(curl.c_str());
  const double curl_s = Now() - t0;
  reader::DatasetOptions dopt;
  dopt.cache_dir = dir + "/cache1";
  dopt.download_threads = opt.connections;
  dopt.shard.use_index = false;  // the shards only, as curl fetches
  t0 = Now();
  auto filled = reader::Dataset::Open({url}, dopt);
  if (!filled.ok()) {
    std::cerr << "shard-bench s3: " << filled.status() << "\n";
    return kExitFailure;
  }
  {
    // Open plans from the manifest; every shard is downloaded here, C at once.
    std::atomic<size_t> next{0};
    Status fill_err;
    std::mutex mu;
    auto work = [&] {
      for (size_t i; (i = next.fetch_add(1)) < (*filled)->num_shards();) {
        auto r = (*filled)->OpenShard(i);
        std::lock_guard<std::mutex> lock(mu);
        if (!r.ok() && fill_err.ok()) fill_err = r.status();
      }
    };
    std::vector<std::thread> threads;
    for (int t = 1; t < opt.connections; ++t) threads.emplace_back(work);
    work();
    for (std::thread& t : threads) t.join();
    if (!fill_err.ok()) {
      std::cerr << "shard-bench s3: " << fill_err << "\n";
      return kExitFailure;
    }
  }
  const double fill_s = Now() - t0;
  // 3. cold epoch: open + one epoch, s3:// with an empty cache vs local.
  Status err;
  t0 = Now();
  const double epoch_cpu0 = SelfCpu();
  auto local_ds = reader::Dataset::Open({dir + "/local"});
  if (!local_ds.ok()) {
    std::cerr << "shard-bench s3: " << local_ds.status() << "\n";
    return kExitFailure;
  }
  Epoch(std::move(*local_ds), opt.threads, &err);
  const double local_epoch = Now() - t0, epoch_cpu_local = SelfCpu() - epoch_cpu0;
  reader::DatasetOptions cold = dopt;
  cold.cache_dir = dir + "/cache2";
  cold.shard.use_index = true;
  t0 = Now();
  const double remote_cpu0 = SelfCpu(), remote_server0 = ProcessCpu(opt.server_pid);
  auto remote_ds = reader::Dataset::Open({url}, cold);
  if (!remote_ds.ok()) {
    std::cerr << "shard-bench s3: " << remote_ds.status() << "\n";
    return kExitFailure;
  }
  Epoch(std::move(*remote_ds), opt.threads, &err);
  const double remote_epoch = Now() - t0, epoch_cpu_s3 = SelfCpu() - remote_cpu0,
               epoch_cpu_server = ProcessCpu(opt.server_pid) - remote_server0;
  if (!err.ok()) {
    std::cerr << "shard-bench s3: " << err << "\n";
    return kExitFailure;
  }
  std::cout << opt.images << " JPEGs 224x224 q90 (" << jpeg_bytes / opt.images << " B each), " << shards.size()
            << " shards, " << shard_bytes << " bytes; " << endpoint << ", " << opt.connections << " connections, "
            << opt.threads << " threads\n";
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"convert", Fixed(opt.images / convert_s3, 0) + " img/s to s3://",
                  Fixed(opt.images / convert_local, 0) + " img/s local", Fixed(convert_local / convert_s3), ">= 0.8"});
  rows.push_back({"cache fill", Fixed(shard_bytes / fill_s / 1e6, 1) + " MB/s",
                  curl_rc == 0 ? Fixed(shard_bytes / curl_s / 1e6, 1) + " MB/s curl" : "curl failed",
                  curl_rc == 0 ? Fixed(curl_s / fill_s) : "-", ">= 0.9"});
  rows.push_back({"cold epoch", Fixed(opt.images / remote_epoch, 0) + " img/s s3:// (empty cache)",
                  Fixed(opt.images / local_epoch, 0) + " img/s local", Fixed(local_epoch / remote_epoch), ">= 0.8"});
  PrintTable({"what", "libshard", "baseline", "ratio", "goal"}, rows);
  // Where the conversion's CPU went: on a machine whose cores are all busy
  // converting, the s3:// run cannot beat local CPU / (its own CPU + the
  // server's) when the server shares the cores.
  std::printf(
      "convert to s3://: %.2f s converting (uploading meanwhile), then %.2f s finishing the upload "
      "(the shards left, manifest.json)\n",
      converted_at - convert_s3_start, convert_s3_start + convert_s3 - converted_at);
  std::printf("convert CPU: local %.2f s; s3:// %.2f s (+%.0f%%: staging + upload)", cpu_local, cpu_s3,
              cpu_local > 0 ? 100 * (cpu_s3 / cpu_local - 1) : 0.0);
  if (opt.server_pid > 0) {
    std::printf(", server %.2f s; floor with the server on the same cores: %.2f", cpu_server,
                cpu_local / (cpu_s3 + cpu_server));
  }
  std::printf("\n");
  // The same for the cold epoch: decoding is CPU-bound on every core, so a
  // server on the same machine takes its share from the decoders.
  std::printf("cold epoch CPU: local %.2f s; s3:// %.2f s (+%.0f%%: download, CRC, cache)", epoch_cpu_local,
              epoch_cpu_s3, epoch_cpu_local > 0 ? 100 * (epoch_cpu_s3 / epoch_cpu_local - 1) : 0.0);
  if (opt.server_pid > 0) {
    std::printf(", server %.2f s; floor with the server on the same cores: %.2f", epoch_cpu_server,
                epoch_cpu_local / (epoch_cpu_s3 + epoch_cpu_server));
  }
  std::printf("\n");
  return kExitOk;
}

}  // namespace

void RegisterBenchS3(CLI::App& bench, int* exit_code) {
  auto opt = std::make_shared<S3BenchOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "s3",
      "Object storage (issue 20's goals): convert into s3:// vs a local folder, cache fill vs curl with the same "
      "connections, a cold first epoch over s3:// vs local files. Needs AWS_ENDPOINT_URL (and keys) naming a "
      "running S3-compatible server, e.g. `node tools/s3rver/serve.js DIR BUCKET` on loopback.");
  cmd->add_option("--bucket", opt->bucket, "an existing bucket to write PREFIX-PID/ into")->required();
  cmd->add_option("--prefix", opt->prefix, "object prefix")->capture_default_str();
  cmd->add_option("--images", opt->images, "224x224 JPEG photos, 1..1000000")
      ->check(IntegerIn(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--shard-size", opt->shard_size, "target shard size")->capture_default_str();
  cmd->add_option("--connections", opt->connections, "downloads at once (libshard and curl), 1..64")
      ->check(IntegerIn(1, 64))
      ->capture_default_str();
  cmd->add_option("--threads", opt->threads, "convert and decode threads, 1..256")
      ->check(IntegerIn(1, kMaxThreads))
      ->capture_default_str();
  cmd->add_option("--server-pid", opt->server_pid,
                  "the server's process id (on this machine): its CPU time during the conversion is reported, "
                  "with the ratio's floor when it shares the cores");
  cmd->callback([opt, exit_code] { *exit_code = Run(*opt); });
}

}  // namespace shard_tool
