#include "libshard/convert/dataset_stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace libshard::convert {
namespace {

// 48 lanes: a multiple of 1, 2, 3 and 4 channels, so lane l always holds
// channel l % channels, and the inner loop vectorises.
constexpr int kLanes = 48;

void Add8(const uint8_t* p, size_t n, int channels, uint64_t* sum, unsigned __int128* sq) {
  size_t i = 0;
  // uint32 lanes: 255^2 * 16384 < 2^32, so flush every 16384 blocks.
  while (n - i >= kLanes) {
    uint32_t s[kLanes] = {}, q[kLanes] = {};
    size_t blocks = std::min<size_t>((n - i) / kLanes, 16384);
    for (size_t b = 0; b < blocks; ++b, i += kLanes) {
      for (int l = 0; l < kLanes; ++l) {
        uint32_t v = p[i + l];
        s[l] += v;
        q[l] += v * v;
      }
    }
    for (int l = 0; l < kLanes; ++l) {
      sum[l % channels] += s[l];
      sq[l % channels] += q[l];
    }
  }
  for (; i < n; ++i) {
    uint32_t v = p[i];
    sum[i % channels] += v;
    sq[i % channels] += v * v;
  }
}

#if defined(__x86_64__)
// The same sums with AVX2 (picked at run time; the output of a conversion,
// so this is every converted pixel): 48 samples per step as three rows of 16
// zero-extended 16-bit lanes, so lane l always holds channel (16 k + l) %
// channels. Sums gather in 16-bit lanes (255 * 256 < 2^16) and squares, of
// exact 16-bit products, in 32-bit lanes (65025 * 256 < 2^32); both are
// flushed every 256 steps.
__attribute__((target("avx2"))) size_t Add8Avx2(const uint8_t* p, size_t n, int channels, uint64_t* sum,
                                                unsigned __int128* sq) {
  constexpr size_t kStep = 48, kFlush = 256;
  const __m256i zero = _mm256_setzero_si256();
  // Per sample position of a step: 64-bit totals, folded into channels once
  // at the end.
  uint64_t lane_sum[kStep] = {}, lane_sq[kStep] = {};
  size_t i = 0;
  while (n - i >= kStep) {
    // Unrolled, so that the nine accumulators stay in registers.
    __m256i s[3], q[6];
#pragma GCC unroll 3
    for (int k = 0; k < 3; ++k) s[k] = zero;
#pragma GCC unroll 6
    for (int k = 0; k < 6; ++k) q[k] = zero;
    const size_t steps = std::min((n - i) / kStep, kFlush);
    for (size_t b = 0; b < steps; ++b, i += kStep) {
#pragma GCC unroll 3
      for (int k = 0; k < 3; ++k) {
        const __m256i v = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 16 * k)));
        s[k] = _mm256_add_epi16(s[k], v);
        const __m256i v2 = _mm256_mullo_epi16(v, v);
        q[2 * k] = _mm256_add_epi32(q[2 * k], _mm256_unpacklo_epi16(v2, zero));
        q[2 * k + 1] = _mm256_add_epi32(q[2 * k + 1], _mm256_unpackhi_epi16(v2, zero));
      }
    }
    alignas(32) uint16_t s16[3][16];
    alignas(32) uint32_t q32[6][8];
#pragma GCC unroll 3
    for (int k = 0; k < 3; ++k) _mm256_store_si256(reinterpret_cast<__m256i*>(s16[k]), s[k]);
#pragma GCC unroll 6
    for (int k = 0; k < 6; ++k) _mm256_store_si256(reinterpret_cast<__m256i*>(q32[k]), q[k]);
    for (int k = 0; k < 3; ++k) {
      for (int l = 0; l < 16; ++l) lane_sum[16 * k + l] += s16[k][l];
      // unpacklo holds samples 0-3 and 8-11 of the 16, unpackhi 4-7 and 12-15.
      for (int l = 0; l < 8; ++l) {
        const int lo = (l < 4 ? l : l + 4), hi = lo + 4;
        lane_sq[16 * k + lo] += q32[2 * k][l];
        lane_sq[16 * k + hi] += q32[2 * k + 1][l];
      }
    }
  }
  for (size_t l = 0; l < kStep; ++l) {
    sum[l % channels] += lane_sum[l];
    sq[l % channels] += lane_sq[l];
  }
  return i;
}

bool CpuHasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif

void Add16(const uint16_t* p, size_t n, int channels, uint64_t* sum, unsigned __int128* sq) {
  for (size_t i = 0; i < n; ++i) {
    uint64_t v = p[i];
    sum[i % channels] += v;
    sq[i % channels] += v * v;
  }
}

template <typename K>
void Bump(std::map<K, uint64_t>* m, const K& k, uint64_t n) {
  if (n != 0) (*m)[k] += n;
}

}  // namespace

std::string U128ToString(unsigned __int128 v) {
  if (v == 0) return "0";
  std::string s;
  while (v != 0) {
    s.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  std::reverse(s.begin(), s.end());
  return s;
}

bool ParseU128(const std::string& s, unsigned __int128* v) {
  if (s.empty() || s.size() > 39) return false;
  unsigned __int128 x = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    unsigned __int128 next = x * 10 + static_cast<unsigned>(c - '0');
    if (next / 10 != x) return false;
    x = next;
  }
  *v = x;
  return true;
}

void StatsAccumulator::AddPixels(const image::Image& img) {
  const int c = img.channels();
  if (c < 1 || c > kMaxChannels || img.empty()) return;
  uint64_t sum[kMaxChannels] = {};
  unsigned __int128 sq[kMaxChannels] = {};
  const size_t n = static_cast<size_t>(img.width()) * img.height() * c;
  if (img.bit_depth() == 16) {
    Add16(img.samples16(), n, c, sum, sq);
  } else {
    size_t done = 0;
#if defined(__x86_64__)
    if (CpuHasAvx2()) done = Add8Avx2(img.data(), n, c, sum, sq);
#endif
    // The rest (all of it without AVX2) starts at a multiple of 48, so
    // sample i is still channel i % c.
    Add8(img.data() + done, n - done, c, sum, sq);
  }
  const uint64_t per_channel = n / c;
  for (int k = 0; k < c; ++k) {
    channels_[k].count += per_channel;
    channels_[k].sum += sum[k];
    channels_[k].sum_squares += sq[k];
  }
  used_channels_ = std::max(used_channels_, c);
}

void StatsAccumulator::AddSource(const std::string& format, int width, int height, uint64_t bytes) {
  ++formats_[format];
  ++sizes_[std::to_string(width) + "x" + std::to_string(height)];
  source_bytes_ += bytes;
}

void StatsAccumulator::AddConverted(bool passed_through, uint64_t output_bytes) {
  ++converted_;
  passed_through_ += passed_through ? 1 : 0;
  output_bytes_ += output_bytes;
}

void StatsAccumulator::AddMaskPixels(const image::Image& mask) {
  if (mask.channels() != 1 || mask.empty()) return;
  const size_t n = static_cast<size_t>(mask.width()) * mask.height();
  if (mask.bit_depth() == 16) {
    std::map<int64_t, uint64_t> counts;
    const uint16_t* p = mask.samples16();
    for (size_t i = 0; i < n; ++i) ++counts[p[i]];
    for (const auto& [k, c] : counts) Bump(&mask_pixels_, k, c);
    return;
  }
  std::array<uint64_t, 256> counts{};
  const uint8_t* p = mask.data();
  for (size_t i = 0; i < n; ++i) ++counts[p[i]];
  for (int k = 0; k < 256; ++k) Bump(&mask_pixels_, int64_t{k}, counts[k]);
}

void StatsAccumulator::Merge(const StatsAccumulator& o) {
  for (int k = 0; k < kMaxChannels; ++k) {
    channels_[k].count += o.channels_[k].count;
    channels_[k].sum += o.channels_[k].sum;
    channels_[k].sum_squares += o.channels_[k].sum_squares;
  }
  used_channels_ = std::max(used_channels_, o.used_channels_);
  converted_ += o.converted_;
  rejected_ += o.rejected_;
  passed_through_ += o.passed_through_;
  source_bytes_ += o.source_bytes_;
  output_bytes_ += o.output_bytes_;
  for (const auto& [k, n] : o.labels_) Bump(&labels_, k, n);
  for (const auto& [k, n] : o.mask_pixels_) Bump(&mask_pixels_, k, n);
  for (const auto& [k, b] : o.boxes_) {
    Boxes& mine = boxes_[k];
    mine.stored += b.stored;
    mine.clipped += b.clipped;
    mine.dropped += b.dropped;
  }
  for (const auto& [k, n] : o.formats_) Bump(&formats_, k, n);
  for (const auto& [k, n] : o.sizes_) Bump(&sizes_, k, n);
}

void StatsAccumulator::AddBox(int64_t label, bool stored, bool clipped) {
  Boxes& b = boxes_[label];
  if (!stored) {
    ++b.dropped;
    return;
  }
  ++b.stored;
  b.clipped += clipped;
}

void StatsAccumulator::ToProto(DatasetStats* out) const {
  out->Clear();
  out->set_converted(converted_);
  out->set_rejected(rejected_);
  out->set_passed_through(passed_through_);
  out->set_source_bytes(source_bytes_);
  out->set_output_bytes(output_bytes_);
  for (int k = 0; k < used_channels_; ++k) {
    const Channel& ch = channels_[k];
    ChannelStats* p = out->add_channels();
    p->set_count(ch.count);
    p->set_sum(ch.sum);
    p->set_sum_squares(U128ToString(ch.sum_squares));
    if (ch.count > 0) {
      const long double n = static_cast<long double>(ch.count);
      const long double mean = static_cast<long double>(ch.sum) / n;
      long double var = static_cast<long double>(ch.sum_squares) / n - mean * mean;
      if (var < 0) var = 0;
      p->set_mean(static_cast<double>(mean));
      p->set_std(static_cast<double>(std::sqrt(var)));
    }
  }
  for (const auto& [label, n] : labels_) {
    LabelCount* l = out->add_labels();
    l->set_label(label);
    l->set_count(n);
  }
  for (const auto& [name, n] : formats_) {
    NamedCount* f = out->add_source_formats();
    f->set_name(name);
    f->set_count(n);
  }
  for (const auto& [index, n] : mask_pixels_) {
    LabelCount* l = out->add_mask_pixels();
    l->set_label(index);
    l->set_count(n);
  }
  for (const auto& [label, b] : boxes_) {
    BoxCount* c = out->add_boxes();
    c->set_label(label);
    c->set_stored(b.stored);
    c->set_clipped(b.clipped);
    c->set_dropped(b.dropped);
  }
  std::vector<std::pair<std::string, uint64_t>> sizes(sizes_.begin(), sizes_.end());
  std::stable_sort(sizes.begin(), sizes.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [name, n] : sizes) {
    NamedCount* f = out->add_source_sizes();
    f->set_name(name);
    f->set_count(n);
  }
}

StatusOr<StatsAccumulator> StatsAccumulator::FromProto(const DatasetStats& in) {
  StatsAccumulator a;
  a.converted_ = in.converted();
  a.rejected_ = in.rejected();
  a.passed_through_ = in.passed_through();
  a.source_bytes_ = in.source_bytes();
  a.output_bytes_ = in.output_bytes();
  if (in.channels_size() > kMaxChannels) {
    return InvalidArgumentError("stats: more than 4 channels");
  }
  for (int k = 0; k < in.channels_size(); ++k) {
    const ChannelStats& c = in.channels(k);
    a.channels_[k].count = c.count();
    a.channels_[k].sum = c.sum();
    if (!ParseU128(c.sum_squares(), &a.channels_[k].sum_squares)) {
      return InvalidArgumentError("stats: bad sum_squares '" + c.sum_squares() + "'");
    }
  }
  a.used_channels_ = in.channels_size();
  for (const LabelCount& l : in.labels()) Bump(&a.labels_, l.label(), l.count());
  for (const LabelCount& l : in.mask_pixels()) Bump(&a.mask_pixels_, l.label(), l.count());
  for (const BoxCount& c : in.boxes()) {
    Boxes& b = a.boxes_[c.label()];
    b.stored += c.stored();
    b.clipped += c.clipped();
    b.dropped += c.dropped();
  }
  for (const NamedCount& f : in.source_formats()) Bump(&a.formats_, f.name(), f.count());
  for (const NamedCount& f : in.source_sizes()) Bump(&a.sizes_, f.name(), f.count());
  return a;
}

}  // namespace libshard::convert
