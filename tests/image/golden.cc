#include "golden.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "testutil.h"

namespace libshard::testing {

std::string GoldenPath(const std::string& name) { return SourceDir() + "/tests/image/golden/" + name; }

std::map<std::string, GoldenEntry> LoadGoldenSet(const std::string& set) {
  std::map<std::string, GoldenEntry> out;
  const std::string tsv = ReadFileOrDie(GoldenPath(set + ".tsv"));
  const std::string zz = ReadFileOrDie(GoldenPath(set + ".bin.zz"));
  if (tsv.empty() || zz.empty()) return out;
  std::vector<uint8_t> blob(64 << 20);
  uLongf blob_size = blob.size();
  if (uncompress(blob.data(), &blob_size, reinterpret_cast<const Bytef*>(zz.data()), zz.size()) != Z_OK) {
    ADD_FAILURE() << "cannot inflate golden " << set;
    return {};
  }
  std::istringstream lines(tsv);
  std::string line;
  std::getline(lines, line);  // header
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::istringstream f(line);
    std::string name;
    GoldenEntry e;
    size_t offset = 0;
    std::getline(f, name, '\t');
    f >> e.width >> e.height >> e.channels >> e.block >> e.tolerance >> offset;
    const size_t bw = (e.width + e.block - 1) / e.block, bh = (e.height + e.block - 1) / e.block;
    const size_t n = bw * bh * e.channels;
    if (offset + n > blob_size) {
      ADD_FAILURE() << "golden " << set << ": entry " << name << " past the blob";
      return {};
    }
    e.values.assign(blob.begin() + offset, blob.begin() + offset + n);
    out[name] = std::move(e);
  }
  return out;
}

std::vector<uint8_t> BlockMeans(const image::Image& img, int block) {
  const int c = img.channels();
  const int bw = (img.width() + block - 1) / block, bh = (img.height() + block - 1) / block;
  std::vector<uint8_t> out(static_cast<size_t>(bw) * bh * c);
  for (int by = 0; by < bh; ++by) {
    for (int bx = 0; bx < bw; ++bx) {
      for (int k = 0; k < c; ++k) {
        double sum = 0;
        int n = 0;
        for (int y = by * block; y < std::min(img.height(), (by + 1) * block); ++y) {
          for (int x = bx * block; x < std::min(img.width(), (bx + 1) * block); ++x) {
            sum += img.row(y)[x * c + k];
            ++n;
          }
        }
        out[(static_cast<size_t>(by) * bw + bx) * c + k] = static_cast<uint8_t>(std::floor(sum / n + 0.5));
      }
    }
  }
  return out;
}

Diff Compare(const image::Image& img, const GoldenEntry& g) {
  Diff d;
  if (img.width() != g.width || img.height() != g.height || img.bit_depth() != 8) return d;
  d.same_shape = true;
  const std::vector<uint8_t> mine =
      g.block > 1 ? BlockMeans(img, g.block) : std::vector<uint8_t>(img.data(), img.data() + img.byte_size());
  const int c = std::min(img.channels(), g.channels);
  const size_t pixels = mine.size() / img.channels();
  double sum = 0;
  for (size_t i = 0; i < pixels; ++i) {
    for (int k = 0; k < c; ++k) {
      const int diff = std::abs(int(mine[i * img.channels() + k]) - int(g.values[i * g.channels + k]));
      d.max_abs = std::max(d.max_abs, diff);
      sum += diff;
    }
  }
  d.mean_abs = pixels ? sum / (pixels * c) : 0;
  return d;
}

bool PatchExifOrientation(std::string* jpeg, int value) {
  const std::string be("\x01\x12\x00\x03", 4), le("\x12\x01\x03\x00", 4);
  size_t p = jpeg->find(be);
  if (p != std::string::npos) {
    (*jpeg)[p + 8] = static_cast<char>(value >> 8);
    (*jpeg)[p + 9] = static_cast<char>(value & 0xFF);
    return true;
  }
  p = jpeg->find(le);
  if (p != std::string::npos) {
    (*jpeg)[p + 8] = static_cast<char>(value & 0xFF);
    (*jpeg)[p + 9] = static_cast<char>(value >> 8);
    return true;
  }
  return false;
}

}  // namespace libshard::testing
