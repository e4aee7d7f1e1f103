#include "libshard/io/fault_guard.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "libshard/io/mapped_file.h"

namespace libshard::io {
namespace {

// The registry: blocks of slots, chained and never freed, so the handler can
// walk it without locks. A slot holds [begin, end); begin == 0 marks it free.
// Writers (Add/Remove) serialise on a mutex; the handler only reads atomics.
struct Block {
  static constexpr size_t kSlots = 1024;
  std::atomic<uintptr_t> begin[kSlots];
  std::atomic<uintptr_t> end[kSlots];
  std::atomic<Block*> next{nullptr};
  Block() {
    for (size_t i = 0; i < kSlots; ++i) {
      begin[i].store(0, std::memory_order_relaxed);
      end[i].store(0, std::memory_order_relaxed);
    }
  }
};

Block g_first;
std::mutex g_mu;
struct sigaction g_previous;
std::once_flag g_install_once;
thread_local internal::GuardFrame* t_frame = nullptr;

bool InGuardedRange(uintptr_t a) {
  for (Block* b = &g_first; b != nullptr; b = b->next.load(std::memory_order_acquire)) {
    for (size_t i = 0; i < Block::kSlots; ++i) {
      const uintptr_t lo = b->begin[i].load(std::memory_order_acquire);
      if (lo != 0 && a >= lo && a < b->end[i].load(std::memory_order_acquire)) return true;
    }
  }
  return false;
}

void OnSigbus(int sig, siginfo_t* info, void* context) {
  // The range first: reading the thread_local may allocate (in a dlopen'ed
  // module, on a thread that never entered a guard), which only a thread that
  // set a recovery point has already done.
  if (info != nullptr && InGuardedRange(reinterpret_cast<uintptr_t>(info->si_addr))) {
    internal::GuardFrame* frame = t_frame;
    if (frame != nullptr) {
      frame->fault_addr = info->si_addr;
      siglongjmp(frame->env, 1);
    }
  }
  // Not ours: hand it to whoever was there before.
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction != nullptr) {
      g_previous.sa_sigaction(sig, info, context);
      return;
    }
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
    return;
  }
  // Default action: die by SIGBUS, as without libshard. (Ignoring a fault
  // would re-run the faulting instruction for ever.)
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGBUS, &dfl, nullptr);
  raise(SIGBUS);
}

void InstallHandler() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = OnSigbus;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGBUS, &sa, &g_previous);
}

}  // namespace

void AddGuardedRange(const void* addr, size_t size) {
  if (addr == nullptr || size == 0) return;
  std::call_once(g_install_once, InstallHandler);
  const uintptr_t lo = reinterpret_cast<uintptr_t>(addr);
  std::lock_guard<std::mutex> lock(g_mu);
  for (Block* b = &g_first;; b = b->next.load(std::memory_order_acquire)) {
    for (size_t i = 0; i < Block::kSlots; ++i) {
      if (b->begin[i].load(std::memory_order_relaxed) == 0) {
        b->end[i].store(lo + size, std::memory_order_release);
        b->begin[i].store(lo, std::memory_order_release);
        return;
      }
    }
    if (b->next.load(std::memory_order_acquire) == nullptr) b->next.store(new Block(), std::memory_order_release);
  }
}

void RemoveGuardedRange(const void* addr) {
  if (addr == nullptr) return;
  const uintptr_t lo = reinterpret_cast<uintptr_t>(addr);
  std::lock_guard<std::mutex> lock(g_mu);
  for (Block* b = &g_first; b != nullptr; b = b->next.load(std::memory_order_acquire)) {
    for (size_t i = 0; i < Block::kSlots; ++i) {
      if (b->begin[i].load(std::memory_order_relaxed) == lo) {
        b->begin[i].store(0, std::memory_order_release);
        b->end[i].store(0, std::memory_order_release);
        return;
      }
    }
  }
}

namespace internal {

GuardFrame* CurrentFrame() { return t_frame; }
void SetCurrentFrame(GuardFrame* frame) { t_frame = frame; }

Status FaultStatus(const MappedFile& file, const void* fault_addr) {
  const uintptr_t base = reinterpret_cast<uintptr_t>(file.data().data());
  const uintptr_t at = reinterpret_cast<uintptr_t>(fault_addr);
  std::string where =
      at >= base && at - base < file.size() ? " (fault at offset " + std::to_string(at - base) + ")" : "";
  return DataLossError(file.path() + ": file shrank while mapped" + where);
}

}  // namespace internal

Status GuardedCopy(const MappedFile& file, uint64_t offset, size_t n, void* dst) {
  if (offset > file.size() || n > file.size() - offset) {
    return InvalidArgumentError(file.path() + ": bytes " + std::to_string(offset) + ".." + std::to_string(offset + n) +
                                " are outside the mapping of " + std::to_string(file.size()) + " bytes");
  }
  const char* src = file.data().data() + offset;
  return WithFaultGuard(file, [&] { std::memcpy(dst, src, n); });
}

}  // namespace libshard::io
