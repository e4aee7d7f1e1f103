// Fault guard: turns the SIGBUS of a mapped file that shrank into a DataLoss
// Status for the read that touched the lost pages, instead of killing the
// process. (Touching a page of a mapping that lies wholly past the file's
// current end raises SIGBUS; a size check before the access cannot close the
// race with another process truncating the file.)
//
// How it works, as the JVM does for mapped buffers:
//   * MappedFile registers the address range of each mapping it makes in a
//     process-wide registry and unregisters it when unmapped;
//   * the first registration installs one SIGBUS handler (sigaction with
//     SA_SIGINFO|SA_ONSTACK|SA_NODEFER), remembering the handler it replaced;
//   * a guarded region (below) sets a per-thread recovery point
//     (sigsetjmp). When a SIGBUS arrives whose faulting address (si_addr)
//     lies in a registered range and the faulting thread is inside a guarded
//     region, the handler siglongjmp's back to the recovery point and the
//     region returns DataLoss "PATH: file shrank while mapped (fault at
//     offset N)".
//   * every other SIGBUS goes to the handler installed before (called as it
//     expects, with or without SA_SIGINFO); when that was the default (or
//     ignore), the default action is restored and the signal re-raised, so the
//     process dies by SIGBUS as it would have without libshard.
//   A handler installed after libshard's replaces it; it then has to chain to
//   libshard's for the guard to keep working.
//
//   char dst[64];
//   LIBSHARD_RETURN_IF_ERROR(io::GuardedCopy(*file, offset, sizeof dst, dst));
//   uint32_t crc = 0;
//   LIBSHARD_RETURN_IF_ERROR(io::WithFaultGuard(*file, [&] { crc = crc32c::Value(p, n); }));
//
// Rules for the body of WithFaultGuard (siglongjmp skips destructors and
// unwinding): it may only read mapped memory with plain loops, memcpy or
// CRC functions and write through pointers to memory that outlives the call;
// it must not create C++ objects with destructors, allocate, take locks,
// throw, or call back into code that might. After a fault, whatever the body
// wrote is partial and must be discarded.
//
// Views into a mapping handed out without the guard (ShardReader::Read in
// mmap mode) are the caller's risk: reading them after the file shrank still
// raises SIGBUS. Copy under the guard (ShardReader::ReadCopy) to be safe.
//
// Thread-safety: all functions are thread-safe; recovery points are per thread.
#ifndef LIBSHARD_IO_FAULT_GUARD_H_
#define LIBSHARD_IO_FAULT_GUARD_H_

#include <setjmp.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "libshard/status.h"

namespace libshard::io {

class MappedFile;

// Adds [addr, addr + size) to the registry (installing the handler on first
// use); RemoveGuardedRange removes it. MappedFile calls these; other code that
// maps memory and reads it under WithFaultGuard must too.
void AddGuardedRange(const void* addr, size_t size);
void RemoveGuardedRange(const void* addr);

namespace internal {

// One recovery point; they nest.
struct GuardFrame {
  sigjmp_buf env;
  const void* volatile fault_addr = nullptr;
  GuardFrame* prev = nullptr;
};
// The calling thread's innermost recovery point (nullptr: none).
GuardFrame* CurrentFrame();
void SetCurrentFrame(GuardFrame* frame);
// DataLoss for a fault at `fault_addr` inside `file`.
Status FaultStatus(const MappedFile& file, const void* fault_addr);

}  // namespace internal

// Runs body() with a recovery point. OK when it completed; DataLoss naming
// the file and the offset when it touched a page the file no longer has.
template <typename F>
Status WithFaultGuard(const MappedFile& file, F&& body) {
  internal::GuardFrame frame;
  frame.prev = internal::CurrentFrame();
  // savemask 0: the handler runs with SA_NODEFER, so SIGBUS is never left
  // blocked and no signal mask needs restoring (saves a syscall per guard).
  if (sigsetjmp(frame.env, 0) != 0) {
    internal::SetCurrentFrame(frame.prev);
    return internal::FaultStatus(file, frame.fault_addr);
  }
  internal::SetCurrentFrame(&frame);
  body();
  internal::SetCurrentFrame(frame.prev);
  return Status::OK();
}

// Copies `n` bytes at `offset` of the mapping to `dst` under the guard.
// InvalidArgument when the range is outside the mapping.
Status GuardedCopy(const MappedFile& file, uint64_t offset, size_t n, void* dst);

}  // namespace libshard::io

#endif  // LIBSHARD_IO_FAULT_GUARD_H_
