// The labels sidecar's bytes (record/record_labels.h).
#include "libshard/record/record_labels.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "libshard/crc32c.h"
#include "libshard/record/format.h"

namespace libshard::record {
namespace {

constexpr size_t kMagicBytes = 8;
constexpr size_t kCrcBytes = 4;

// The smallest width of 1, 2, 4 or 8 bytes holding every label.
int WidthOf(const std::vector<int64_t>& labels) {
  int64_t lo = 0, hi = 0;
  for (int64_t l : labels) {
    lo = std::min(lo, l);
    hi = std::max(hi, l);
  }
  for (int w : {1, 2, 4}) {
    const int64_t top = (int64_t{1} << (8 * w - 1)) - 1;
    if (lo >= -top - 1 && hi <= top) return w;
  }
  return 8;
}

// Sign-extended label of `w` bytes at `p`.
int64_t LabelAt(const char* p, int w) {
  uint64_t u = 0;
  for (int b = 0; b < w; ++b) u |= uint64_t{static_cast<unsigned char>(p[b])} << (8 * b);
  if (w < 8 && (u >> (8 * w - 1)) != 0) u |= ~uint64_t{0} << (8 * w);  // negative: the high bytes set
  return static_cast<int64_t>(u);
}

}  // namespace

std::string LabelsPathFor(const std::string& shard_path) { return shard_path + ".labels"; }

std::string FormatLabels(const std::vector<int64_t>& labels) {
  const int w = WidthOf(labels);
  std::string out(kLabelsHeaderBytes + labels.size() * w + kCrcBytes, '\0');
  std::memcpy(out.data(), kLabelsMagic, kMagicBytes);
  out[8] = static_cast<char>(kLabelsVersion);
  out[9] = static_cast<char>(w);
  EncodeFixed64(labels.size(), out.data() + 16);
  char* p = out.data() + kLabelsHeaderBytes;
  for (int64_t l : labels) {
    const uint64_t u = static_cast<uint64_t>(l);
    for (int b = 0; b < w; ++b) *p++ = static_cast<char>(u >> (8 * b));
  }
  EncodeFixed32(crc32c::Value(out.data(), out.size() - kCrcBytes), p);
  return out;
}

StatusOr<std::vector<int64_t>> ParseLabels(std::string_view bytes, const std::string& name) {
  auto bad = [&](uint64_t offset, const std::string& what) {
    return DataLossError(name + ": at byte " + std::to_string(offset) + ": " + what + " (a labels sidecar, " +
                         std::to_string(bytes.size()) + " bytes)");
  };
  if (bytes.size() < kLabelsHeaderBytes + kCrcBytes) {
    return bad(0, "shorter than the " + std::to_string(kLabelsHeaderBytes + kCrcBytes) + " bytes of an empty one");
  }
  if (std::memcmp(bytes.data(), kLabelsMagic, kMagicBytes) != 0) return bad(0, "not the magic \"LSLABELS\"");
  const int version = static_cast<unsigned char>(bytes[8]);
  if (version != kLabelsVersion) {
    return bad(8, "version " + std::to_string(version) + ", this libshard reads version " +
                      std::to_string(kLabelsVersion));
  }
  const int w = static_cast<unsigned char>(bytes[9]);
  if (w != 1 && w != 2 && w != 4 && w != 8) return bad(9, "a label width of " + std::to_string(w) + " bytes");
  for (size_t i = 10; i < 16; ++i) {
    if (bytes[i] != 0) return bad(i, "a reserved byte that is not zero");
  }
  const uint64_t n = DecodeFixed64(bytes.data() + 16);
  const uint64_t room = (bytes.size() - kLabelsHeaderBytes - kCrcBytes) / w;
  if (n != room || (bytes.size() - kLabelsHeaderBytes - kCrcBytes) % w != 0) {
    return bad(16, std::to_string(n) + " labels of " + std::to_string(w) + " bytes, which is not the file's length");
  }
  const size_t crc_at = bytes.size() - kCrcBytes;
  const uint32_t stored = DecodeFixed32(bytes.data() + crc_at), actual = crc32c::Value(bytes.data(), crc_at);
  if (stored != actual) {
    char text[64];
    std::snprintf(text, sizeof text, "CRC-32C %08x, the bytes before it have %08x", stored, actual);
    return bad(crc_at, text);
  }
  std::vector<int64_t> labels(n);
  const char* p = bytes.data() + kLabelsHeaderBytes;
  for (uint64_t i = 0; i < n; ++i, p += w) labels[i] = LabelAt(p, w);
  return labels;
}

}  // namespace libshard::record
