// `shard-bench crc`: CRC-32C throughput of each implementation on one core,
// against a plain read of the same buffer (the memory-bandwidth floor) and
// the portable table implementation, both measured in the same run.
#include <cstdint>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench.h"
#include "bench_util.h"
#include "cli_checks.h"
#include "libshard/crc32c.h"

namespace shard_tool {
namespace {

namespace crc32c = libshard::crc32c;

struct BenchCrcOptions {
  std::vector<size_t> sizes{4096, 65536, 1 << 20};
  double seconds = 0.2;
};

// Sums the buffer as 64-bit words: how fast one core can merely read it.
uint64_t ReadAll(const std::vector<char>& buf) {
  uint64_t sum = 0;
  for (size_t i = 0; i + 8 <= buf.size(); i += 8) {
    uint64_t v;
    std::memcpy(&v, buf.data() + i, 8);
    sum += v;
  }
  return sum;
}

int RunBenchCrc(const BenchCrcOptions& opt) {
  std::vector<std::vector<std::string>> rows;
  volatile uint64_t sink = 0;
  for (size_t size : opt.sizes) {
    std::vector<char> buf(size);
    std::mt19937_64 rng(42);
    for (char& c : buf) c = static_cast<char>(rng());
    double read_s = BestSecondsPerCall([&] { sink = sink + ReadAll(buf); }, opt.seconds);
    double portable_s = BestSecondsPerCall(
        [&] { sink = sink + crc32c::ExtendWith(crc32c::Impl::kPortable, 0, buf.data(), size); }, opt.seconds);
    auto gbs = [&](double s) { return static_cast<double>(size) / s / 1e9; };
    rows.push_back(
        {"memory read (baseline)", std::to_string(size), Fixed(gbs(read_s)), "1.00", Fixed(read_s / portable_s)});
    for (auto impl : {crc32c::Impl::kPortable, crc32c::Impl::kSse42, crc32c::Impl::kAvx512}) {
      if (!crc32c::ImplAvailable(impl)) continue;
      double s = BestSecondsPerCall([&] { sink = sink + crc32c::ExtendWith(impl, 0, buf.data(), size); }, opt.seconds);
      std::string name = std::string("crc32c ") + crc32c::ImplName(impl);
      if (impl == crc32c::ActiveImpl()) name += " (active)";
      rows.push_back({name, std::to_string(size), Fixed(gbs(s)), Fixed(read_s / s), Fixed(portable_s / s)});
    }
  }
  PrintTable({"what", "bytes", "GB/s", "x memory read", "x portable"}, rows);
  std::cout << "target: crc32c >= 20 GB/s on one core for 1 MiB buffers\n";
  return kExitOk;
}

}  // namespace

void RegisterBenchCrc(CLI::App& bench, int* exit_code) {
  auto opt = std::make_shared<BenchCrcOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "crc", "CRC-32C throughput of each implementation on one core vs a plain memory read of the same buffer");
  cmd->add_option("--sizes", opt->sizes, "Buffer sizes in bytes, each 8..1Gi")
      ->check(IntegerIn(8, int64_t{1} << 30))
      ->capture_default_str();
  AddSecondsOption(cmd, &opt->seconds);
  cmd->callback([opt, exit_code] { *exit_code = RunBenchCrc(*opt); });
}

}  // namespace shard_tool
