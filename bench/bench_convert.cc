// `shard-bench convert`: images/s of the whole conversion (read, decode,
// resize to 224x224 centre crop, JPEG q90 encode, Example, shard write) on
// 512x496 photos, against baselines measured in the same run:
//   * Pillow doing the same in N worker processes (bench/bench_pillow.py,
//     run with /usr/bin/python3), the usual Python way;
//   * for JPEG, also the script an experienced Pillow user writes: the same
//     after Image.draft("RGB", (224, 224)), Pillow's own DCT shrink-on-load
//     (bench_pillow.py --draft);
//   * the bare decode floor: libpng's simplified API (PNG) or TurboJPEG
//     (JPEG) decoding the same files to RGB on the same number of threads,
//     with nothing else.
// For JPEG it also times the codec work shrink-on-load cannot avoid (1/2-scale
// decode + 224x224 encode: the codec floor) and a 1/8-scale decode (~ the
// Huffman decoding).
// Inputs are made from the photos in samples/photos (public domain / CC0),
// cropped and mirrored into distinct 512x496 images, written as PNG and as
// JPEG q90 into a temporary folder (page cache warm). A third input, "JPEG
// 12MP", is --large photos resized to 4032x3024 (a phone camera's size) and
// written as JPEG q90: there both the converter and Pillow's draft() decode
// at 1/8 scale, and its floor is that 1/8-scale decode alone (about the
// Huffman decoding, which no scale shrinks).
// The leak check's cost is the difference between `shard convert` with
// fingerprints (the default, --leaks warn) and with --leaks off on the same
// files and threads (by wall time; and by CPU time on one thread, the two
// run in turn), and the fingerprints of the stored 224x224 pixels timed
// alone against the 1-thread conversion's time per image; its search is timed on --leak-hashes random 64-bit
// hashes (with 1 % planted near copies) at the default distance.
#include <png.h>
#include <turbojpeg.h>
#include <unistd.h>

#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench.h"
#include "bench_util.h"
#include "cli_checks.h"
#include "libshard/convert/converter.h"
#include "libshard/convert/duplicate_index.h"
#include "libshard/convert/duplicates.h"
#include "libshard/image/decode.h"
#include "libshard/image/encode.h"
#include "libshard/image/transform.h"
#include "libshard/io/open_file.h"
#include "libshard/io/writable_file.h"
#include "libshard/util/random.h"
#include "libshard/util/sha256.h"

namespace shard_tool {
namespace {

namespace fs = std::filesystem;
namespace img = libshard::image;
namespace convert = libshard::convert;
using Clock = std::chrono::steady_clock;

struct ConvertBenchFlags {
  std::string photos = BenchDataDir() + "/photos";
  std::string python = "/usr/bin/python3";
  std::string pillow_script = BenchDataDir() + "/bench_pillow.py";
  int count = 48;  // distinct images
  int copies = 8;  // files per distinct image (so a round is long enough to time)
  int rounds = 3;
  int threads = 2;
  int large = 8;                // distinct 4032x3024 photos (0: no large-photo rows)
  int leak_hashes = 1'000'000;  // hashes for the leak search's timing (0: none)
};

libshard::Status WriteFile(const std::string& path, const std::string& bytes) {
  LIBSHARD_ASSIGN_OR_RETURN(auto f, libshard::io::NewPosixWritableFile(path));
  LIBSHARD_RETURN_IF_ERROR(f->Append(bytes));
  return f->Close();
}

// Distinct 512x496 RGB images cut from the photos (varying crop and mirror).
libshard::StatusOr<std::vector<img::Image>> MakeInputs(const ConvertBenchFlags& f) {
  return PhotoCuts(f.photos, static_cast<size_t>(f.count), 512, 496);
}

// `n` distinct 4032x3024 images: the photos stretched to a phone camera's
// size, mirrored every other one.
libshard::StatusOr<std::vector<img::Image>> MakeLargeInputs(const ConvertBenchFlags& f, int n) {
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<img::Image> small, MakeInputs(f));
  std::vector<img::Image> out;
  for (int v = 0; v < n; ++v) {
    img::TransformSpec spec;
    spec.mode = img::ResizeMode::kStretch;
    spec.width = 4032;
    spec.height = 3024;
    LIBSHARD_ASSIGN_OR_RETURN(img::Image big, img::Transform(small[v % small.size()], spec));
    out.push_back(v % 2 ? img::Orient(big, 2) : std::move(big));
  }
  return out;
}

// Items/s of `fn` over every blob on `threads` threads, best of `rounds`.
template <typename Fn>
double BestRate(const std::vector<std::string>& blobs, int threads, int rounds, const Fn& fn) {
  tbb::task_arena arena(threads);
  double best = 1e300;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = Clock::now();
    arena.execute([&] { tbb::parallel_for(size_t{0}, blobs.size(), [&](size_t i) { fn(blobs[i]); }); });
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return blobs.size() / best;
}

double BareDecodeRate(const std::vector<std::string>& blobs, bool png, int threads, int rounds) {
  auto decode_one = [png](const std::string& b) {
    thread_local std::vector<uint8_t> buf;
    if (png) {
      png_image im{};
      im.version = PNG_IMAGE_VERSION;
      if (!png_image_begin_read_from_memory(&im, b.data(), b.size())) return;
      im.format = PNG_FORMAT_RGB;
      buf.resize(PNG_IMAGE_SIZE(im));
      png_image_finish_read(&im, nullptr, buf.data(), 0, nullptr);
      png_image_free(&im);
    } else {
      thread_local tjhandle h = tjInitDecompress();
      int w, hh, sub, cs;
      auto* src = reinterpret_cast<const unsigned char*>(b.data());
      tjDecompressHeader3(h, src, b.size(), &w, &hh, &sub, &cs);
      buf.resize(static_cast<size_t>(w) * hh * 3);
      tjDecompress2(h, src, b.size(), buf.data(), w, 0, hh, TJPF_RGB, 0);
    }
  };
  return BestRate(blobs, threads, rounds, decode_one);
}

// The JPEG codec work a shrink-on-load conversion cannot avoid, on the same
// files and threads: TurboJPEG decoding at 1/`denom` scale and, with
// `encode`, compressing a 224x224 window of the result at q90 4:2:0 (no
// resize, hashing, statistics or I/O). At 1/8 scale the decode is almost
// only the Huffman (entropy) decoding, which every scale pays in full.
double JpegCodecFloorRate(const std::vector<std::string>& blobs, int denom, bool encode, int threads, int rounds) {
  auto one = [denom, encode](const std::string& b) {
    thread_local tjhandle dh = tjInitDecompress();
    thread_local tjhandle ch = tjInitCompress();
    thread_local std::vector<uint8_t> buf;
    thread_local unsigned char* jpeg = nullptr;
    thread_local unsigned long jpeg_cap = 0;
    int w, h, sub, cs;
    auto* src = reinterpret_cast<const unsigned char*>(b.data());
    if (tjDecompressHeader3(dh, src, b.size(), &w, &h, &sub, &cs) != 0) return;
    const int sw = (w + denom - 1) / denom, sh = (h + denom - 1) / denom;
    buf.resize(static_cast<size_t>(sw) * sh * 3);
    if (tjDecompress2(dh, src, b.size(), buf.data(), sw, 0, sh, TJPF_RGB, 0) != 0 || !encode) return;
    const int ow = std::min(sw, 224), oh = std::min(sh, 224);
    unsigned long size = jpeg_cap;
    tjCompress2(ch, buf.data(), ow, sw * 3, oh, TJPF_RGB, &jpeg, &size, TJSAMP_420, 90, 0);
    jpeg_cap = std::max(jpeg_cap, size);
  };
  return BestRate(blobs, threads, rounds, one);
}

// images/s of bench/bench_pillow.py, or a negative value.
// With `draft`, the JPEG variant that decodes with Image.draft() first.
double PillowRate(const ConvertBenchFlags& f, const std::vector<std::string>& files, int procs, bool draft) {
  std::string cmd = f.python + " " + f.pillow_script + " --procs " + std::to_string(procs) + " --passes 1" +
                    (draft ? " --draft" : "");
  for (const auto& p : files) cmd += " " + p;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) return -1;
  double n = 0, secs = 0, rate = -1;
  if (std::fscanf(pipe, "%lf %lf %lf", &n, &secs, &rate) != 3) rate = -1;
  if (::pclose(pipe) != 0) rate = -1;
  return rate;
}

// Seconds of CPU this process has used, all threads.
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// images/s of the converter (library, same as `shard convert`); with
// `cpu_per_image`, also the least CPU time per image of the rounds.
libshard::StatusOr<double> ConvertRate(const std::string& input, const std::string& out, int threads, int rounds,
                                       size_t n, convert::LeakMode leaks = convert::LeakMode::kWarn,
                                       double* cpu_per_image = nullptr) {
  double best = 1e300, best_cpu = 1e300;
  for (int r = 0; r < rounds; ++r) {
    fs::remove_all(out);
    convert::ConvertOptions o;
    o.input = input;
    o.output = out;
    o.threads = threads;
    o.sync = false;  // Pillow's baseline does not write at all
    o.encode.transform.mode = img::ResizeMode::kCenterCrop;
    o.encode.transform.width = o.encode.transform.height = 224;
    o.encode.jpeg.quality = 90;
    o.leaks = leaks;
    auto t0 = Clock::now();
    const double cpu0 = ProcessCpuSeconds();
    LIBSHARD_ASSIGN_OR_RETURN(convert::ConvertResult res, convert::Convert(o));
    best_cpu = std::min(best_cpu, (ProcessCpuSeconds() - cpu0) / n);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    if (res.rejected != 0) return libshard::InternalError("bench inputs were rejected");
  }
  if (cpu_per_image != nullptr) *cpu_per_image = best_cpu;
  return n / best;
}

// The leak check's share of the conversion's CPU time on one thread:
// --leaks warn and --leaks off run in turn, `rounds` each, the least CPU
// time per image of each kept (CPU time, not wall time: steadier on a
// loaded machine; one thread: no idle waits counted). 1 - off / warn.
libshard::StatusOr<double> LeakCpuShare(const std::string& input, const std::string& out, int rounds, size_t n) {
  double warn = 1e300, off = 1e300;
  for (int r = 0; r < rounds; ++r) {
    for (convert::LeakMode mode : {convert::LeakMode::kWarn, convert::LeakMode::kOff}) {
      double cpu = 0;
      LIBSHARD_RETURN_IF_ERROR(ConvertRate(input, out, 1, 1, n, mode, &cpu).status());
      double& least = mode == convert::LeakMode::kOff ? off : warn;
      least = std::min(least, cpu);
    }
  }
  return 1 - off / warn;
}

// Seconds one thread takes to fingerprint one stored image as the converter
// does (FingerprintOf: the SHA-256 of the stored q90 JPEG and the ten
// regions' hashes of its pixels) of the bench's stored size, 224x224 RGB, cut
// from the inputs; best of `rounds`.
double FingerprintSeconds(const std::vector<img::Image>& inputs, int rounds) {
  std::vector<img::Image> stored;
  img::TransformSpec spec;
  spec.mode = img::ResizeMode::kCenterCrop;
  spec.width = spec.height = 224;
  for (size_t i = 0; i < inputs.size() && i < 64; ++i) {
    libshard::StatusOr<img::Image> out = img::Transform(inputs[i], spec);
    if (out.ok()) stored.push_back(std::move(*out));
  }
  if (stored.empty()) return 0;
  std::vector<std::string> jpegs;
  for (const img::Image& im : stored) {
    img::JpegEncodeOptions q90;
    q90.quality = 90;
    libshard::StatusOr<std::string> jpeg = img::EncodeJpeg(im, q90);
    jpegs.push_back(jpeg.ok() ? std::move(*jpeg) : std::string());
  }
  double best = 1e300;
  uint64_t sink = 0;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = Clock::now();
    for (int rep = 0; rep < 4; ++rep) {
      for (size_t i = 0; i < stored.size(); ++i) {
        sink += convert::FingerprintOf(stored[i], libshard::util::Sha256Hex(jpegs[i])).hashes.phash[0];
      }
    }
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count() / (4.0 * stored.size()));
  }
  if (sink == 1) std::printf(" ");  // keeps the work
  return best;
}

// The leak check's search alone: n random fingerprints (ten regions'
// 64-bit and 256-bit hashes), 1 % of them copies of an earlier one: its
// whole hashes are one region's of the original (a resized or cropped copy)
// with up to the default distance's bits flipped in the 64-bit hash and up
// to 20 in the 256-bit one; one image each (half train, half val), through
// FindDuplicates (on TBB's threads); best of 2, for the first 100,000 too
// when n is larger; then for each count --dedup within's incremental
// FingerprintIndex (one query before each Add, one thread, once). Every
// planted copy must be found with its original (the lines say how many
// were), and nothing is cached between rounds.
void TimeLeakSearch(int n) {
  libshard::util::SplitMix64 rng(1);
  std::vector<convert::DuplicateImage> images(n);
  std::vector<std::pair<uint32_t, uint32_t>> planted;  // (original, copy)
  for (int i = 0; i < n; ++i) {
    img::RegionHashes& h = images[i].fingerprint.hashes;
    for (int r = 0; r < img::kHashRegions; ++r) {
      h.phash[r] = rng.Next();
      for (uint64_t& w : h.detail[r]) w = rng.Next();
    }
    h.mirror = rng.Next();  // searched too, as a real image's
    for (uint64_t& w : h.mirror_detail) w = rng.Next();
    images[i].fingerprint.has_mirror = true;
    // Their tones are 0: with a colour they would all be plain pictures, searched by colour (every pair of one
    // cell), not by the hashes this times.
    images[i].fingerprint.has_colour = false;
    if (i > 0 && rng.Below(100) == 0) {
      const uint32_t from = static_cast<uint32_t>(rng.Below(i));
      const img::RegionHashes& original = images[from].fingerprint.hashes;
      const int region = static_cast<int>(rng.Below(img::kHashRegions));
      h.phash[0] = original.phash[region];
      h.detail[0] = original.detail[region];
      for (uint64_t k = rng.Below(convert::kDefaultLeakDistance + 1); k > 0; --k) {
        h.phash[0] ^= uint64_t{1} << rng.Below(64);
      }
      for (uint64_t k = rng.Below(21); k > 0; --k) {
        const uint64_t bit = rng.Below(256);
        h.detail[0][bit / 64] ^= uint64_t{1} << (bit % 64);
      }
      planted.emplace_back(from, static_cast<uint32_t>(i));
    }
    images[i].split = i % 2 ? "val" : "train";
    images[i].fingerprint.key_sha256 = std::to_string(i);  // distinct keys: no exact pairs
  }
  for (int count : {std::min(n, 100'000), n}) {
    if (count < n && n <= 100'000) continue;
    std::vector<convert::DuplicateImage> prefix;
    if (count < n) prefix.assign(images.begin(), images.begin() + count);
    const std::vector<convert::DuplicateImage>& some = count < n ? prefix : images;
    double best = 1e300;
    convert::DuplicateReport r;
    for (int round = 0; round < 2; ++round) {
      auto t0 = Clock::now();
      r = convert::FindDuplicates(some, convert::kDefaultLeakDistance);
      best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    for (const convert::DuplicatePair& p : r.pairs) pairs.emplace_back(p.a, p.b);
    std::sort(pairs.begin(), pairs.end());
    size_t want = 0, found = 0;
    for (const auto& [from, copy] : planted) {
      if (copy >= static_cast<uint32_t>(count)) continue;
      ++want;
      found += std::binary_search(pairs.begin(), pairs.end(), std::make_pair(from, copy));
    }
    std::printf(
        "\nleak search: %d fingerprints (10 regions' 64- and 256-bit hashes each, %zu planted copies, %zu found), "
        "distance %d: %.2f s on %d threads (%d bands); %llu pairs found\n",
        count, want, found, convert::kDefaultLeakDistance, best, oneapi::tbb::info::default_concurrency(),
        convert::SearchBands(convert::kDefaultLeakDistance, count),
        static_cast<unsigned long long>(r.leaks + r.within));
    // --dedup within's incremental index (one split, one thread): a query
    // before each Add, every image added.
    auto t0 = Clock::now();
    const std::clock_t cpu0 = std::clock();  // this thread's alone: nothing else runs meanwhile
    convert::FingerprintIndex index(convert::kDefaultLeakDistance, some.size());
    std::vector<std::pair<uint32_t, uint32_t>> near;
    for (uint32_t i = 0; i < some.size(); ++i) {
      index.ForEachNear(some[i].fingerprint, [&near, i](uint32_t id, int) { near.emplace_back(id, i); });
      index.Add(some[i].fingerprint);
    }
    const double index_s = std::chrono::duration<double>(Clock::now() - t0).count();
    const double index_cpu = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
    std::sort(near.begin(), near.end());
    size_t index_found = 0;
    for (const auto& [from, copy] : planted) {
      if (copy < static_cast<uint32_t>(count)) {
        index_found += std::binary_search(near.begin(), near.end(), std::make_pair(from, copy));
      }
    }
    std::printf(
        "  the same through FingerprintIndex (--dedup within, a query before each Add, one thread): %.2f s, %.2f us "
        "an image (CPU time %.2f s, %.2f us); %zu planted copies found; %zu pairs found\n",
        index_s, 1e6 * index_s / count, index_cpu, 1e6 * index_cpu / count, index_found, near.size());
  }
}

int Run(const ConvertBenchFlags& f) {
  auto inputs = MakeInputs(f);
  if (!inputs.ok()) {
    std::fprintf(stderr, "shard-bench convert: %s\n", inputs.status().message().c_str());
    return kExitFailure;
  }
  const fs::path tmp = fs::temp_directory_path() / ("shard-bench-convert-" + std::to_string(::getpid()));
  std::vector<std::vector<std::string>> rows;
  std::printf(
      "inputs: %d files per format (%d distinct 512x496 images cut from %s), to 224x224 "
      "centre crop, bilinear, JPEG q90; %d threads / processes; best of %d rounds (Pillow: "
      "one pass)\n\n",
      f.count * f.copies, f.count, f.photos.c_str(), f.threads, f.rounds);
  bool ok = true;
  libshard::StatusOr<std::vector<img::Image>> large = std::vector<img::Image>();
  if (f.large > 0) large = MakeLargeInputs(f, f.large);
  if (!large.ok()) {
    std::fprintf(stderr, "shard-bench convert: %s\n", large.status().message().c_str());
    return kExitFailure;
  }
  const double fingerprint_s = FingerprintSeconds(*inputs, f.rounds);
  for (int k = 0; k < (f.large > 0 ? 3 : 2); ++k) {
    const bool png = k == 0, big = k == 2;
    const std::string kind = png ? "PNG" : big ? "JPEG 12MP" : "JPEG";
    const std::string sub = png ? "png" : big ? "large" : "jpeg";
    const std::vector<img::Image>& images = big ? *large : *inputs;
    const int copies = big ? 1 : f.copies;
    const fs::path dir = tmp / sub / "photos";
    fs::create_directories(dir);
    std::vector<std::string> files, blobs;
    for (size_t i = 0; i < images.size(); ++i) {
      img::JpegEncodeOptions jo;
      jo.quality = 90;
      auto bytes = png ? img::EncodePng(images[i]) : img::EncodeJpeg(images[i], jo);
      for (int c = 0; c < copies; ++c) {
        char name[64];
        std::snprintf(name, sizeof name, "%03zu-%02d.%s", i, c, png ? "png" : "jpg");
        const std::string path = (dir / name).string();
        if (!bytes.ok() || !WriteFile(path, *bytes).ok()) {
          std::fprintf(stderr, "shard-bench convert: cannot write %s\n", path.c_str());
          return kExitFailure;
        }
        files.push_back(path);
        blobs.push_back(*bytes);
      }
    }
    const double floor1 = BareDecodeRate(blobs, png, 1, f.rounds);
    const double floorn = BareDecodeRate(blobs, png, f.threads, f.rounds);
    const double entropyn = png ? 0 : JpegCodecFloorRate(blobs, 8, false, f.threads, f.rounds);
    // The codec floor: 512x496 sources shrink at 1/2 scale and are encoded;
    // 12MP sources shrink at 1/8, and the decode is all that counts.
    const double codec1 = png   ? 0
                          : big ? JpegCodecFloorRate(blobs, 8, false, 1, f.rounds)
                                : JpegCodecFloorRate(blobs, 2, true, 1, f.rounds);
    const double codecn = png ? 0 : big ? entropyn : JpegCodecFloorRate(blobs, 2, true, f.threads, f.rounds);
    const double pillow = PillowRate(f, files, f.threads, false);
    const double draft = png ? 0 : PillowRate(f, files, f.threads, true);
    auto c1 = ConvertRate((tmp / sub).string(), (tmp / "out").string(), 1, f.rounds, files.size());
    auto cn = ConvertRate((tmp / sub).string(), (tmp / "out").string(), f.threads, f.rounds, files.size());
    auto off = ConvertRate((tmp / sub).string(), (tmp / "out").string(), f.threads, f.rounds, files.size(),
                           convert::LeakMode::kOff);
    auto cpu_share = LeakCpuShare((tmp / sub).string(), (tmp / "out").string(), std::max(f.rounds, 5), files.size());
    if (!c1.ok() || !cn.ok() || !off.ok() || !cpu_share.ok()) {
      std::fprintf(stderr, "shard-bench convert: %s\n",
                   (!c1.ok()    ? c1.status()
                    : !cn.ok()  ? cn.status()
                    : !off.ok() ? off.status()
                                : cpu_share.status())
                       .message()
                       .c_str());
      return kExitFailure;
    }
    const std::string t = std::to_string(f.threads);
    auto ratio = [](double r, double base, const char* unit) {
      return base > 0 ? Fixed(r / base) + unit : std::string("n/a");
    };
    // Columns: vs Pillow, vs Pillow draft() (JPEG), vs the decode floor, vs
    // the codec floor (JPEG: 1/2-scale decode + encode).
    auto row = [&](const std::string& name, double r) {
      rows.push_back({kind, name, Fixed(r, 0), ratio(r, pillow, "x"), png ? "" : ratio(r, draft, "x"),
                      Fixed(r / floorn), png ? "" : Fixed(r / codecn)});
    };
    const std::string lib = png ? "libpng+zlib" : "libjpeg-turbo";
    row("Pillow, " + t + " processes", pillow);
    if (!png) row("Pillow + draft(\"RGB\", (224, 224)), " + t + " processes", draft);
    row(lib + " decode only, 1 thread", floor1);
    row(lib + " decode only, " + t + " threads (decode floor)", floorn);
    if (big) {
      row(lib + " 1/8-scale decode, 1 thread", codec1);
      row(lib + " 1/8-scale decode, " + t + " threads (codec floor: ~Huffman only)", codecn);
    } else if (!png) {
      row(lib + " 1/8-scale decode (~Huffman only), " + t + " threads", entropyn);
      row(lib + " 1/2-scale decode + 224 q90 encode, no resize, 1 thread", codec1);
      row(lib + " 1/2-scale decode + 224 q90 encode, no resize, " + t + " threads (codec floor)", codecn);
    }
    row("shard convert, 1 thread", *c1);
    if (!png) {
      rows.push_back({kind, "  shard convert / codec work, both 1 thread", "", "", "", "", Fixed(*c1 / codec1)});
    }
    row("shard convert, " + t + " threads", *cn);
    rows.push_back({kind, "  scaling 1 -> " + t + " threads", Fixed(*cn / *c1) + "x", "", "", "", ""});
    row("shard convert --leaks off, " + t + " threads", *off);
    // The share of the conversion's time the fingerprints take: the
    // difference of the two runs (noisy at a few %), and the fingerprints
    // timed alone against the 1-thread conversion's time per image.
    rows.push_back({kind, "  leak check's share of the time (warn vs off)", Fixed(100 * (1 - *cn / *off), 1) + " %", "",
                    "", "", ""});
    rows.push_back({kind, "  leak check's share of the CPU time (warn vs off, 1 thread, in turn)",
                    Fixed(100 * *cpu_share, 1) + " %", "", "", "", ""});
    rows.push_back({kind,
                    "  fingerprints alone (" + Fixed(fingerprint_s * 1e6, 0) +
                        " us/image) / shard convert's time per image, 1 thread",
                    Fixed(100 * fingerprint_s * *c1, 1) + " %", "", "", "", ""});
    ok &= pillow > 0 && (png || draft > 0);
  }
  fs::remove_all(tmp);
  PrintTable({"input", "pipeline", "images/s", "vs Pillow", "vs draft", "vs decode floor", "vs codec floor"}, rows);
  std::printf(
      "\ntargets: PNG >= 1.8x Pillow; JPEG >= 2.0x Pillow with "
      "draft() and >= 0.9 of the codec floor (1/2-scale decode + encode); scaling 1 -> 2 "
      "threads >= 1.8x. JPEG 12MP: no target; both shard convert and Pillow's draft() decode at 1/8 "
      "scale, bound by the entropy decoding (the codec floor column)\n");
  if (!ok) std::printf("note: the Pillow baseline did not run (%s with PIL needed)\n", f.python.c_str());
  if (f.leak_hashes > 0) TimeLeakSearch(f.leak_hashes);
  return kExitOk;
}

}  // namespace

void RegisterBenchConvert(CLI::App& bench, int* exit_code) {
  auto flags = std::make_shared<ConvertBenchFlags>();
  CLI::App* cmd = bench.add_subcommand(
      "convert",
      "images/s of shard convert on 512x496 photos (and 4032x3024 JPEGs) vs Pillow and the bare decode floor");
  cmd->add_option("--photos", flags->photos, "folder of photos to cut inputs from")->capture_default_str();
  cmd->add_option("--count", flags->count, "distinct input images per format, 1..100000")
      ->check(IntegerIn(1, 100000))
      ->capture_default_str();
  cmd->add_option("--copies", flags->copies, "files per distinct image, 1..1000")
      ->check(IntegerIn(1, 1000))
      ->capture_default_str();
  cmd->add_option("--rounds", flags->rounds, "timing rounds (best is kept), 1..100")
      ->check(IntegerIn(1, 100))
      ->capture_default_str();
  cmd->add_option("--threads", flags->threads, "threads and Pillow processes, 1..256")
      ->check(IntegerIn(1, kMaxThreads))
      ->capture_default_str();
  cmd->add_option("--large", flags->large, "distinct 4032x3024 JPEG photos for the 12MP rows, 0..64 (0: none)")
      ->check(IntegerIn(0, 64))
      ->capture_default_str();
  cmd->add_option("--python", flags->python, "Python with PIL for the baseline")->capture_default_str();
  cmd->add_option("--leak-hashes", flags->leak_hashes,
                  "random hashes the leak check's search is timed on, 0..100000000 (0: not timed)")
      ->check(IntegerIn(0, 100'000'000))
      ->capture_default_str();
  cmd->callback([flags, exit_code] { *exit_code = Run(*flags); });
}

}  // namespace shard_tool
