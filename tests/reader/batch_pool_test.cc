#include "libshard/reader/batch_pool.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include "testutil.h"

namespace libshard::reader {
namespace {

constexpr BatchShape kShape{4096, 4, 0};

TEST(BatchPoolTest, HeapBlocksAreRecycledUpToKeepThenFreed) {
  auto pool = BatchPool::Heap(kShape, 2);
  ASSERT_TRUE(pool.ok()) << pool.status();
  std::vector<std::shared_ptr<BatchBlock>> held;
  std::set<uint8_t*> first;
  for (int i = 0; i < 3; ++i) {
    auto b = (*pool)->Acquire();
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ((*b)->slot(), -1);
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*b)->buffers().images) % 64, 0u);
    EXPECT_EQ((*b)->buffers().masks, nullptr);
    std::memset((*b)->buffers().images, i, kShape.image_bytes);  // the whole block is writable
    first.insert((*b)->buffers().images);
    held.push_back(std::move(*b));
  }
  EXPECT_EQ(first.size(), 3u);  // three live blocks: three memories
  EXPECT_EQ((*pool)->heap_blocks_made(), 3u);
  held.clear();  // two are kept, one freed
  for (int i = 0; i < 2; ++i) {
    auto b = (*pool)->Acquire();
    ASSERT_TRUE(b.ok());
    EXPECT_TRUE(first.count((*b)->buffers().images)) << "a kept block is reused";
    held.push_back(std::move(*b));
  }
  EXPECT_EQ((*pool)->heap_blocks_made(), 3u);
  auto b = (*pool)->Acquire();  // none kept left: a new one
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*pool)->heap_blocks_made(), 4u);
}

TEST(BatchPoolTest, ABlockOutlivesItsPool) {
  std::shared_ptr<BatchBlock> b;
  {
    auto pool = BatchPool::Heap(kShape, 1);
    ASSERT_TRUE(pool.ok());
    b = *(*pool)->Acquire();
  }
  std::memset(b->buffers().images, 7, kShape.image_bytes);  // still valid (ASan would catch a use after free)
  b.reset();
}

struct SlotMemory {
  std::vector<std::vector<uint8_t>> images;
  std::vector<std::vector<int64_t>> labels;
  std::vector<std::atomic<uint32_t>> busy;
  std::vector<BatchBuffers> buffers;
  explicit SlotMemory(size_t n)
      : images(n, std::vector<uint8_t>(kShape.image_bytes)), labels(n, std::vector<int64_t>(kShape.labels)), busy(n) {
    for (size_t i = 0; i < n; ++i) {
      busy[i] = 0;
      buffers.push_back({images[i].data(), labels[i].data(), nullptr});
    }
  }
};

TEST(BatchPoolTest, SlotsAreLentOnlyWhenFreeHereAndElsewhere) {
  SlotMemory m(2);
  m.busy[1] = 1;  // another process holds slot 1
  auto pool = BatchPool::Slots(kShape, m.buffers, m.busy.data(), 1);
  ASSERT_TRUE(pool.ok()) << pool.status();
  auto a = *(*pool)->Acquire();
  EXPECT_EQ(a->slot(), 0);
  EXPECT_EQ(a->buffers().images, m.images[0].data());
  EXPECT_EQ(m.busy[0].load(), a->token());
  EXPECT_NE(a->token(), 0u);
  auto b = *(*pool)->Acquire();  // slot 0 is held here, slot 1 elsewhere: the heap
  EXPECT_EQ(b->slot(), -1);
  m.busy[1] = 0;  // the other process let go
  auto c = *(*pool)->Acquire();
  EXPECT_EQ(c->slot(), 1);
  a.reset();
  EXPECT_EQ(m.busy[0].load(), 0u) << "the last holder here clears the busy word";
  auto d = *(*pool)->Acquire();
  EXPECT_EQ(d->slot(), 0);
}

TEST(BatchPoolTest, AHandedOffSlotStaysBusyUntilTheOtherProcessClearsIt) {
  SlotMemory m(1);
  auto pool = BatchPool::Slots(kShape, m.buffers, m.busy.data(), 1);
  ASSERT_TRUE(pool.ok());
  auto a = *(*pool)->Acquire();
  ASSERT_EQ(a->slot(), 0);
  const uint32_t token = a->token();
  a->set_handed_off();
  a.reset();
  EXPECT_EQ(m.busy[0].load(), token);
  // The other process clears the word before this one lets go: still not
  // lent while held here.
  auto b = *(*pool)->Acquire();
  EXPECT_EQ(b->slot(), -1);
  m.busy[0] = 0;
  auto c = *(*pool)->Acquire();
  EXPECT_EQ(c->slot(), 0);
  EXPECT_NE(c->token(), token) << "each hand-out of a slot has a token of its own";
  auto held_here = c;
  m.busy[0] = 0;  // cleared elsewhere while held here
  auto d = *(*pool)->Acquire();
  EXPECT_EQ(d->slot(), -1) << "held in this process";
}

TEST(BatchPoolTest, AForkChildLetsGoOfInheritedBlocksWithoutThePool) {
  SlotMemory m(1);
  auto pool = BatchPool::Slots(kShape, m.buffers, m.busy.data(), 1);
  ASSERT_TRUE(pool.ok());
  auto slot = *(*pool)->Acquire();
  auto heap = *(*pool)->Acquire();
  const uint32_t token = slot->token();
  const int rc = testing::RunInForkChild(
      [&] {
        slot.reset();
        heap.reset();
        return m.busy[0].load() == token ? 0 : 1;  // the parent's busy word is the parent's
      },
      10);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(m.busy[0].load(), slot->token());
}

TEST(BatchPoolTest, HoldersRecordWhichProcessTookASlot) {
  SlotMemory m(2);
  std::vector<std::atomic<uint32_t>> holders(2);
  for (auto& h : holders) h = 0;
  auto pool = BatchPool::Slots(kShape, m.buffers, m.busy.data(), 1, holders.data());
  ASSERT_TRUE(pool.ok());
  auto a = *(*pool)->Acquire();
  EXPECT_EQ(holders[0].load(), static_cast<uint32_t>(getpid()));
  EXPECT_EQ(holders[1].load(), 0u);
}

TEST(BatchPoolTest, RejectsShapesAndSlotsItCannotServe) {
  EXPECT_EQ(BatchPool::Heap(BatchShape{0, 4, 0}, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(BatchPool::Heap(BatchShape{16, 0, 0}, 1).status().code(), StatusCode::kInvalidArgument);
  SlotMemory m(1);
  EXPECT_EQ(BatchPool::Slots(kShape, m.buffers, nullptr, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(BatchPool::Slots(BatchShape{4096, 4, 16}, m.buffers, m.busy.data(), 1).status().code(),
            StatusCode::kInvalidArgument)
      << "masks in the shape, none in the slot";
}

}  // namespace
}  // namespace libshard::reader
