// BatchPool: where a BatchLoader's batch memory comes from, and where it goes
// back to, when batches are handed to the caller with ownership
// (BatchLoader::NextOwned).
//
//   auto pool = BatchPool::Heap(BatchShape{image_bytes, batch_size, mask_bytes}, /*keep=*/4);
//   LIBSHARD_ASSIGN_OR_RETURN(auto loader, BatchLoader::CreateWithPool(dataset, options, pool));
//   Batch b;
//   std::shared_ptr<BatchBlock> owner;
//   LIBSHARD_RETURN_IF_ERROR(loader->NextOwned(&b, &owner));
//   // b's pointers stay valid while `owner` (or a copy) lives, whatever the
//   // loader does meanwhile; the last copy's destruction returns the memory.
//
// Two kinds:
//   - Heap(): blocks from the heap. A released block is kept for reuse (its
//     pages are already faulted in, so reusing it costs nothing) while fewer
//     than `keep` are free; beyond that it is freed. A consumer that keeps
//     many batches therefore gets fresh memory, never a block still in use.
//   - Slots(): a fixed set of caller-owned blocks (pinned host memory, or a
//     shared-memory segment another process reads), each with a busy word
//     that may live in memory shared with another process. A slot is handed
//     out only when its busy word is 0 and no holder in this process has it;
//     handing it out sets the word to a token, nonzero and different from the
//     slot's previous ones (token()). When the last holder in this process
//     lets go, the word is cleared -- unless the block was marked
//     handed_off() (its contents went to another process by reference): then
//     the other process clears the word when it is done, by a
//     compare-and-swap from the token to 0, so that a late clear never frees
//     a later hand-out of the slot. With no slot free,
//     Acquire() falls back to heap blocks (as Heap(), `keep` of them cached),
//     so a consumer is never made to wait for memory and never sees data
//     overwritten.
//
// Thread-safety: Acquire() and the release of blocks may happen on any
// threads at once. Fork: in a fork child, a block inherited from the parent
// is freed (heap) or dropped (slot) without touching the pool, whose lock a
// parent thread may have held; the child's loader makes a new pool.
// Lifetime: blocks keep their pool alive; the caller's slot memory and busy
// words must outlive the pool and every block handed out from it.
#ifndef LIBSHARD_READER_BATCH_POOL_H_
#define LIBSHARD_READER_BATCH_POOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "libshard/status.h"

namespace libshard::reader {

// Bytes of one batch: images (batch_size samples in the output layout and
// dtype), labels (int64 each), masks (0 without masks).
struct BatchShape {
  size_t image_bytes = 0;
  size_t labels = 0;
  size_t mask_bytes = 0;
  friend bool operator==(const BatchShape& a, const BatchShape& b) {
    return a.image_bytes == b.image_bytes && a.labels == b.labels && a.mask_bytes == b.mask_bytes;
  }
};

// Caller-owned memory for one batch: images batch_size*H*W*C values of
// options.dtype in options.layout (the pointer is to their bytes), labels
// batch_size values, masks batch_size*H*W bytes (only with options.masks).
struct BatchBuffers {
  uint8_t* images = nullptr;
  int64_t* labels = nullptr;
  uint8_t* masks = nullptr;
};

class BatchPool;

// One batch's memory, owned through std::shared_ptr<BatchBlock>.
class BatchBlock {
 public:
  ~BatchBlock() = default;
  BatchBlock(const BatchBlock&) = delete;
  BatchBlock& operator=(const BatchBlock&) = delete;

  const BatchBuffers& buffers() const { return buf_; }
  // The Slots() slot this block is, or -1 for a heap block.
  int slot() const { return slot_; }
  // The slot's busy word while this block holds it (0 for a heap block).
  uint32_t token() const { return token_; }
  // The block's contents went to another process by reference: when the last
  // holder here lets go, the slot's busy word stays set for that process to
  // clear. No effect on heap blocks.
  void set_handed_off() { handed_off_.store(true); }

 private:
  friend class BatchPool;
  BatchBlock() = default;
  BatchBuffers buf_;
  int slot_ = -1;
  uint32_t token_ = 0;
  std::unique_ptr<uint8_t[]> heap_;  // heap blocks: the memory
  std::atomic<bool> handed_off_{false};
};

class BatchPool : public std::enable_shared_from_this<BatchPool> {
 public:
  // InvalidArgument for a shape without image bytes or labels.
  static StatusOr<std::shared_ptr<BatchPool>> Heap(BatchShape shape, size_t keep);
  // `slots[i]` hold one batch of `shape` each; `busy[i]` is slot i's busy
  // word (slots.size() of them). `holders`, when not null, gets the process
  // id that takes slot i at each hand-out (so that another process can tell
  // a slot held by a process that died). InvalidArgument for a null buffer
  // (masks may be null only when shape.mask_bytes is 0) or a null `busy`.
  static StatusOr<std::shared_ptr<BatchPool>> Slots(BatchShape shape, std::vector<BatchBuffers> slots,
                                                    std::atomic<uint32_t>* busy, size_t keep,
                                                    std::atomic<uint32_t>* holders = nullptr);
  ~BatchPool();
  BatchPool(const BatchPool&) = delete;
  BatchPool& operator=(const BatchPool&) = delete;

  const BatchShape& shape() const { return shape_; }
  // A free slot, else a cached heap block, else a new one; ResourceExhausted
  // when the heap has no room.
  StatusOr<std::shared_ptr<BatchBlock>> Acquire();
  // Heap blocks allocated so far (for tests and benchmarks: a consumer that
  // drops its batches promptly stops causing new ones).
  size_t heap_blocks_made() const;
  size_t num_slots() const { return slots_.size(); }

 private:
  BatchPool() = default;
  StatusOr<BatchBlock*> TakeSlotOrHeap();
  static StatusOr<BatchBlock*> NewHeapBlock(const BatchShape& shape);
  void Release(BatchBlock* block);

  BatchShape shape_;
  size_t keep_ = 0;
  std::vector<BatchBuffers> slots_;
  std::atomic<uint32_t>* busy_ = nullptr;
  std::atomic<uint32_t>* holders_ = nullptr;
  int pid_ = 0;
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace libshard::reader

#endif  // LIBSHARD_READER_BATCH_POOL_H_
