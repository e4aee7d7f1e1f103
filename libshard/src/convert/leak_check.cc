// The leak check of a manifest (duplicates.h): the fingerprints out of the
// shard entries, the pairs, duplicates.tsv and the counts.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "libshard/convert/duplicates.h"
#include "libshard/io/writable_file.h"

namespace libshard::convert {
namespace {

bool IsHex(const std::string& s, size_t digits) {
  return s.size() == digits && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
         });
}

}  // namespace

Status AppendDuplicateImages(const ShardEntry& e, std::vector<DuplicateImage>* out) {
  for (int i = 0; i < e.image_hashes_size(); ++i) {
    const ImageHash& h = e.image_hashes(i);
    if (!IsHex(h.pixels_sha256(), 64) || !IsHex(h.phash(), 16) ||
        !(h.centre_phash().empty() || IsHex(h.centre_phash(), 16))) {
      return InvalidArgumentError("shard " + e.file() + ": image hash " + std::to_string(i) +
                                  " is not a 64-digit SHA-256 and 16-digit hashes in hex");
    }
    DuplicateImage img;
    img.split = e.split();
    img.file = h.path();
    img.fingerprint.pixels_sha256 = h.pixels_sha256();
    for (char& c : img.fingerprint.pixels_sha256) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    img.fingerprint.phash = std::strtoull(h.phash().c_str(), nullptr, 16);
    // An entry of an older libshard has no centre hash: the whole one stands in.
    img.fingerprint.centre_phash =
        h.centre_phash().empty() ? img.fingerprint.phash : std::strtoull(h.centre_phash().c_str(), nullptr, 16);
    out->push_back(std::move(img));
  }
  return Status::OK();
}

StatusOr<std::vector<DuplicateImage>> DuplicateImagesOf(const Manifest& manifest, uint64_t* missing) {
  std::vector<DuplicateImage> images;
  *missing = 0;
  for (const SplitEntry& split : manifest.splits()) {
    for (const ShardEntry& e : split.shards()) {
      if (e.image_hashes().empty() && e.records() > 0) ++*missing;
      LIBSHARD_RETURN_IF_ERROR(AppendDuplicateImages(e, &images));
    }
  }
  return images;
}

ImageHash ImageHashOf(const std::string& escaped_path, const ImageFingerprint& fingerprint) {
  ImageHash h;
  h.set_path(escaped_path);
  h.set_pixels_sha256(fingerprint.pixels_sha256);
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(fingerprint.phash));
  h.set_phash(hex);
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(fingerprint.centre_phash));
  h.set_centre_phash(hex);
  return h;
}

Status CheckLeaks(const std::string& output_dir, LeakMode mode, int max_distance, bool sync, Manifest* manifest,
                  uint64_t* missing) {
  *missing = 0;
  auto strip = [manifest] {
    for (SplitEntry& split : *manifest->mutable_splits()) {
      for (ShardEntry& e : *split.mutable_shards()) e.clear_image_hashes();
    }
  };
  if (mode == LeakMode::kOff) {  // no pairs: no list of an earlier run either
    const std::string old = output_dir + "/duplicates.tsv";
    ::unlink(old.c_str());
    strip();
    return Status::OK();
  }
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<DuplicateImage> images, DuplicateImagesOf(*manifest, missing));
  const DuplicateReport report = FindDuplicates(images, max_distance);
  LIBSHARD_RETURN_IF_ERROR(
      io::WriteFileAtomically(output_dir + "/duplicates.tsv", DuplicatesTsv(images, report), sync));
  auto clamp32 = [](uint64_t n) { return static_cast<uint32_t>(std::min<uint64_t>(n, UINT32_MAX)); };
  manifest->mutable_duplicates()->set_within(clamp32(report.within));
  manifest->mutable_duplicates()->set_leaks(clamp32(report.leaks));
  strip();
  return Status::OK();
}

}  // namespace libshard::convert
