// Private: a minimal protobuf wire-format reader over a byte span. Used by
// the zero-copy Example view; never allocates.
#ifndef LIBSHARD_SRC_EXAMPLE_WIRE_H_
#define LIBSHARD_SRC_EXAMPLE_WIRE_H_

#include <cstdint>
#include <cstring>
#include <string_view>

namespace libshard::example::wire {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLen = 2, kStartGroup = 3, kEndGroup = 4, kFixed32 = 5 };

// Reads a base-128 varint; false when truncated or longer than 10 bytes.
inline bool ReadVarint(const char*& p, const char* end, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift < 70 && p < end; shift += 7) {
    uint8_t b = static_cast<uint8_t>(*p++);
    result |= uint64_t{b & 0x7fu} << shift;
    if ((b & 0x80u) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

// Reads a field tag as protobuf's C++ parser does: at most 5 bytes, bits
// beyond 32 dropped (so a field number never exceeds 2^29 - 1); false when
// truncated or longer.
inline bool ReadTag(const char*& p, const char* end, uint32_t* tag) {
  uint32_t result = 0;
  for (int shift = 0; shift < 35 && p < end; shift += 7) {
    uint8_t b = static_cast<uint8_t>(*p++);
    result |= static_cast<uint32_t>(uint64_t{b & 0x7fu} << shift);
    if ((b & 0x80u) == 0) {
      *tag = result;
      return true;
    }
  }
  return false;
}

struct Field {
  uint32_t number = 0;
  uint32_t type = 0;
  uint64_t varint = 0;     // kVarint
  uint64_t fixed = 0;      // kFixed64 / kFixed32
  std::string_view bytes;  // kLen payload
};

// Iterates the fields of one message. Next() returns false at the end or on
// malformed input; error() tells which (and where, relative to `base`).
class Reader {
 public:
  explicit Reader(std::string_view msg) : p_(msg.data()), begin_(msg.data()), end_(msg.data() + msg.size()) {}

  bool Next(Field* f) {
    if (p_ >= end_ || error_ != nullptr) return false;
    field_start_ = p_;
    uint32_t tag;
    if (!ReadTag(p_, end_, &tag)) return Fail("truncated field tag");
    f->number = tag >> 3;
    f->type = tag & 7u;
    if (f->number == 0) return Fail("invalid field number");
    switch (f->type) {
      case kVarint:
        if (!ReadVarint(p_, end_, &f->varint)) return Fail("truncated varint");
        return true;
      case kFixed64:
        if (end_ - p_ < 8) return Fail("truncated fixed64");
        std::memcpy(&f->fixed, p_, 8);
        p_ += 8;
        return true;
      case kFixed32: {
        if (end_ - p_ < 4) return Fail("truncated fixed32");
        uint32_t v;
        std::memcpy(&v, p_, 4);
        f->fixed = v;
        p_ += 4;
        return true;
      }
      case kLen: {
        uint64_t len;
        if (!ReadVarint(p_, end_, &len)) return Fail("truncated length");
        if (len > static_cast<uint64_t>(end_ - p_)) return Fail("length-delimited field runs past its message");
        f->bytes = std::string_view(p_, static_cast<size_t>(len));
        p_ += len;
        return true;
      }
      case kStartGroup:
        return SkipGroup(f->number, 0) ? true : false;
      default:
        return Fail("invalid wire type");
    }
  }

  bool ok() const { return error_ == nullptr; }
  const char* error() const { return error_; }
  // Offset of the field being read (or that failed) from the message start.
  size_t field_offset() const { return static_cast<size_t>(field_start_ - begin_); }
  size_t position() const { return static_cast<size_t>(p_ - begin_); }

 private:
  bool Fail(const char* what) {
    error_ = what;
    return false;
  }

  // Skips an (unknown) group up to its matching end-group tag.
  bool SkipGroup(uint32_t number, int depth) {
    // protobuf's default recursion limit, so both accept and reject the same inputs.
    if (depth > 100) return Fail("groups nested too deeply");
    for (;;) {
      uint32_t tag;
      if (!ReadTag(p_, end_, &tag)) return Fail("unterminated group");
      uint32_t type = tag & 7u;
      uint32_t n = tag >> 3;
      if (n == 0) return Fail("invalid field number");  // as at top level
      uint64_t v;
      switch (type) {
        case kVarint:
          if (!ReadVarint(p_, end_, &v)) return Fail("truncated varint");
          break;
        case kFixed64:
          if (end_ - p_ < 8) return Fail("truncated fixed64");
          p_ += 8;
          break;
        case kFixed32:
          if (end_ - p_ < 4) return Fail("truncated fixed32");
          p_ += 4;
          break;
        case kLen:
          if (!ReadVarint(p_, end_, &v)) return Fail("truncated length");
          if (v > static_cast<uint64_t>(end_ - p_)) return Fail("length-delimited field runs past its message");
          p_ += v;
          break;
        case kStartGroup:
          if (!SkipGroup(n, depth + 1)) return false;
          break;
        case kEndGroup:
          if (n != number) return Fail("mismatched end-group tag");
          return true;
        default:
          return Fail("invalid wire type");
      }
    }
  }

  const char* p_;
  const char* begin_;
  const char* end_;
  const char* field_start_ = nullptr;
  const char* error_ = nullptr;
};

}  // namespace libshard::example::wire

#endif  // LIBSHARD_SRC_EXAMPLE_WIRE_H_
