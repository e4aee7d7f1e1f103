// Status and StatusOr<T>: how every libshard error crosses the library
// boundary. No libshard function throws for bad input or calls exit(); it
// returns a Status (or a StatusOr<T> carrying either a value or a Status).
//
//   libshard::StatusOr<Image> img = DecodeImage(bytes, opts);
//   if (!img.ok()) { std::cerr << img.status() << "\n"; return 1; }
//   Use(*img);
//
// Codes follow the meanings TensorFlow and Abseil give them:
//   kOutOfRange   clean end of data (a reader has nothing more to give)
//   kDataLoss     truncated or corrupt data; the message names the byte offset
//   kInvalidArgument  a bad option or malformed input that is not data loss
//   kNotFound / kIOError  file system trouble, the message names the file
//   kResourceExhausted  a configured limit (size, pixels) was exceeded
//   kUnimplemented  valid input that libshard cannot handle (e.g. 12-bit JPEG)
//   kPermissionDenied  the caller may not do this: a server's 401/403, naming the URL
//
// Thread-safety: Status and StatusOr are values; distinct objects may be used
// from distinct threads freely.
#ifndef LIBSHARD_STATUS_H_
#define LIBSHARD_STATUS_H_

#include <cassert>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace libshard {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kOutOfRange,
  kDataLoss,
  kResourceExhausted,
  kFailedPrecondition,
  kUnimplemented,
  kIOError,
  kInternal,
  kPermissionDenied,
};

// The code's name, e.g. "DATA_LOSS".
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  // An OK status. Cheap: no allocation.
  Status() = default;
  Status(StatusCode code, std::string message);

  static Status OK() { return Status(); }

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  // The message without the code; empty when ok().
  const std::string& message() const;
  // "DATA_LOSS: message", or "OK".
  std::string ToString() const;

  // Returns a copy with `prefix + ": "` put before the message (e.g. a file
  // name). An OK status stays OK.
  Status WithContext(std::string_view prefix) const;

  void IgnoreError() const {}

  friend bool operator==(const Status& a, const Status& b) {
    return a.code() == b.code() && a.message() == b.message();
  }

 private:
  struct State {
    StatusCode code;
    std::string message;
  };
  std::shared_ptr<const State> state_;  // null when OK
};

std::ostream& operator<<(std::ostream& os, const Status& s);

Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status AlreadyExistsError(std::string message);
Status OutOfRangeError(std::string message);
Status DataLossError(std::string message);
Status ResourceExhaustedError(std::string message);
Status FailedPreconditionError(std::string message);
Status UnimplementedError(std::string message);
Status IOError(std::string message);
Status InternalError(std::string message);
Status PermissionDeniedError(std::string message);
// An IOError from errno: "<context>: <strerror(errnum)>", or NotFoundError for
// ENOENT.
Status ErrnoError(std::string_view context, int errnum);

// Either a T or a non-OK Status. Accessing the value of a non-OK StatusOr is
// a programming error (asserted in debug builds).
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  // From an error. Passing an OK status is a programming error; it is turned
  // into an Internal error so release builds still never expose a missing T.
  StatusOr(Status status) : v_(std::move(status)) {  // NOLINT: implicit
    if (std::get<Status>(v_).ok()) v_ = InternalError("StatusOr built from OK status");
  }
  StatusOr(T value) : v_(std::move(value)) {}  // NOLINT: implicit

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  T& value() & {
    assert(ok());
    return std::get<T>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace libshard

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define LIBSHARD_RETURN_IF_ERROR(expr)           \
  do {                                           \
    ::libshard::Status _libshard_st = (expr);    \
    if (!_libshard_st.ok()) return _libshard_st; \
  } while (0)

#define LIBSHARD_CONCAT_INNER_(a, b) a##b
#define LIBSHARD_CONCAT_(a, b) LIBSHARD_CONCAT_INNER_(a, b)
// `LIBSHARD_ASSIGN_OR_RETURN(auto x, Foo());` declares x from a StatusOr or
// returns its error.
#define LIBSHARD_ASSIGN_OR_RETURN(lhs, expr) \
  LIBSHARD_ASSIGN_OR_RETURN_IMPL_(LIBSHARD_CONCAT_(_libshard_so_, __LINE__), lhs, expr)
#define LIBSHARD_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                    \
  if (!tmp.ok()) return tmp.status();                   \
  lhs = std::move(tmp).value()

#endif  // LIBSHARD_STATUS_H_
