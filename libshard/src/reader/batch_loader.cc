#include "libshard/reader/batch_loader.h"

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "libshard/example/example_view.h"
#include "libshard/example/image_record.h"

namespace libshard::reader {
namespace {

using example::ExampleView;

constexpr uint64_t kAugmentSalt = 0xA0F3C1D2E5B69788ull;

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
  size_t image_bytes = 0;  // per sample
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
  Status DecodeImagePart(const ExampleView& ex, SplitMix64* rng, uint8_t* dst, uint8_t* mdst, int64_t* label) const;
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
  SplitMix64 rng(MixSeed(opt.order.seed ^ kAugmentSalt, epoch, sample));
  return DecodeImagePart(*ex, &rng, dst, mdst, label).WithContext(context());
}

// The record contract and the pixels are example/image_record's; the loader
// only chooses the geometry (and draws the augmentation).
Status BatchLoader::Impl::DecodeImagePart(const ExampleView& ex, SplitMix64* rng, uint8_t* dst, uint8_t* mdst,
                                          int64_t* label) const {
  *label = -1;
  const example::ImageRecordKeys& keys = ds->options().keys;
  LIBSHARD_ASSIGN_OR_RETURN(example::ImageRecord rec, example::ParseImageRecord(ex, keys, {}));
  *label = rec.label;
  example::PixelRequest req;
  req.width = opt.width;
  req.height = opt.height;
  req.channels = opt.channels;
  req.crop_decode = opt.crop_decode;
  req.mask_fill = opt.mask_fill;
  req.spec.filter = opt.filter;
  if (opt.augment == Augment::kNone) {
    if (rec.width != opt.width || rec.height != opt.height) {
      req.spec.mode = opt.resize;
      req.spec.width = opt.width;
      req.spec.height = opt.height;
    }
  } else {
    req.spec.crop = RandomResizedCropBox(rec.width, rec.height, opt.rrc, rng);
    req.spec.mode = image::ResizeMode::kStretch;
    req.spec.width = opt.width;
    req.spec.height = opt.height;
    req.flip = opt.rrc.flip && (rng->Next() >> 63) != 0;
  }
  return example::DecodeRecordPixels(rec, keys, {}, req, dst, mdst);
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
        Status s = DecodeSample(samples[range.begin + i], pos.epoch, slot->buf.images + i * image_bytes,
                                slot->buf.masks ? slot->buf.masks + i * mask_bytes : nullptr, &slot->buf.labels[i]);
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
  auto impl = std::make_unique<Impl>();
  impl->ds = std::move(dataset);
  impl->opt = options;
  impl->opt.order.batch_size = options.batch_size;
  LIBSHARD_ASSIGN_OR_RETURN(impl->order, SampleOrder::Create(impl->ds->size(), impl->opt.order));
  impl->image_bytes = static_cast<size_t>(options.width) * options.height * options.channels;
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
