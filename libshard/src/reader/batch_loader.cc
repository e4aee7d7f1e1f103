#include "libshard/reader/batch_loader.h"

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "libshard/example/example_view.h"
#include "libshard/image/decode.h"
#include "libshard/image/pipeline.h"
#include "libshard/image/probe.h"
#include "libshard/image/raw_array.h"
#include "image/codec_internal.h"

namespace libshard::reader {
namespace {

using example::ExampleView;
using example::FeatureKind;
using example::FeatureView;

constexpr uint64_t kAugmentSalt = 0xA0F3C1D2E5B69788ull;

std::string_view FirstBytes(const ExampleView& ex, const std::string& key) {
  FeatureView f;
  if (ex.Find(key, &f) && f.kind() == FeatureKind::kBytes && f.size() > 0) return f.bytes(0);
  return {};
}

// torchvision.transforms.RandomResizedCrop.get_params, with our generator.
image::CropBox RandomResizedCropBox(int width, int height, const RandomResizedCropOptions& o, SplitMix64* rng) {
  const double area = static_cast<double>(width) * height;
  const double log_r0 = std::log(o.ratio_min), log_r1 = std::log(o.ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * (o.scale_min + (o.scale_max - o.scale_min) * rng->Uniform());
    const double ratio = std::exp(log_r0 + (log_r1 - log_r0) * rng->Uniform());
    const int w = static_cast<int>(std::lround(std::sqrt(target * ratio)));
    const int h = static_cast<int>(std::lround(std::sqrt(target / ratio)));
    if (w > 0 && h > 0 && w <= width && h <= height) {
      const int y = static_cast<int>(rng->Below(static_cast<uint64_t>(height - h + 1)));
      const int x = static_cast<int>(rng->Below(static_cast<uint64_t>(width - w + 1)));
      return {x, y, w, h};
    }
  }
  const double in_ratio = static_cast<double>(width) / height;
  int w = width, h = height;
  if (in_ratio < o.ratio_min) {
    h = std::max(1, static_cast<int>(std::lround(w / o.ratio_min)));
  } else if (in_ratio > o.ratio_max) {
    w = std::max(1, static_cast<int>(std::lround(h * o.ratio_max)));
  }
  return {(width - w) / 2, (height - h) / 2, w, h};
}

double FilterSupport(image::Filter f) {
  switch (f) {
    case image::Filter::kBox: return 0.5;
    case image::Filter::kBicubic: return 2.0;
    case image::Filter::kLanczos3: return 3.0;
    default: return 1.0;
  }
}

// Decode-only-the-crop for kStretch + crop on an upright 8-bit YCbCr/gray
// JPEG: the same DCT scale and the same resample box (scaled by 1/d) as
// DecodeAndTransform, over just the region the filter reads, so the result
// is the same.
Status DecodeJpegCrop(std::string_view bytes, const image::ImageInfo& info, const image::TransformSpec& spec,
                      int channels, image::Image* out) {
  const int d = image::ChooseJpegScale(info, spec);
  const image::CropBox& c = *spec.crop;
  const double bx0 = static_cast<double>(c.x) / d, by0 = static_cast<double>(c.y) / d;
  const double bx1 = static_cast<double>(c.x + c.width) / d, by1 = static_cast<double>(c.y + c.height) / d;
  const int sw = (info.width + d - 1) / d, sh = (info.height + d - 1) / d;
  const double shrink = std::max({1.0, (bx1 - bx0) / spec.width, (by1 - by0) / spec.height});
  const int margin = static_cast<int>(std::ceil(FilterSupport(spec.filter) * shrink)) + 2;
  image::internal::JpegRegion r;
  r.x = std::max(0, static_cast<int>(std::floor(bx0)) - margin);
  r.y = std::max(0, static_cast<int>(std::floor(by0)) - margin);
  r.width = std::min(sw, static_cast<int>(std::ceil(bx1)) + margin) - r.x;
  r.height = std::min(sh, static_cast<int>(std::ceil(by1)) + margin) - r.y;
  image::internal::JpegReadOptions jo;
  jo.gray = channels == 1;
  jo.scale_denom = d;
  thread_local image::Image part;
  LIBSHARD_RETURN_IF_ERROR(image::internal::DecodeJpegRegion(bytes, jo, &r, &part));
  image::ResampleBox box;
  box.x0 = bx0 - r.x;
  box.y0 = by0 - r.y;
  box.x1 = bx1 - r.x;
  box.y1 = by1 - r.y;
  LIBSHARD_ASSIGN_OR_RETURN(*out, image::Resample(part, box, spec.width, spec.height, spec.filter));
  return Status::OK();
}

void FlipHorizontal(uint8_t* p, int width, int height, int channels) {
  for (int y = 0; y < height; ++y) {
    uint8_t* row = p + static_cast<size_t>(y) * width * channels;
    for (int a = 0, b = width - 1; a < b; ++a, --b) {
      for (int c = 0; c < channels; ++c) std::swap(row[a * channels + c], row[b * channels + c]);
    }
  }
}

Status CopyOut(const image::Image& img, int w, int h, int c, uint8_t* dst, const char* what) {
  if (img.width() != w || img.height() != h || img.channels() != c || img.bit_depth() != 8) {
    return InvalidArgumentError(std::string(what) + " came out " + std::to_string(img.width()) + "x" +
                                std::to_string(img.height()) + "x" + std::to_string(img.channels()) + " (" +
                                std::to_string(img.bit_depth()) + "-bit), the batch needs " + std::to_string(w) +
                                "x" + std::to_string(h) + "x" + std::to_string(c) + " 8-bit");
  }
  std::memcpy(dst, img.data(), img.byte_size());
  return Status::OK();
}

}  // namespace

const char* AugmentName(Augment a) { return a == Augment::kNone ? "none" : "random-resized-crop"; }

StatusOr<Augment> ParseAugment(std::string_view name) {
  if (name == "none") return Augment::kNone;
  if (name == "random-resized-crop") return Augment::kRandomResizedCrop;
  return InvalidArgumentError("unknown augment \"" + std::string(name) +
                              "\" (expected none or random-resized-crop)");
}

struct BatchLoader::Impl {
  enum class SlotState { kFree, kFilling, kReady, kTaken };
  struct Slot {
    BatchBuffers buf;
    SlotState state = SlotState::kFree;
    Status status;
    size_t size = 0;
    Position pos;
  };

  std::shared_ptr<const Dataset> ds;
  LoaderOptions opt;
  SampleOrder order;
  size_t image_bytes = 0;  // per sample, in the batch (layout and dtype)
  size_t decoded_bytes = 0;  // per sample, as decoded (uint8 HWC)
  SampleConverter converter;
  size_t mask_bytes = 0;
  std::vector<std::vector<uint8_t>> owned_images, owned_masks;
  std::vector<std::vector<int64_t>> owned_labels;
  std::vector<Slot> slots;
  std::unique_ptr<tbb::global_control> gc;
  std::unique_ptr<tbb::task_arena> arena;

  std::mutex mu;
  std::condition_variable cv;
  std::thread producer;
  bool running = false;
  bool stop = false;
  Position next;          // of the batch Next() returns next
  uint64_t consume_seq = 0;
  int taken = -1;
  Status sticky;

  Status DecodeSample(uint64_t sample, uint64_t epoch, uint8_t* dst, uint8_t* mdst, int64_t* label) const;
  Status DecodeImagePart(const ExampleView& ex, std::string_view bytes, std::string_view format, SplitMix64* rng,
                         uint8_t* dst, uint8_t* mdst) const;
  void Produce(Position start);
  Status Fill(Slot* slot, const std::vector<uint64_t>& samples, Position pos);
  void StopProducer(std::unique_lock<std::mutex>* lock);
};

Status BatchLoader::Impl::DecodeSample(uint64_t sample, uint64_t epoch, uint8_t* dst, uint8_t* mdst,
                                       int64_t* label) const {
  thread_local RecordBuffer buf;
  std::string_view rec;
  LIBSHARD_RETURN_IF_ERROR(ds->ReadRecord(sample, &buf, &rec));
  const Dataset::Location loc = ds->Locate(sample);
  const ShardReader& shard = ds->shard(loc.shard);
  auto context = [&] {
    return shard.path() + ": record " + std::to_string(loc.record) + " at byte " +
           std::to_string(shard.entry(loc.record).offset);
  };
  auto ex = ExampleView::Parse(rec);
  if (!ex.ok()) return ex.status().WithContext(context());
  FeatureView f;
  *label = -1;
  if (ex->Find(ds->options().keys.label, &f) &&
      f.kind() == FeatureKind::kInt64 && f.size() > 0) {
    *label = f.int64(0);
  }
  const std::string_view bytes = FirstBytes(*ex, ds->options().keys.image);
  if (bytes.empty()) {
    return DataLossError(context() + ": no bytes in feature \"" + ds->options().keys.image + "\"");
  }
  const std::string_view format = FirstBytes(*ex, ds->options().keys.format);
  SplitMix64 rng(MixSeed(opt.order.seed ^ kAugmentSalt, epoch, sample));
  return DecodeImagePart(*ex, bytes, format, &rng, dst, mdst).WithContext(context());
}

Status BatchLoader::Impl::DecodeImagePart(const ExampleView& ex, std::string_view bytes, std::string_view format,
                                          SplitMix64* rng, uint8_t* dst, uint8_t* mdst) const {
  const KeyMap& keys = ds->options().keys;
  const int W = opt.width, H = opt.height, C = opt.channels;
  const bool raw = format == "raw" || format == "raw.zst";
  image::Image raw_img;
  image::ImageInfo info;
  int src_w = 0, src_h = 0;
  if (raw) {
    LIBSHARD_ASSIGN_OR_RETURN(image::RawCompression comp, image::ParseRawFormat(format));
    FeatureView f;
    int64_t shape[3] = {0, 0, 0};
    if (!ex.Find(keys.shape, &f) || f.CopyInt64s(shape, 3) != 3) {
      return DataLossError("raw array without a 3-value int64 \"" + keys.shape + "\"");
    }
    image::RawShape rs;
    rs.height = static_cast<int>(shape[0]);
    rs.width = static_cast<int>(shape[1]);
    rs.channels = static_cast<int>(shape[2]);
    const std::string_view dtype = FirstBytes(ex, keys.dtype);
    if (!dtype.empty()) {
      LIBSHARD_ASSIGN_OR_RETURN(rs.bit_depth, image::ParseRawDtype(dtype));
    }
    src_w = rs.width;
    src_h = rs.height;
    if (opt.augment == Augment::kNone && rs.width == W && rs.height == H && rs.channels == C && rs.bit_depth == 8 &&
        mdst == nullptr) {
      // Straight into the batch.
      const size_t n = static_cast<size_t>(W) * H * C;
      if (comp == image::RawCompression::kNone) {
        if (bytes.size() != n) return DataLossError("raw array of " + std::to_string(bytes.size()) +
                                                    " bytes, its shape needs " + std::to_string(n));
        std::memcpy(dst, bytes.data(), n);
        return Status::OK();
      }
      const size_t got = ZSTD_decompress(dst, n, bytes.data(), bytes.size());
      if (ZSTD_isError(got)) return DataLossError(std::string("zstd: ") + ZSTD_getErrorName(got));
      if (got != n) return DataLossError("zstd array of " + std::to_string(got) + " bytes, its shape needs " +
                                         std::to_string(n));
      return Status::OK();
    }
    LIBSHARD_ASSIGN_OR_RETURN(raw_img, image::DecodeRaw(bytes, rs, comp));
  } else {
    LIBSHARD_ASSIGN_OR_RETURN(info, image::ProbeImage(bytes));
    src_w = info.format == image::ImageFormat::kJpeg ? info.oriented_width() : info.width;
    src_h = info.format == image::ImageFormat::kJpeg ? info.oriented_height() : info.height;
  }

  image::TransformSpec spec;
  spec.filter = opt.filter;
  bool flip = false;
  if (opt.augment == Augment::kNone) {
    if (src_w != W || src_h != H) {
      spec.mode = opt.resize;
      spec.width = W;
      spec.height = H;
    }
  } else {
    spec.crop = RandomResizedCropBox(src_w, src_h, opt.rrc, rng);
    spec.mode = image::ResizeMode::kStretch;
    spec.width = W;
    spec.height = H;
    flip = opt.rrc.flip && (rng->Next() >> 63) != 0;
  }

  image::DecodeOptions d;
  d.channels = C == 1 ? image::ChannelMode::kGray : image::ChannelMode::kRgb;
  if (!raw && spec.mode == image::ResizeMode::kNone && !spec.crop) {
    // Already the batch's size: decode into a per-thread image, one copy.
    thread_local image::Image decoded;
    LIBSHARD_RETURN_IF_ERROR(image::DecodeImageInto(bytes, d, &decoded));
    LIBSHARD_RETURN_IF_ERROR(CopyOut(decoded, W, H, C, dst, "the image"));
  } else if (!raw && spec.crop && opt.crop_decode && info.format == image::ImageFormat::kJpeg && !info.cmyk &&
             info.orientation == 1 && info.bit_depth == 8) {
    image::Image out;
    LIBSHARD_RETURN_IF_ERROR(DecodeJpegCrop(bytes, info, spec, C, &out));
    LIBSHARD_RETURN_IF_ERROR(CopyOut(out, W, H, C, dst, "the image"));
  } else {
    image::Image out;
    if (raw) {
      LIBSHARD_ASSIGN_OR_RETURN(out, image::Transform(raw_img, spec));
    } else {
      LIBSHARD_ASSIGN_OR_RETURN(out, image::DecodeAndTransform(bytes, d, spec));
    }
    LIBSHARD_RETURN_IF_ERROR(CopyOut(out, W, H, C, dst, "the image"));
  }
  if (flip) FlipHorizontal(dst, W, H, C);

  if (mdst != nullptr) {
    const std::string_view mbytes = FirstBytes(ex, keys.mask);
    if (mbytes.empty()) return DataLossError("no mask in feature \"" + keys.mask + "\"");
    const std::string_view mformat = FirstBytes(ex, keys.mask_format);
    image::Image mask;
    if (mformat == "raw" || mformat == "raw.zst") {
      LIBSHARD_ASSIGN_OR_RETURN(image::RawCompression comp, image::ParseRawFormat(mformat));
      image::RawShape ms;
      ms.height = src_h;
      ms.width = src_w;
      ms.channels = 1;
      LIBSHARD_ASSIGN_OR_RETURN(mask, image::DecodeRaw(mbytes, ms, comp));
    } else {
      image::DecodeOptions md;
      md.channels = image::ChannelMode::kAuto;
      LIBSHARD_ASSIGN_OR_RETURN(mask, image::DecodeImage(mbytes, md));
    }
    if (mask.channels() != 1 || mask.width() != src_w || mask.height() != src_h) {
      return DataLossError("mask is " + std::to_string(mask.width()) + "x" + std::to_string(mask.height()) + "x" +
                           std::to_string(mask.channels()) + ", the image " + std::to_string(src_w) + "x" +
                           std::to_string(src_h) + " (masks must be 1 channel of the image's size)");
    }
    LIBSHARD_ASSIGN_OR_RETURN(image::Geometry g, image::PlanGeometry(src_w, src_h, spec));
    LIBSHARD_ASSIGN_OR_RETURN(image::Image mout,
                              image::ApplyGeometry(mask, g, image::Filter::kNearest,
                                                   {opt.mask_fill, opt.mask_fill, opt.mask_fill, opt.mask_fill}));
    LIBSHARD_RETURN_IF_ERROR(CopyOut(mout, W, H, 1, mdst, "the mask"));
    if (flip) FlipHorizontal(mdst, W, H, 1);
  }
  return Status::OK();
}

Status BatchLoader::Impl::Fill(Slot* slot, const std::vector<uint64_t>& samples, Position pos) {
  const SampleOrder::Range range = order.BatchRange(pos.batch);
  const size_t n = range.end - range.begin;
  slot->size = n;
  slot->pos = pos;
  std::mutex err_mu;
  size_t err_index = n;
  Status err;
  std::atomic<bool> failed{false};
  arena->execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 1), [&](const tbb::blocked_range<size_t>& r) {
      for (size_t i = r.begin(); i != r.end(); ++i) {
        if (failed.load(std::memory_order_relaxed)) return;
        uint8_t* dst = slot->buf.images + i * image_bytes;
        thread_local std::vector<uint8_t> decoded;
        if (!converter.identity()) decoded.resize(decoded_bytes);
        Status s = DecodeSample(samples[range.begin + i], pos.epoch, converter.identity() ? dst : decoded.data(),
                                slot->buf.masks ? slot->buf.masks + i * mask_bytes : nullptr, &slot->buf.labels[i]);
        if (s.ok() && !converter.identity()) converter.Convert(decoded.data(), dst);
        if (!s.ok()) {
          std::lock_guard<std::mutex> g(err_mu);
          if (i < err_index) {
            err_index = i;
            err = s;
          }
          failed.store(true, std::memory_order_relaxed);
        }
      }
    });
  });
  return err;
}

void BatchLoader::Impl::Produce(Position pos) {
  uint64_t seq = 0;
  uint64_t samples_epoch = ~uint64_t{0};
  std::vector<uint64_t> samples;
  const uint64_t bpe = order.batches_per_epoch();
  for (;;) {
    Slot* slot = &slots[seq % slots.size()];
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return stop || slot->state == SlotState::kFree; });
      if (stop) return;
      slot->state = SlotState::kFilling;
    }
    if (samples_epoch != pos.epoch) {
      samples = order.EpochSamples(pos.epoch);
      samples_epoch = pos.epoch;
    }
    Status s = Fill(slot, samples, pos);
    {
      std::lock_guard<std::mutex> lock(mu);
      slot->status = s;
      slot->state = SlotState::kReady;
    }
    cv.notify_all();
    if (!s.ok()) return;
    ++seq;
    if (++pos.batch >= bpe) {
      pos.batch = 0;
      ++pos.epoch;
    }
  }
}

void BatchLoader::Impl::StopProducer(std::unique_lock<std::mutex>* lock) {
  stop = true;
  lock->unlock();
  cv.notify_all();
  if (producer.joinable()) producer.join();
  lock->lock();
  stop = false;
  running = false;
  for (Slot& s : slots) {
    s.state = SlotState::kFree;
    s.status = Status::OK();
  }
  taken = -1;
  sticky = Status::OK();
  consume_seq = 0;
}

BatchLoader::BatchLoader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

BatchLoader::~BatchLoader() {
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->StopProducer(&lock);
}

StatusOr<std::unique_ptr<BatchLoader>> BatchLoader::Create(std::shared_ptr<const Dataset> dataset,
                                                           const LoaderOptions& options,
                                                           std::vector<BatchBuffers> buffers) {
  if (dataset == nullptr) return InvalidArgumentError("BatchLoader: no dataset");
  if (options.batch_size == 0) return InvalidArgumentError("batch_size must be > 0");
  if (options.width <= 0 || options.height <= 0 || options.width > 65535 || options.height > 65535) {
    return InvalidArgumentError("image size " + std::to_string(options.width) + "x" + std::to_string(options.height) +
                                " out of range");
  }
  if (options.channels != 1 && options.channels != 3) return InvalidArgumentError("channels must be 1 or 3");
  if (options.threads < 1 || options.threads > 256) return InvalidArgumentError("threads must be in 1..256");
  using image::ResizeMode;
  if (options.resize != ResizeMode::kCenterCrop && options.resize != ResizeMode::kStretch &&
      options.resize != ResizeMode::kLetterbox && options.resize != ResizeMode::kCropOrPad) {
    return InvalidArgumentError(std::string("resize mode ") + image::ResizeModeName(options.resize) +
                                " does not give a fixed size (use center-crop, stretch, letterbox or crop-or-pad)");
  }
  const auto& r = options.rrc;
  if (!(r.scale_min > 0 && r.scale_min <= r.scale_max && r.scale_max <= 1 && r.ratio_min > 0 &&
        r.ratio_min <= r.ratio_max)) {
    return InvalidArgumentError("random-resized-crop: need 0 < scale_min <= scale_max <= 1, 0 < ratio_min <= ratio_max");
  }
  LIBSHARD_ASSIGN_OR_RETURN(SampleConverter converter,
                            SampleConverter::Create(options.layout, options.dtype, options.mean, options.std,
                                                    options.height, options.width, options.channels));
  auto impl = std::make_unique<Impl>();
  impl->converter = std::move(converter);
  impl->ds = std::move(dataset);
  impl->opt = options;
  impl->opt.order.batch_size = options.batch_size;
  LIBSHARD_ASSIGN_OR_RETURN(impl->order, SampleOrder::Create(impl->ds->size(), impl->opt.order));
  impl->decoded_bytes = static_cast<size_t>(options.width) * options.height * options.channels;
  impl->image_bytes = impl->converter.sample_bytes();
  impl->mask_bytes = options.masks ? static_cast<size_t>(options.width) * options.height : 0;
  if (buffers.empty()) {
    const size_t n = std::max<size_t>(options.prefetch, 1) + 1;
    impl->owned_images.resize(n);
    impl->owned_labels.resize(n);
    impl->owned_masks.resize(n);
    for (size_t i = 0; i < n; ++i) {
      impl->owned_images[i].resize(impl->image_bytes * options.batch_size);
      impl->owned_labels[i].resize(options.batch_size);
      if (options.masks) impl->owned_masks[i].resize(impl->mask_bytes * options.batch_size);
      buffers.push_back({impl->owned_images[i].data(), impl->owned_labels[i].data(),
                         options.masks ? impl->owned_masks[i].data() : nullptr});
    }
  }
  for (const BatchBuffers& b : buffers) {
    if (b.images == nullptr || b.labels == nullptr || (options.masks && b.masks == nullptr)) {
      return InvalidArgumentError("a caller buffer lacks images, labels or (with masks) masks");
    }
    Impl::Slot s;
    s.buf = b;
    if (!options.masks) s.buf.masks = nullptr;
    impl->slots.push_back(std::move(s));
  }
  if (options.threads > tbb::info::default_concurrency()) {
    impl->gc = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                     static_cast<size_t>(options.threads));
  }
  impl->arena = std::make_unique<tbb::task_arena>(options.threads);
  return std::unique_ptr<BatchLoader>(new BatchLoader(std::move(impl)));
}

uint64_t BatchLoader::batches_per_epoch() const { return impl_->order.batches_per_epoch(); }
const SampleOrder& BatchLoader::order() const { return impl_->order; }
const LoaderOptions& BatchLoader::options() const { return impl_->opt; }

Position BatchLoader::position() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->next;
}

Status BatchLoader::Seek(Position p) {
  const uint64_t bpe = batches_per_epoch();
  if (p.batch > bpe) {
    return InvalidArgumentError("batch " + std::to_string(p.batch) + " is past the epoch's " + std::to_string(bpe) +
                                " batches");
  }
  if (p.batch == bpe && bpe > 0) {
    p.batch = 0;
    ++p.epoch;
  }
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->StopProducer(&lock);
  impl_->next = p;
  return Status::OK();
}

Status BatchLoader::Next(Batch* out) {
  Impl& m = *impl_;
  if (m.order.batches_per_epoch() == 0) return OutOfRangeError("the loader has no batches (empty dataset?)");
  std::unique_lock<std::mutex> lock(m.mu);
  if (m.taken >= 0) {
    m.slots[static_cast<size_t>(m.taken)].state = Impl::SlotState::kFree;
    m.taken = -1;
    m.cv.notify_all();
  }
  if (!m.sticky.ok()) return m.sticky;
  if (!m.running) {
    m.running = true;
    m.consume_seq = 0;
    const Position start = m.next;
    m.producer = std::thread([&m, start] { m.Produce(start); });
  }
  const size_t idx = static_cast<size_t>(m.consume_seq % m.slots.size());
  Impl::Slot& slot = m.slots[idx];
  m.cv.wait(lock, [&] { return slot.state == Impl::SlotState::kReady; });
  if (!slot.status.ok()) {
    m.sticky = slot.status;
    return m.sticky;
  }
  slot.state = Impl::SlotState::kTaken;
  m.taken = static_cast<int>(idx);
  ++m.consume_seq;
  out->images = slot.buf.images;
  out->labels = slot.buf.labels;
  out->masks = slot.buf.masks;
  out->size = slot.size;
  out->position = slot.pos;
  out->slot = idx;
  if (++m.next.batch >= m.order.batches_per_epoch()) {
    m.next.batch = 0;
    ++m.next.epoch;
  }
  return Status::OK();
}

Status BatchLoader::DecodeSample(uint64_t sample, uint64_t epoch, uint8_t* image, uint8_t* mask,
                                 int64_t* label) const {
  if (sample >= impl_->ds->size()) return OutOfRangeError("sample " + std::to_string(sample) + " out of range");
  return impl_->DecodeSample(sample, epoch, image, impl_->opt.masks ? mask : nullptr, label);
}

}  // namespace libshard::reader
