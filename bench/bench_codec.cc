// `shard-bench codec`: per-stage cost of the image codec wrappers on one
// core, each next to the bare library call doing the same work in the same
// run (libpng's simplified png_image_* API, TurboJPEG's tjDecompress2 /
// tjCompress2; for resize, the Resample kernel without planning). The
// wrappers are meant to cost at most 10% over the bare calls.
//
// Inputs: --images DIR (its *.png and *.jpg files), or else synthetic
// photo-like 512x496 images (gradients, edges and noise) made in memory.
#include <png.h>
#include <turbojpeg.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "cli_checks.h"
#include "bench.h"
#include "libshard/image/decode.h"
#include "libshard/image/encode.h"
#include "libshard/image/pipeline.h"
#include "libshard/image/resize.h"
#include "libshard/image/transform.h"
#include "libshard/io/mapped_file.h"

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
        im.row(y)[x * 3 + k] =
            static_cast<uint8_t>(std::clamp(std::lround(v[k] + noise(rng)), 0L, 255L));
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

// Best (lowest) over rounds of the mean time per call, in microseconds: on
// a shared machine the other load only ever adds time, so the best round is
// the steadiest estimate of the code's own cost.
double TimeUs(int rounds, int iterations, const std::function<void()>& fn) {
  std::vector<double> per_round;
  fn();  // warm caches and per-thread handles
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) fn();
    const auto t1 = std::chrono::steady_clock::now();
    per_round.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / iterations);
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

int Run(const std::string& dir, int iterations, int rounds) {
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
  const double png_w = TimeUs(rounds, iterations, [&] { check(img::DecodeImageInto(next_png(), {}, &out)); });
  const double png_b = TimeUs(rounds, iterations, [&] {
    const std::string& s = next_png();
    png_image pi{};
    pi.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&pi, s.data(), s.size())) failed = true;
    pi.format = PNG_FORMAT_RGB;
    if (!png_image_finish_read(&pi, nullptr, buf.data(), 0, nullptr)) failed = true;
  });
  rows.push_back({"PNG decode", png_w, png_b});

  // JPEG decode, full size and 1/2 scale.
  for (int denom : {1, 2}) {
    k = 0;
    auto next_jpeg = [&]() -> const std::string& { return in.jpeg[k++ % in.jpeg.size()]; };
    img::DecodeOptions o;
    o.jpeg_scale_denom = denom;
    const double w = TimeUs(rounds, iterations, [&] { check(img::DecodeImageInto(next_jpeg(), o, &out)); });
    const double b = TimeUs(rounds, iterations, [&] {
      const std::string& s = next_jpeg();
      int width = 0, height = 0, sub = 0, cs = 0;
      const auto* p = reinterpret_cast<const unsigned char*>(s.data());
      if (tjDecompressHeader3(tjd, p, s.size(), &width, &height, &sub, &cs) != 0 ||
          tjDecompress2(tjd, p, s.size(), buf.data(), (width + denom - 1) / denom, 0,
                        (height + denom - 1) / denom, TJPF_RGB, 0) != 0) {
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
    const double w = TimeUs(rounds, iterations, [&] {
      auto r = img::Transform(*src, spec);
      check(r.status());
      if (r.ok()) small = std::move(*r);
    });
    const img::ResampleBox box{0, 0, double(src->width()), double(src->height())};
    const double b = TimeUs(rounds, iterations, [&] {
      check(img::Resample(*src, box, 224, 224, f).status());
    });
    rows.push_back({std::string("resize ") + std::to_string(src->width()) + "x" +
                        std::to_string(src->height()) + "->224 " + img::FilterName(f),
                    w, b});
  }

  // Resize kernels: each 8-bit implementation against the scalar reference.
  std::vector<Versus> versus;
  const std::string size_name = std::to_string(src->width()) + "x" + std::to_string(src->height());
  const img::ResampleImpl fast = img::ActiveResampleImpl();
  for (img::Filter f : {img::Filter::kBilinear, img::Filter::kBicubic, img::Filter::kLanczos3}) {
    const img::ResampleBox box{0, 0, double(src->width()), double(src->height())};
    const double ref = TimeUs(rounds, iterations, [&] {
      check(img::ResampleWith(img::ResampleImpl::kReference, *src, box, 224, 224, f).status());
    });
    const double fst = TimeUs(rounds, iterations, [&] {
      check(img::ResampleWith(fast, *src, box, 224, 224, f).status());
    });
    versus.push_back({"resize " + size_name + "->224 " + img::FilterName(f), "reference",
                      img::ResampleImplName(fast), ref, fst});
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
    const double slow = TimeUs(rounds, iterations, [&] {
      check(img::DecodeAndTransform(next_jpeg(), {}, spec, full).status());
    });
    const double shrunk = TimeUs(rounds, iterations, [&] {
      check(img::DecodeAndTransform(next_jpeg(), {}, spec).status());
    });
    libshard::StatusOr<img::ImageInfo> info = img::ProbeImage(in.jpeg[0]);
    const int denom = info.ok() ? img::ChooseJpegScale(*info, spec) : 0;
    versus.push_back({"JPEG " + std::to_string(info.ok() ? info->width : 0) + "x" +
                          std::to_string(info.ok() ? info->height : 0) +
                          "->224 crop, decode+resize",
                      "full", "1/" + std::to_string(denom), slow, shrunk});
  }

  // JPEG encode 224x224 q90 4:2:0 (both with the accurate integer DCT).
  const double enc_w = TimeUs(rounds, iterations, [&] { check(img::EncodeJpeg(small).status()); });
  const double enc_b = TimeUs(rounds, iterations, [&] {
    unsigned char* dst = buf.data();
    unsigned long size = buf.size();
    if (tjCompress2(tjc, small.data(), small.width(), 0, small.height(), TJPF_RGB, &dst, &size,
                    TJSAMP_420, 90, TJFLAG_NOREALLOC | TJFLAG_ACCURATEDCT) != 0) {
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

  std::printf("inputs: %zu PNG, %zu JPEG (%s); %d rounds x %d iterations, best round, 1 thread\n",
              in.png.size(), in.jpeg.size(), dir.empty() ? "synthetic 512x496" : dir.c_str(),
              rounds, iterations);
  std::printf("%-32s %12s %12s %8s\n", "stage", "wrapper us", "bare us", "ratio");
  for (const Row& r : rows) {
    std::printf("%-32s %12.1f %12.1f %8.3f\n", r.stage.c_str(), r.wrapper_us, r.bare_us,
                r.wrapper_us / r.bare_us);
  }
  std::printf("\n%-40s %18s %18s %8s\n", "same job, two ways", "A us", "B us", "A/B");
  for (const Versus& v : versus) {
    std::printf("%-40s %10s %7.1f %10s %7.1f %8.2f\n", v.what.c_str(), v.a_name.c_str(), v.a_us,
                v.b_name.c_str(), v.b_us, v.a_us / v.b_us);
  }
  return kExitOk;
}

}  // namespace

void RegisterBenchCodec(CLI::App& bench, int* exit_code) {
  auto* cmd = bench.add_subcommand(
      "codec", "Time image decode / resize / encode wrappers against the bare library calls");
  auto dir = std::make_shared<std::string>();
  auto iterations = std::make_shared<int>(50);
  auto rounds = std::make_shared<int>(5);
  cmd->add_option("--images", *dir, "Folder of .png/.jpg inputs (default: synthetic 512x496)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--iterations", *iterations, "Calls per timed round")->check(IntegerIn(1, 100000));
  cmd->add_option("--rounds", *rounds, "Timed rounds; the best is reported")->check(IntegerIn(1, 100));
  cmd->callback([=] { *exit_code = Run(*dir, *iterations, *rounds); });
}

}  // namespace shard_tool
