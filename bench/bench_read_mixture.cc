// `shard-bench read --mixture`: --images 224x224 JPEG q90 photo cuts written
// as three shards (half, a third and a sixth of them), then read to uint8
// NHWC batches by BatchLoader with a shuffled order, --threads threads:
//   - concatenated: Dataset::Open of the three shards (one dataset);
//   - mixture: Dataset::OpenMixture of the same three, weights 0.6 / 0.3 /
//     0.1, samples_per_epoch the sum (so as many samples per epoch; the
//     small source upsampled, the large one partly drawn).
// The two are timed in alternating rounds in the same run (the best epoch of
// each); the ratio mixture / concatenated is the figure (goal >= 0.95).
#include "bench_read_mixture.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"
#include "commands.h"
#include "libshard/example/example_builder.h"
#include "libshard/example/image_keys.h"
#include "libshard/image/encode.h"
#include "libshard/reader/batch_loader.h"
#include "libshard/record/record_writer.h"

namespace shard_tool {
namespace {

namespace reader = libshard::reader;
using libshard::Status;
using libshard::StatusOr;

Status WriteJpegShard(const std::string& path, const std::vector<libshard::image::Image>& images, size_t begin,
                      size_t end) {
  LIBSHARD_ASSIGN_OR_RETURN(auto w, libshard::record::RecordWriter::Create(path, {true, false}));
  libshard::image::JpegEncodeOptions jo;
  jo.quality = 90;
  for (size_t i = begin; i < end; ++i) {
    LIBSHARD_ASSIGN_OR_RETURN(std::string jpeg, libshard::image::EncodeJpeg(images[i], jo));
    libshard::example::ExampleBuilder b;
    b.AddBytes(libshard::keys::kEncoded, jpeg);
    b.AddBytes(libshard::keys::kFormat, "jpeg");
    b.AddInt64(libshard::keys::kLabel, static_cast<int64_t>(i % 4));
    LIBSHARD_RETURN_IF_ERROR(w->Write(b.Serialize()));
  }
  return w->Close();
}

// Seconds of one epoch of `loader` (from its current position to the same
// batch of the next epoch).
StatusOr<double> EpochSeconds(reader::BatchLoader* loader) {
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t b = 0; b < loader->batches_per_epoch(); ++b) {
    reader::Batch batch;
    LIBSHARD_RETURN_IF_ERROR(loader->Next(&batch));
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int RunMixtureBench(const RawBenchOptions& opt, const std::string& dir) {
  auto images = PhotoCuts(opt.photos, opt.images, 224, 224);
  if (!images.ok()) {
    std::cout << "\nmixture vs concatenated: skipped (" << images.status().message() << ")\n";
    return kExitOk;
  }
  const size_t n = images->size(), cut1 = n / 2, cut2 = n / 2 + n / 3;
  const std::vector<std::string> shards = {dir + "/mix_a.tfrecord", dir + "/mix_b.tfrecord", dir + "/mix_c.tfrecord"};
  const size_t bounds[4] = {0, cut1, cut2, n};
  for (size_t s = 0; s < 3; ++s) {
    Status st = WriteJpegShard(shards[s], *images, bounds[s], bounds[s + 1]);
    if (!st.ok()) {
      std::cerr << "shard-bench read: " << st << "\n";
      return kExitFailure;
    }
  }
  reader::BatchLoaderOptions lo;
  lo.batch_size = opt.batch_size;
  lo.threads = opt.threads;
  lo.order.kind = reader::OrderKind::kShuffle;
  lo.order.seed = 1;
  reader::MixtureOptions mix;
  mix.weights = {0.6, 0.3, 0.1};
  auto concat_ds = reader::Dataset::Open(shards);
  auto mix_ds = reader::Dataset::OpenMixture({{shards[0]}, {shards[1]}, {shards[2]}}, mix);
  if (!concat_ds.ok() || !mix_ds.ok()) {
    std::cerr << "shard-bench read: " << (concat_ds.ok() ? mix_ds.status() : concat_ds.status()) << "\n";
    return kExitFailure;
  }
  auto concat = reader::BatchLoader::Create(std::move(*concat_ds), lo);
  auto mixture = reader::BatchLoader::Create(std::move(*mix_ds), lo);
  if (!concat.ok() || !mixture.ok()) {
    std::cerr << "shard-bench read: " << (concat.ok() ? mixture.status() : concat.status()) << "\n";
    return kExitFailure;
  }
  // Alternating epochs, one warm-up each, then at least `seconds` of each.
  double best_concat = 1e300, best_mix = 1e300, spent = 0;
  for (int round = 0; round < 3 || spent < 2 * opt.seconds * 3; ++round) {
    auto c = EpochSeconds(concat->get());
    auto m = EpochSeconds(mixture->get());
    if (!c.ok() || !m.ok()) {
      std::cerr << "shard-bench read: " << (c.ok() ? m.status() : c.status()) << "\n";
      return kExitFailure;
    }
    if (round > 0) {
      best_concat = std::min(best_concat, *c);
      best_mix = std::min(best_mix, *m);
      spent += *c + *m;
    }
    if (round > 200) break;
  }
  for (const auto& s : shards) {
    std::filesystem::remove(s);
    std::filesystem::remove(s + ".idx");
  }
  const double rate_concat = n / best_concat, rate_mix = n / best_mix;
  std::cout << "\nmixture vs concatenated: " << n << " distinct 224x224 JPEG q90 cuts of " << opt.photos
            << " in 3 shards (" << cut1 << ", " << cut2 - cut1 << ", " << n - cut2 << " records), shuffled, uint8 "
            << "NHWC batches of " << opt.batch_size << ", " << opt.threads << " threads, page cache warm\n";
  PrintTable({"dataset", "img/s", "x concatenated"},
             {{"one concatenated dataset (3 shards)", Fixed(rate_concat, 0), "1.00"},
              {"mixture of the 3, weights 0.6 / 0.3 / 0.1", Fixed(rate_mix, 0), Fixed(rate_mix / rate_concat)}});
  std::cout << "mixture / concatenated: " << Fixed(rate_mix / rate_concat) << "x (goal >= 0.95)\n";
  return kExitOk;
}

}  // namespace shard_tool
