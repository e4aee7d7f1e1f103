// Detection annotations (annotations.h): the readers' common parts and the
// attachment of their boxes to a listing's samples.
#include "libshard/convert/annotations.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "convert/annotations_internal.h"
#include "libshard/io/open_file.h"
#include "libshard/text_escape.h"
#include "libshard/util/strings.h"

namespace libshard::convert {
namespace internal {

std::string PathInSplit(const Listing& listing, const SourceSample& s) {
  if (listing.split_folders.empty()) return s.path;
  const size_t slash = s.path.find('/');
  return slash == std::string::npos ? s.path : s.path.substr(slash + 1);
}

std::string BoxText(const ObjectBox& b) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), "[%g, %g, %g, %g]", b.xmin, b.ymin, b.xmax, b.ymax);
  return buf;
}

std::string CheckAndClamp(ObjectBox* b, double width, double height, double slack) {
  if (!std::isfinite(b->xmin) || !std::isfinite(b->ymin) || !std::isfinite(b->xmax) || !std::isfinite(b->ymax)) {
    return "box " + BoxText(*b) + " is not a number";
  }
  if (b->xmax < b->xmin || b->ymax < b->ymin) return "box " + BoxText(*b) + " has a negative size";
  if (b->xmin < -slack || b->ymin < -slack) return "box " + BoxText(*b) + " lies outside the image";
  if ((width > 0 && b->xmax > width + slack) || (height > 0 && b->ymax > height + slack)) {
    char size[64];
    std::snprintf(size, sizeof(size), "%gx%g", width, height);
    return "box " + BoxText(*b) + " lies outside the " + size + " image";
  }
  b->xmin = std::max(0.0, b->xmin);
  b->ymin = std::max(0.0, b->ymin);
  if (width > 0) b->xmax = std::min(width, b->xmax);
  if (height > 0) b->ymax = std::min(height, b->ymax);
  b->xmin = std::min(b->xmin, b->xmax);
  b->ymin = std::min(b->ymin, b->ymax);
  return "";
}

bool AnnotationFiles::Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

const std::string& AnnotationFiles::RealPath(const std::string& dir) {
  auto it = real_.find(dir);
  if (it != real_.end()) return it->second;
  char* real = ::realpath(dir.c_str(), nullptr);
  std::string r = real ? real : "";
  std::free(real);
  return real_.emplace(dir, std::move(r)).first->second;
}

AnnotationFile AnnotationFiles::Read(const std::string& path, const std::string& folder) {
  AnnotationFile f;
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) {
      f.exists = true;
      f.why = ErrnoError(path, errno).message();
    }
    return f;
  }
  f.exists = true;
  const std::string& inside = RealPath(folder);
  auto within = [&inside](const std::string& real) {
    return !inside.empty() && !real.empty() &&
           (real == inside || inside == "/" || util::StartsWith(real, inside + "/"));
  };
  // Where the bytes are: the link's target, or the file itself in its
  // folder's real path. Opened without following a link there.
  std::string target;
  if (S_ISLNK(st.st_mode)) {
    char* real = ::realpath(path.c_str(), nullptr);
    const int err = errno;
    target = real ? real : "";
    std::free(real);
    if (target.empty()) {
      f.why = err == ENOENT ? path + ": a symbolic link to nothing" : ErrnoError(path, err).message();
      return f;
    }
    if (!within(target)) {
      f.why = path + ": a symbolic link out of " + folder + " (not followed)";
      return f;
    }
  } else {
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
    const std::string& real_dir = RealPath(dir);
    if (!within(real_dir)) {
      f.why = path + ": in a folder that links out of " + folder + " (not followed)";
      return f;
    }
    target = real_dir + "/" + path.substr(slash + 1);
  }
  StatusOr<io::ScopedFd> fd = io::OpenForRead(target, nullptr, O_NOFOLLOW);
  if (!fd.ok()) {
    f.why = S_ISLNK(st.st_mode) || fd.status().code() != StatusCode::kInvalidArgument
                ? path + ": " + fd.status().message()
                : path + ": " + io::NotRegularFileReason(st.st_mode);
    return f;
  }
  std::string text(static_cast<size_t>(std::min<uint64_t>(max_bytes_ + 1, uint64_t{1} << 16)), '\0');
  size_t n = 0;
  while (true) {
    const int64_t got = io::PreadFull(fd->get(), text.data() + n, text.size() - n, n);
    if (got < 0) {
      f.why = ErrnoError(path, static_cast<int>(-got)).message();
      return f;
    }
    n += static_cast<size_t>(got);
    if (n < text.size()) break;
    if (n > max_bytes_) {
      f.why = path + ": larger than " + std::to_string(max_bytes_) + " bytes";
      return f;
    }
    text.resize(std::min<uint64_t>(max_bytes_ + 1, uint64_t{2} * text.size()));
  }
  text.resize(n);
  f.text = std::move(text);
  return f;
}

std::string TrimSpace(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

bool ParseFiniteNumber(std::string_view text, double* v) {
  const std::string trimmed = TrimSpace(text);
  std::string_view s = trimmed;
  // Decimal only, as ultralytics and detectron2 read these files: no hex
  // ("0x1p-1"), no inf or nan, and the whole field (a NUL inside ends
  // nothing). from_chars takes no sign '+' and no locale.
  if (!s.empty() && s[0] == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s[0] == '-') return false;
  }
  if (s.empty()) return false;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), *v, std::chars_format::general);
  return error == std::errc() && end == s.data() + s.size() && std::isfinite(*v);
}

std::vector<ObjectClass> NumberedClasses(const std::vector<std::string>& names) {
  std::vector<ObjectClass> out;
  for (size_t i = 0; i < names.size(); ++i) out.push_back({static_cast<int64_t>(i) + 1, names[i]});
  return out;
}

StatusOr<std::vector<std::string>> ReadClassList(const std::string& path) {
  LIBSHARD_ASSIGN_OR_RETURN(std::string text, io::ReadFileToString(path, kMaxLabelFileBytes));
  text.erase(0, Utf8BomLength(text));
  std::vector<std::string> names;
  std::set<std::string> seen;
  size_t pos = 0;
  for (int line = 1; pos < text.size(); ++line) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string name = text.substr(pos, end - pos);
    pos = end + 1;
    if (!name.empty() && name.back() == '\r') name.pop_back();
    if (name.empty()) {
      if (text.find_first_not_of("\r\n", pos) == std::string::npos) break;  // blank lines at the end
      return InvalidArgumentError(path + ":" + std::to_string(line) + ": empty class name");
    }
    if (!seen.insert(name).second) {
      return InvalidArgumentError(path + ":" + std::to_string(line) + ": class '" + EscapeText(name) + "' named twice");
    }
    names.push_back(std::move(name));
  }
  if (names.empty()) return InvalidArgumentError(path + ": no class names");
  return names;
}

}  // namespace internal

const char* AnnotationFormatName(AnnotationFormat f) {
  switch (f) {
    case AnnotationFormat::kNone:
      return "";
    case AnnotationFormat::kCoco:
      return "coco";
    case AnnotationFormat::kYolo:
      return "yolo";
    case AnnotationFormat::kVoc:
      return "voc";
  }
  return "";
}

Status ValidateAnnotationOptions(const AnnotationOptions& o) {
  if (o.format != AnnotationFormat::kNone && o.source.empty()) {
    return InvalidArgumentError(std::string("--") + AnnotationFormatName(o.format) + " needs a file or folder");
  }
  if (!(o.min_visible >= 0 && o.min_visible <= 1)) {
    return InvalidArgumentError("box min-visible must be in [0, 1], not " + std::to_string(o.min_visible));
  }
  if (o.format != AnnotationFormat::kVoc && !o.class_names_file.empty()) {
    return InvalidArgumentError("a class list for boxes is read only with --voc (COCO and YOLO name their classes)");
  }
  return Status::OK();
}

StatusOr<AnnotationSummary> AttachAnnotations(const AnnotationOptions& o, Listing* listing) {
  LIBSHARD_RETURN_IF_ERROR(ValidateAnnotationOptions(o));
  AnnotationSummary summary;
  if (o.format == AnnotationFormat::kNone) return summary;
  internal::ParsedAnnotations parsed;
  switch (o.format) {
    case AnnotationFormat::kCoco:
      LIBSHARD_RETURN_IF_ERROR(internal::ReadCoco(o, *listing, &parsed));
      break;
    case AnnotationFormat::kYolo:
      LIBSHARD_RETURN_IF_ERROR(internal::ReadYolo(o, *listing, &parsed));
      break;
    case AnnotationFormat::kVoc:
      LIBSHARD_RETURN_IF_ERROR(internal::ReadVoc(o, *listing, &parsed));
      break;
    case AnnotationFormat::kNone:
      break;
  }
  summary.classes = parsed.classes;
  // With boxes the images carry no class of their own.
  listing->class_names.clear();
  listing->label_offset = 0;
  if (listing->layout == "class") listing->layout = "flat";
  if (listing->layout == "split/class") listing->layout = "split/flat";
  const auto empty = std::make_shared<const SampleObjects>();
  std::vector<SourceSample> kept;
  kept.reserve(listing->samples.size());
  for (size_t i = 0; i < listing->samples.size(); ++i) {
    SourceSample& s = listing->samples[i];
    s.label = -1;
    if (auto bad = parsed.bad.find(i); bad != parsed.bad.end()) {
      listing->rejects.push_back({s.path, bad->second});
      continue;
    }
    if (auto it = parsed.objects.find(i); it != parsed.objects.end()) {
      ++summary.annotated_images;
      summary.boxes += it->second->objects.size();
      s.objects = it->second;
    } else {
      ++summary.unannotated_images;
      s.objects = empty;
    }
    kept.push_back(std::move(s));
  }
  listing->samples = std::move(kept);
  if (summary.annotated_images == 0 && parsed.bad.empty() && parsed.missing.empty() && !listing->samples.empty()) {
    // A wrong folder or file: said before the long part, and a failure
    // (shard convert's exit code 3).
    listing->warnings.push_back("no image matched an annotation of " + o.source +
                                (parsed.lookup_example.empty() ? "" : ": " + parsed.lookup_example));
  }
  summary.missing_images = parsed.missing.size();
  summary.unmatched_annotations = parsed.unmatched;
  for (ListingReject& r : parsed.missing) listing->rejects.push_back(std::move(r));
  for (ListingReject& r : parsed.other) listing->rejects.push_back(std::move(r));
  std::stable_sort(listing->rejects.begin(), listing->rejects.end(),
                   [](const ListingReject& a, const ListingReject& b) { return a.path < b.path; });
  std::set<std::string> splits;
  for (const SourceSample& s : listing->samples) splits.insert(s.split);
  listing->splits.assign(splits.begin(), splits.end());
  return summary;
}

std::string LabelMapPbtxt(const std::vector<ObjectClass>& classes) {
  std::string out;
  for (const ObjectClass& k : classes) {
    // A protobuf text-format string (what TF's label_map_util reads):
    // quote and backslash escaped, control bytes as octal, UTF-8 as it is.
    std::string name;
    for (char c : k.name) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '\'' || c == '"' || c == '\\') {
        name += '\\';
        name += c;
      } else if (c == '\n') {
        name += "\\n";
      } else if (c == '\r') {
        name += "\\r";
      } else if (c == '\t') {
        name += "\\t";
      } else if (u < 0x20 || u == 0x7f) {
        char oct[8];
        std::snprintf(oct, sizeof(oct), "\\%03o", u);
        name += oct;
      } else {
        name += c;
      }
    }
    out += "item {\n  id: " + std::to_string(k.label) + "\n  name: '" + name + "'\n}\n";
  }
  return out;
}

}  // namespace libshard::convert
