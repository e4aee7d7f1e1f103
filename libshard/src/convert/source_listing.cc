#include "libshard/convert/source_listing.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "libshard/io/mapped_file.h"
#include "libshard/text_escape.h"

namespace libshard::convert {
namespace fs = std::filesystem;
namespace {

bool IsSplitName(const std::string& name) {
  return name == "train" || name == "val" || name == "validation" || name == "valid" ||
         name == "test";
}

bool Hidden(const std::string& name) { return !name.empty() && name[0] == '.'; }

struct Entry {
  std::string name;
  bool is_dir = false;
  uint64_t size = 0;
};

// A folder's identity, for ListOptions::exclude_dir.
struct FolderId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool set = false;
};

// The non-hidden entries of `dir`, sorted by name, following symbolic links,
// without the folder `skip`. Broken links and entries that cannot be
// stat'ed go to *rejects.
Status ReadDir(const std::string& dir, const std::string& rel, std::vector<Entry>* out,
               std::vector<ListingReject>* rejects, const FolderId& skip) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return NotFoundError(dir + ": cannot read folder: " + ec.message());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return DataLossError(dir + ": error while listing: " + ec.message());
    std::string name = it->path().filename().string();
    if (Hidden(name)) continue;
    struct stat st;
    std::string child_rel = rel.empty() ? name : rel + "/" + name;
    if (::stat(it->path().c_str(), &st) != 0) {
      rejects->push_back({child_rel, std::string("cannot stat: ") + std::strerror(errno)});
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      if (skip.set && st.st_dev == skip.dev && st.st_ino == skip.ino) continue;
      out->push_back({name, true, 0});
    } else if (S_ISREG(st.st_mode)) {
      out->push_back({name, false, static_cast<uint64_t>(st.st_size)});
    } else {
      rejects->push_back({child_rel, "not a regular file"});
    }
  }
  std::sort(out->begin(), out->end(),
            [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return Status::OK();
}

class Walker {
 public:
  Walker(std::string root, FolderId skip) : root_(std::move(root)), skip_(skip) {}

  // Every regular file under ROOT/rel (recursively), as (rel path, size).
  void Walk(const std::string& rel, std::vector<std::pair<std::string, uint64_t>>* files,
            std::vector<ListingReject>* rejects) {
    std::string dir = rel.empty() ? root_ : root_ + "/" + rel;
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0) {
      rejects->push_back({rel, std::string("cannot stat folder: ") + std::strerror(errno)});
      return;
    }
    if (!visited_.insert({st.st_dev, st.st_ino}).second) return;  // a link loop
    std::vector<Entry> entries;
    Status s = ReadDir(dir, rel, &entries, rejects, skip_);
    if (!s.ok()) {
      rejects->push_back({rel, s.message()});
      return;
    }
    for (const Entry& e : entries) {
      std::string child = rel.empty() ? e.name : rel + "/" + e.name;
      if (e.is_dir) {
        Walk(child, files, rejects);
      } else {
        files->push_back({child, e.size});
      }
    }
  }

  // Marks ROOT/rel visited without walking it (so a link back to it is a loop).
  void MarkVisited(const std::string& rel) {
    std::string dir = rel.empty() ? root_ : root_ + "/" + rel;
    struct stat st;
    if (::stat(dir.c_str(), &st) == 0) visited_.insert({st.st_dev, st.st_ino});
  }

 private:
  std::string root_;
  FolderId skip_;
  std::set<std::pair<dev_t, ino_t>> visited_;
};

StatusOr<std::vector<std::string>> ReadLabelsFile(const std::string& path) {
  LIBSHARD_ASSIGN_OR_RETURN(std::string text, io::ReadFileToString(path, 64 << 20));
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
      return InvalidArgumentError(path + ":" + std::to_string(line) + ": class '" + s +
                                     "' listed twice");
    }
    names.push_back(s);
  }
  if (names.empty()) return InvalidArgumentError(path + ": no class names");
  return names;
}

std::string Stem(const std::string& rel) {
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

// (device, inode) of the paths a listing skips: the `ignore` paths and the
// mask folder of each split that may occur.
std::set<std::pair<dev_t, ino_t>> IgnoredIds(const ListOptions& options, const std::vector<std::string>& splits) {
  std::vector<std::string> paths = options.ignore;
  if (!options.masks.empty()) {
    for (const std::string& split : splits) paths.push_back(MaskFolder(options.masks, split));
  }
  std::set<std::pair<dev_t, ino_t>> ids;
  for (const std::string& p : paths) {
    struct stat st;
    if (!p.empty() && ::stat(p.c_str(), &st) == 0) ids.insert({st.st_dev, st.st_ino});
  }
  return ids;
}

bool IsFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Finds each sample's mask; samples without one become rejects.
void ResolveMasks(const ListOptions& options, Listing* listing) {
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
Status Finish(const ListOptions& options, bool has_split_folders, Listing* listing) {
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
      return InvalidArgumentError(
          "--val-fraction needs an input without split folders (train/, val/, ...)");
    }
    // 2^64 * fraction, compared as integers so the split is exact and portable.
    long double limit = static_cast<long double>(options.val_fraction) * 18446744073709551616.0L;
    for (SourceSample& s : listing->samples) {
      if (static_cast<long double>(Fnv1a64(s.path)) < limit) s.split = "val";
    }
  }
  ResolveMasks(options, listing);
  std::sort(listing->samples.begin(), listing->samples.end(),
            [](const SourceSample& a, const SourceSample& b) {
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
StatusOr<std::map<std::string, int64_t>> LabelIndex(const ListOptions& options,
                                                    const std::set<std::string>& seen,
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

std::vector<std::string> SplitRow(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"' && cur.empty()) {
      quoted = true;
    } else if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// An optional '-' and decimal digits (whether or not it fits in 64 bits).
bool LooksLikeInteger(const std::string& s) {
  const size_t from = !s.empty() && s[0] == '-' ? 1 : 0;
  if (from >= s.size()) return false;
  return std::all_of(s.begin() + from, s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool ParseInt64(const std::string& s, int64_t* v) {
  if (!LooksLikeInteger(s)) return false;
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *v = x;
  return true;
}

}  // namespace

uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

StatusOr<Listing> ListFolder(const std::string& root_in, const ListOptions& options) {
  std::string root = root_in;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  struct stat st;
  if (::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return NotFoundError(root + ": not a readable folder");
  }
  Listing listing;
  listing.root = root;
  FolderId skip;
  struct stat excluded;
  if (!options.exclude_dir.empty() && ::stat(options.exclude_dir.c_str(), &excluded) == 0 &&
      S_ISDIR(excluded.st_mode)) {
    skip = {excluded.st_dev, excluded.st_ino, true};
  }
  Walker walker(root, skip);
  walker.MarkVisited("");

  std::vector<Entry> top;
  LIBSHARD_RETURN_IF_ERROR(ReadDir(root, "", &top, &listing.rejects, skip));
  std::vector<std::string> split_names = {options.default_split};
  for (const Entry& e : top) {
    if (e.is_dir && IsSplitName(e.name)) split_names.push_back(e.name);
  }
  const auto ignored_ids = IgnoredIds(options, split_names);
  const auto ignored = [&ignored_ids](const std::string& path) {
    struct stat st;
    return !ignored_ids.empty() && ::stat(path.c_str(), &st) == 0 && ignored_ids.count({st.st_dev, st.st_ino}) > 0;
  };
  top.erase(std::remove_if(top.begin(), top.end(), [&](const Entry& e) { return ignored(root + "/" + e.name); }),
            top.end());
  bool has_splits = false;
  for (const Entry& e : top) has_splits |= e.is_dir && IsSplitName(e.name);

  // (split folder rel path or "", split name) pairs to read classes from.
  std::vector<std::pair<std::string, std::string>> groups;
  if (has_splits && options.default_split != ListOptions().default_split) {
    return InvalidArgumentError("split '" + options.default_split + "' given for " + root +
                                ", which has split folders (train, val, ...): they name the splits");
  }
  if (has_splits) {
    for (const Entry& e : top) {
      if (e.is_dir && IsSplitName(e.name)) {
        groups.push_back({e.name, e.name});
      } else {
        listing.rejects.push_back({e.name, e.is_dir ? "folder is not a split (train, val, "
                                                      "validation, valid, test) beside split folders"
                                                    : "file beside the split folders"});
      }
    }
  } else {
    LIBSHARD_RETURN_IF_ERROR(ValidateNamePart("split name", options.default_split));
    groups.push_back({"", options.default_split});
  }

  struct Pending {
    std::string path;
    std::string split;
    std::string class_name;  // empty: unlabeled
    uint64_t size;
  };
  std::vector<Pending> pending;
  std::set<std::string> class_seen;
  for (const auto& [rel, split] : groups) {
    std::vector<Entry> entries;
    if (rel.empty()) {
      entries = top;
    } else {
      walker.MarkVisited(rel);
      Status s = ReadDir(root + "/" + rel, rel, &entries, &listing.rejects, skip);
      if (!s.ok()) {
        listing.rejects.push_back({rel, s.message()});
        continue;
      }
      const std::string dir = root + "/" + rel + "/";  // (a structured binding cannot be captured in C++17)
      entries.erase(std::remove_if(entries.begin(), entries.end(),
                                   [&](const Entry& e) { return ignored(dir + e.name); }),
                    entries.end());
    }
    bool has_classes = std::any_of(entries.begin(), entries.end(),
                                   [](const Entry& e) { return e.is_dir; });
    for (const Entry& e : entries) {
      std::string child = rel.empty() ? e.name : rel + "/" + e.name;
      if (!has_classes) {
        pending.push_back({child, split, "", e.size});
      } else if (!e.is_dir) {
        listing.rejects.push_back({child, "file outside any class folder"});
      } else {
        std::vector<std::pair<std::string, uint64_t>> files;
        walker.Walk(child, &files, &listing.rejects);
        // An empty class keeps its label, so the later classes' do not shift.
        class_seen.insert(e.name);
        if (files.empty()) {
          listing.warnings.push_back("class folder " + child + " has no files; class '" + e.name +
                                     "' keeps its label");
        }
        for (auto& [path, size] : files) pending.push_back({path, split, e.name, size});
      }
    }
  }

  LIBSHARD_ASSIGN_OR_RETURN(auto index, LabelIndex(options, class_seen, &listing.class_names));
  for (Pending& p : pending) {
    SourceSample s;
    s.path = std::move(p.path);
    s.split = std::move(p.split);
    s.size = p.size;
    if (!p.class_name.empty()) {
      auto it = index.find(p.class_name);
      if (it == index.end()) {
        listing.rejects.push_back(
            {s.path, "class '" + p.class_name + "' is not in " + options.labels_file});
        continue;
      }
      s.label = it->second;
    }
    listing.samples.push_back(std::move(s));
  }
  LIBSHARD_RETURN_IF_ERROR(Finish(options, has_splits, &listing));
  return listing;
}

StatusOr<Listing> ReadManifestCsv(const std::string& csv_path, const ListOptions& options) {
  LIBSHARD_ASSIGN_OR_RETURN(std::string text, io::ReadFileToString(csv_path, 1ull << 32));
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);  // a UTF-8 byte order mark
  Listing listing;
  std::string dir = Dirname(csv_path);
  listing.root = dir.empty() ? "." : dir;
  const auto at = [&csv_path](int line) { return csv_path + ":" + std::to_string(line) + ": "; };

  std::vector<std::string> lines;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  const std::string& path_col = options.path_column;
  const std::string& label_col = options.label_column;
  const std::string& mask_col = options.mask_column;
  const std::string& split_col = options.split_column;
  const std::string expected = path_col + ", " + label_col + ", " + mask_col + ", " + split_col;
  if (lines.empty() || lines[0].empty()) {
    return InvalidArgumentError(at(1) + "missing header (" + path_col + "," + label_col + "[," + mask_col +
                                "][," + split_col + "])");
  }
  bool tsv = csv_path.size() >= 4 && csv_path.compare(csv_path.size() - 4, 4, ".tsv") == 0;
  tsv |= lines[0].find('\t') != std::string::npos;
  const char sep = tsv ? '\t' : ',';
  std::vector<std::string> header = SplitRow(lines[0], sep);
  int col_path = -1, col_label = -1, col_mask = -1, col_split = -1;
  for (size_t i = 0; i < header.size(); ++i) {
    const std::string& h = header[i];
    int* slot = h == path_col ? &col_path : h == label_col ? &col_label
              : h == mask_col ? &col_mask : h == split_col ? &col_split : nullptr;
    if (slot == nullptr) {
      return InvalidArgumentError(at(1) + "unknown column '" + h + "' (expected " + expected +
                                  "; --path-col, --label-col, --mask-col, --split-col name others)");
    }
    if (*slot >= 0) return InvalidArgumentError(at(1) + "column '" + h + "' appears twice");
    *slot = static_cast<int>(i);
  }
  if (col_path < 0) return InvalidArgumentError(at(1) + "no '" + path_col + "' column");
  const ListOptions defaults;
  for (const auto& [name, def, col] : {std::tuple(label_col, defaults.label_column, col_label),
                                       std::tuple(mask_col, defaults.mask_column, col_mask),
                                       std::tuple(split_col, defaults.split_column, col_split)}) {
    if (col < 0 && name != def) return InvalidArgumentError(at(1) + "no '" + name + "' column");
  }

  struct Row {
    SourceSample sample;
    std::string label_text;
    int line;
  };
  std::vector<Row> rows;
  std::map<std::string, int> first_line;  // path -> line
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const int line_no = static_cast<int>(i) + 1;
    std::vector<std::string> f = SplitRow(lines[i], sep);
    if (f.size() != header.size()) {
      return InvalidArgumentError(at(line_no) + std::to_string(f.size()) + " fields, header has " +
                                  std::to_string(header.size()));
    }
    Row r;
    r.line = line_no;
    r.sample.path = f[col_path];
    r.sample.origin = at(line_no).substr(0, at(line_no).size() - 2);
    if (r.sample.path.empty()) return InvalidArgumentError(at(line_no) + "empty " + path_col);
    auto [it, inserted] = first_line.emplace(r.sample.path, line_no);
    if (!inserted) {
      return InvalidArgumentError(at(line_no) + r.sample.path + " is listed again (first at line " +
                                  std::to_string(it->second) + ")");
    }
    r.sample.split = col_split >= 0 && !f[col_split].empty() ? f[col_split] : options.default_split;
    if (Status s = ValidateNamePart("split name", r.sample.split); !s.ok()) {
      return InvalidArgumentError(at(line_no) + s.message());
    }
    if (col_mask >= 0 && !f[col_mask].empty()) {
      r.sample.mask_path = SourceFilePath(listing.root, f[col_mask]);
    }
    if (col_label >= 0) r.label_text = f[col_label];
    rows.push_back(std::move(r));
  }
  if (rows.empty()) return InvalidArgumentError(csv_path + ": no samples (only a header)");

  // Labels: all integers (kept as given) or all class names (numbered in
  // sorted order, or by --labels); with --labels every label is a name.
  std::map<std::string, int64_t> index;
  const Row* first_labeled = nullptr;
  bool names = !options.labels_file.empty();
  std::set<std::string> seen;
  for (Row& r : rows) {
    if (r.label_text.empty()) continue;
    seen.insert(r.label_text);
    if (!options.labels_file.empty()) continue;
    const bool integer = LooksLikeInteger(r.label_text);
    if (first_labeled == nullptr) {
      first_labeled = &r;
      names = !integer;
    } else if (integer == names) {
      return InvalidArgumentError(
          at(r.line) + "label '" + r.label_text + "' is " + (integer ? "an integer" : "a class name") +
          " but line " + std::to_string(first_labeled->line) + "'s '" + first_labeled->label_text + "' is " +
          (integer ? "a class name" : "an integer") +
          ": a label column is all integers or all class names (--labels FILE reads them all as names)");
    }
    if (integer) {
      if (!ParseInt64(r.label_text, &r.sample.label)) {
        return InvalidArgumentError(at(r.line) + "label " + r.label_text + " does not fit in 64 bits");
      }
      if (r.sample.label < 0) return InvalidArgumentError(at(r.line) + "negative label " + r.label_text);
    }
  }
  if (names) {
    LIBSHARD_ASSIGN_OR_RETURN(index, LabelIndex(options, seen, &listing.class_names));
  }
  for (Row& r : rows) {
    const std::string full = SourceFilePath(listing.root, r.sample.path);
    struct stat st;
    std::string why;
    if (::stat(full.c_str(), &st) != 0) {
      why = errno == ENOENT ? "no such file" : std::strerror(errno);
    } else if (S_ISDIR(st.st_mode)) {
      why = "is a directory";
    } else if (!S_ISREG(st.st_mode)) {
      why = "not a regular file";
    }
    if (!why.empty()) {
      listing.rejects.push_back({r.sample.path, at(r.line) + why});
      continue;
    }
    r.sample.size = static_cast<uint64_t>(st.st_size);
    if (names && !r.label_text.empty()) {
      auto it = index.find(r.label_text);
      if (it == index.end()) {
        listing.rejects.push_back(
            {r.sample.path, at(r.line) + "class '" + r.label_text + "' is not in " + options.labels_file});
        continue;
      }
      r.sample.label = it->second;
    }
    listing.samples.push_back(std::move(r.sample));
  }
  bool has_split_column = col_split >= 0;
  LIBSHARD_RETURN_IF_ERROR(Finish(options, has_split_column, &listing));
  return listing;
}

std::string_view ClassName(const Listing& listing, int64_t label) {
  const int64_t i = label - listing.label_offset;
  if (label < 0 || i < 0 || static_cast<uint64_t>(i) >= listing.class_names.size()) return {};
  return listing.class_names[static_cast<size_t>(i)];
}

std::string SourceFilePath(const std::string& root, const std::string& path) {
  return !path.empty() && path[0] == '/' ? path : root + "/" + path;
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
      return InvalidArgumentError(what + " contains the control character " + code +
                                  " (tab, newline, ...)");
    }
  }
  return Status::OK();
}

}  // namespace libshard::convert
