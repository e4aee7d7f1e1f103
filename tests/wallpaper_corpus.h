// A corpus of real, distinct pictures for the leak check's accuracy: the
// wallpapers of Debian's plasma-workspace-wallpapers cut into crops of
// different regions and sizes, deterministic. Each wallpaper is decoded once,
// reduced so that its shorter side is 1,000 pixels; crops of one wallpaper
// overlap by at most a quarter of the smaller one's area, and crops with no
// detail (a plain background or a smooth gradient: nothing a perceptual hash
// can tell apart) are left out.
#ifndef LIBSHARD_TESTS_WALLPAPER_CORPUS_H_
#define LIBSHARD_TESTS_WALLPAPER_CORPUS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "libshard/image/image.h"
#include "libshard/status.h"

namespace libshard::testing {

// The wallpapers' folder: $LIBSHARD_WALLPAPERS_DIR, else /usr/share/wallpapers.
std::string WallpaperDir();
// True under LOCAL_WALLPAPERS_REQUIRED=1 (tools/test.sh, CI): a missing
// corpus fails the tests that need it instead of skipping them.
bool WallpapersRequired();

struct CorpusImage {
  std::string name;  // "WALLPAPER x,y wxh" (the crop in the reduced wallpaper)
  image::Image pixels;
};

// `count` crops (RGB8), round robin over the wallpapers, each 100..360
// pixels a side, placed by a generator seeded with `seed` (another seed: a
// held-out set of other crops of the same wallpapers, which may overlap the
// first set's). NotFound when fewer than 20 wallpapers are installed;
// FailedPrecondition when the wallpapers cannot give `count` crops.
inline constexpr uint64_t kWallpaperSeed = 33;
StatusOr<std::vector<CorpusImage>> WallpaperCrops(int count, uint64_t seed = kWallpaperSeed);

// Detail left in `img` once its 32x32 gray means lose their best-fitting
// plane (a smooth gradient has none): the residual's standard deviation in
// gray levels.
double DetailOf(const image::Image& img);

}  // namespace libshard::testing

#endif  // LIBSHARD_TESTS_WALLPAPER_CORPUS_H_
