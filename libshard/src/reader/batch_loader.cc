// The loader: options checked once (SampleDecoder::Create, in NewImpl), a ring of batch slots filled in
// order by a producer thread (Produce, Fill) and handed to one consumer
// (NextUntil); Seek and the destructor stop the producer (StopProducer).
// Each sample is SampleDecoder's, on the DecodePool's threads.
#include "libshard/reader/batch_loader.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <thread>

#include "reader/batch_boxes.h"
#include "reader/batch_memory.h"
#include "reader/decode_pool.h"
#include "util/catch_status.h"

namespace libshard::reader {
namespace {

// What a fork child cannot reuse: the parent's producer thread, the lock and
// condition it waited on, the decode pool. A child abandons them (destroying
// them would wait for threads that do not exist there) and starts a new one.
struct Runtime {
  std::unique_ptr<DecodePool> decode;
  std::mutex mu;
  std::condition_variable cv;
  std::thread producer;
};

std::unique_ptr<Runtime> NewRuntime(int threads) {
  auto rt = std::make_unique<Runtime>();
  rt->decode = DecodePool::Create(threads);
  return rt;
}

}  // namespace

struct BatchLoader::Impl {
  enum class SlotState { kFree, kFilling, kReady, kTaken };
  struct Slot {
    BatchBuffers buf;
    std::shared_ptr<BatchBlock> block;  // pool mode: buf's memory (null: take one before filling)
    SlotState state = SlotState::kFree;
    Status status;
    size_t size = 0;
    Position pos;
    std::vector<std::vector<ExtraValues>> extras;  // options.extras, per sample
    BatchBoxes boxes;                              // options.boxes
  };

  std::shared_ptr<const Dataset> ds;
  BatchLoaderOptions opt;
  SampleOrder order;
  SampleDecoder decoder;
  size_t image_bytes = 0;  // per sample, in the batch (layout and dtype)
  size_t mask_bytes = 0;
  std::shared_ptr<BatchPool> pool;   // null: fixed caller buffers
  std::shared_ptr<BatchBlock> lent;  // pool mode: the batch Next() lent out
  std::vector<Slot> slots;
  std::unique_ptr<Runtime> rt;  // see Current()

  // Set while StopProducer() waits: the batch being filled is abandoned.
  std::atomic<bool> cancel{false};
  // Guarded by rt->mu:
  bool running = false;
  bool stop = false;
  Position next;  // of the batch Next() returns next
  uint64_t consume_seq = 0;
  int taken = -1;
  Status sticky;

  // The runtime of this process: in a fork child the parent's is abandoned
  // and a fresh one starts from `next` (the consumer's side only).
  Runtime& Current();
  void NoteSkipped(uint64_t sample, const Status& why);
  mutable std::mutex skip_mu;
  std::vector<SkippedRecord> skipped;  // guarded by skip_mu
  std::set<uint64_t> skipped_samples;  // guarded by skip_mu
  std::optional<EpochOrder> order_cache;  // BatchSamples: the global order of epoch order_cache_epoch (skip_mu)
  uint64_t order_cache_epoch = 0;
  void Produce(Runtime* rt, Position start);
  Status Fill(Runtime* rt, Slot* slot, const EpochOrder& global, Position pos);
  void StopProducer(Runtime* rt, std::unique_lock<std::mutex>* lock);
  Status NextUntil(Batch* out, std::shared_ptr<BatchBlock>* owner,
                   const std::chrono::steady_clock::time_point* deadline, bool* ready);
};

Runtime& BatchLoader::Impl::Current() {
  if (!rt->decode->made_here()) {
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

Status BatchLoader::Impl::Fill(Runtime* rt, Slot* slot, const EpochOrder& global, Position pos) {
  const SampleOrder::Range range = order.BatchRange(pos.batch, pos.start);
  const size_t n = range.end - range.begin;
  slot->size = n;
  slot->pos = pos;
  std::mutex err_mu;
  size_t err_index = n;
  Status err;
  std::atomic<bool> failed{false};
  slot->extras.clear();
  if (!opt.extras.empty()) slot->extras.resize(n);
  std::optional<BoxesFill> boxes;
  if (opt.boxes) boxes.emplace(&slot->boxes, n, opt.max_boxes);
  rt->decode->ParallelFor(n, [&](size_t i) {
    if (failed.load(std::memory_order_relaxed) || cancel.load(std::memory_order_relaxed)) return;
    uint8_t* image = slot->buf.images + i * image_bytes;
    uint8_t* mask = slot->buf.masks ? slot->buf.masks + i * mask_bytes : nullptr;
    std::vector<ExtraValues>* extras = opt.extras.empty() ? nullptr : &slot->extras[i];
    // The sample's place in the epoch's global order: kSkip replaces a bad
    // record by the next samples of that order, in turn (the same on any
    // partition, so a resumed run of another shape replaces it the same way).
    const uint64_t at = order.GlobalIndex(range.begin + i, pos.start);
    SampleBoxes sb, *sbp = boxes ? &sb : nullptr;
    Status s = decoder.Decode(global.At(at % global.size()), pos.epoch, image, mask, &slot->buf.labels[i], extras, sbp);
    for (size_t k = 1; !s.ok() && opt.on_error == BatchLoaderOptions::OnError::kSkip && k <= 8 &&
                       (s.code() == StatusCode::kDataLoss || s.code() == StatusCode::kInvalidArgument);
         ++k) {
      NoteSkipped(global.At((at + k - 1) % global.size()), s);
      const uint64_t next = global.At((at + k) % global.size());
      s = decoder.Decode(next, pos.epoch, image, mask, &slot->buf.labels[i], extras, sbp);
    }
    if (s.ok() && boxes) boxes->Put(i, sb);
    if (!s.ok()) {
      std::lock_guard<std::mutex> g(err_mu);
      if (i < err_index) {
        err_index = i;
        err = s;
      }
      failed.store(true, std::memory_order_relaxed);
    }
  });
  if (boxes) boxes->Finish();
  return err;
}

// Batches are filled as pool tasks, up to kBatchesInFlight at once, so the
// threads that finish their share of a batch go on with the next one instead
// of idling until its slowest sample is done. A batch is handed over in order
// (the consumer takes slot after slot). An epoch's first batch waits for the
// last one's to finish: the global order and a remote dataset's download plan
// change there. After a failed batch no new one starts; those already
// started finish, and the consumer stops at the failed one.
void BatchLoader::Impl::Produce(Runtime* rt, Position pos) {
  constexpr int kBatchesInFlight = 2;
  uint64_t seq = 0;
  std::optional<uint64_t> global_epoch;  // the epoch `global` holds
  EpochOrder global;  // a value: O(1) but for a mixture's, which it shares
  int in_flight = 0;    // guarded by rt->mu
  bool failed = false;  // guarded by rt->mu
  // Marks `slot` filled with status s (under rt->mu), unless stopping: then
  // the batch may be incomplete (cancel) and StopProducer frees the slots.
  auto what = [](Position at) {
    return "preparing batch " + std::to_string(at.batch) + " of epoch " + std::to_string(at.epoch);
  };
  auto finish = [this, rt, &in_flight, &failed](Slot* slot, Position at, const Status& s) {
    {
      std::lock_guard<std::mutex> lock(rt->mu);
      --in_flight;
      if (!s.ok()) failed = true;
      if (!stop) {
        slot->pos = at;
        slot->status = s;
        slot->state = SlotState::kReady;
      }
    }
    rt->cv.notify_all();
  };
  for (;;) {
    Slot* slot = &slots[seq % slots.size()];
    {
      std::unique_lock<std::mutex> lock(rt->mu);
      rt->cv.wait(lock, [&] {
        return stop || failed ||
               (slot->state == SlotState::kFree && in_flight < kBatchesInFlight &&
                (global_epoch == pos.epoch || in_flight == 0));
      });
      if (stop || failed) break;
      slot->state = SlotState::kFilling;
      ++in_flight;
    }
    const Status prepared = util::CatchAsStatus(
        [&] {
          if (pool != nullptr && slot->block == nullptr) {
            LIBSHARD_ASSIGN_OR_RETURN(slot->block, pool->Acquire());
            slot->buf = slot->block->buffers();
          }
          if (global_epoch != pos.epoch) {
            global = order.Epoch(pos.epoch);
            global_epoch = pos.epoch;
            // Remote shards: download in this part's order, ahead of the reads.
            LIBSHARD_RETURN_IF_ERROR(ds->PlanEpoch(order, global, pos.batch, pos.start));
          }
          return Status::OK();
        },
        [&] { return what(pos); });
    if (!prepared.ok()) {
      finish(slot, pos, prepared);
      break;
    }
    rt->decode->Run([this, rt, slot, pos, g = global, finish, what] {
      finish(slot, pos, util::CatchAsStatus([&] { return Fill(rt, slot, g, pos); }, [&] { return what(pos); }));
    });
    ++seq;
    if (++pos.batch >= order.batches_per_epoch(pos.start)) pos = Position{pos.epoch + 1, 0, 0};
  }
  rt->decode->Wait();
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

StatusOr<std::unique_ptr<BatchLoader::Impl>> NewImpl(std::shared_ptr<const Dataset> dataset,
                                                     const BatchLoaderOptions& given);

}  // namespace

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
    LIBSHARD_ASSIGN_OR_RETURN(const size_t ring, RingSlots(options, samples, impl->image_bytes, impl->mask_bytes));
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
                                " image bytes) are smaller than a batch (" + std::to_string(need.image_bytes) + ")");
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
  LIBSHARD_ASSIGN_OR_RETURN(SampleDecoder decoder, SampleDecoder::Create(dataset, given));
  const BatchLoaderOptions& options = decoder.options();  // checked and resolved (ResolveLoaderOptions)
  auto impl = std::make_unique<BatchLoader::Impl>();
  impl->ds = std::move(dataset);
  impl->opt = options;
  impl->opt.order.batch_size = options.batch_size;
  if (impl->opt.order.global_order == nullptr) impl->opt.order.global_order = impl->ds->mixture();  // a mixture
  LIBSHARD_ASSIGN_OR_RETURN(impl->order, SampleOrder::Create(impl->ds->size(), impl->opt.order));
  LIBSHARD_RETURN_IF_ERROR(impl->ds->CheckReadOrder(impl->order));  // remote shards under a cache_limit
  impl->decoder = std::move(decoder);
  impl->image_bytes = impl->decoder.sample_bytes();
  impl->mask_bytes = impl->decoder.mask_bytes();
  return impl;
}

}  // namespace

uint64_t BatchLoader::batches_per_epoch() const { return impl_->order.batches_per_epoch(); }
const SampleOrder& BatchLoader::order() const { return impl_->order; }
const SampleDecoder& BatchLoader::decoder() const { return impl_->decoder; }
const BatchLoaderOptions& BatchLoader::options() const { return impl_->opt; }

Position BatchLoader::position() const {
  std::lock_guard<std::mutex> lock(impl_->Current().mu);
  return impl_->next;
}

Status BatchLoader::Seek(Position p) {
  const uint64_t length = impl_->order.dataset_size();
  if (p.start > length) {
    return InvalidArgumentError("start " + std::to_string(p.start) + " is past the epoch's " + std::to_string(length) +
                                " samples");
  }
  const uint64_t bpe = impl_->order.batches_per_epoch(p.start);
  if (p.epoch > Position::kMaxEpoch) {
    return InvalidArgumentError("epoch " + std::to_string(p.epoch) + " is past the last epoch (" +
                                std::to_string(Position::kMaxEpoch) + ")");
  }
  if (p.batch > bpe) {
    return InvalidArgumentError("batch " + std::to_string(p.batch) + " is past the epoch's " + std::to_string(bpe) +
                                " batches");
  }
  if (p.batch == bpe && (bpe > 0 || p.start > 0)) {  // the epoch's end (0 batches: an empty dataset)
    if (p.epoch == Position::kMaxEpoch) {
      return InvalidArgumentError("batch " + std::to_string(p.batch) + " of the last epoch has no next epoch");
    }
    p = Position{p.epoch + 1, 0, 0};
  }
  Runtime* rt = &impl_->Current();
  std::unique_lock<std::mutex> lock(rt->mu);
  impl_->StopProducer(rt, &lock);
  impl_->next = p;
  return Status::OK();
}

StatusOr<GlobalPosition> BatchLoader::global_position() const {
  if (impl_->order.options().num_workers > 1) {
    return FailedPreconditionError("global_position: worker " + std::to_string(impl_->order.options().worker) + " of " +
                                   std::to_string(impl_->order.options().num_workers) +
                                   " sees only its share of the rank's batches; count what the consumer received "
                                   "(SampleOrder::GlobalConsumed)");
  }
  const Position p = position();
  return GlobalPosition{p.epoch, impl_->order.GlobalConsumed(p.start, p.batch)};
}

Status BatchLoader::SeekGlobal(GlobalPosition g) {
  const uint64_t length = impl_->order.dataset_size();
  if (g.consumed > length) {
    return InvalidArgumentError("consumed " + std::to_string(g.consumed) + " is past the epoch's " +
                                std::to_string(length) + " samples");
  }
  return Seek(Position{g.epoch, 0, g.consumed});
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
  out->extras = std::move(slot.extras);  // the slot may be refilled as soon as the lock goes
  slot.extras.clear();
  out->boxes = std::move(slot.boxes);
  if (++next.batch >= order.batches_per_epoch(next.start)) next = Position{next.epoch + 1, 0, 0};
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
    skipped.push_back({sample, ds->shard_path(loc.shard), loc.record, offset, std::string(why.message())});
  } catch (const std::exception&) {
  }
}

std::vector<uint64_t> BatchLoader::BatchSamples(Position p) const {
  std::lock_guard<std::mutex> lock(impl_->skip_mu);
  if (impl_->order_cache_epoch != p.epoch || !impl_->order_cache) {  // one epoch's order kept
    impl_->order_cache = impl_->order.Epoch(p.epoch);
    impl_->order_cache_epoch = p.epoch;
  }
  const EpochOrder& global = *impl_->order_cache;
  const SampleOrder::Range range = impl_->order.BatchRange(p.batch, p.start);
  std::vector<uint64_t> out;
  for (uint64_t i = range.begin; i < range.end; ++i) {
    const uint64_t at = impl_->order.GlobalIndex(i, p.start);
    uint64_t s = global.At(at % global.size());
    for (size_t k = 1; k <= 8 && impl_->skipped_samples.count(s) > 0; ++k) s = global.At((at + k) % global.size());
    out.push_back(s);
  }
  return out;
}

Status BatchLoader::RestoreSkipped(const std::vector<SkippedRecord>& records) {
  const Dataset& ds = *impl_->ds;
  for (const SkippedRecord& r : records) {
    const bool known = r.sample < ds.size();
    const Dataset::Location loc = known ? ds.Locate(r.sample) : Dataset::Location{};
    const std::string& path = known ? ds.shard_path(loc.shard) : r.path;
    const std::string name = path.substr(path.find_last_of('/') + 1);
    if (!known || loc.record != r.record || r.path.substr(r.path.find_last_of('/') + 1) != name) {
      return InvalidArgumentError("skipped record: sample " + std::to_string(r.sample) + " (" + r.path + " record " +
                                  std::to_string(r.record) + ") is not a record of this dataset");
    }
  }
  std::lock_guard<std::mutex> lock(impl_->skip_mu);
  for (const SkippedRecord& r : records) {
    if (!impl_->skipped_samples.insert(r.sample).second) continue;
    SkippedRecord here = r;
    here.path = ds.shard_path(ds.Locate(r.sample).shard);  // this run's file (the same name)
    impl_->skipped.push_back(std::move(here));
  }
  return Status::OK();
}

std::vector<SkippedRecord> BatchLoader::skipped() const {
  std::lock_guard<std::mutex> lock(impl_->skip_mu);
  return impl_->skipped;
}

Status BatchLoader::DecodeSample(uint64_t sample, uint64_t epoch, uint8_t* image, uint8_t* mask, int64_t* label) const {
  return DecodeSample(sample, epoch, image, mask, label, nullptr);
}

Status BatchLoader::DecodeSample(uint64_t sample, uint64_t epoch, uint8_t* image, uint8_t* mask, int64_t* label,
                                 SampleBoxes* boxes) const {
  return impl_->decoder.Decode(sample, epoch, image, mask, label, nullptr, boxes);
}

}  // namespace libshard::reader
