// `shard bench read [SHARDS...]`: how fast the framing + CRC walk and the
// Example view go over whole shards, against `cat SHARDS > /dev/null` of the
// same files measured in the same run (page cache warm). Without files, a
// temporary shard of synthetic records is written first.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"
#include "commands.h"
#include "libshard/example/example_view.h"
#include "libshard/io/mapped_file.h"
#include "libshard/record/record_reader.h"

namespace shard_tool {
namespace {

namespace record = libshard::record;
using libshard::Status;

struct BenchReadOptions {
  std::vector<std::string> files;
  size_t records = 4096;
  size_t record_bytes = 100 * 1024;
  double seconds = 0.5;
};

int RunBenchRead(BenchReadOptions opt) {
  std::string temp_dir;
  if (opt.files.empty()) {
    temp_dir = (std::filesystem::temp_directory_path() / ("shard_bench_read_" + std::to_string(getpid()))).string();
    std::filesystem::create_directories(temp_dir);
    std::string path = temp_dir + "/synthetic.tfrecord";
    Status s = WriteSyntheticShard(path, opt.records, opt.record_bytes);
    if (!s.ok()) {
      std::cerr << "shard bench read: " << s << "\n";
      return kExitFailure;
    }
    opt.files.push_back(path);
  }
  std::vector<std::unique_ptr<libshard::io::MappedFile>> maps;
  uint64_t total = 0;
  for (const auto& f : opt.files) {
    auto m = libshard::io::MappedFile::Open(f, libshard::io::AccessPattern::kNormal);
    if (!m.ok()) {
      std::cerr << "shard bench read: " << m.status().message() << "\n";
      return kExitUsage;
    }
    total += (*m)->size();
    maps.push_back(std::move(*m));
  }
  // Warm the page cache and count records.
  uint64_t records = 0;
  for (const auto& m : maps) {
    record::RecordReader r(m->data());
    record::RecordView v;
    Status s;
    while ((s = r.Next(&v)).ok()) ++records;
    if (s.code() != libshard::StatusCode::kOutOfRange) {
      std::cerr << "shard bench read: " << m->path() << ": " << s.message() << "\n";
      return kExitFailure;
    }
  }
  volatile uint64_t sink = 0;
  // Best of 5: cat's time includes starting the process, as a user's pipeline would.
  double cat_best = 1e300;
  for (int i = 0; i < 5; ++i) cat_best = std::min(cat_best, TimeCat(opt.files));
  auto walk = [&](bool parse) {
    for (const auto& m : maps) {
      record::RecordReader r(m->data());
      record::RecordView v;
      while (r.Next(&v).ok()) {
        if (parse) {
          auto ex = libshard::example::ExampleView::Parse(v.data);
          sink = sink + (ex.ok() ? ex->entry_count() : 0);
        } else {
          sink = sink + v.data.size();
        }
      }
    }
  };
  double frame_s = BestSecondsPerCall([&] { walk(false); }, opt.seconds);
  double parse_s = BestSecondsPerCall([&] { walk(true); }, opt.seconds);
  std::vector<std::vector<std::string>> rows;
  auto row = [&](const std::string& what, double s) {
    rows.push_back({what, Fixed(records / s / 1e3, 1), Fixed(total / s / 1e9), Fixed(cat_best / s)});
  };
  if (cat_best > 0) row("cat > /dev/null (baseline)", cat_best);
  row("framing + CRC32C, 1 thread", frame_s);
  row("framing + CRC32C + Example view, 1 thread", parse_s);
  std::cout << opt.files.size() << " file(s), " << records << " records, " << total << " bytes, page cache warm\n";
  PrintTable({"what", "krecords/s", "GB/s", "x cat"}, rows);
  if (!temp_dir.empty()) std::filesystem::remove_all(temp_dir);
  return kExitOk;
}

}  // namespace

void RegisterBenchRead(CLI::App& bench, int* exit_code) {
  auto opt = std::make_shared<BenchReadOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "read", "Record iteration (framing + CRC, Example view) vs `cat FILES > /dev/null`, page cache warm");
  cmd->add_option("files", opt->files, "TFRecord shards (default: a synthetic temporary shard)");
  cmd->add_option("--records", opt->records, "Records in the synthetic shard")->capture_default_str();
  cmd->add_option("--record-bytes", opt->record_bytes, "Payload bytes per synthetic record")->capture_default_str();
  cmd->add_option("--seconds", opt->seconds, "Minimum seconds per timing round")->capture_default_str();
  cmd->callback([opt, exit_code] { *exit_code = RunBenchRead(*opt); });
}

}  // namespace shard_tool
