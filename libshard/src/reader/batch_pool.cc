#include "libshard/reader/batch_pool.h"

#include <unistd.h>

#include <mutex>
#include <new>
#include <string>
#include <utility>

namespace libshard::reader {

struct BatchPool::State {
  std::mutex mu;
  std::vector<bool> held;                                // slot i: a holder in this process
  std::vector<BatchBlock*> free_blocks;                  // cached heap blocks
  std::vector<std::unique_ptr<BatchBlock>> slot_blocks;  // one per slot, reused
  size_t heap_made = 0;
  uint32_t next_token = 0;
};

namespace {

constexpr size_t kAlign = 64;

size_t RoundUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

}  // namespace

StatusOr<std::shared_ptr<BatchPool>> BatchPool::Heap(BatchShape shape, size_t keep) {
  return Slots(shape, {}, nullptr, keep);
}

StatusOr<std::shared_ptr<BatchPool>> BatchPool::Slots(BatchShape shape, std::vector<BatchBuffers> slots,
                                                      std::atomic<uint32_t>* busy, size_t keep,
                                                      std::atomic<uint32_t>* holders) {
  if (shape.image_bytes == 0 || shape.labels == 0) {
    return InvalidArgumentError("BatchPool: a batch needs image bytes and labels");
  }
  if (!slots.empty() && busy == nullptr) return InvalidArgumentError("BatchPool: slots without busy words");
  for (size_t i = 0; i < slots.size(); ++i) {
    const BatchBuffers& b = slots[i];
    if (b.images == nullptr || b.labels == nullptr || (shape.mask_bytes != 0 && b.masks == nullptr)) {
      return InvalidArgumentError("BatchPool: slot " + std::to_string(i) + " lacks images, labels or masks");
    }
  }
  std::shared_ptr<BatchPool> pool(new BatchPool());
  pool->shape_ = shape;
  pool->keep_ = keep;
  pool->slots_ = std::move(slots);
  pool->busy_ = busy;
  pool->holders_ = holders;
  pool->pid_ = getpid();
  pool->state_ = std::make_unique<State>();
  pool->state_->held.assign(pool->slots_.size(), false);
  pool->state_->free_blocks.reserve(keep);
  // Tokens differ between processes sharing a slot set (a later worker
  // process of the same slots) as well as between hand-outs.
  pool->state_->next_token = static_cast<uint32_t>(getpid()) * 2654435761u ^
                             static_cast<uint32_t>(reinterpret_cast<uintptr_t>(pool.get()) >> 4);
  return pool;
}

BatchPool::~BatchPool() {
  if (state_ == nullptr) return;
  for (BatchBlock* b : state_->free_blocks) delete b;
}

size_t BatchPool::heap_blocks_made() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->heap_made;
}

StatusOr<BatchBlock*> BatchPool::NewHeapBlock(const BatchShape& shape) {
  const size_t images = RoundUp(shape.image_bytes);
  const size_t labels = RoundUp(shape.labels * sizeof(int64_t));
  const size_t total = images + labels + RoundUp(shape.mask_bytes) + kAlign;
  // No value-initialisation: the pages are faulted in by the first decode, on the decode threads.
  std::unique_ptr<uint8_t[]> mem(new (std::nothrow) uint8_t[total]);
  if (mem == nullptr) {
    return ResourceExhaustedError("out of memory for a batch of " + std::to_string(total) + " bytes");
  }
  auto block = std::unique_ptr<BatchBlock>(new BatchBlock());
  uint8_t* base = mem.get();
  base += (kAlign - reinterpret_cast<uintptr_t>(base) % kAlign) % kAlign;
  block->buf_.images = base;
  block->buf_.labels = reinterpret_cast<int64_t*>(base + images);
  block->buf_.masks = shape.mask_bytes != 0 ? base + images + labels : nullptr;
  block->heap_ = std::move(mem);
  return block.release();
}

StatusOr<BatchBlock*> BatchPool::TakeSlotOrHeap() {
  State& st = *state_;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (st.slot_blocks.size() != slots_.size()) st.slot_blocks.resize(slots_.size());
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (st.held[i]) continue;
      uint32_t token = ++st.next_token;
      if (token == 0) token = ++st.next_token;
      uint32_t expected = 0;
      if (!busy_[i].compare_exchange_strong(expected, token)) continue;  // another process holds it
      if (holders_ != nullptr) holders_[i].store(static_cast<uint32_t>(pid_));
      st.held[i] = true;
      if (st.slot_blocks[i] == nullptr) {
        st.slot_blocks[i].reset(new BatchBlock());
        st.slot_blocks[i]->buf_ = slots_[i];
        st.slot_blocks[i]->slot_ = static_cast<int>(i);
      }
      BatchBlock* b = st.slot_blocks[i].get();
      b->handed_off_.store(false);
      b->token_ = token;
      return b;
    }
    if (!st.free_blocks.empty()) {
      BatchBlock* b = st.free_blocks.back();
      st.free_blocks.pop_back();
      return b;
    }
    ++st.heap_made;
  }
  return NewHeapBlock(shape_);
}

StatusOr<std::shared_ptr<BatchBlock>> BatchPool::Acquire() {
  try {
    LIBSHARD_ASSIGN_OR_RETURN(BatchBlock * b, TakeSlotOrHeap());
    std::shared_ptr<BatchPool> self = shared_from_this();
    return std::shared_ptr<BatchBlock>(b, [self](BatchBlock* block) { self->Release(block); });
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError("out of memory acquiring a batch block");
  }
}

void BatchPool::Release(BatchBlock* block) {
  if (getpid() != pid_) {
    // A fork child letting go of a block it inherited: the pool's lock may be
    // a parent thread's, and the slot's busy word is the parent's business.
    if (block->slot_ < 0) delete block;
    return;
  }
  State& st = *state_;
  std::lock_guard<std::mutex> lock(st.mu);
  if (block->slot_ >= 0) {
    const size_t i = static_cast<size_t>(block->slot_);
    st.held[i] = false;
    uint32_t token = block->token_;
    if (!block->handed_off_.load()) busy_[i].compare_exchange_strong(token, 0);
    return;
  }
  if (st.free_blocks.size() < keep_) {
    st.free_blocks.push_back(block);  // reserved: no allocation
    return;
  }
  delete block;
}

}  // namespace libshard::reader
