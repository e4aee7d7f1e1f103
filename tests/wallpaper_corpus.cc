#include "wallpaper_corpus.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "libshard/image/decode.h"
#include "libshard/image/resize.h"
#include "libshard/io/open_file.h"
#include "libshard/util/random.h"
#include "photo_testutil.h"

namespace libshard::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kShortSide = 1440;  // each wallpaper's shorter side once reduced
constexpr int kMinSide = 100, kMaxSide = 360;
constexpr double kMaxOverlap = 0.25;  // of the smaller crop's area
constexpr double kMinDetail = 6.0;    // gray levels (DetailOf)

struct Rect {
  int x, y, w, h;
};

double OverlapOf(const Rect& a, const Rect& b) {
  const int w = std::min(a.x + a.w, b.x + b.w) - std::max(a.x, b.x);
  const int h = std::min(a.y + a.h, b.y + b.h) - std::max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0;
  return static_cast<double>(w) * h / std::min(static_cast<double>(a.w) * a.h, static_cast<double>(b.w) * b.h);
}

// The file of one wallpaper to decode: the smallest whose shorter side is at
// least kShortSide (names are "WIDTHxHEIGHT.ext"), else the largest.
std::string FileOf(const fs::path& images) {
  std::string best;
  int64_t best_area = 0;
  bool best_big = false;
  std::error_code ec;
  for (fs::directory_iterator f(images, ec), end; !ec && f != end; f.increment(ec)) {
    const std::string ext = f->path().extension().string();
    if (ext != ".png" && ext != ".jpg") continue;
    int w = 0, h = 0;
    if (std::sscanf(f->path().stem().c_str(), "%dx%d", &w, &h) != 2) continue;
    const int64_t area = int64_t{w} * h;
    const bool big = std::min(w, h) >= kShortSide;
    const bool better = best.empty() || (big && !best_big) ||
                        (big == best_big && (big ? area < best_area : area > best_area)) ||
                        (big == best_big && area == best_area && f->path().string() < best);
    if (better) {
      best = f->path().string();
      best_area = area;
      best_big = big;
    }
  }
  return best;
}

StatusOr<image::Image> Reduced(const std::string& file) {
  LIBSHARD_ASSIGN_OR_RETURN(std::string bytes, io::ReadFileToString(file, 256 << 20));
  image::DecodeOptions o;
  o.max_pixels = uint64_t{1} << 26;
  int w = 0, h = 0;
  std::sscanf(fs::path(file).stem().c_str(), "%dx%d", &w, &h);
  for (int s = 8; s > 1; s /= 2) {
    if (std::min(w, h) / s >= kShortSide) {
      o.jpeg_scale_denom = s;
      break;
    }
  }
  LIBSHARD_ASSIGN_OR_RETURN(image::Image img, image::DecodeImage(bytes, o));
  const double f = static_cast<double>(kShortSide) / std::min(img.width(), img.height());
  if (f >= 1) return img;
  return image::Resize(img, static_cast<int>(std::lround(img.width() * f)),
                       static_cast<int>(std::lround(img.height() * f)), image::Filter::kBox);
}

}  // namespace

std::string WallpaperDir() {
  const char* dir = std::getenv("LIBSHARD_WALLPAPERS_DIR");
  return dir && *dir ? dir : "/usr/share/wallpapers";
}

bool WallpapersRequired() {
  const char* v = std::getenv("LOCAL_WALLPAPERS_REQUIRED");
  return v && std::string(v) == "1";
}

double DetailOf(const image::Image& img) {
  StatusOr<image::Image> small = image::Resize(img, 32, 32, image::Filter::kBox);
  if (!small.ok()) return 0;
  double v[32][32], mean = 0;
  for (int y = 0; y < 32; ++y) {
    for (int x = 0; x < 32; ++x) {
      const uint8_t* p = small->row(y) + x * small->channels();
      v[y][x] = small->channels() >= 3 ? (77.0 * p[0] + 150.0 * p[1] + 29.0 * p[2]) / 256 : p[0];
      mean += v[y][x] / 1024;
    }
  }
  // The plane's slopes (x and y centred on the grid are orthogonal).
  double sx = 0, sy = 0, ss = 0;
  for (int y = 0; y < 32; ++y) {
    for (int x = 0; x < 32; ++x) {
      sx += v[y][x] * (x - 15.5);
      sy += v[y][x] * (y - 15.5);
    }
  }
  for (int i = 0; i < 32; ++i) ss += 32 * (i - 15.5) * (i - 15.5);
  double residual = 0;
  for (int y = 0; y < 32; ++y) {
    for (int x = 0; x < 32; ++x) {
      const double r = v[y][x] - mean - sx / ss * (x - 15.5) - sy / ss * (y - 15.5);
      residual += r * r / 1024;
    }
  }
  return std::sqrt(residual);
}

StatusOr<std::vector<CorpusImage>> WallpaperCrops(int count, uint64_t seed) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(WallpaperDir(), ec), end; !ec && it != end; it.increment(ec)) {
    if (!FileOf(it->path() / "contents" / "images").empty()) names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  if (names.size() < 20) {
    return NotFoundError(WallpaperDir() + ": " + std::to_string(names.size()) +
                         " wallpapers (plasma-workspace-wallpapers not installed?)");
  }
  std::vector<image::Image> walls;
  for (const std::string& n : names) {
    LIBSHARD_ASSIGN_OR_RETURN(image::Image img, Reduced(FileOf(fs::path(WallpaperDir()) / n / "contents" / "images")));
    walls.push_back(std::move(img));
  }
  std::vector<std::vector<Rect>> taken(walls.size());
  std::vector<bool> exhausted(walls.size(), false);
  std::vector<CorpusImage> out;
  util::SplitMix64 rng(seed);
  size_t live = walls.size();
  for (size_t w = 0; static_cast<int>(out.size()) < count && live > 0; w = (w + 1) % walls.size()) {
    if (exhausted[w]) continue;
    const image::Image& wall = walls[w];
    bool found = false;
    for (int attempt = 0; attempt < 400 && !found; ++attempt) {
      Rect r;
      r.w = kMinSide + static_cast<int>(rng.Below(kMaxSide - kMinSide + 1));
      r.h = std::clamp(static_cast<int>(r.w * (0.6 + 0.9 * rng.Uniform())), kMinSide, kMaxSide);
      if (r.w > wall.width() || r.h > wall.height()) continue;
      r.x = static_cast<int>(rng.Below(wall.width() - r.w + 1));
      r.y = static_cast<int>(rng.Below(wall.height() - r.h + 1));
      if (std::any_of(taken[w].begin(), taken[w].end(), [&](const Rect& t) { return OverlapOf(r, t) > kMaxOverlap; })) {
        continue;
      }
      image::Image crop = CropOf(wall, r.x, r.y, r.w, r.h);
      if (DetailOf(crop) < kMinDetail) continue;
      taken[w].push_back(r);
      char name[160];
      std::snprintf(name, sizeof name, "%s %d,%d %dx%d", names[w].c_str(), r.x, r.y, r.w, r.h);
      out.push_back({name, std::move(crop)});
      found = true;
    }
    if (!found) {
      exhausted[w] = true;
      --live;
    }
  }
  if (static_cast<int>(out.size()) < count) {
    return FailedPreconditionError(WallpaperDir() + ": " + std::to_string(walls.size()) + " wallpapers give only " +
                                   std::to_string(out.size()) + " distinct crops, not " + std::to_string(count));
  }
  return out;
}

}  // namespace libshard::testing
