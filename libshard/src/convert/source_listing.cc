// What both listings share: labels, masks, the canonical order (listing_internal.h),
// and the small public helpers of source_listing.h.
#include "libshard/convert/source_listing.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "convert/listing_internal.h"
#include "libshard/io/open_file.h"
#include "libshard/text_escape.h"

namespace libshard::convert {
namespace internal {

static StatusOr<std::vector<std::string>> ReadLabelsFile(const std::string& path) {
  LIBSHARD_ASSIGN_OR_RETURN(std::string text, io::ReadFileToString(path, 64 << 20));
  text.erase(0, Utf8BomLength(text));
  std::vector<std::string> names;
  size_t pos = 0;
  int line = 0;
  std::set<std::string> seen;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string s = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    ++line;
    if (!s.empty() && s.back() == '\r') s.pop_back();
    if (s.empty()) continue;
    if (!seen.insert(s).second) {
      return InvalidArgumentError(path + ":" + std::to_string(line) + ": class '" + s + "' listed twice");
    }
    names.push_back(s);
  }
  if (names.empty()) return InvalidArgumentError(path + ": no class names");
  return names;
}

static std::string Stem(const std::string& rel) {
  size_t slash = rel.rfind('/');
  std::string base = slash == std::string::npos ? rel : rel.substr(slash + 1);
  size_t dot = base.rfind('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

std::string Dirname(const std::string& rel) {
  size_t slash = rel.rfind('/');
  return slash == std::string::npos ? "" : rel.substr(0, slash);
}

// `masks` with "{split}" replaced by `split`.
std::string MaskFolder(const std::string& masks, const std::string& split) {
  std::string out = masks;
  for (size_t at = out.find("{split}"); at != std::string::npos; at = out.find("{split}", at + split.size())) {
    out.replace(at, 7, split);
  }
  return out;
}
static bool IsFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Finds each sample's mask; samples without one become rejects.
static void ResolveMasks(const ListOptions& options, Listing* listing) {
  if (options.masks.empty()) return;
  std::vector<SourceSample> kept;
  for (SourceSample& s : listing->samples) {
    std::string stem = Stem(s.path) + options.mask_suffix;
    std::string dir = Dirname(s.path);
    const std::string masks = MaskFolder(options.masks, s.split);
    std::string found;
    for (const std::string& base : {dir.empty() ? masks : masks + "/" + dir, masks}) {
      for (const char* ext : {".png", ".PNG"}) {
        std::string candidate = base + "/" + stem + ext;
        if (IsFile(candidate)) {
          found = candidate;
          break;
        }
      }
      if (!found.empty()) break;
    }
    if (found.empty()) {
      listing->rejects.push_back({s.path, "no mask " + stem + ".png under " + masks});
    } else {
      s.mask_path = found;
      kept.push_back(std::move(s));
    }
  }
  listing->samples = std::move(kept);
}

// Applies val_fraction and label_offset, sorts samples and rejects
// canonically, fills splits.
Status FinishListing(const ListOptions& options, bool has_split_folders, Listing* listing) {
  if (!(options.val_fraction >= 0 && options.val_fraction < 1)) {
    return InvalidArgumentError("val_fraction must be in [0, 1)");
  }
  if (options.label_offset < 0 || options.label_offset > 1000000) {
    return InvalidArgumentError("label offset " + std::to_string(options.label_offset) + " is not in 0..1000000");
  }
  listing->label_offset = options.label_offset;
  for (SourceSample& s : listing->samples) {
    if (s.label < 0) continue;
    if (s.label > INT64_MAX - options.label_offset) {
      return InvalidArgumentError(s.origin + ": label " + std::to_string(s.label) + " + offset " +
                                  std::to_string(options.label_offset) + " does not fit in 64 bits");
    }
    s.label += options.label_offset;
  }
  if (options.val_fraction > 0) {
    if (has_split_folders) {
      return InvalidArgumentError("--val-fraction needs an input without split folders (train/, val/, ...)");
    }
    // 2^64 * fraction, compared as integers so the split is exact and portable.
    long double limit = static_cast<long double>(options.val_fraction) * 18446744073709551616.0L;
    for (SourceSample& s : listing->samples) {
      if (static_cast<long double>(Fnv1a64(s.path)) < limit) s.split = "val";
    }
  }
  ResolveMasks(options, listing);
  std::sort(listing->samples.begin(), listing->samples.end(), [](const SourceSample& a, const SourceSample& b) {
    return a.split != b.split ? a.split < b.split : a.path < b.path;
  });
  std::sort(listing->rejects.begin(), listing->rejects.end(),
            [](const ListingReject& a, const ListingReject& b) { return a.path < b.path; });
  std::set<std::string> splits;
  for (const SourceSample& s : listing->samples) splits.insert(s.split);
  listing->splits.assign(splits.begin(), splits.end());
  return Status::OK();
}

// Class names -> labels: from the labels file, or the sorted names seen.
StatusOr<std::map<std::string, int64_t>> LabelIndex(const ListOptions& options, const std::set<std::string>& seen,
                                                    std::vector<std::string>* names) {
  if (!options.labels_file.empty()) {
    LIBSHARD_ASSIGN_OR_RETURN(*names, ReadLabelsFile(options.labels_file));
  } else {
    names->assign(seen.begin(), seen.end());
  }
  std::map<std::string, int64_t> index;
  for (size_t i = 0; i < names->size(); ++i) {
    const std::string& name = (*names)[i];
    if (!IsValidUtf8(name)) {
      return InvalidArgumentError("class name '" + EscapeText(name) +
                                  "' is not valid UTF-8: manifest.json stores class names as text; "
                                  "rename it (e.g. convmv -f latin1 -t utf8)");
    }
    index[name] = static_cast<int64_t>(i);
  }
  return index;
}

}  // namespace internal

std::string SplitForFolderName(const std::string& name) {
  std::string l = name;
  for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (l == "train" || l == "training") return "train";
  if (l == "test" || l == "testing") return "test";
  if (l == "val" || l == "dev" || l == "development") return "val";
  if (l == "valid" || l == "validation") return l;  // the names earlier versions gave them
  return "";
}

StatusOr<FolderLayout> ParseFolderLayout(std::string_view name) {
  if (name == "auto") return FolderLayout::kAuto;
  if (name == "class") return FolderLayout::kClass;
  if (name == "split/class") return FolderLayout::kSplitClass;
  if (name == "flat") return FolderLayout::kFlat;
  return InvalidArgumentError("unknown layout '" + std::string(name) + "' (expected auto, class, split/class or flat)");
}

ListingLayout LayoutOf(const Listing& listing) {
  std::map<std::string, std::pair<std::set<int64_t>, uint64_t>> per_split;  // labels, samples
  for (const SourceSample& s : listing.samples) {
    auto& [labels, n] = per_split[s.split];
    if (s.label >= 0) labels.insert(s.label);
    ++n;
  }
  std::map<std::string, std::string> folder;  // split -> folder, where they differ
  for (const auto& [f, split] : listing.split_folders) {
    if (f != split) folder[split] = f;
  }
  ListingLayout layout;
  layout.kind = listing.layout;
  for (const auto& [split, v] : per_split) {
    SplitLayout& l = layout.splits.emplace_back();
    l.name = split;
    if (auto it = folder.find(split); it != folder.end()) l.folder = it->second;
    l.samples = v.second;
    l.classes = v.first.size();
  }
  return layout;
}

std::string LayoutSummary(const Listing& listing) {
  const ListingLayout layout = LayoutOf(listing);
  std::string out = "layout " + layout.kind + ":";
  bool first = true;
  for (const SplitLayout& l : layout.splits) {
    out += std::string(first ? " " : ", ") + "split " + l.name;
    if (!l.folder.empty()) out += " (folder " + EscapeText(l.folder) + ")";
    out += " " + std::to_string(l.samples) + " samples";
    if (l.classes > 0) out += " in " + std::to_string(l.classes) + " classes";
    first = false;
  }
  if (layout.splits.empty()) out += " no samples";
  return out;
}

std::string Extension(const std::string& rel) {
  const size_t slash = rel.rfind('/');
  const size_t start = slash == std::string::npos ? 0 : slash + 1;
  const size_t dot = rel.rfind('.');
  if (dot == std::string::npos || dot <= start || dot + 1 == rel.size()) return "";
  std::string ext = rel.substr(dot);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

bool IsImageExtension(const std::string& ext) {
  static const std::set<std::string> kImage = {
      ".jpg", ".jpeg", ".jpe", ".jfif", ".jif", ".pjpeg", ".pjp", ".png",  ".apng", ".webp", ".gif", ".bmp", ".dib",
      ".tif", ".tiff", ".ppm", ".pgm",  ".pbm", ".pnm",   ".pam", ".heic", ".heif", ".avif", ".jp2", ".j2k", ".jxl",
      ".ico", ".tga",  ".psd", ".exr",  ".hdr", ".svg",   ".dng", ".cr2",  ".nef",  ".arw",  ".raw"};
  return kImage.count(ext) > 0;
}

std::string SkipSummary(const ListingSkips& skips) {
  std::string out;
  uint64_t n = 0;
  std::vector<std::pair<std::string, uint64_t>> by_count(skips.non_image.begin(), skips.non_image.end());
  std::stable_sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string list;
  for (size_t i = 0; i < by_count.size(); ++i) {
    n += by_count[i].second;
    if (i < 8) list += (i ? ", " : "") + EscapeText(by_count[i].first) + " " + std::to_string(by_count[i].second);
  }
  if (by_count.size() > 8) list += ", ...";
  if (n > 0) out = "skipped " + std::to_string(n) + " non-image file(s): " + list;
  if (skips.excluded > 0) {
    out += (out.empty() ? "skipped " : "; ") + std::to_string(skips.excluded) + " file(s) matching --exclude";
  }
  if (skips.not_included > 0) {
    out += (out.empty() ? "skipped " : "; ") + std::to_string(skips.not_included) + " file(s) matching no --include";
  }
  return out;
}

uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string_view ClassName(const Listing& listing, int64_t label) {
  const int64_t i = label - listing.label_offset;
  if (label < 0 || i < 0 || static_cast<uint64_t>(i) >= listing.class_names.size()) return {};
  return listing.class_names[static_cast<size_t>(i)];
}

std::string SourceFilePath(const std::string& root, const std::string& path) {
  return !path.empty() && path[0] == '/' ? path : root + "/" + path;
}

StatusOr<std::string> ReadSourceBytes(const Listing& listing, const SourceSample& s, uint64_t max_bytes) {
  if (listing.source != nullptr) return listing.source->Read(s, max_bytes);
  return io::ReadFileToString(SourceFilePath(listing.root, s.path), max_bytes);
}

StatusOr<std::string> ReadMaskBytes(const Listing& listing, const SourceSample& s, uint64_t max_bytes) {
  if (listing.source != nullptr) return listing.source->ReadMask(s, max_bytes);
  return io::ReadFileToString(s.mask_path, max_bytes);
}

Status ValidateNamePart(const std::string& what, const std::string& name) {
  if (name.empty()) return InvalidArgumentError(what + " is empty");
  if (name == "." || name == "..") return InvalidArgumentError(what + " '" + name + "' is not a name");
  if (!IsValidUtf8(name)) {
    return InvalidArgumentError(what + " '" + EscapeText(name) + "' is not valid UTF-8");
  }
  for (unsigned char c : name) {
    if (c == '/') return InvalidArgumentError(what + " '" + name + "' contains '/'");
    if (c < 0x20 || c == 0x7f) {
      char code[8];
      std::snprintf(code, sizeof code, "0x%02x", c);
      return InvalidArgumentError(what + " contains the control character " + code + " (tab, newline, ...)");
    }
  }
  return Status::OK();
}

}  // namespace libshard::convert
