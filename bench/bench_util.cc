#include "bench_util.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <system_error>

#include "cli_checks.h"
#include "libshard/example/example_builder.h"
#include "libshard/image/decode.h"
#include "libshard/image/transform.h"
#include "libshard/io/open_file.h"
#include "libshard/record/record_writer.h"

extern char** environ;

namespace shard_tool {

std::string BenchDataDir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

libshard::StatusOr<std::vector<libshard::image::Image>> PhotoCuts(const std::string& folder, size_t count, int width,
                                                                  int height) {
  namespace img = libshard::image;
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(folder, ec)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<img::Image> photos;
  for (const auto& p : files) {
    LIBSHARD_ASSIGN_OR_RETURN(std::string bytes, libshard::io::ReadFileToString(p.string()));
    auto im = img::DecodeImage(bytes);
    if (im.ok()) photos.push_back(std::move(*im));
  }
  if (photos.empty()) return libshard::NotFoundError(folder + ": no photos");
  std::vector<img::Image> out;
  for (size_t v = 0; v < count; ++v) {
    img::TransformSpec spec;
    spec.mode = img::ResizeMode::kCenterCrop;
    spec.width = width + static_cast<int>((v * 7) % 48);
    spec.height = height + static_cast<int>((v * 11) % 40);
    LIBSHARD_ASSIGN_OR_RETURN(img::Image big, img::Transform(photos[v % photos.size()], spec));
    img::PixelRect box{static_cast<int>((v * 13) % (spec.width - width + 1)),
                       static_cast<int>((v * 5) % (spec.height - height + 1)), width, height};
    LIBSHARD_ASSIGN_OR_RETURN(img::Image cut, img::Crop(big, box));
    out.push_back(v % 2 ? img::Orient(cut, 2) : std::move(cut));
  }
  return out;
}

void AddSecondsOption(CLI::App* cmd, double* seconds) {
  cmd->add_option("--seconds", *seconds, "Minimum seconds per timing round, 0.001..3600")
      ->check(NumberIn(0.001, 3600))
      ->capture_default_str();
}

void AddRecordBytesOption(CLI::App* cmd, size_t* record_bytes) {
  cmd->add_option("--record-bytes", *record_bytes, "Payload bytes per synthetic record, 1..64Mi")
      ->check(IntegerIn(1, int64_t{64} << 20))
      ->capture_default_str();
}

double TimeCat(const std::vector<std::string>& files) {
  std::vector<char*> argv;
  std::string cat = "cat";
  argv.push_back(cat.data());
  std::vector<std::string> copies(files);
  for (auto& f : copies) argv.push_back(f.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  auto start = std::chrono::steady_clock::now();
  pid_t pid;
  int rc = posix_spawnp(&pid, "cat", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? s : -1;
}

libshard::Status WriteSyntheticShard(const std::string& path, size_t records, size_t record_bytes, uint64_t seed) {
  LIBSHARD_ASSIGN_OR_RETURN(auto writer, libshard::record::RecordWriter::Create(path));
  std::mt19937_64 rng(seed);
  std::string payload(record_bytes, '\0');
  libshard::example::ExampleBuilder b;
  std::string rec;
  for (size_t i = 0; i < records; ++i) {
    for (char& c : payload) c = static_cast<char>(rng());
    b.Clear();
    b.AddBytes("image/encoded", payload);
    b.AddInt64("image/class/label", static_cast<int64_t>(i % 10));
    rec.clear();
    b.SerializeTo(&rec);
    LIBSHARD_RETURN_IF_ERROR(writer->Write(rec));
  }
  return writer->Close();
}

libshard::image::Image PhotoLike224(int seed) {
  libshard::image::Image img(224, 224, 3);
  uint64_t r = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (int y = 0; y < 224; ++y) {
    for (int x = 0; x < 224; ++x) {
      r ^= r << 13;
      r ^= r >> 7;
      r ^= r << 17;
      const int noise = static_cast<int>(r & 31) - 16;
      const double cx = x - 112 - seed % 50, cy = y - 112 + seed % 30;
      const bool disc = cx * cx + cy * cy < 60 * 60;
      for (int c = 0; c < 3; ++c) {
        int v = static_cast<int>(128 + 90 * std::sin((x * (c + 1) + seed * 7) / 23.0) *
                                           std::cos((y * (3 - c) + seed) / 31.0));
        if (disc) v = 255 - v;
        img.row(y)[x * 3 + c] = static_cast<uint8_t>(std::clamp(v + noise, 0, 255));
      }
    }
  }
  return img;
}

}  // namespace shard_tool
