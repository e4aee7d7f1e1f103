// Exceptions made Status at a thread's edge: libshard code runs on TBB and
// std::thread workers where a std::bad_alloc (a huge image, a low ulimit -v)
// must become an error for that sample, never std::terminate.
//
//   Status s = util::CatchAsStatus([&] { return EncodeSample(...); },
//                                  [&] { return "decoding " + path; });
//
// std::bad_alloc gives RESOURCE_EXHAUSTED "out of memory <what()>", any other
// std::exception INTERNAL "<e.what()> <what()>"; `what` is called only then.
#ifndef LIBSHARD_SRC_UTIL_CATCH_STATUS_H_
#define LIBSHARD_SRC_UTIL_CATCH_STATUS_H_

#include <exception>
#include <new>
#include <string>

#include "libshard/status.h"

namespace libshard::util {

// `fn` returns a Status or a StatusOr<T>; so does CatchAsStatus.
template <typename Fn, typename What>
auto CatchAsStatus(Fn&& fn, What&& what) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError("out of memory " + std::string(what()));
  } catch (const std::exception& e) {
    return InternalError(std::string(e.what()) + " " + std::string(what()));
  }
}

}  // namespace libshard::util

#endif  // LIBSHARD_SRC_UTIL_CATCH_STATUS_H_
