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

// The binary fields' sizes (ImageHash.pixels_key, ImageHash.regions,
// ImageHash.region_tones).
constexpr size_t kKeyBytes = 32;
constexpr size_t kRegionBytes = image::kHashRegions * (8 + sizeof(image::DetailHash));
constexpr size_t kToneBytes = image::kHashRegions * 4;
constexpr size_t kColourBytes = 3;
constexpr size_t kMirrorBytes = 8 + sizeof(image::DetailHash);

bool IsHex(const std::string& s, size_t digits) {
  return s.size() == digits && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
         });
}

// The value of hex digit `c` (checked by IsHex).
int Nibble(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

// The 64-bit words of `hex` (16 digits each; checked by IsHex).
uint64_t Word(const std::string& hex, size_t index) {
  return std::strtoull(hex.substr(index * 16, 16).c_str(), nullptr, 16);
}

std::string HexWord(uint64_t w) {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(w));
  return hex;
}

// Little-endian words of the binary fields.
void PutWord(uint64_t w, std::string* out) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(w >> (8 * i)));
}
uint64_t GetWord(const std::string& bytes, size_t at) {
  uint64_t w = 0;
  for (int i = 7; i >= 0; --i) w = w << 8 | static_cast<unsigned char>(bytes[at + i]);
  return w;
}

std::string LowerHex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : bytes) {
    hex.push_back(kDigits[c >> 4]);
    hex.push_back(kDigits[c & 15]);
  }
  return hex;
}

// Little-endian 16-bit halves of ImageHash.region_tones.
void PutHalf(uint16_t v, std::string* out) {
  out->push_back(static_cast<char>(v & 0xff));
  out->push_back(static_cast<char>(v >> 8));
}
uint16_t GetHalf(const std::string& bytes, size_t at) {
  return static_cast<uint16_t>(static_cast<unsigned char>(bytes[at]) | static_cast<unsigned char>(bytes[at + 1]) << 8);
}

// The fingerprint of an entry in the binary form (sizes checked); without
// tones (an entry written before them), has_tone false.
void FromBinary(const ImageHash& h, ImageFingerprint* f) {
  f->key_sha256 = LowerHex(h.pixels_key());
  constexpr size_t kDetailAt = image::kHashRegions * 8;
  for (int r = 0; r < image::kHashRegions; ++r) {
    f->hashes.phash[r] = GetWord(h.regions(), 8 * r);
    for (int w = 0; w < 4; ++w) f->hashes.detail[r][w] = GetWord(h.regions(), kDetailAt + 32 * r + 8 * w);
  }
  f->has_colour = h.colour().size() == kColourBytes;
  if (f->has_colour) {
    for (size_t c = 0; c < kColourBytes; ++c) f->colour[c] = static_cast<uint8_t>(h.colour()[c]);
  }
  f->has_mirror = h.mirror().size() == kMirrorBytes;
  if (f->has_mirror) {
    f->hashes.mirror = GetWord(h.mirror(), 0);
    for (int w = 0; w < 4; ++w) f->hashes.mirror_detail[w] = GetWord(h.mirror(), 8 + 8 * w);
  }
  f->has_tone = !h.region_tones().empty();
  if (!f->has_tone) return;
  for (int r = 0; r < image::kHashRegions; ++r) {
    f->hashes.tone[r].mean = GetHalf(h.region_tones(), 4 * r);
    f->hashes.tone[r].contrast = GetHalf(h.region_tones(), 4 * r + 2);
  }
}

// The fingerprint of an entry in the hex form of an older libshard (checked
// by the caller): an entry without a centre hash, or without the other
// regions and the detail, gives the regions it has and no detail (the
// 64-bit stage alone decides).
void FromHex(const ImageHash& h, ImageFingerprint* f) {
  constexpr int kRegions = image::kHashRegions;
  const bool has_regions = !h.region_phashes().empty() || !h.detail_hashes().empty();
  f->key_sha256 = h.pixels_sha256();
  for (char& c : f->key_sha256) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  f->hashes.phash[0] = Word(h.phash(), 0);
  f->regions = h.centre_phash().empty() ? 1 : has_regions ? kRegions : 2;
  f->has_detail = has_regions;
  f->has_tone = false;  // the hex form predates the tones
  f->has_colour = false;
  f->has_mirror = false;
  if (f->regions > 1) f->hashes.phash[1] = Word(h.centre_phash(), 0);
  if (!has_regions) return;
  for (int r = 2; r < kRegions; ++r) f->hashes.phash[r] = Word(h.region_phashes(), r - 2);
  for (int r = 0; r < kRegions; ++r) {
    for (int w = 0; w < 4; ++w) f->hashes.detail[r][w] = Word(h.detail_hashes(), 4 * r + w);
  }
}

}  // namespace

Status AppendDuplicateImages(const ShardEntry& e, std::vector<DuplicateImage>* out) {
  constexpr int kRegions = image::kHashRegions;
  for (int i = 0; i < e.image_hashes_size(); ++i) {
    const ImageHash& h = e.image_hashes(i);
    const std::string which = "shard " + e.file() + ": image hash " + std::to_string(i);
    DuplicateImage img;
    img.split = e.split();
    img.file = h.path();
    if (!h.pixels_key().empty() || !h.regions().empty() || !h.region_tones().empty() || !h.colour().empty() ||
        !h.mirror().empty()) {
      if (h.pixels_key().size() != kKeyBytes || h.regions().size() != kRegionBytes) {
        return InvalidArgumentError(which + " has a " + std::to_string(h.pixels_key().size()) + "-byte key and " +
                                    std::to_string(h.regions().size()) + " bytes of region hashes, not " +
                                    std::to_string(kKeyBytes) + " and " + std::to_string(kRegionBytes));
      }
      if (!h.region_tones().empty() && h.region_tones().size() != kToneBytes) {
        return InvalidArgumentError(which + " has " + std::to_string(h.region_tones().size()) +
                                    " bytes of region tones, not " + std::to_string(kToneBytes));
      }
      if (!h.colour().empty() && h.colour().size() != kColourBytes) {
        return InvalidArgumentError(which + " has " + std::to_string(h.colour().size()) + " bytes of colour, not " +
                                    std::to_string(kColourBytes));
      }
      if (!h.mirror().empty() && h.mirror().size() != kMirrorBytes) {
        return InvalidArgumentError(which + " has " + std::to_string(h.mirror().size()) +
                                    " bytes of mirrored hashes, not " + std::to_string(kMirrorBytes));
      }
      FromBinary(h, &img.fingerprint);
    } else {
      const bool has_regions = !h.region_phashes().empty() || !h.detail_hashes().empty();
      if (!IsHex(h.pixels_sha256(), 64) || !IsHex(h.phash(), 16) ||
          !(h.centre_phash().empty() ? !has_regions : IsHex(h.centre_phash(), 16)) ||
          (has_regions &&
           (!IsHex(h.region_phashes(), 16 * (kRegions - 2)) || !IsHex(h.detail_hashes(), 64 * kRegions)))) {
        return InvalidArgumentError(which +
                                    " is not a 64-digit SHA-256, 16-digit hashes and region and detail hashes in hex");
      }
      FromHex(h, &img.fingerprint);
    }
    out->push_back(std::move(img));
  }
  return Status::OK();
}

StatusOr<std::vector<DuplicateImage>> TakeDuplicateImages(Manifest* manifest, uint64_t* missing) {
  size_t count = 0;
  for (const SplitEntry& split : manifest->splits()) {
    for (const ShardEntry& e : split.shards()) count += static_cast<size_t>(e.image_hashes_size());
  }
  std::vector<DuplicateImage> images;
  images.reserve(count);  // no doubling: at 10^5 images 131,072 slots and a copy of them while it grew
  *missing = 0;
  for (SplitEntry& split : *manifest->mutable_splits()) {
    for (ShardEntry& e : *split.mutable_shards()) {
      if (e.image_hashes().empty() && e.records() > 0) ++*missing;
      LIBSHARD_RETURN_IF_ERROR(AppendDuplicateImages(e, &images));
      // Freed, not cleared: a cleared repeated field keeps its messages for reuse.
      google::protobuf::RepeatedPtrField<ImageHash>().Swap(e.mutable_image_hashes());
    }
  }
  return images;
}

ImageHash ImageHashOf(const std::string& escaped_path, const ImageFingerprint& f) {
  ImageHash h;
  h.set_path(escaped_path);
  if (f.regions == image::kHashRegions && f.has_detail && IsHex(f.key_sha256, 2 * kKeyBytes)) {
    std::string key(kKeyBytes, '\0'), regions;
    regions.reserve(kRegionBytes);
    for (size_t i = 0; i < kKeyBytes; ++i) {
      key[i] = static_cast<char>(Nibble(f.key_sha256[2 * i]) << 4 | Nibble(f.key_sha256[2 * i + 1]));
    }
    for (uint64_t w : f.hashes.phash) PutWord(w, &regions);
    for (const image::DetailHash& d : f.hashes.detail) {
      for (uint64_t w : d) PutWord(w, &regions);
    }
    h.set_pixels_key(key);
    h.set_regions(regions);
    if (f.has_tone) {
      std::string tones;
      tones.reserve(kToneBytes);
      for (const image::RegionTone& t : f.hashes.tone) {
        PutHalf(t.mean, &tones);
        PutHalf(t.contrast, &tones);
      }
      h.set_region_tones(tones);
    }
    if (f.has_colour) h.set_colour(std::string(f.colour.begin(), f.colour.end()));
    if (f.has_mirror) {
      std::string mirror;
      mirror.reserve(kMirrorBytes);
      PutWord(f.hashes.mirror, &mirror);
      for (uint64_t w : f.hashes.mirror_detail) PutWord(w, &mirror);
      h.set_mirror(mirror);
    }
    return h;
  }
  // An older entry's fingerprint, in its hex form as it was.
  h.set_pixels_sha256(f.key_sha256);
  h.set_phash(HexWord(f.hashes.phash[0]));
  if (f.regions > 1) h.set_centre_phash(HexWord(f.hashes.phash[1]));
  if (f.regions < image::kHashRegions || !f.has_detail) return h;
  std::string regions, detail;
  for (int r = 2; r < image::kHashRegions; ++r) regions += HexWord(f.hashes.phash[r]);
  for (const image::DetailHash& d : f.hashes.detail) {
    for (uint64_t w : d) detail += HexWord(w);
  }
  h.set_region_phashes(regions);
  h.set_detail_hashes(detail);
  return h;
}

Status CheckLeaks(const std::string& output_dir, LeakMode mode, int max_distance, bool sync, Manifest* manifest,
                  uint64_t* missing) {
  *missing = 0;
  if (mode == LeakMode::kOff) {  // no pairs: no list of an earlier run either
    const std::string old = output_dir + "/duplicates.tsv";
    ::unlink(old.c_str());
    for (SplitEntry& split : *manifest->mutable_splits()) {
      for (ShardEntry& e : *split.mutable_shards()) e.clear_image_hashes();
    }
    return Status::OK();
  }
  // Takes the hashes out of the entries (what the manifest must not keep).
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<DuplicateImage> images, TakeDuplicateImages(manifest, missing));
  const DuplicateReport report = FindDuplicates(images, max_distance);
  LIBSHARD_RETURN_IF_ERROR(
      io::WriteFileAtomically(output_dir + "/duplicates.tsv", DuplicatesTsv(images, report), sync));
  auto clamp32 = [](uint64_t n) { return static_cast<uint32_t>(std::min<uint64_t>(n, UINT32_MAX)); };
  DuplicateCounts* counts = manifest->mutable_duplicates();
  counts->set_within(clamp32(report.within));
  counts->set_leaks(clamp32(report.leaks));
  counts->set_leaked_images(clamp32(report.leaked_images));
  for (const auto& [split, leaked] : report.leaked_by_split) (*counts->mutable_leaked_by_split())[split] = clamp32(leaked);
  counts->set_incomplete(report.search_cut);
  counts->set_truncated(report.truncated);
  for (const CopyGroup& g : report.largest) {
    CopyGroupEntry* e = counts->add_largest_groups();
    e->set_split(images[g.first].split);
    e->set_file(images[g.first].file);
    e->set_copies(clamp32(g.copies));
  }
  return Status::OK();
}

}  // namespace libshard::convert
