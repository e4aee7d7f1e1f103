// `shard-bench read --crop`: random-resized-crop to 224x224 (torchvision's
// parameters, the ImageNet training recipe) from JPEG q90 records cut from
// bench/photos: --images of 512x496 and, with --large N, N of 4032x3024 (a
// phone camera's size). In one run, on --threads threads:
//   - the BatchLoader's four decode paths: the whole image decoded, then
//     cropped (crop_decode off: what every sample cost before crop decode),
//     with and without DCT scaling; and the crop decode (only the crop's rows
//     and iMCU columns), with and without DCT scaling (the default);
//   - the floor: bare libjpeg-turbo (jpeg_crop_scanline, jpeg_skip_scanlines,
//     the crop's rows, jpeg_abort_decompress; nothing else) decoding the same
//     crop regions (reader::RandomResizedCropOf, epoch by epoch as the loader
//     draws them) at the scale the loader picks, and at full scale; and the
//     bare decode of the whole image;
//   - the checks: crop decode gives the whole decode's batches byte for byte,
//     and DCT scaling's difference from the full-scale pixels (mean and max
//     |difference| per image, over the images it scaled);
//   - with --threads above 1, the thread scaling: the default path and its
//     floor on one thread against --threads, as a fraction of linear.
#include "bench_read_crop.h"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

// jpeglib.h needs size_t / FILE first.
#include <jpeglib.h>

#include "bench_util.h"
#include "commands.h"
#include "libshard/example/example_builder.h"
#include "libshard/example/image_keys.h"
#include "libshard/image/encode.h"
#include "libshard/image/probe.h"
#include "libshard/image/transform.h"
#include "libshard/reader/batch_loader.h"
#include "libshard/record/record_writer.h"

namespace shard_tool {
namespace {

namespace img = libshard::image;
namespace reader = libshard::reader;
using libshard::Status;
using libshard::StatusOr;

constexpr int kOut = 224;

struct Records {
  std::string shard;
  std::vector<std::string> jpegs;
  std::vector<img::ImageInfo> infos;
  size_t bytes = 0;
};

StatusOr<Records> WriteRecords(const std::vector<img::Image>& images, const std::string& path) {
  Records r;
  r.shard = path;
  LIBSHARD_ASSIGN_OR_RETURN(auto w, libshard::record::RecordWriter::Create(path, {true, false}));
  img::JpegEncodeOptions jo;
  jo.quality = 90;
  for (size_t i = 0; i < images.size(); ++i) {
    LIBSHARD_ASSIGN_OR_RETURN(std::string j, img::EncodeJpeg(images[i], jo));
    LIBSHARD_ASSIGN_OR_RETURN(img::ImageInfo info, img::ProbeImage(j));
    libshard::example::ExampleBuilder b;
    b.AddBytes(libshard::keys::kEncoded, j);
    b.AddBytes(libshard::keys::kFormat, "jpeg");
    b.AddInt64(libshard::keys::kLabel, static_cast<int64_t>(i % 4));
    LIBSHARD_RETURN_IF_ERROR(w->Write(b.Serialize()));
    r.infos.push_back(info);
    r.bytes += j.size();
    r.jpegs.push_back(std::move(j));
  }
  LIBSHARD_RETURN_IF_ERROR(w->Close());
  return r;
}

// Bare libjpeg-turbo: `r` (in pixels of the 1/d-scaled image) decoded to RGB
// with nothing around it. The inputs are this run's own JPEGs.
void BareRegionDecode(const std::string& jpeg, int d, const img::PixelRect& r) {
  struct Handle {
    jpeg_decompress_struct c;
    jpeg_error_mgr e;
    std::vector<JSAMPLE> px;
    Handle() {
      c.err = jpeg_std_error(&e);
      jpeg_create_decompress(&c);
    }
    ~Handle() { jpeg_destroy_decompress(&c); }
  };
  thread_local Handle h;
  jpeg_mem_src(&h.c, reinterpret_cast<const unsigned char*>(jpeg.data()), static_cast<unsigned long>(jpeg.size()));
  jpeg_read_header(&h.c, TRUE);
  h.c.out_color_space = JCS_EXT_RGB;
  h.c.scale_num = 1;
  h.c.scale_denom = static_cast<unsigned int>(d);
  jpeg_start_decompress(&h.c);
  JDIMENSION x = static_cast<JDIMENSION>(r.x), w = static_cast<JDIMENSION>(r.width);
  if (x > 0 || w < h.c.output_width) jpeg_crop_scanline(&h.c, &x, &w);
  h.px.resize(static_cast<size_t>(w) * r.height * 3);
  if (r.y > 0) jpeg_skip_scanlines(&h.c, static_cast<JDIMENSION>(r.y));
  for (int y = 0; y < r.height; ++y) {
    JSAMPROW row = &h.px[static_cast<size_t>(y) * w * 3];
    jpeg_read_scanlines(&h.c, &row, 1);
  }
  jpeg_abort_decompress(&h.c);
}

struct Region {
  int d = 1;
  img::PixelRect rect;  // in the 1/d-scaled image
};

// The crop the loader draws for record `i` at `epoch`, at the DCT scale it
// picks (dct) or at full scale.
Region RegionOf(const Records& rec, const reader::BatchLoaderOptions& lo, uint64_t epoch, size_t i, bool dct) {
  const img::ImageInfo& info = rec.infos[i];
  img::TransformSpec spec;
  spec.crop = reader::RandomResizedCropOf(lo, epoch, i, info.width, info.height);
  spec.mode = img::ResizeMode::kStretch;
  spec.width = lo.width;
  spec.height = lo.height;
  spec.filter = lo.filter;
  Region r;
  r.d = dct ? img::ChooseJpegScale(info, spec) : 1;
  const img::PixelRect& c = *spec.crop;
  const int sw = (info.width + r.d - 1) / r.d, sh = (info.height + r.d - 1) / r.d;
  r.rect.x = c.x / r.d;
  r.rect.y = c.y / r.d;
  r.rect.width = std::min(sw, (c.x + c.width + r.d - 1) / r.d) - r.rect.x;
  r.rect.height = std::min(sh, (c.y + c.height + r.d - 1) / r.d) - r.rect.y;
  return r;
}

// Images/s of bare decodes on `threads` threads, epoch after epoch; `what`
// 0: the whole image, 1: the crop regions at full scale, 2: at the DCT scale.
double FloorRate(const Records& rec, const reader::BatchLoaderOptions& lo, int what, double seconds) {
  tbb::task_arena arena(lo.threads);
  const size_t n = rec.jpegs.size();
  uint64_t epoch = 0;
  const double s = BestSecondsPerCall(
      [&] {
        const uint64_t e = epoch++;
        arena.execute([&] {
          tbb::parallel_for(size_t{0}, n, [&](size_t i) {
            if (what == 0) {
              BareRegionDecode(rec.jpegs[i], 1, {0, 0, rec.infos[i].width, rec.infos[i].height});
            } else {
              const Region r = RegionOf(rec, lo, e, i, what == 2);
              BareRegionDecode(rec.jpegs[i], r.d, r.rect);
            }
          });
        });
      },
      seconds);
  return n / s;
}

// Images/s of the loader, one epoch per call, best of the rounds; -1 on error.
double LoaderRate(const std::shared_ptr<const reader::Dataset>& ds, const reader::BatchLoaderOptions& lo,
                  double seconds) {
  auto l = reader::BatchLoader::Create(ds, lo);
  if (!l.ok()) return -1;
  bool failed = false;
  const double s = BestSecondsPerCall(
      [&] {
        for (uint64_t b = 0; b < (*l)->batches_per_epoch(); ++b) {
          reader::Batch batch;
          failed |= !(*l)->Next(&batch).ok();
        }
      },
      seconds);
  return failed ? -1 : ds->size() / s;
}

// Epoch 0 of two loaders, image by image: how many differ at all, and over
// those the mean |a - b| per image (average and worst) and the max per image
// (median and worst).
struct Difference {
  size_t images = 0, differing = 0;
  double mean_avg = 0, mean_worst = 0;
  int max_median = 0, max_worst = 0;
};

StatusOr<Difference> Compare(const std::shared_ptr<const reader::Dataset>& ds, const reader::BatchLoaderOptions& a,
                             const reader::BatchLoaderOptions& b) {
  LIBSHARD_ASSIGN_OR_RETURN(auto la, reader::BatchLoader::Create(ds, a));
  LIBSHARD_ASSIGN_OR_RETURN(auto lb, reader::BatchLoader::Create(ds, b));
  const size_t px = static_cast<size_t>(a.width) * a.height * a.channels;
  Difference d;
  std::vector<int> maxes;
  for (uint64_t k = 0; k < la->batches_per_epoch(); ++k) {
    reader::Batch ba, bb;
    LIBSHARD_RETURN_IF_ERROR(la->Next(&ba));
    LIBSHARD_RETURN_IF_ERROR(lb->Next(&bb));
    for (size_t i = 0; i < ba.size; ++i, ++d.images) {
      const uint8_t* p = ba.images + i * px;
      const uint8_t* q = bb.images + i * px;
      uint64_t sum = 0;
      int mx = 0;
      for (size_t j = 0; j < px; ++j) {
        const int v = std::abs(int{p[j]} - int{q[j]});
        sum += static_cast<uint64_t>(v);
        mx = std::max(mx, v);
      }
      if (mx == 0) continue;
      ++d.differing;
      const double mean = static_cast<double>(sum) / px;
      d.mean_avg += mean;
      d.mean_worst = std::max(d.mean_worst, mean);
      maxes.push_back(mx);
    }
  }
  if (d.differing > 0) {
    d.mean_avg /= d.differing;
    std::sort(maxes.begin(), maxes.end());
    d.max_median = maxes[maxes.size() / 2];
    d.max_worst = maxes.back();
  }
  return d;
}

std::string LoadAverage() {
  std::ifstream f("/proc/loadavg");
  std::string one, five;
  f >> one >> five;
  return one + " " + five;
}

int RunOne(const CropBenchOptions& opt, const std::string& name, const std::vector<img::Image>& images,
           const std::string& path) {
  auto rec = WriteRecords(images, path);
  if (!rec.ok()) {
    std::cerr << "shard-bench read: " << rec.status() << "\n";
    return kExitFailure;
  }
  auto opened = reader::Dataset::Open({path});
  if (!opened.ok()) {
    std::cerr << "shard-bench read: " << opened.status() << "\n";
    return kExitFailure;
  }
  std::shared_ptr<const reader::Dataset> ds = std::move(*opened);
  reader::BatchLoaderOptions lo;
  lo.batch_size = opt.batch_size;
  lo.threads = opt.threads;
  lo.width = lo.height = kOut;
  lo.augment = reader::Augment::kRandomResizedCrop;
  auto with = [&](bool crop_decode, bool dct_scale) {
    reader::BatchLoaderOptions o = lo;
    o.crop_decode = crop_decode;
    o.dct_scale = dct_scale;
    return o;
  };
  const double whole = LoaderRate(ds, with(false, false), opt.seconds);
  const double whole_dct = LoaderRate(ds, with(false, true), opt.seconds);
  const double crop = LoaderRate(ds, with(true, false), opt.seconds);
  const double crop_dct = LoaderRate(ds, with(true, true), opt.seconds);
  const double bare_whole = FloorRate(*rec, lo, 0, opt.seconds);
  const double floor = FloorRate(*rec, lo, 1, opt.seconds);
  const double floor_dct = FloorRate(*rec, lo, 2, opt.seconds);
  auto same = Compare(ds, with(true, false), with(false, false));
  auto dct = Compare(ds, with(true, true), with(true, false));
  if (!same.ok() || !dct.ok() || whole <= 0 || whole_dct <= 0 || crop <= 0 || crop_dct <= 0) {
    std::cerr << "shard-bench read: the loader failed: " << (same.ok() ? dct.status() : same.status()) << "\n";
    return kExitFailure;
  }
  size_t scaled = 0;
  for (size_t i = 0; i < rec->jpegs.size(); ++i) scaled += RegionOf(*rec, lo, 0, i, true).d > 1;
  std::cout << "\nrandom-resized-crop to " << kOut << "x" << kOut << ": " << rec->jpegs.size() << " JPEGs " << name
            << " q90 4:2:0 (" << rec->bytes / rec->jpegs.size() << " bytes on average), uint8 batches of "
            << opt.batch_size << ", " << opt.threads << " threads; load average " << LoadAverage() << "\n";
  std::vector<std::vector<std::string>> rows;
  auto row = [&](const std::string& what, double rate, double floor_rate) {
    rows.push_back(
        {what, Fixed(rate, 0), Fixed(rate / whole), floor_rate > 0 ? Fixed(rate / floor_rate) : std::string("-")});
  };
  row("loader, whole image decoded, then cropped (before)", whole, bare_whole);
  row("loader, whole image decoded with DCT scaling", whole_dct, -1);
  row("loader, crop decode, full scale (dct_scale=false)", crop, floor);
  row("loader, crop decode + DCT scaling (default)", crop_dct, floor_dct);
  row("bare libjpeg-turbo, whole image", bare_whole, -1);
  row("bare libjpeg-turbo, the crop regions, full scale (floor, exact)", floor, -1);
  row("bare libjpeg-turbo, the crop regions at the loader's DCT scale (floor)", floor_dct, -1);
  PrintTable({"what", "images/s", "x before", "x its floor"}, rows);
  // Thread scaling (issue 47): the default path and its floor on one
  // thread, beside the rows above on --threads.
  if (opt.threads > 1) {
    reader::BatchLoaderOptions one = lo;
    one.threads = 1;
    const double crop_dct_1 = LoaderRate(ds, [&] {
      reader::BatchLoaderOptions o = with(true, true);
      o.threads = 1;
      return o;
    }(), opt.seconds);
    const double floor_dct_1 = FloorRate(*rec, one, 2, opt.seconds);
    auto scaling = [&](const char* what, double at_1, double at_n) {
      std::cout << "  " << what << ": " << Fixed(at_1, 0) << " -> " << Fixed(at_n, 0) << " images/s, "
                << Fixed(at_n / at_1) << "x, " << Fixed(at_n / at_1 / opt.threads) << " of linear\n";
    };
    std::cout << "thread scaling, 1 -> " << opt.threads << " threads (same run):\n";
    scaling("loader, crop decode + DCT scaling (default)", crop_dct_1, crop_dct);
    scaling("bare libjpeg-turbo, the crop regions at the loader's DCT scale", floor_dct_1, floor_dct);
  }
  std::cout << "crop decode vs whole decode, epoch 0: "
            << (same->differing == 0 ? "identical" : std::to_string(same->differing) + " images DIFFER") << " ("
            << same->images << " images)\n";
  std::cout << "DCT scaling vs full scale, epoch 0: " << scaled << " of " << dct->images << " crops scaled, "
            << dct->differing << " images differ";
  if (dct->differing > 0) {
    std::cout << "; mean |diff| per image " << Fixed(dct->mean_avg) << " on average, " << Fixed(dct->mean_worst)
              << " at worst; max |diff| per image " << dct->max_median << " median, " << dct->max_worst << " at worst";
  }
  std::cout << "\n";
  return same->differing == 0 ? kExitOk : kExitFailure;
}

}  // namespace

int RunCropBench(const CropBenchOptions& opt, const std::string& dir) {
  auto small = PhotoCuts(opt.photos, opt.images, 512, 496);
  if (!small.ok()) {
    std::cout << "\nrandom-resized-crop: skipped (" << small.status().message() << ")\n";
    return kExitOk;
  }
  int rc = RunOne(opt, "512x496", *small, dir + "/crop512.tfrecord");
  if (rc != kExitOk || opt.large == 0) return rc;
  std::vector<img::Image> large;
  for (size_t v = 0; v < opt.large; ++v) {
    img::TransformSpec spec;
    spec.mode = img::ResizeMode::kStretch;
    spec.width = 4032;
    spec.height = 3024;
    auto big = img::Transform((*small)[v % small->size()], spec);
    if (!big.ok()) {
      std::cerr << "shard-bench read: " << big.status() << "\n";
      return kExitFailure;
    }
    large.push_back(std::move(*big));
  }
  return RunOne(opt, "4032x3024", large, dir + "/crop4032.tfrecord");
}

}  // namespace shard_tool
