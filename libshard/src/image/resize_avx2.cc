// The AVX2 resampling passes. Compiled with -mavx2 in its own object library
// and reached only after a run-time CPU check (resize.cc), so the rest of the
// library runs on any x86-64.
//
// Bit-exactness with the reference comes from doing the same integer
// arithmetic: 32-bit lanes, vpmulld of a widened sample by its 22-bit weight,
// a 32-bit sum that starts at half a unit, an arithmetic shift, and a
// saturating pack (which clips to 0..255 exactly as the reference does). The
// order of the additions does not matter for integers.
//
// Vertical pass: output row y = sum_i w_i * input row (first + i), eight
// samples per register across the row, 32 samples per step.
// Horizontal pass, when every output sample's taps lie close together (the
// usual case: a shrink by less than about 2 with bilinear, as after a DCT
// scaled JPEG decode): the row's output samples, whatever the channel count,
// in groups of four, one group per 128-bit half; each group loads the 16
// source bytes its taps read, and per tap a byte shuffle puts every sample's
// source byte in its own 32-bit lane, so all eight lanes do useful work.
// Otherwise (RGB, RGBA): two output pixels per register, one in each
// 128-bit half with its 3 or 4 channels in 32-bit lanes (the fourth lane of
// RGB is a neighbouring sample, computed and dropped); gray and gray+alpha
// rows then use the reference pass.
#include <algorithm>
#include <cstring>

#include "image/resize_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace libshard::image::internal {

#if defined(__x86_64__)

bool CpuHasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}

namespace {

uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Output pixels 2g and 2g + 1 share one loop of taps[g] taps. The shorter
// window is padded with zero weights, its start moved left where the padded
// window would run past the end of the row, so every load stays in the row.
struct PairPlan {
  int pairs = 0;
  std::vector<int> taps;     // per pair
  std::vector<int> start;    // per pixel slot (2 * pairs), in pixels
  std::vector<size_t> woff;  // per pair: offset of its weights in w
  std::vector<int32_t> w;    // per pair, per tap: {weight of 2g, weight of 2g + 1}
};

void MakePairPlan(const Coeffs& cf, int in_w, int out_w, PairPlan* p) {
  p->pairs = (out_w + 1) / 2;
  p->taps.assign(p->pairs, 0);
  p->start.assign(2 * static_cast<size_t>(p->pairs), 0);
  p->woff.assign(p->pairs, 0);
  p->w.clear();
  for (int g = 0; g < p->pairs; ++g) {
    const int xs[2] = {2 * g, std::min(2 * g + 1, out_w - 1)};
    const int taps = std::max(cf.count[xs[0]], cf.count[xs[1]]);
    p->taps[g] = taps;
    p->woff[g] = p->w.size();
    p->w.resize(p->w.size() + 2 * static_cast<size_t>(taps), 0);
    for (int h = 0; h < 2; ++h) {
      const int x = xs[h];
      const int start = std::min(cf.first[x], in_w - taps);
      const int shift = cf.first[x] - start;
      p->start[2 * g + h] = start;
      for (int i = 0; i < cf.count[x]; ++i) {
        p->w[p->woff[g] + 2 * static_cast<size_t>(i + shift) + h] = cf.weights[static_cast<size_t>(x) * cf.ksize + i];
      }
    }
  }
}

// One pair of output pixels for `R` rows at once (R = 1 or 2): the weights
// are loaded and spread once for both rows.
template <int C, int R>
void PairRows(const uint8_t* const* src, const PairPlan& p, int g, int out_w, uint8_t* const* dst) {
  const __m256i spread = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
  const int x0 = 2 * g;
  const size_t o0 = static_cast<size_t>(p.start[x0]) * C;
  const size_t o1 = static_cast<size_t>(p.start[x0 + 1]) * C;
  const int32_t* w = p.w.data() + p.woff[g];
  __m256i acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_set1_epi32(1 << (kPrecisionBits - 1));
  for (int j = 0; j < p.taps[g]; ++j) {
    const __m256i k = _mm256_permutevar8x32_epi32(
        _mm256_castsi128_si256(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(w + 2 * j))), spread);
    for (int r = 0; r < R; ++r) {
      const __m128i a = _mm_cvtepu8_epi32(_mm_cvtsi32_si128(static_cast<int>(Load32(src[r] + o0 + j * C))));
      const __m128i b = _mm_cvtepu8_epi32(_mm_cvtsi32_si128(static_cast<int>(Load32(src[r] + o1 + j * C))));
      const __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1);
      acc[r] = _mm256_add_epi32(acc[r], _mm256_mullo_epi32(v, k));
    }
  }
  for (int r = 0; r < R; ++r) {
    const __m256i sh = _mm256_srai_epi32(acc[r], kPrecisionBits);
    const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(sh), _mm256_extracti128_si256(sh, 1));
    __m128i bytes = _mm_packus_epi16(w16, w16);
    if (C == 3) {
      // Drop each pixel's fourth lane: r0 g0 b0 r1 g1 b1.
      bytes = _mm_shuffle_epi8(bytes, _mm_setr_epi8(0, 1, 2, 4, 5, 6, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
    }
    const uint64_t both = static_cast<uint64_t>(_mm_cvtsi128_si64(bytes));
    uint8_t* d = dst[r] + static_cast<size_t>(x0) * C;
    if (x0 + 2 < out_w || (C == 4 && x0 + 2 == out_w)) {
      // Both pixels with one 8-byte store; for RGB it spills two bytes into
      // the next pair, which is written afterwards.
      std::memcpy(d, &both, 8);
    } else if (x0 + 2 == out_w) {  // RGB, the row's last two pixels
      std::memcpy(d, &both, 6);
    } else {  // the row's last pixel, alone
      std::memcpy(d, &both, C);
    }
  }
}

// The shuffle plan: output samples o (0 .. out_w * C - 1) in groups of four,
// two groups (8 samples, one register) per block, blocks padded to a multiple
// of four (32 samples, one 32-byte store). Each group reads 16 source bytes
// from its offset (the lowest pixel its samples start at: first[] may run
// either way, a mirrored pass runs it backwards), and a byte shuffle puts
// every sample's source byte in its own 32-bit lane. Two layouts:
//   kOneLoad: all taps of the group lie in those 16 bytes (a shrink by less
//     than about 1.3 for RGB): one load per block, a shuffle per tap;
//   kSliding: only the group's first taps fit, so tap j loads the 16 bytes at
//     offset + j * C; the shuffle is the same for every tap (a shrink by up
//     to about 4 for RGB, as random-resized crops of any size are).
struct ShufflePlan {
  // The coefficients and shape it was made for (the plan is reused while
  // they stay the same, as for image after image in a conversion).
  int channels = 0, in_w = 0, out_w = 0;
  std::vector<int> first, count;
  std::vector<int32_t> weights;

  enum class Layout { kNone, kOneLoad, kSliding } layout = Layout::kNone;
  int samples = 0;               // out_w * channels
  int blocks = 0;                // multiple of 4
  size_t load_end = 0;           // the furthest byte a load reads, + 1
  std::vector<uint32_t> offset;  // per group: byte offset in the row of its (first) 16-byte load
  // Taps of every block: the most any sample has (others get zero weights),
  // so the tap loop runs the same number of times for every block.
  int taps = 0;
  struct alignas(32) Entry {
    int32_t v[8];
  };
  // kOneLoad: per block, per tap: byte shuffle, then weights.
  // kSliding: per block: byte shuffle, then per tap: weights.
  std::vector<Entry> table;
  std::vector<int> at, taps_of, wrow;  // MakeShufflePlan's scratch, kept for its allocation
};

bool SameCoeffs(const ShufflePlan& p, const Coeffs& cf, int channels, int in_w, int out_w) {
  return p.channels == channels && p.in_w == in_w && p.out_w == out_w && p.first == cf.first && p.count == cf.count &&
         p.weights == cf.weights;
}

// Fills `p` for these coefficients; p->layout is kNone when some group's
// samples start more than 16 bytes apart.
void MakeShufflePlan(const Coeffs& cf, int channels, int in_w, int out_w, ShufflePlan* p) {
  p->channels = channels;
  p->in_w = in_w;
  p->out_w = out_w;
  p->first = cf.first;
  p->count = cf.count;
  p->weights = cf.weights;
  p->layout = ShufflePlan::Layout::kNone;
  const int n = out_w * channels;
  p->samples = n;
  p->blocks = ((n + 31) / 32) * 4;
  p->offset.assign(2 * static_cast<size_t>(p->blocks), 0);
  p->taps = 0;
  for (int x = 0; x < out_w; ++x) p->taps = std::max(p->taps, cf.count[x]);
  p->table.clear();
  // Per output sample (padded to whole blocks; the padding has no taps):
  // the byte its first tap reads, its tap count, where its weights start.
  // Built once here, so the loops below do no division per lane and tap.
  const size_t padded = 8 * static_cast<size_t>(p->blocks);
  p->at.assign(padded, 0);
  p->taps_of.assign(padded, 0);
  p->wrow.assign(padded, 0);
  for (int x = 0, o = 0; x < out_w; ++x) {
    for (int c = 0; c < channels; ++c, ++o) {
      p->at[o] = cf.first[x] * channels + c;
      p->taps_of[o] = cf.count[x];
      p->wrow[o] = x * cf.ksize;
    }
  }
  const int* at = p->at.data();
  const int* taps_of = p->taps_of.data();
  // Per group: the offset (its lowest pixel), and whether every tap (one
  // load) or every sample's first tap (sliding loads) lies in its 16 bytes.
  bool one_load = true, sliding = true;
  for (int q = 0; q < 2 * p->blocks && 4 * q < n; ++q) {
    const int end = std::min(4 * q + 4, n);
    int lo = at[4 * q], hi_first = 0, hi_last = 0;
    for (int o = 4 * q; o < end; ++o) lo = std::min(lo, at[o] - o % channels);
    for (int o = 4 * q; o < end; ++o) {
      hi_first = std::max(hi_first, at[o] - lo);
      hi_last = std::max(hi_last, at[o] + (std::max(taps_of[o], 1) - 1) * channels - lo);
    }
    p->offset[q] = static_cast<uint32_t>(lo);
    one_load &= hi_last <= 15;
    sliding &= hi_first <= 15;
  }
  if (!sliding) return;
  const int step = one_load ? 0 : channels;
  p->load_end = 0;
  for (int q = 0; q < 2 * p->blocks && 4 * q < n; ++q) {
    p->load_end = std::max<size_t>(p->load_end, p->offset[q] + static_cast<size_t>(p->taps - 1) * step + 16);
  }
  p->table.resize(static_cast<size_t>(p->blocks) * (one_load ? 2 * p->taps : 1 + p->taps));
  ShufflePlan::Entry* e = p->table.data();
  const int32_t* weights = cf.weights.data();
  for (int b = 0; b < p->blocks; ++b) {
    const int o0 = 8 * b;
    for (int j = 0; j < p->taps; ++j) {
      if (one_load || j == 0) {
        // -1 (high bit set): the lane reads zero. A lane's byte for tap j:
        // one load: at + j * C; sliding: at (the load moves instead).
        int8_t* mask = reinterpret_cast<int8_t*>(e->v);
        std::memset(mask, -1, sizeof(e->v));
        for (int k = 0; k < 8; ++k) {
          const int o = o0 + k;
          if (o < n && (!one_load || j < taps_of[o])) {
            mask[4 * k] =
                static_cast<int8_t>(at[o] + j * (channels - step) - static_cast<int>(p->offset[2 * b + k / 4]));
          }
        }
        ++e;
      }
      for (int k = 0; k < 8; ++k) {
        const int o = o0 + k;
        e->v[k] = j < taps_of[o] ? weights[p->wrow[o] + j] : 0;
      }
      ++e;
    }
  }
  p->layout = one_load ? ShufflePlan::Layout::kOneLoad : ShufflePlan::Layout::kSliding;
}

// Block b (8 output samples) of one row; T = the plan's taps, or 0 for
// `taps`. S: the step of the loads per tap (0: one load, kOneLoad; else the
// channel count, kSliding).
template <int T, bool Sliding>
inline __attribute__((always_inline)) __m256i ShuffleBlock(const uint8_t* src, const uint32_t* offset,
                                                           const ShufflePlan::Entry* table, int taps, int step, int b) {
  if (T > 0) taps = T;
  __m256i acc = _mm256_set1_epi32(1 << (kPrecisionBits - 1));
  const uint8_t* lo = src + offset[2 * b];
  const uint8_t* hi = src + offset[2 * b + 1];
  auto load = [&](int j) {
    return _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(lo + j * step))),
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(hi + j * step)), 1);
  };
  if (Sliding) {
    const ShufflePlan::Entry* t = table + static_cast<size_t>(b) * (1 + taps);
    const __m256i mask = _mm256_load_si256(reinterpret_cast<const __m256i*>(t[0].v));
#pragma GCC unroll 8
    for (int j = 0; j < taps; ++j) {
      const __m256i w = _mm256_load_si256(reinterpret_cast<const __m256i*>(t[1 + j].v));
      acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(_mm256_shuffle_epi8(load(j), mask), w));
    }
    return acc;
  }
  const __m256i v = load(0);
  const ShufflePlan::Entry* t = table + 2 * static_cast<size_t>(b) * taps;
#pragma GCC unroll 4
  for (int j = 0; j < taps; ++j) {
    const __m256i mask = _mm256_load_si256(reinterpret_cast<const __m256i*>(t[2 * j].v));
    const __m256i w = _mm256_load_si256(reinterpret_cast<const __m256i*>(t[2 * j + 1].v));
    acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(_mm256_shuffle_epi8(v, mask), w));
  }
  return acc;
}

// The 32 output bytes of blocks b .. b + 3, clipped as the reference does.
template <int T, bool Sliding>
inline __attribute__((always_inline)) __m256i ShuffleBlocks4(const uint8_t* src, const uint32_t* offset,
                                                             const ShufflePlan::Entry* table, int taps, int step,
                                                             int b) {
  const __m256i a0 = ShuffleBlock<T, Sliding>(src, offset, table, taps, step, b);
  const __m256i a1 = ShuffleBlock<T, Sliding>(src, offset, table, taps, step, b + 1);
  const __m256i a2 = ShuffleBlock<T, Sliding>(src, offset, table, taps, step, b + 2);
  const __m256i a3 = ShuffleBlock<T, Sliding>(src, offset, table, taps, step, b + 3);
  // packs/packus work within 128-bit halves; the permutation puts the groups
  // back in order (as in VerticalAvx2).
  const __m256i p01 = _mm256_packs_epi32(_mm256_srai_epi32(a0, kPrecisionBits), _mm256_srai_epi32(a1, kPrecisionBits));
  const __m256i p23 = _mm256_packs_epi32(_mm256_srai_epi32(a2, kPrecisionBits), _mm256_srai_epi32(a3, kPrecisionBits));
  return _mm256_permutevar8x32_epi32(_mm256_packus_epi16(p01, p23), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// One output row. Every load reads below src + p.load_end: the caller gives
// a row with that much room.
template <int T, bool Sliding>
void ShuffleRow(const uint8_t* src, const ShufflePlan& p, uint8_t* dst) {
  // Locals: the stores below may alias anything, so nothing of `p` is
  // re-read inside the loop.
  const uint32_t* offset = p.offset.data();
  const ShufflePlan::Entry* table = p.table.data();
  const int taps = p.taps, samples = p.samples, blocks = p.blocks, step = Sliding ? p.channels : 0;
  const int full = samples / 32 * 4;  // blocks whose 32 bytes all lie in the row
  int b = 0;
  for (; b < full; b += 4) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 8 * b),
                        ShuffleBlocks4<T, Sliding>(src, offset, table, taps, step, b));
  }
  if (b < blocks) {  // the row's last, partial 32 bytes
    alignas(32) uint8_t tail[32];
    _mm256_store_si256(reinterpret_cast<__m256i*>(tail), ShuffleBlocks4<T, Sliding>(src, offset, table, taps, step, b));
    std::memcpy(dst + 8 * b, tail, static_cast<size_t>(samples - 8 * b));
  }
}

using ShuffleRowFn = void (*)(const uint8_t*, const ShufflePlan&, uint8_t*);

// The tap loop unrolled for the common tap counts (bilinear: 2 or 3 when
// shrinking by less than 1.3, up to 6 for a random-resized crop).
template <bool Sliding>
ShuffleRowFn PickShuffleRow(int taps) {
  switch (taps) {
    case 1:
      return ShuffleRow<1, Sliding>;
    case 2:
      return ShuffleRow<2, Sliding>;
    case 3:
      return ShuffleRow<3, Sliding>;
    case 4:
      return ShuffleRow<4, Sliding>;
    case 5:
      return ShuffleRow<5, Sliding>;
    case 6:
      return ShuffleRow<6, Sliding>;
    default:
      return ShuffleRow<0, Sliding>;
  }
}

void HorizontalShuffle(const uint8_t* in, int in_w, int in_h, int channels, int y0, int rows, const ShufflePlan& p,
                       uint8_t* out) {
  const size_t in_stride = static_cast<size_t>(in_w) * channels;
  const size_t out_stride = static_cast<size_t>(p.samples);
  const size_t in_size = in_stride * static_cast<size_t>(in_h);
  const ShuffleRowFn row_fn =
      p.layout == ShufflePlan::Layout::kSliding ? PickShuffleRow<true>(p.taps) : PickShuffleRow<false>(p.taps);
  thread_local std::vector<uint8_t> padded;
  for (int y = 0; y < rows; ++y) {
    const size_t at = static_cast<size_t>(y0 + y) * in_stride;
    const uint8_t* src = in + at;
    if (at + p.load_end > in_size) {  // loads would run past the image: copy the row with room
      padded.assign(std::max(in_stride, p.load_end), 0);
      std::memcpy(padded.data(), src, in_stride);
      src = padded.data();
    }
    row_fn(src, p, out + y * out_stride);
  }
}

template <int C>
void HorizontalPairs(const uint8_t* in, int in_w, int in_h, int y0, int rows, const PairPlan& p, int out_w,
                     uint8_t* out) {
  static_assert(C == 3 || C == 4);
  thread_local std::vector<uint8_t> last_row;
  const size_t in_stride = static_cast<size_t>(in_w) * C;
  const size_t out_stride = static_cast<size_t>(out_w) * C;
  auto source_row = [&](int y) {
    const uint8_t* src = in + static_cast<size_t>(y0 + y) * in_stride;
    if (C == 3 && y0 + y == in_h - 1) {
      // RGB loads read 4 bytes per pixel: give the image's last row a byte
      // of slack rather than read past the buffer.
      last_row.assign(src, src + in_stride);
      last_row.push_back(0);
      src = last_row.data();
    }
    return src;
  };
  int y = 0;
  for (; y + 2 <= rows; y += 2) {
    const uint8_t* src[2] = {source_row(y), source_row(y + 1)};
    uint8_t* dst[2] = {out + y * out_stride, out + (y + 1) * out_stride};
    for (int g = 0; g < p.pairs; ++g) PairRows<C, 2>(src, p, g, out_w, dst);
  }
  if (y < rows) {
    const uint8_t* src[1] = {source_row(y)};
    uint8_t* dst[1] = {out + y * out_stride};
    for (int g = 0; g < p.pairs; ++g) PairRows<C, 1>(src, p, g, out_w, dst);
  }
}

}  // namespace

void HorizontalAvx2(const uint8_t* in, int in_w, int in_h, int channels, int y0, int rows, const Coeffs& cf, int out_w,
                    uint8_t* out) {
  thread_local ShufflePlan shuffle;
  if (!SameCoeffs(shuffle, cf, channels, in_w, out_w)) MakeShufflePlan(cf, channels, in_w, out_w, &shuffle);
  if (shuffle.layout != ShufflePlan::Layout::kNone) {
    HorizontalShuffle(in, in_w, in_h, channels, y0, rows, shuffle, out);
    return;
  }
  if (channels < 3) {
    HorizontalReference8(in, in_w, in_h, channels, y0, rows, cf, out_w, out);
    return;
  }
  thread_local PairPlan plan;
  MakePairPlan(cf, in_w, out_w, &plan);
  if (channels == 3) {
    HorizontalPairs<3>(in, in_w, in_h, y0, rows, plan, out_w, out);
  } else {
    HorizontalPairs<4>(in, in_w, in_h, y0, rows, plan, out_w, out);
  }
}

void VerticalAvx2(const uint8_t* in, size_t stride, const Coeffs& cf, int row_offset, int out_h, uint8_t* out) {
  const __m256i half = _mm256_set1_epi32(1 << (kPrecisionBits - 1));
  // packs/packus work within 128-bit halves; this puts the 8-sample groups
  // back in order.
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  auto widen = [](const uint8_t* p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  };
  for (int y = 0; y < out_h; ++y) {
    const int32_t* k = &cf.weights[static_cast<size_t>(y) * cf.ksize];
    const uint8_t* s = in + static_cast<size_t>(cf.first[y] - row_offset) * stride;
    const int n = cf.count[y];
    uint8_t* d = out + static_cast<size_t>(y) * stride;
    size_t x = 0;
    for (; x + 32 <= stride; x += 32) {
      __m256i a0 = half, a1 = half, a2 = half, a3 = half;
      for (int i = 0; i < n; ++i) {
        const __m256i kk = _mm256_set1_epi32(k[i]);
        const uint8_t* r = s + i * stride + x;
        a0 = _mm256_add_epi32(a0, _mm256_mullo_epi32(widen(r), kk));
        a1 = _mm256_add_epi32(a1, _mm256_mullo_epi32(widen(r + 8), kk));
        a2 = _mm256_add_epi32(a2, _mm256_mullo_epi32(widen(r + 16), kk));
        a3 = _mm256_add_epi32(a3, _mm256_mullo_epi32(widen(r + 24), kk));
      }
      const __m256i p01 =
          _mm256_packs_epi32(_mm256_srai_epi32(a0, kPrecisionBits), _mm256_srai_epi32(a1, kPrecisionBits));
      const __m256i p23 =
          _mm256_packs_epi32(_mm256_srai_epi32(a2, kPrecisionBits), _mm256_srai_epi32(a3, kPrecisionBits));
      const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(p01, p23), order);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + x), bytes);
    }
    for (; x + 8 <= stride; x += 8) {
      __m256i a = half;
      for (int i = 0; i < n; ++i) {
        a = _mm256_add_epi32(a, _mm256_mullo_epi32(widen(s + i * stride + x), _mm256_set1_epi32(k[i])));
      }
      a = _mm256_srai_epi32(a, kPrecisionBits);
      const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(d + x), _mm_packus_epi16(w16, w16));
    }
    for (; x < stride; ++x) {
      int32_t acc = 1 << (kPrecisionBits - 1);
      for (int i = 0; i < n; ++i) acc += static_cast<int32_t>(s[i * stride + x]) * k[i];
      acc >>= kPrecisionBits;
      d[x] = static_cast<uint8_t>(acc < 0 ? 0 : acc > 255 ? 255 : acc);
    }
  }
}

#else  // !__x86_64__

bool CpuHasAvx2() { return false; }
void HorizontalAvx2(const uint8_t* in, int in_w, int in_h, int channels, int y0, int rows, const Coeffs& cf, int out_w,
                    uint8_t* out) {
  HorizontalReference8(in, in_w, in_h, channels, y0, rows, cf, out_w, out);
}
void VerticalAvx2(const uint8_t* in, size_t stride, const Coeffs& cf, int row_offset, int out_h, uint8_t* out) {
  VerticalReference8(in, stride, cf, row_offset, out_h, out);
}

#endif

}  // namespace libshard::image::internal
