// `shard-bench verify [SHARDS...]`: how fast `shard verify` checks shards
// (framing + both CRCs, with and without the Example check; no image decode),
// with 1 and 2 threads, against `cat SHARDS > /dev/null` of the same files
// measured in the same run (page cache warm). Without files, a temporary set
// of synthetic shards is written first (several, so that threads have files
// to share).
//
// A second table, many small files: --small-file (default: the TF-written
// $LIBSHARD_SHARED_DIR/interop/tfrecord/tfx_flowers_jpeg.tfrecord, 1.6 MB)
// copied --copies times into a temporary folder (removed after), `cat` of
// the copies against `shard verify` of them (VerifyFiles, as `shard verify
// FOLDER` runs it), framing only and with the Example check, 1 and 2 threads:
// the per-file costs (open, stat, the .idx lookup, buffers, thread hand-off).
// Without the file the table is skipped with a message.
#include <unistd.h>

#include <cstdlib>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bench.h"
#include "bench_util.h"
#include "cli_checks.h"
#include "libshard/verify/verifier.h"

namespace shard_tool {
namespace {

namespace verify = libshard::verify;
using libshard::Status;

struct BenchVerifyOptions {
  std::vector<std::string> files;
  size_t shards = 4;
  size_t records = 1024;  // per synthetic shard
  size_t record_bytes = 100 * 1024;
  double seconds = 0.5;
  std::string small_file;  // "" = the shared TF-written file, if there
  size_t copies = 300;
};

// Verifies `files` once (which warms the page cache too) and sums their
// records and bytes; false, with a message naming the file, when one is
// damaged (its figures would mean nothing).
bool WarmAndCount(const std::vector<std::string>& files, uint64_t* records, uint64_t* bytes) {
  *records = *bytes = 0;
  for (const auto& r : verify::VerifyFiles(files, verify::VerifyOptions())) {
    if (!r.ok()) {
      std::cerr << "shard-bench verify: " << r.path << ": " << verify::FaultKindName(r.faults[0].kind) << ": "
                << r.faults[0].message << " (run `shard verify` on it)\n";
      return false;
    }
    *records += r.records;
    *bytes += r.bytes;
  }
  return true;
}

// The table's rows: `cat` of `files` (the baseline), then `shard verify` at 1
// and 2 threads, with and without the Example check. `rate(s)` is the first
// figure of a row that took `s` seconds a pass.
std::vector<std::vector<std::string>> VerifyRows(const std::vector<std::string>& files, uint64_t bytes, double seconds,
                                                 const std::function<std::string(double)>& rate) {
  double cat_best = 1e300;
  for (int i = 0; i < 5; ++i) cat_best = std::min(cat_best, TimeCat(files));
  std::vector<std::vector<std::string>> rows;
  auto row = [&](const std::string& what, double s) {
    rows.push_back({what, rate(s), Fixed(bytes / s / 1e9), Fixed(cat_best / s)});
  };
  if (cat_best > 0 && cat_best < 1e300) row("cat > /dev/null (baseline)", cat_best);
  for (int threads : {1, 2}) {
    for (bool examples : {false, true}) {
      verify::VerifyOptions o;
      o.threads = threads;
      o.check_examples = examples;
      double s = BestSecondsPerCall([&] { (void)verify::VerifyFiles(files, o); }, seconds);
      row(std::string(examples ? "verify (framing + CRCs + Example)" : "verify --records-only (framing + CRCs)") +
              ", " + std::to_string(threads) + (threads == 1 ? " thread" : " threads"),
          s);
    }
  }
  return rows;
}

// The many-small-files table (see the file comment).
int RunManySmallFiles(const BenchVerifyOptions& opt) {
  std::string src = opt.small_file;
  if (src.empty()) {
    const char* shared = std::getenv("LIBSHARD_SHARED_DIR");
    if (shared != nullptr) src = std::string(shared) + "/interop/tfrecord/tfx_flowers_jpeg.tfrecord";
  }
  std::error_code ec;
  if (src.empty() || !std::filesystem::is_regular_file(src, ec)) {
    std::cout << "\nmany small files: skipped ("
              << (src.empty() ? "no --small-file and no LIBSHARD_SHARED_DIR" : src + " not found") << ")\n";
    return kExitOk;
  }
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("shard_bench_verify_small_" + std::to_string(getpid()))).string();
  std::filesystem::create_directories(dir);
  std::vector<std::string> files;
  for (size_t i = 0; i < opt.copies; ++i) {
    char name[64];
    std::snprintf(name, sizeof name, "/copy-%05zu.tfrecord", i);
    files.push_back(dir + name);
    if (!std::filesystem::copy_file(src, files.back(), ec)) {
      std::cerr << "shard-bench verify: copying " << src << ": " << ec.message() << "\n";
      std::filesystem::remove_all(dir);
      return kExitFailure;
    }
  }
  uint64_t records = 0, bytes = 0;
  if (!WarmAndCount(files, &records, &bytes)) {
    std::filesystem::remove_all(dir);
    return kExitFailure;
  }
  const size_t n = files.size();
  const auto rows = VerifyRows(files, bytes, opt.seconds, [n](double s) { return Fixed(n / s, 0); });
  std::cout << "\nmany small files: " << files.size() << " copies of " << src << " (" << bytes / files.size()
            << " bytes, " << records / files.size() << " records each, no .idx), page cache warm\n";
  PrintTable({"what", "files/s", "GB/s", "x cat"}, rows);
  std::filesystem::remove_all(dir);
  return kExitOk;
}

int RunBenchVerify(BenchVerifyOptions opt) {
  std::string temp_dir;
  if (opt.files.empty()) {
    temp_dir = (std::filesystem::temp_directory_path() / ("shard_bench_verify_" + std::to_string(getpid()))).string();
    std::filesystem::create_directories(temp_dir);
    for (size_t i = 0; i < opt.shards; ++i) {
      char name[64];
      std::snprintf(name, sizeof name, "/synthetic-%05zu-of-%05zu", i, opt.shards);
      std::string path = temp_dir + name;
      Status s = WriteSyntheticShard(path, opt.records, opt.record_bytes, i + 1);
      if (!s.ok()) {
        std::cerr << "shard-bench verify: " << s << "\n";
        std::filesystem::remove_all(temp_dir);
        return kExitFailure;
      }
      opt.files.push_back(path);
    }
  }
  auto cleanup = [&] {
    if (!temp_dir.empty()) std::filesystem::remove_all(temp_dir);
  };
  uint64_t records = 0, bytes = 0;
  if (!WarmAndCount(opt.files, &records, &bytes)) {
    cleanup();
    return kExitFailure;
  }
  const auto rows =
      VerifyRows(opt.files, bytes, opt.seconds, [records](double s) { return Fixed(records / s / 1e3, 1); });
  std::cout << opt.files.size() << " file(s), " << records << " records, " << bytes
            << " bytes, page cache warm, no image decode\n";
  PrintTable({"what", "krecords/s", "GB/s", "x cat"}, rows);
  cleanup();
  return RunManySmallFiles(opt);
}

}  // namespace

void RegisterBenchVerify(CLI::App& bench, int* exit_code) {
  auto opt = std::make_shared<BenchVerifyOptions>();
  CLI::App* cmd =
      bench.add_subcommand("verify",
                           "`shard verify` throughput (1 and 2 threads, with and without the Example check) vs "
                           "`cat FILES > /dev/null`, page cache warm; then the same on many small files");
  cmd->add_option("files", opt->files, "TFRecord shards (default: synthetic temporary shards)");
  cmd->add_option("--shards", opt->shards, "Synthetic shards, 1..1000")
      ->check(IntegerIn(1, 1000))
      ->capture_default_str();
  cmd->add_option("--records", opt->records, "Records per synthetic shard, 1..10000000")
      ->check(IntegerIn(1, 10'000'000))
      ->capture_default_str();
  AddRecordBytesOption(cmd, &opt->record_bytes);
  AddSecondsOption(cmd, &opt->seconds);
  cmd->add_option("--small-file", opt->small_file,
                  "many-small-files table: the file to copy (default: "
                  "$LIBSHARD_SHARED_DIR/interop/tfrecord/tfx_flowers_jpeg.tfrecord; skipped when absent)");
  cmd->add_option("--copies", opt->copies, "many-small-files table: copies, 1..100000")
      ->check(IntegerIn(1, 100000))
      ->capture_default_str();
  cmd->callback([opt, exit_code] { *exit_code = RunBenchVerify(*opt); });
}

}  // namespace shard_tool
