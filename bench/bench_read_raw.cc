// `shard-bench read --raw`: the same 224x224 photos as JPEG q90 and as raw
// arrays (stored, the default raw.zst at a fast level, raw.zst at level 3,
// the smallest raw.up.zst at level 1), each written to a shard in the same
// run, then:
//   - size: bytes per image and the ratio to stored;
//   - encode: images/s of EncodeJpeg / EncodeRaw, one thread;
//   - bare decode: images/s of tjDecompress2 / ZSTD_decompressDCtx (plus the
//     Up filter's undo for raw.up.zst) / memcpy, one thread, on the same bytes;
//   - the loader: BatchLoader uint8 batches of the shard, 1 thread and
//     --threads threads, and the ratio to the JPEG shard's loader rate.
// The photos are bench/photos (samples/photos copied beside shard-bench):
// distinct 224x224 cuts (varying crop and mirror), as `shard convert --size
// 224` would make them.
#include "bench_read_raw.h"

#include <turbojpeg.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"
#include "commands.h"
#include "libshard/example/example_builder.h"
#include "libshard/example/image_keys.h"
#include "libshard/image/decode.h"
#include "libshard/image/encode.h"
#include "libshard/image/raw_array.h"
#include "libshard/image/transform.h"
#include "libshard/io/open_file.h"
#include "libshard/reader/batch_loader.h"
#include "libshard/record/record_writer.h"

namespace shard_tool {
namespace {

namespace fs = std::filesystem;
namespace img = libshard::image;
namespace reader = libshard::reader;
using libshard::Status;
using libshard::StatusOr;

constexpr int kSide = 224;

struct Encoding {
  std::string name;
  bool jpeg = false;
  img::RawEncodeOptions raw;
  std::vector<std::string> blobs;
  uint64_t bytes = 0;
  double encode_rate = 0, bare_rate = 0, loader1 = 0, loaderN = 0;
};

StatusOr<std::string> Encode(const img::Image& im, const Encoding& e) {
  if (e.jpeg) {
    img::JpegEncodeOptions jo;
    jo.quality = 90;
    return img::EncodeJpeg(im, jo);
  }
  return img::EncodeRaw(im, e.raw);
}

Status WriteShard(const std::string& path, const Encoding& e) {
  LIBSHARD_ASSIGN_OR_RETURN(auto w, libshard::record::RecordWriter::Create(path, {true, false}));
  const char* format = e.jpeg ? "jpeg" : img::RawFormatName(img::RawCompressionFor(e.raw));
  for (size_t i = 0; i < e.blobs.size(); ++i) {
    libshard::example::ExampleBuilder b;
    b.AddBytes(libshard::keys::kEncoded, e.blobs[i]);
    b.AddBytes(libshard::keys::kFormat, format);
    if (!e.jpeg) {
      const int64_t dims[3] = {kSide, kSide, 3};
      b.AddInt64List(libshard::keys::kShape, dims, 3);
      b.AddBytes(libshard::keys::kDtype, "uint8");
    }
    b.AddInt64(libshard::keys::kLabel, static_cast<int64_t>(i % 4));
    LIBSHARD_RETURN_IF_ERROR(w->Write(b.Serialize()));
  }
  return w->Close();
}

// Images/s of one epoch of uint8 224x224 batches, best of the rounds.
StatusOr<double> LoaderRate(const std::string& shard, int threads, size_t batch_size, double seconds) {
  LIBSHARD_ASSIGN_OR_RETURN(std::unique_ptr<reader::Dataset> opened, reader::Dataset::Open({shard}));
  std::shared_ptr<const reader::Dataset> ds = std::move(opened);
  const size_t n = ds->size();
  reader::BatchLoaderOptions lo;
  lo.batch_size = batch_size;
  lo.threads = threads;
  LIBSHARD_ASSIGN_OR_RETURN(auto loader, reader::BatchLoader::Create(std::move(ds), lo));
  Status err;
  const double s = BestSecondsPerCall(
      [&] {
        for (uint64_t b = 0; b < loader->batches_per_epoch(); ++b) {
          reader::Batch batch;
          Status st = loader->Next(&batch);
          if (!st.ok()) err = st;
        }
      },
      seconds);
  LIBSHARD_RETURN_IF_ERROR(err);
  return n / s;
}

}  // namespace

int RunRawBench(const RawBenchOptions& opt, const std::string& dir) {
  auto inputs = PhotoCuts(opt.photos, opt.images, kSide, kSide);
  if (!inputs.ok()) {
    std::cout << "\nraw vs JPEG: skipped (" << inputs.status().message() << ")\n";
    return kExitOk;
  }
  std::vector<Encoding> encs(5);
  encs[0].name = "JPEG q90";
  encs[0].jpeg = true;
  encs[1].name = "raw (stored, zstd level 0)";
  encs[1].raw.zstd_level = 0;
  encs[2].name = "raw.zst, zstd " + std::to_string(img::RawEncodeOptions{}.zstd_level) + " (default)";
  encs[3].name = "raw.zst, zstd 3 (default before)";
  encs[3].raw = {3, img::RawFilter::kNone};
  encs[4].name = "raw.up.zst, zstd 1 (smallest)";
  encs[4].raw = {1, img::RawFilter::kUp};

  tjhandle tj = tjInitDecompress();
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  std::vector<uint8_t> pixels(kSide * kSide * 3);
  const img::RawShape shape{kSide, kSide, 3, 8};
  double bare_zstd_default = 0;  // ZSTD_decompressDCtx alone on the default's bytes
  // The same, each image into its own place in a ring as large as the
  // loader's (prefetch + 1 batches): the memory traffic of filling batches.
  double bare_zstd_ring = 0;
  std::vector<uint8_t> ring((reader::BatchLoaderOptions{}.prefetch + 1) * opt.batch_size * pixels.size());
  int rc = kExitOk;
  for (size_t k = 0; k < encs.size() && rc == kExitOk; ++k) {
    Encoding& e = encs[k];
    for (const auto& im : *inputs) {
      auto b = Encode(im, e);
      if (!b.ok()) {
        std::cerr << "shard-bench read: " << b.status() << "\n";
        rc = kExitFailure;
        break;
      }
      e.bytes += b->size();
      e.blobs.push_back(std::move(*b));
    }
    if (rc != kExitOk) break;
    e.encode_rate = inputs->size() / BestSecondsPerCall(
                                         [&] {
                                           for (const auto& im : *inputs) (void)Encode(im, e);
                                         },
                                         opt.seconds);
    bool bad = false;
    e.bare_rate =
        e.blobs.size() /
        BestSecondsPerCall(
            [&] {
              for (const auto& b : e.blobs) {
                if (e.jpeg) {
                  bad |= tjDecompress2(tj, reinterpret_cast<const unsigned char*>(b.data()), b.size(), pixels.data(),
                                       kSide, 0, kSide, TJPF_RGB, 0) != 0;
                } else {
                  bad |=
                      !img::DecodeRawInto(b, shape, img::RawCompressionFor(e.raw), pixels.data(), pixels.size()).ok();
                }
              }
            },
            opt.seconds);
    if (k == 2) {
      bare_zstd_default = e.blobs.size() / BestSecondsPerCall(
                                               [&] {
                                                 for (const auto& b : e.blobs) {
                                                   bad |= ZSTD_isError(ZSTD_decompressDCtx(
                                                       dctx, pixels.data(), pixels.size(), b.data(), b.size()));
                                                 }
                                               },
                                               opt.seconds);
      const size_t slots = ring.size() / pixels.size();
      bare_zstd_ring = e.blobs.size() /
                       BestSecondsPerCall(
                           [&] {
                             for (size_t i = 0; i < e.blobs.size(); ++i) {
                               const std::string& b = e.blobs[i];
                               bad |= ZSTD_isError(ZSTD_decompressDCtx(dctx, ring.data() + (i % slots) * pixels.size(),
                                                                       pixels.size(), b.data(), b.size()));
                             }
                           },
                           opt.seconds);
    }
    const std::string shard = dir + "/raw_bench_" + std::to_string(k) + ".tfrecord";
    Status s = WriteShard(shard, e);
    StatusOr<double> r1 = s.ok() ? LoaderRate(shard, 1, opt.batch_size, opt.seconds) : s;
    StatusOr<double> rn = r1.ok() ? LoaderRate(shard, opt.threads, opt.batch_size, opt.seconds) : r1.status();
    if (bad || !rn.ok()) {
      std::cerr << "shard-bench read: " << e.name << ": " << (bad ? "a decode failed" : rn.status().ToString()) << "\n";
      rc = kExitFailure;
      break;
    }
    e.loader1 = *r1;
    e.loaderN = *rn;
    fs::remove(shard);
  }
  tjDestroy(tj);
  ZSTD_freeDCtx(dctx);
  if (rc != kExitOk) return rc;

  const std::string t = std::to_string(opt.threads);
  std::cout << "\nraw arrays vs JPEG: " << inputs->size() << " distinct 224x224 RGB cuts of " << opt.photos
            << ", loader to uint8 NHWC batches of " << opt.batch_size << ", page cache warm\n";
  std::vector<std::vector<std::string>> rows;
  const double stored = static_cast<double>(encs[1].bytes);
  for (const Encoding& e : encs) {
    rows.push_back({e.name, std::to_string(e.bytes / e.blobs.size()), Fixed(e.bytes / stored), Fixed(e.encode_rate, 0),
                    Fixed(e.bare_rate, 0), Fixed(e.loader1, 0), Fixed(e.loaderN, 0),
                    Fixed(e.loaderN / encs[0].loaderN)});
  }
  PrintTable({"encoding", "bytes/image", "x stored", "encode img/s (1 thr)", "bare decode img/s (1 thr)",
              "loader img/s (1 thr)", "loader img/s (" + t + " thr)", "x JPEG loader"},
             rows);
  std::cout << "loader raw (default) vs loader JPEG, " << t << " threads: " << Fixed(encs[2].loaderN / encs[0].loaderN)
            << "x (goal >= 2.0)\n"
            << "loader raw path (default, 1 thread) vs bare ZSTD_decompressDCtx on the same bytes: "
            << Fixed(encs[2].loader1 / bare_zstd_default) << "x (" << Fixed(encs[2].loader1, 0) << " vs "
            << Fixed(bare_zstd_default, 0) << " img/s; goal >= 0.9); vs the same into a ring of "
            << ring.size() / pixels.size() / opt.batch_size
            << " batches (the loader's memory traffic): " << Fixed(encs[2].loader1 / bare_zstd_ring) << "x ("
            << Fixed(bare_zstd_ring, 0) << " img/s)\n";
  return kExitOk;
}

}  // namespace shard_tool
