#include "libshard/reader/batch_loader.h"

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <thread>

#include "libshard/example/example_view.h"
#include "libshard/example/image_record.h"
#include "libshard/util/threads.h"
#include "util/catch_status.h"

namespace libshard::reader {
namespace {

using example::ExampleView;

constexpr uint64_t kAugmentSalt = 0xA0F3C1D2E5B69788ull;

// torchvision.transforms.RandomResizedCrop.get_params, with our generator.
image::PixelRect RandomResizedCropBox(int width, int height, const RandomResizedCropOptions& o, SplitMix64* rng) {
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

// Fork safety. A fork child has none of the parent's threads: not the
// producer, not oneTBB's workers (the loader's, or those of any other oneTBB
// user in the process), and none of the locks they held. Each loader notices
// the new process id and rebuilds its Runtime; a fork child decodes with its
// own std::threads, as oneTBB's pool cannot be restarted there.
std::atomic<bool> g_in_fork_child{false};

void MarkForkChild() { g_in_fork_child.store(true); }

// Installed once, when the first loader is made (a fork before any loader
// exists has nothing to restart): every fork after it is seen.
void InstallForkHandler() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, &MarkForkChild); });
}

// What a fork child cannot reuse: the parent's producer thread, the lock and
// condition it waited on, the oneTBB arena. A child abandons them (destroying
// them would wait for threads that do not exist there) and starts a new one.
struct Runtime {
  pid_t pid = getpid();
  std::mutex mu;
  std::condition_variable cv;
  std::thread producer;
  std::unique_ptr<tbb::global_control> gc;
  std::unique_ptr<tbb::task_arena> arena;  // null: decode on std::threads (a fork child)
};

std::unique_ptr<Runtime> NewRuntime(int threads) {
  InstallForkHandler();
  auto rt = std::make_unique<Runtime>();
  if (g_in_fork_child.load()) return rt;
  if (threads > tbb::info::default_concurrency()) {
    rt->gc = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                   static_cast<size_t>(threads));
  }
  rt->arena = std::make_unique<tbb::task_arena>(threads);
  return rt;
}

// body(i) for i in [0, n) on `threads` threads (the caller's included).
template <typename Body>
void ParallelFor(Runtime& rt, size_t n, int threads, const Body& body) {
  if (rt.arena != nullptr) {
    rt.arena->execute([&] {
      tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 1), [&](const tbb::blocked_range<size_t>& r) {
        for (size_t i = r.begin(); i != r.end(); ++i) body(i);
      });
    });
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) body(i);
  };
  std::vector<std::thread> pool;
  const size_t extra = std::min<size_t>(static_cast<size_t>(threads), n) - (n > 0 ? 1 : 0);
  for (size_t t = 0; t < extra; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // fewer threads; the caller does the rest
    }
  }
  work();
  for (std::thread& t : pool) t.join();
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
    std::shared_ptr<BatchBlock> block;  // pool mode: buf's memory (null: take one before filling)
    SlotState state = SlotState::kFree;
    Status status;
    size_t size = 0;
    Position pos;
  };

  std::shared_ptr<const Dataset> ds;
  BatchLoaderOptions opt;
  SampleOrder order;
  size_t image_bytes = 0;  // per sample, in the batch (layout and dtype)
  size_t decoded_bytes = 0;  // per sample, as decoded (uint8 HWC)
  SampleConverter converter;
  size_t mask_bytes = 0;
  std::shared_ptr<BatchPool> pool;     // null: fixed caller buffers
  std::shared_ptr<BatchBlock> lent;    // pool mode: the batch Next() lent out
  std::vector<Slot> slots;
  std::unique_ptr<Runtime> rt;  // see Current()

  // Set while StopProducer() waits: the batch being filled is abandoned.
  std::atomic<bool> cancel{false};
  // Guarded by rt->mu:
  bool running = false;
  bool stop = false;
  Position next;          // of the batch Next() returns next
  uint64_t consume_seq = 0;
  int taken = -1;
  Status sticky;

  // The runtime of this process: in a fork child the parent's is abandoned
  // and a fresh one starts from `next` (the consumer's side only).
  Runtime& Current();
  Status DecodeSample(uint64_t sample, uint64_t epoch, uint8_t* dst, uint8_t* mdst, int64_t* label) const;
  Status DecodeImagePart(const ExampleView& ex, SplitMix64* rng, uint8_t* dst, uint8_t* mdst, int64_t* label) const;
  // DecodeSample with any exception (std::bad_alloc above all) made a Status.
  Status DecodeCaught(uint64_t sample, uint64_t epoch, uint8_t* dst, uint8_t* mdst, int64_t* label) const;
  std::string RecordName(uint64_t sample) const;
  void NoteSkipped(uint64_t sample, const Status& why);
  mutable std::mutex skip_mu;
  std::vector<SkippedRecord> skipped;     // guarded by skip_mu
  std::set<uint64_t> skipped_samples;     // guarded by skip_mu
  std::vector<uint64_t> order_cache;      // BatchSamples: the order of epoch order_cache_epoch (skip_mu)
  uint64_t order_cache_epoch = 0;
  void Produce(Runtime* rt, Position start);
  Status Fill(Runtime* rt, Slot* slot, const std::vector<uint64_t>& samples, Position pos);
  void StopProducer(Runtime* rt, std::unique_lock<std::mutex>* lock);
  Status NextUntil(Batch* out, std::shared_ptr<BatchBlock>* owner,
                   const std::chrono::steady_clock::time_point* deadline, bool* ready);
};

Runtime& BatchLoader::Impl::Current() {
  if (rt->pid != getpid()) {
    (void)rt.release();  // the parent's: see Runtime
    rt = NewRuntime(opt.threads);
    running = false;
    stop = false;
    taken = -1;
    consume_seq = 0;
    for (Slot& s : slots) {
      s.state = SlotState::kFree;
      s.status = Status::OK();
    }
    if (pool != nullptr) {
      // The parent's pool may be locked by a parent thread: blocks inherited
      // from it are let go without it (BatchPool), and a heap pool of the
      // child's own serves from here on.
      (void)new std::shared_ptr<BatchPool>(pool);  // never destroyed in the child
      const size_t keep = slots.size() + 2;
      pool = BatchPool::Heap(pool->shape(), keep).value();  // the shape was valid: cannot fail
      lent.reset();
      for (Slot& s : slots) s.block.reset();
    }
  }
  return *rt;
}

Status BatchLoader::Impl::DecodeSample(uint64_t sample, uint64_t epoch, uint8_t* dst, uint8_t* mdst,
                                       int64_t* label) const {
  thread_local RecordBuffer buf;
  std::string_view rec;
  uint64_t offset = 0;
  LIBSHARD_RETURN_IF_ERROR(ds->ReadRecord(sample, &buf, &rec, &offset, /*planned=*/true));
  const Dataset::Location loc = ds->Locate(sample);
  auto context = [&] {
    return ds->shard_path(loc.shard) + ": record " + std::to_string(loc.record) + " at byte " +
           std::to_string(offset);
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

std::string BatchLoader::Impl::RecordName(uint64_t sample) const {
  const Dataset::Location loc = ds->Locate(sample);
  return ds->shard_path(loc.shard) + " record " + std::to_string(loc.record);
}

Status BatchLoader::Impl::DecodeCaught(uint64_t sample, uint64_t epoch, uint8_t* dst, uint8_t* mdst,
                                       int64_t* label) const {
  return util::CatchAsStatus(
      [&]() -> Status {
        if (converter.identity()) return DecodeSample(sample, epoch, dst, mdst, label);
        // Another layout or dtype: decode to uint8 HWC, then convert into the slot.
        thread_local std::vector<uint8_t> decoded;
        decoded.resize(decoded_bytes);
        LIBSHARD_RETURN_IF_ERROR(DecodeSample(sample, epoch, decoded.data(), mdst, label));
        converter.Convert(decoded.data(), dst);
        return Status::OK();
      },
      [&] { return "decoding " + RecordName(sample); });
}

Status BatchLoader::Impl::Fill(Runtime* rt, Slot* slot, const std::vector<uint64_t>& samples, Position pos) {
  const SampleOrder::Range range = order.BatchRange(pos.batch);
  const size_t n = range.end - range.begin;
  slot->size = n;
  slot->pos = pos;
  std::mutex err_mu;
  size_t err_index = n;
  Status err;
  std::atomic<bool> failed{false};
  ParallelFor(*rt, n, opt.threads, [&](size_t i) {
    if (failed.load(std::memory_order_relaxed) || cancel.load(std::memory_order_relaxed)) return;
    uint8_t* image = slot->buf.images + i * image_bytes;
    uint8_t* mask = slot->buf.masks ? slot->buf.masks + i * mask_bytes : nullptr;
    Status s = DecodeCaught(samples[range.begin + i], pos.epoch, image, mask, &slot->buf.labels[i]);
    // kSkip: the next samples of the order, in turn, take a bad record's place.
    for (size_t k = 1; !s.ok() && opt.on_error == BatchLoaderOptions::OnError::kSkip && k <= 8 &&
                       (s.code() == StatusCode::kDataLoss || s.code() == StatusCode::kInvalidArgument);
         ++k) {
      NoteSkipped(samples[(range.begin + i + k - 1) % samples.size()], s);
      s = DecodeCaught(samples[(range.begin + i + k) % samples.size()], pos.epoch, image, mask,
                       &slot->buf.labels[i]);
    }
    if (!s.ok()) {
      std::lock_guard<std::mutex> g(err_mu);
      if (i < err_index) {
        err_index = i;
        err = s;
      }
      failed.store(true, std::memory_order_relaxed);
    }
  });
  return err;
}

void BatchLoader::Impl::Produce(Runtime* rt, Position pos) {
  uint64_t seq = 0;
  std::optional<uint64_t> samples_epoch;  // the epoch `samples` holds
  std::vector<uint64_t> samples;
  const uint64_t bpe = order.batches_per_epoch();
  for (;;) {
    Slot* slot = &slots[seq % slots.size()];
    {
      std::unique_lock<std::mutex> lock(rt->mu);
      rt->cv.wait(lock, [&] { return stop || slot->state == SlotState::kFree; });
      if (stop) return;
      slot->state = SlotState::kFilling;
    }
    const Status s = util::CatchAsStatus(
        [&] {
          if (pool != nullptr && slot->block == nullptr) {
            LIBSHARD_ASSIGN_OR_RETURN(slot->block, pool->Acquire());
            slot->buf = slot->block->buffers();
          }
          if (samples_epoch != pos.epoch) {
            samples = order.EpochSamples(pos.epoch);
            samples_epoch = pos.epoch;
            // Remote shards: download in this part's order, ahead of the reads.
            LIBSHARD_RETURN_IF_ERROR(ds->PlanEpoch(order, samples, pos.batch));
          }
          return Fill(rt, slot, samples, pos);
        },
        [&] { return "preparing batch " + std::to_string(pos.batch) + " of epoch " + std::to_string(pos.epoch); });
    {
      std::lock_guard<std::mutex> lock(rt->mu);
      if (stop) return;  // the batch may be incomplete (cancel)
      slot->pos = pos;
      slot->status = s;
      slot->state = SlotState::kReady;
    }
    rt->cv.notify_all();
    if (!s.ok()) return;
    ++seq;
    if (++pos.batch >= bpe) {
      pos.batch = 0;
      ++pos.epoch;
    }
  }
}

void BatchLoader::Impl::StopProducer(Runtime* rt, std::unique_lock<std::mutex>* lock) {
  stop = true;
  cancel.store(true);
  lock->unlock();
  rt->cv.notify_all();
  if (rt->producer.joinable()) rt->producer.join();
  lock->lock();
  cancel.store(false);
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
  Runtime* rt = &impl_->Current();  // a fork child has no producer of its own to stop unless it started one
  std::unique_lock<std::mutex> lock(rt->mu);
  impl_->StopProducer(rt, &lock);
}

namespace {

// Physical memory, for bounding the loader's own buffers; 0 when unknown.
uint64_t PhysicalMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

// "925.0 MB".
std::string Bytes(long double n) {
  const char* units[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (n >= 1000 && u < 6) {
    n /= 1000;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0Lf %s" : "%.1Lf %s", n, units[u]);
  return buf;
}

std::string Count(long double n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0Lf", n);
  return buf;
}

StatusOr<std::unique_ptr<BatchLoader::Impl>> NewImpl(std::shared_ptr<const Dataset> dataset,
                                                     const BatchLoaderOptions& given);

}  // namespace

Status BatchLoader::ResolveShape(const Dataset& dataset, BatchLoaderOptions* options) {
  const StoredShape& stored = dataset.stored_shape();
  if (options->width == 0 && options->height == 0) {
    if (!stored.unknown.empty()) {
      return InvalidArgumentError("image_size: not given, and the stored image size is unknown (" + stored.unknown +
                                  "); give the output size (image_size=(height, width))");
    }
    if (stored.width == 0 || stored.height == 0) {
      return InvalidArgumentError("image_size: not given, and the stored images do not all have one size (" +
                                  stored.sizes + "); give the output size (image_size=(height, width))");
    }
    options->width = stored.width;
    options->height = stored.height;
  }
  if (options->channels == 0) options->channels = stored.channels == 1 || stored.channels == 2 ? 1 : 3;
  return Status::OK();
}

BatchShape BatchLoader::ShapeOf(const BatchLoaderOptions& options) {
  const size_t pixels = static_cast<size_t>(options.width) * static_cast<size_t>(options.height);
  BatchShape shape;
  shape.image_bytes = options.batch_size * pixels * static_cast<size_t>(options.channels) *
                      PixelTypeSize(options.dtype);
  shape.labels = options.batch_size;
  shape.mask_bytes = options.masks ? options.batch_size * pixels : 0;
  return shape;
}

StatusOr<std::unique_ptr<BatchLoader>> BatchLoader::Create(std::shared_ptr<const Dataset> dataset,
                                                           const BatchLoaderOptions& given,
                                                           std::vector<BatchBuffers> buffers) {
  LIBSHARD_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, NewImpl(std::move(dataset), given));
  const BatchLoaderOptions& options = impl->opt;  // the stored size and channels filled in
  if (buffers.empty()) {
    // The loader's own heap pool: the ring's blocks plus those the consumer
    // may hold. No block larger than the largest batch the order gives (a
    // batch_size beyond the epoch fills only part of it), and no ring larger
    // than the machine could hold: refused by name rather than
    // std::bad_alloc or an hour of swapping.
    const uint64_t samples =
        std::max<uint64_t>(1, std::min<uint64_t>(options.batch_size, impl->order.samples_per_rank()));
    const long double slots = static_cast<long double>(std::max<size_t>(options.prefetch, 1)) + 1;
    const long double per_slot = static_cast<long double>(samples) *
                                 (static_cast<long double>(impl->image_bytes) + sizeof(int64_t) + impl->mask_bytes);
    const long double need = slots * per_slot;
    const uint64_t memory = PhysicalMemory();
    const long double limit = memory > 0 ? memory / 2.0L : static_cast<long double>(SIZE_MAX / 4);
    if (need > limit) {
      // The fewest slots (prefetch 0 or 1) still too big: the batch is.
      const bool batch = 2 * per_slot > limit;
      return InvalidArgumentError(
          std::string(batch ? "batch_size" : "prefetch") + ": " + Count(slots) + " buffers (prefetch " +
          std::to_string(options.prefetch) + " + 1) of " + std::to_string(samples) + " samples of " +
          std::to_string(options.height) + "x" + std::to_string(options.width) + "x" +
          std::to_string(options.channels) + " " + PixelTypeName(options.dtype) + " would need " + Bytes(need) +
          ", more than half of this machine's " + (memory > 0 ? Bytes(memory) : std::string("memory")) +
          "; lower batch_size or prefetch");
    }
    const size_t ring = static_cast<size_t>(slots);
    BatchLoaderOptions block = options;
    block.batch_size = static_cast<size_t>(samples);
    LIBSHARD_ASSIGN_OR_RETURN(impl->pool, BatchPool::Heap(ShapeOf(block), ring + 2));
    impl->slots.resize(ring);
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
  impl->rt = NewRuntime(options.threads);
  return std::unique_ptr<BatchLoader>(new BatchLoader(std::move(impl)));
}

StatusOr<std::unique_ptr<BatchLoader>> BatchLoader::CreateWithPool(std::shared_ptr<const Dataset> dataset,
                                                                   const BatchLoaderOptions& options,
                                                                   std::shared_ptr<BatchPool> pool) {
  LIBSHARD_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, NewImpl(std::move(dataset), options));
  if (pool == nullptr) return InvalidArgumentError("BatchLoader: no batch pool");
  const BatchShape need = ShapeOf(impl->opt), have = pool->shape();
  if (have.image_bytes < need.image_bytes || have.labels < need.labels || have.mask_bytes < need.mask_bytes) {
    return InvalidArgumentError("the batch pool's blocks (" + std::to_string(have.image_bytes) +
                                " image bytes) are smaller than a batch (" + std::to_string(need.image_bytes) +
                                ")");
  }
  impl->pool = std::move(pool);
  impl->slots.resize(std::max<size_t>(impl->opt.prefetch, 1) + 1);
  impl->rt = NewRuntime(impl->opt.threads);
  return std::unique_ptr<BatchLoader>(new BatchLoader(std::move(impl)));
}

namespace {

StatusOr<std::unique_ptr<BatchLoader::Impl>> NewImpl(std::shared_ptr<const Dataset> dataset,
                                                     const BatchLoaderOptions& given) {
  if (dataset == nullptr) return InvalidArgumentError("BatchLoader: no dataset");
  BatchLoaderOptions options = given;
  LIBSHARD_RETURN_IF_ERROR(BatchLoader::ResolveShape(*dataset, &options));
  if (options.batch_size == 0) return InvalidArgumentError("batch_size must be > 0");
  if (options.width <= 0 || options.height <= 0 || options.width > 65535 || options.height > 65535) {
    return InvalidArgumentError("image size " + std::to_string(options.width) + "x" + std::to_string(options.height) +
                                " out of range");
  }
  if (options.channels != 1 && options.channels != 3) return InvalidArgumentError("channels must be 1 or 3");
  if (options.threads < 0 || options.threads > 256) {
    return InvalidArgumentError("threads must be in 0..256 (0: one per core)");
  }
  options.threads = util::ThreadCount(options.threads);
  {
    // A batch's bytes must be representable (BatchLoader::ShapeOf).
    size_t bytes = 0;
    const size_t sample = static_cast<size_t>(options.width) * static_cast<size_t>(options.height) *
                          static_cast<size_t>(options.channels) * PixelTypeSize(options.dtype);
    if (__builtin_mul_overflow(options.batch_size, sample, &bytes)) {
      return InvalidArgumentError("batch_size " + std::to_string(options.batch_size) + " of " +
                                  std::to_string(sample) + "-byte samples overflows memory sizes");
    }
  }
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
  if (options.masks && dataset->HasFeature(dataset->options().keys.mask) == false) {
    return InvalidArgumentError("masks requested, but the manifest's schema has no \"" +
                                dataset->options().keys.mask + "\" in every record (shards without masks)");
  }
  LIBSHARD_ASSIGN_OR_RETURN(SampleConverter converter,
                            SampleConverter::Create(options.layout, options.dtype, options.mean, options.std,
                                                    options.height, options.width, options.channels));
  auto impl = std::make_unique<BatchLoader::Impl>();
  impl->converter = std::move(converter);
  impl->ds = std::move(dataset);
  impl->opt = options;
  impl->opt.order.batch_size = options.batch_size;
  LIBSHARD_ASSIGN_OR_RETURN(impl->order, SampleOrder::Create(impl->ds->size(), impl->opt.order));
  LIBSHARD_RETURN_IF_ERROR(impl->ds->CheckReadOrder(impl->order));  // remote shards under a cache_limit
  impl->decoded_bytes = static_cast<size_t>(options.width) * options.height * options.channels;
  impl->image_bytes = impl->converter.sample_bytes();
  impl->mask_bytes = options.masks ? static_cast<size_t>(options.width) * options.height : 0;
  return impl;
}

}  // namespace

uint64_t BatchLoader::batches_per_epoch() const { return impl_->order.batches_per_epoch(); }
const SampleOrder& BatchLoader::order() const { return impl_->order; }
const BatchLoaderOptions& BatchLoader::options() const { return impl_->opt; }

Position BatchLoader::position() const {
  std::lock_guard<std::mutex> lock(impl_->Current().mu);
  return impl_->next;
}

Status BatchLoader::Seek(Position p) {
  const uint64_t bpe = batches_per_epoch();
  if (p.epoch > Position::kMaxEpoch) {
    return InvalidArgumentError("epoch " + std::to_string(p.epoch) + " is past the last epoch (" +
                                std::to_string(Position::kMaxEpoch) + ")");
  }
  if (p.batch > bpe) {
    return InvalidArgumentError("batch " + std::to_string(p.batch) + " is past the epoch's " + std::to_string(bpe) +
                                " batches");
  }
  if (p.batch == bpe && bpe > 0) {
    if (p.epoch == Position::kMaxEpoch) {
      return InvalidArgumentError("batch " + std::to_string(p.batch) + " of the last epoch has no next epoch");
    }
    p.batch = 0;
    ++p.epoch;
  }
  Runtime* rt = &impl_->Current();
  std::unique_lock<std::mutex> lock(rt->mu);
  impl_->StopProducer(rt, &lock);
  impl_->next = p;
  return Status::OK();
}

Status BatchLoader::Next(Batch* out) {
  bool ready = false;
  Status s = impl_->NextUntil(out, nullptr, nullptr, &ready);
  return s;
}

Status BatchLoader::NextFor(Batch* out, std::chrono::milliseconds wait, bool* ready) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  return impl_->NextUntil(out, nullptr, &deadline, ready);
}

Status BatchLoader::NextOwned(Batch* out, std::shared_ptr<BatchBlock>* owner, std::chrono::milliseconds wait,
                              bool* ready) {
  *ready = false;
  if (impl_->pool == nullptr) {
    return FailedPreconditionError("NextOwned: this loader writes into fixed caller buffers");
  }
  const auto deadline = std::chrono::steady_clock::now() + wait;
  return impl_->NextUntil(out, owner, &deadline, ready);
}

Status BatchLoader::Impl::NextUntil(Batch* out, std::shared_ptr<BatchBlock>* owner,
                                    const std::chrono::steady_clock::time_point* deadline, bool* ready) {
  *ready = false;
  if (order.batches_per_epoch() == 0) return OutOfRangeError("the loader has no batches (empty dataset?)");
  Runtime& r = Current();
  std::unique_lock<std::mutex> lock(r.mu);
  lent.reset();  // back to the pool (pool mode)
  if (taken >= 0) {
    slots[static_cast<size_t>(taken)].state = SlotState::kFree;
    taken = -1;
    r.cv.notify_all();
  }
  if (!sticky.ok()) return sticky;
  if (next.epoch > Position::kMaxEpoch) {
    return OutOfRangeError("the loader is past its last epoch (" + std::to_string(Position::kMaxEpoch) + ")");
  }
  if (!running) {
    const Position start = next;
    try {
      r.producer = std::thread([this, rt = &r, start] { Produce(rt, start); });
    } catch (const std::system_error& e) {
      return ResourceExhaustedError(std::string("cannot start the loader's thread: ") + e.what());
    }
    running = true;
    consume_seq = 0;
  }
  const size_t idx = static_cast<size_t>(consume_seq % slots.size());
  Slot& slot = slots[idx];
  auto is_ready = [&] { return slot.state == SlotState::kReady; };
  if (deadline == nullptr) {
    r.cv.wait(lock, is_ready);
  } else if (!r.cv.wait_until(lock, *deadline, is_ready)) {
    return Status::OK();  // not yet
  }
  if (!slot.status.ok()) {
    sticky = slot.status;
    return sticky;
  }
  if (pool != nullptr) {
    // The block goes to the consumer; the slot takes another before its next fill.
    (owner != nullptr ? *owner : lent) = std::move(slot.block);
    slot.block = nullptr;
    slot.state = SlotState::kFree;
    r.cv.notify_all();
  } else {
    slot.state = SlotState::kTaken;
    taken = static_cast<int>(idx);
  }
  ++consume_seq;
  out->images = slot.buf.images;
  out->labels = slot.buf.labels;
  out->masks = slot.buf.masks;
  out->size = slot.size;
  out->position = slot.pos;
  out->slot = idx;
  if (++next.batch >= order.batches_per_epoch()) {
    next.batch = 0;
    ++next.epoch;
  }
  *ready = true;
  return Status::OK();
}

void BatchLoader::Impl::NoteSkipped(uint64_t sample, const Status& why) {
  const Dataset::Location loc = ds->Locate(sample);
  const StatusOr<std::shared_ptr<const ShardReader>> shard = ds->OpenShard(loc.shard);
  std::lock_guard<std::mutex> lock(skip_mu);
  try {  // on a decode thread: nothing may escape
    if (!skipped_samples.insert(sample).second) return;
    const uint64_t offset = shard.ok() ? (*shard)->entry(loc.record).offset : 0;
    skipped.push_back({ds->shard_path(loc.shard), loc.record, offset, std::string(why.message())});
  } catch (const std::exception&) {
  }
}

std::vector<uint64_t> BatchLoader::BatchSamples(Position p) const {
  std::lock_guard<std::mutex> lock(impl_->skip_mu);
  if (impl_->order_cache_epoch != p.epoch || impl_->order_cache.empty()) {  // one epoch's order kept
    impl_->order_cache = impl_->order.EpochSamples(p.epoch);
    impl_->order_cache_epoch = p.epoch;
  }
  const std::vector<uint64_t>& samples = impl_->order_cache;
  const SampleOrder::Range range = impl_->order.BatchRange(p.batch);
  std::vector<uint64_t> out;
  for (uint64_t i = range.begin; i < range.end; ++i) {
    uint64_t s = samples[i];
    for (size_t k = 1; k <= 8 && impl_->skipped_samples.count(s) > 0; ++k) s = samples[(i + k) % samples.size()];
    out.push_back(s);
  }
  return out;
}

std::vector<SkippedRecord> BatchLoader::skipped() const {
  std::lock_guard<std::mutex> lock(impl_->skip_mu);
  return impl_->skipped;
}

Status BatchLoader::DecodeSample(uint64_t sample, uint64_t epoch, uint8_t* image, uint8_t* mask,
                                 int64_t* label) const {
  if (sample >= impl_->ds->size()) return OutOfRangeError("sample " + std::to_string(sample) + " out of range");
  return impl_->DecodeCaught(sample, epoch, image, impl_->opt.masks ? mask : nullptr, label);
}

}  // namespace libshard::reader
