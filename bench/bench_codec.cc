// `shard-bench codec`: per-stage cost of the image codec wrappers on one
// core, each next to the bare library call doing the same work in the same
// run (libpng's simplified png_image_* API, TurboJPEG's tjDecompress2 /
// tjCompress2; for resize, the Resample kernel without planning). The
// wrappers are meant to cost at most 10% over the bare calls.
// A PNG table puts the decoders side by side on the same files: libpng +
// zlib and libspng (bare library calls), the inflate alone (zlib's
// uncompress vs libdeflate on the concatenated IDAT stream), and libshard's
// two PNG decoders (PngDecoder::kLibpng, kLibdeflate), each as a speed-up
// over bare libpng.
//
// Inputs: --images DIR (its *.png and *.jpg files), or else synthetic
// photo-like 512x496 images (gradients, edges and noise) made in memory.
#include <libdeflate.h>
#include <png.h>
#include <spng.h>
#include <turbojpeg.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "bench.h"
#include "cli_checks.h"
#include "libshard/image/decode.h"
#include "libshard/image/encode.h"
#include "libshard/image/pipeline.h"
#include "libshard/image/resize.h"
#include "libshard/image/transform.h"
#include "libshard/io/open_file.h"

namespace shard_tool {
namespace {

namespace img = ::libshard::image;

struct Inputs {
  std::vector<std::string> png;
  std::vector<std::string> jpeg;
};

img::Image SyntheticPhoto(int w, int h, unsigned seed) {
  img::Image im(w, h, 3);
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, 5.0);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const double dx = x - w * 0.6, dy = y - h * 0.4;
      const bool disc = dx * dx + dy * dy < (h * 0.2) * (h * 0.2);
      const double v[3] = {
          120 + 90 * std::sin(x / 37.0 + seed) * std::cos(y / 53.0),
          200.0 * y / h + (disc ? 40 : 0),
          80 + 100.0 * x / w + ((x / 64 + y / 48) % 2 ? 25 : 0),
      };
      for (int k = 0; k < 3; ++k) {
        im.row(y)[x * 3 + k] = static_cast<uint8_t>(std::clamp(std::lround(v[k] + noise(rng)), 0L, 255L));
      }
    }
  }
  return im;
}

libshard::Status LoadInputs(const std::string& dir, Inputs* in) {
  if (dir.empty()) {
    for (unsigned s = 0; s < 4; ++s) {
      const img::Image photo = SyntheticPhoto(512, 496, s);
      LIBSHARD_ASSIGN_OR_RETURN(std::string png, img::EncodePng(photo));
      LIBSHARD_ASSIGN_OR_RETURN(std::string jpeg, img::EncodeJpeg(photo));
      in->png.push_back(std::move(png));
      in->jpeg.push_back(std::move(jpeg));
    }
    return libshard::Status::OK();
  }
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) files.push_back(e.path());
  if (ec) return libshard::ErrnoError(dir, ec.value());
  std::sort(files.begin(), files.end());
  for (const auto& p : files) {
    auto bytes = libshard::io::ReadFileToString(p.string());  // regular files only: a FIFO is skipped, not waited on
    if (!bytes.ok()) continue;
    const img::ImageFormat fmt = img::DetectFormat(*bytes);
    if (fmt == img::ImageFormat::kPng) in->png.push_back(*bytes);
    if (fmt == img::ImageFormat::kJpeg) in->jpeg.push_back(*bytes);
  }
  if (in->png.empty() || in->jpeg.empty()) {
    return libshard::InvalidArgumentError(dir + ": needs at least one PNG and one JPEG file");
  }
  return libshard::Status::OK();
}

// The concatenated IDAT stream and the size it inflates to (non-interlaced
// files; 0 for others).
struct IdatStream {
  std::string zlib;
  size_t raw_size = 0;
};

IdatStream ExtractIdat(const std::string& png) {
  IdatStream s;
  const auto* d = reinterpret_cast<const unsigned char*>(png.data());
  auto be32 = [&](size_t at) {
    return (uint32_t{d[at]} << 24) | (uint32_t{d[at + 1]} << 16) | (uint32_t{d[at + 2]} << 8) | d[at + 3];
  };
  for (size_t pos = 8; pos + 12 <= png.size();) {
    const uint32_t len = be32(pos);
    if (len > png.size() - pos - 12) break;
    if (std::memcmp(d + pos + 4, "IHDR", 4) == 0 && len == 13 && d[pos + 20] == 0) {
      static const int kChannels[7] = {1, 0, 3, 1, 2, 0, 4};
      const int ct = d[pos + 17];
      const uint64_t bits = uint64_t{be32(pos + 8)} * (ct <= 6 ? kChannels[ct] : 0) * d[pos + 16];
      s.raw_size = be32(pos + 12) * ((bits + 7) / 8 + 1);
    }
    if (std::memcmp(d + pos + 4, "IDAT", 4) == 0) s.zlib.append(png, pos + 8, len);
    pos += size_t{len} + 12;
  }
  return s;
}

struct Timing {
  int rounds;
  int iterations;
  bool cpu_clock;  // the calling thread's CPU time instead of the wall clock
};

double NowUs(bool cpu_clock) {
  if (cpu_clock) {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
  }
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Best (lowest) over rounds of the mean time per call, in microseconds: on
// a shared machine the other load only ever adds time, so the best round is
// the steadiest estimate of the code's own cost. With --clock cpu the time
// is the thread's CPU time, which leaves out the time other programs hold
// the core (not their contention for caches).
double TimeUs(const Timing& t, const std::function<void()>& fn) {
  std::vector<double> per_round;
  fn();  // warm caches and per-thread handles
  for (int r = 0; r < t.rounds; ++r) {
    const double t0 = NowUs(t.cpu_clock);
    for (int i = 0; i < t.iterations; ++i) fn();
    per_round.push_back((NowUs(t.cpu_clock) - t0) / t.iterations);
  }
  return *std::min_element(per_round.begin(), per_round.end());
}

struct Row {
  std::string stage;
  double wrapper_us;
  double bare_us;
};

// A second table: two ways of doing the same job, measured in the same run.
struct Versus {
  std::string what;
  std::string a_name, b_name;
  double a_us;
  double b_us;
};

int Run(const std::string& dir, const Timing& timing) {
  const int rounds = timing.rounds, iterations = timing.iterations;
  Inputs in;
  if (libshard::Status st = LoadInputs(dir, &in); !st.ok()) {
    std::cerr << "shard-bench codec: " << st << "\n";
    return kExitFailure;
  }
  bool failed = false;
  auto check = [&](const libshard::Status& st) {
    if (!st.ok() && !failed) {
      std::cerr << "shard-bench codec: " << st << "\n";
      failed = true;
    }
  };
  std::vector<Row> rows;
  img::Image out;
  std::vector<unsigned char> buf(64 << 20);
  tjhandle tjd = tjInitDecompress();
  tjhandle tjc = tjInitCompress();

  // PNG decode to RGB8.
  size_t k = 0;
  auto next_png = [&]() -> const std::string& { return in.png[k++ % in.png.size()]; };
  const double png_w = TimeUs(timing, [&] { check(img::DecodeImageInto(next_png(), {}, &out)); });
  const double png_b = TimeUs(timing, [&] {
    const std::string& s = next_png();
    png_image pi{};
    pi.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&pi, s.data(), s.size())) failed = true;
    pi.format = PNG_FORMAT_RGB;
    if (!png_image_finish_read(&pi, nullptr, buf.data(), 0, nullptr)) failed = true;
  });
  rows.push_back({"PNG decode", png_w, png_b});

  // The PNG decoders on the same files, each against bare libpng.
  std::vector<std::pair<std::string, double>> png_decoders;
  png_decoders.push_back({"libpng + zlib, simplified API (bare)", png_b});
  png_decoders.push_back({"libspng, SPNG_FMT_RGB8 (bare; zlib inside)", TimeUs(timing, [&] {
                            const std::string& s = next_png();
                            spng_ctx* ctx = spng_ctx_new(0);
                            size_t n = 0;
                            if (ctx == nullptr || spng_set_png_buffer(ctx, s.data(), s.size()) != 0 ||
                                spng_decoded_image_size(ctx, SPNG_FMT_RGB8, &n) != 0 || n > buf.size() ||
                                spng_decode_image(ctx, buf.data(), n, SPNG_FMT_RGB8, 0) != 0) {
                              failed = true;
                            }
                            spng_ctx_free(ctx);
                          })});
  std::vector<IdatStream> idats;
  for (const std::string& p : in.png) idats.push_back(ExtractIdat(p));
  bool all_plain = true;
  for (const IdatStream& z : idats) all_plain &= z.raw_size > 0 && z.raw_size <= buf.size();
  if (all_plain) {
    k = 0;
    png_decoders.push_back(
        {"inflate only: zlib uncompress", TimeUs(timing, [&] {
           const IdatStream& z = idats[k++ % idats.size()];
           uLongf n = z.raw_size;
           if (uncompress(buf.data(), &n, reinterpret_cast<const Bytef*>(z.zlib.data()), z.zlib.size()) != Z_OK) {
             failed = true;
           }
         })});
    libdeflate_decompressor* inflater = libdeflate_alloc_decompressor();
    png_decoders.push_back({"inflate only: libdeflate", TimeUs(timing, [&] {
                              const IdatStream& z = idats[k++ % idats.size()];
                              if (libdeflate_zlib_decompress(inflater, z.zlib.data(), z.zlib.size(), buf.data(),
                                                             z.raw_size, nullptr) != LIBDEFLATE_SUCCESS) {
                                failed = true;
                              }
                            })});
    libdeflate_free_decompressor(inflater);
  }
  for (img::PngDecoder d : {img::PngDecoder::kLibpng, img::PngDecoder::kLibdeflate}) {
    png_decoders.push_back({std::string("libshard PngDecoder::") + img::PngDecoderName(d) + " (wrapper)",
                            TimeUs(timing, [&] { check(img::DecodePngWith(d, next_png(), {}, &out)); })});
  }

  // JPEG decode, full size and 1/2 scale.
  for (int denom : {1, 2}) {
    k = 0;
    auto next_jpeg = [&]() -> const std::string& { return in.jpeg[k++ % in.jpeg.size()]; };
    img::DecodeOptions o;
    o.jpeg_scale_denom = denom;
    const double w = TimeUs(timing, [&] { check(img::DecodeImageInto(next_jpeg(), o, &out)); });
    const double b = TimeUs(timing, [&] {
      const std::string& s = next_jpeg();
      int width = 0, height = 0, sub = 0, cs = 0;
      const auto* p = reinterpret_cast<const unsigned char*>(s.data());
      if (tjDecompressHeader3(tjd, p, s.size(), &width, &height, &sub, &cs) != 0 ||
          tjDecompress2(tjd, p, s.size(), buf.data(), (width + denom - 1) / denom, 0, (height + denom - 1) / denom,
                        TJPF_RGB, 0) != 0) {
        failed = true;
      }
    });
    rows.push_back({denom == 1 ? "JPEG decode" : "JPEG decode 1/2", w, b});
  }

  // Resize to 224x224 (stretch) from the first JPEG's pixels.
  libshard::StatusOr<img::Image> src = img::DecodeImage(in.jpeg[0]);
  if (!src.ok()) {
    std::cerr << "shard-bench codec: " << src.status() << "\n";
    return kExitFailure;
  }
  img::Image small;
  for (img::Filter f : {img::Filter::kBilinear, img::Filter::kLanczos3}) {
    img::TransformSpec spec;
    spec.mode = img::ResizeMode::kStretch;
    spec.width = spec.height = 224;
    spec.filter = f;
    const double w = TimeUs(timing, [&] {
      auto r = img::Transform(*src, spec);
      check(r.status());
      if (r.ok()) small = std::move(*r);
    });
    const img::ResampleBox box{0, 0, double(src->width()), double(src->height())};
    const double b = TimeUs(timing, [&] { check(img::Resample(*src, box, 224, 224, f).status()); });
    rows.push_back({std::string("resize ") + std::to_string(src->width()) + "x" + std::to_string(src->height()) +
                        "->224 " + img::FilterName(f),
                    w, b});
  }

  // Resize kernels: each 8-bit implementation against the scalar reference.
  std::vector<Versus> versus;
  const std::string size_name = std::to_string(src->width()) + "x" + std::to_string(src->height());
  const img::ResampleImpl fast = img::ActiveResampleImpl();
  for (img::Filter f : {img::Filter::kBilinear, img::Filter::kBicubic, img::Filter::kLanczos3}) {
    const img::ResampleBox box{0, 0, double(src->width()), double(src->height())};
    const double ref = TimeUs(
        timing, [&] { check(img::ResampleWith(img::ResampleImpl::kReference, *src, box, 224, 224, f).status()); });
    const double fst = TimeUs(timing, [&] { check(img::ResampleWith(fast, *src, box, 224, 224, f).status()); });
    versus.push_back(
        {"resize " + size_name + "->224 " + img::FilterName(f), "reference", img::ResampleImplName(fast), ref, fst});
  }

  // Shrink-on-load for a JPEG going to 224x224 (centre crop, bilinear): the
  // whole decode + transform, full-size decode vs the DCT scale
  // ChooseJpegScale picks.
  {
    img::TransformSpec spec;
    spec.mode = img::ResizeMode::kCenterCrop;
    spec.width = spec.height = 224;
    k = 0;
    auto next_jpeg = [&]() -> const std::string& { return in.jpeg[k++ % in.jpeg.size()]; };
    img::PipelineOptions full;
    full.shrink_on_load = false;
    const double slow = TimeUs(timing, [&] { check(img::DecodeAndTransform(next_jpeg(), {}, spec, full).status()); });
    const double shrunk = TimeUs(timing, [&] { check(img::DecodeAndTransform(next_jpeg(), {}, spec).status()); });
    libshard::StatusOr<img::ImageInfo> info = img::ProbeImage(in.jpeg[0]);
    const int denom = info.ok() ? img::ChooseJpegScale(*info, spec) : 0;
    versus.push_back({"JPEG " + std::to_string(info.ok() ? info->width : 0) + "x" +
                          std::to_string(info.ok() ? info->height : 0) + "->224 crop, decode+resize",
                      "full", "1/" + std::to_string(denom), slow, shrunk});
  }

  // JPEG encode 224x224 q90 4:2:0 (both with the accurate integer DCT).
  const double enc_w = TimeUs(timing, [&] { check(img::EncodeJpeg(small).status()); });
  const double enc_b = TimeUs(timing, [&] {
    unsigned char* dst = buf.data();
    unsigned long size = buf.size();
    if (tjCompress2(tjc, small.data(), small.width(), 0, small.height(), TJPF_RGB, &dst, &size, TJSAMP_420, 90,
                    TJFLAG_NOREALLOC | TJFLAG_ACCURATEDCT) != 0) {
      failed = true;
    }
  });
  rows.push_back({"JPEG encode 224x224 q90", enc_w, enc_b});
  tjDestroy(tjd);
  tjDestroy(tjc);
  if (failed) {
    std::cerr << "shard-bench codec: a codec call failed during the run\n";
    return kExitFailure;
  }

  std::printf(
      "inputs: %zu PNG, %zu JPEG (%s); %d rounds x %d iterations, best round, 1 thread, "
      "%s time\n",
      in.png.size(), in.jpeg.size(), dir.empty() ? "synthetic 512x496" : dir.c_str(), rounds, iterations,
      timing.cpu_clock ? "thread CPU" : "wall-clock");
  std::printf("%-32s %12s %12s %8s\n", "stage", "wrapper us", "bare us", "ratio");
  for (const Row& r : rows) {
    std::printf("%-32s %12.1f %12.1f %8.3f\n", r.stage.c_str(), r.wrapper_us, r.bare_us, r.wrapper_us / r.bare_us);
  }
  std::printf("\n%-52s %12s %14s\n", "PNG decode to RGB8, same files", "us", "vs libpng");
  for (const auto& [what, us] : png_decoders) {
    std::printf("%-52s %12.1f %13.2fx\n", what.c_str(), us, png_b / us);
  }
  std::printf("\n%-40s %18s %18s %8s\n", "same job, two ways", "A us", "B us", "A/B");
  for (const Versus& v : versus) {
    std::printf("%-40s %10s %7.1f %10s %7.1f %8.2f\n", v.what.c_str(), v.a_name.c_str(), v.a_us, v.b_name.c_str(),
                v.b_us, v.a_us / v.b_us);
  }
  return kExitOk;
}

}  // namespace

void RegisterBenchCodec(CLI::App& bench, int* exit_code) {
  auto* cmd =
      bench.add_subcommand("codec", "Time image decode / resize / encode wrappers against the bare library calls");
  auto dir = std::make_shared<std::string>();
  auto iterations = std::make_shared<int>(50);
  auto rounds = std::make_shared<int>(5);
  cmd->add_option("--images", *dir, "Folder of .png/.jpg inputs (default: synthetic 512x496)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--iterations", *iterations, "Calls per timed round")->check(IntegerIn(1, 100000));
  cmd->add_option("--rounds", *rounds, "Timed rounds; the best is reported")->check(IntegerIn(1, 100));
  auto clock = std::make_shared<std::string>("wall");
  cmd->add_option("--clock", *clock,
                  "wall, or cpu: the thread's CPU time (steadier on a machine shared with other work)")
      ->check(CLI::IsMember({"wall", "cpu"}));
  cmd->callback([=] { *exit_code = Run(*dir, Timing{*rounds, *iterations, *clock == "cpu"}); });
}

}  // namespace shard_tool
