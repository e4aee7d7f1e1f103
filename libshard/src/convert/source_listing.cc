#include "libshard/convert/source_listing.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "libshard/io/mapped_file.h"

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
    std::string found;
    for (const std::string& base :
         {dir.empty() ? options.masks : options.masks + "/" + dir, options.masks}) {
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
      listing->rejects.push_back(
          {s.path, "no mask " + stem + ".png under " + options.masks});
    } else {
      s.mask_path = found;
      kept.push_back(std::move(s));
    }
  }
  listing->samples = std::move(kept);
}

// Applies val_fraction, sorts samples and rejects canonically, fills splits.
Status Finish(const ListOptions& options, bool has_split_folders, Listing* listing) {
  if (!(options.val_fraction >= 0 && options.val_fraction < 1)) {
    return InvalidArgumentError("val_fraction must be in [0, 1)");
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
  for (size_t i = 0; i < names->size(); ++i) index[(*names)[i]] = static_cast<int64_t>(i);
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

bool ParseInt64(const std::string& s, int64_t* v) {
  if (s.empty()) return false;
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
  bool has_splits = false;
  for (const Entry& e : top) has_splits |= e.is_dir && IsSplitName(e.name);

  // (split folder rel path or "", split name) pairs to read classes from.
  std::vector<std::pair<std::string, std::string>> groups;
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
    groups.push_back({"", "train"});
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
        if (!files.empty()) class_seen.insert(e.name);
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
  Listing listing;
  std::string dir = Dirname(csv_path);
  listing.root = dir.empty() ? "." : dir;

  std::vector<std::string> lines;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  if (lines.empty() || lines[0].empty()) {
    return InvalidArgumentError(csv_path + ":1: missing header (path,label[,mask][,split])");
  }
  bool tsv = csv_path.size() >= 4 && csv_path.compare(csv_path.size() - 4, 4, ".tsv") == 0;
  tsv |= lines[0].find('\t') != std::string::npos;
  const char sep = tsv ? '\t' : ',';
  std::vector<std::string> header = SplitRow(lines[0], sep);
  int col_path = -1, col_label = -1, col_mask = -1, col_split = -1;
  for (size_t i = 0; i < header.size(); ++i) {
    const std::string& h = header[i];
    int* slot = h == "path" ? &col_path : h == "label" ? &col_label
              : h == "mask" ? &col_mask : h == "split" ? &col_split : nullptr;
    if (slot == nullptr) {
      return InvalidArgumentError(csv_path + ":1: unknown column '" + h +
                                     "' (expected path, label, mask, split)");
    }
    *slot = static_cast<int>(i);
  }
  if (col_path < 0) return InvalidArgumentError(csv_path + ":1: no 'path' column");

  struct Row {
    SourceSample sample;
    std::string label_text;
    int line;
  };
  std::vector<Row> rows;
  bool all_int = true;
  std::set<std::string> names;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const int line_no = static_cast<int>(i) + 1;
    std::vector<std::string> f = SplitRow(lines[i], sep);
    if (f.size() != header.size()) {
      return InvalidArgumentError(csv_path + ":" + std::to_string(line_no) + ": " +
                                     std::to_string(f.size()) + " fields, header has " +
                                     std::to_string(header.size()));
    }
    Row r;
    r.line = line_no;
    r.sample.path = f[col_path];
    r.sample.split = col_split >= 0 && !f[col_split].empty() ? f[col_split] : "train";
    if (col_mask >= 0 && !f[col_mask].empty()) {
      r.sample.mask_path = listing.root + "/" + f[col_mask];
    }
    if (col_label >= 0) r.label_text = f[col_label];
    if (!r.label_text.empty()) {
      int64_t v;
      if (!ParseInt64(r.label_text, &v)) all_int = false;
      names.insert(r.label_text);
    }
    rows.push_back(std::move(r));
  }
  std::map<std::string, int64_t> index;
  if (!all_int || !options.labels_file.empty()) {
    LIBSHARD_ASSIGN_OR_RETURN(index, LabelIndex(options, names, &listing.class_names));
  }
  for (Row& r : rows) {
    const std::string full = listing.root + "/" + r.sample.path;
    struct stat st;
    if (::stat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      listing.rejects.push_back({r.sample.path, csv_path + ":" + std::to_string(r.line) +
                                                    ": no such file"});
      continue;
    }
    r.sample.size = static_cast<uint64_t>(st.st_size);
    if (!r.label_text.empty()) {
      if (index.empty()) {
        ParseInt64(r.label_text, &r.sample.label);
        if (r.sample.label < 0) {
          return InvalidArgumentError(csv_path + ":" + std::to_string(r.line) +
                                         ": negative label " + r.label_text);
        }
      } else {
        auto it = index.find(r.label_text);
        if (it == index.end()) {
          listing.rejects.push_back({r.sample.path, "class '" + r.label_text + "' is not in " +
                                                        options.labels_file});
          continue;
        }
        r.sample.label = it->second;
      }
    }
    listing.samples.push_back(std::move(r.sample));
  }
  bool has_split_column = col_split >= 0;
  LIBSHARD_RETURN_IF_ERROR(Finish(options, has_split_column, &listing));
  return listing;
}

}  // namespace libshard::convert
