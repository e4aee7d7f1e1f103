// ReadSourceCsv: the samples of a CSV/TSV manifest (path, label, mask,
// split columns); source_listing.h states the format.
#include <sys/stat.h>

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "convert/listing_internal.h"
#include "libshard/convert/source_listing.h"
#include "libshard/io/contained_path.h"
#include "libshard/io/open_file.h"
#include "libshard/text_escape.h"

namespace libshard::convert {
namespace {

namespace fs = std::filesystem;

using internal::Dirname;
using internal::FinishListing;
using internal::LabelIndex;

// The fields of one line; *open is set when a quoted field is still open
// at the end of the line (it held a line break).
std::vector<std::string> SplitRow(const std::string& line, char sep, bool* open = nullptr) {
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
  if (open != nullptr) *open = quoted;
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

// Case-insensitive equality of two file names (ASCII letters only).
bool SameIgnoringCase(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// The one entry of `folder` whose name equals `name` but for case, or "" when
// none or several (at most kMaxEntries entries are read).
std::string CaseMatch(const std::string& folder, const std::string& name) {
  constexpr int kMaxEntries = 10000;
  DIR* d = ::opendir(folder.empty() ? "." : folder.c_str());
  if (d == nullptr) return "";
  std::string found;
  int matches = 0;
  int n = 0;
  while (const dirent* e = ::readdir(d)) {
    if (++n > kMaxEntries) break;
    if (SameIgnoringCase(e->d_name, name)) {
      found = e->d_name;
      ++matches;
    }
  }
  ::closedir(d);
  return matches == 1 ? found : "";
}

// `path` (relative to `root`, or absolute) with each part that does not
// exist replaced by the one entry of its folder that differs only in case;
// "" when a part has no such entry or the corrected file does not exist.
std::string CaseSuggestion(const std::string& root, const std::string& path) {
  const bool absolute = !path.empty() && path[0] == '/';
  std::string folder = absolute ? "" : root, out;
  size_t pos = absolute ? 1 : 0;
  int parts = 0;
  while (pos <= path.size() && ++parts <= 64) {
    const size_t slash = path.find('/', pos);
    std::string part = path.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
    pos = slash == std::string::npos ? path.size() + 1 : slash + 1;
    if (part.empty() || part == ".") continue;
    const std::string here = (absolute && folder.empty() ? "" : folder) + "/" + part;
    struct stat st;
    if (part != ".." && ::stat(here.c_str(), &st) != 0) {
      part = CaseMatch(absolute && folder.empty() ? "/" : folder, part);
      if (part.empty()) return "";
    }
    folder = (absolute && folder.empty() ? "" : folder) + "/" + part;
    out += (out.empty() ? (absolute ? "/" : "") : "/") + part;
  }
  struct stat st;
  return ::stat(folder.c_str(), &st) == 0 && S_ISREG(st.st_mode) && out != path ? out : "";
}

// With an image root: OK when `path` stays inside it, else why not.
Status CheckInsideRoot(const std::string& path, const std::string& root) {
  const std::string normal = fs::path(path).lexically_normal().generic_string();
  Status s = io::CheckRelativeName(normal, path);
  if (s.ok()) return s;
  return InvalidArgumentError("is not a path inside --image-root " + root + " (" + std::string(s.message()) + ")");
}

// Where a CSV's rows lead: files on disk, or the objects beside a CSV in a
// bucket.
class CsvFiles {
 public:
  virtual ~CsvFiles() = default;
  // What two spellings of one file share ("./a", "a", "x/../a").
  virtual std::string SpellingKey(const std::string& root, const std::string& path) const = 0;
  // The file `path` names: "" and its size and identity (two names of one
  // file share it), or why it is no file to read.
  virtual std::string Find(const std::string& root, const std::string& path, uint64_t* size,
                           std::string* identity) const = 0;
  // Whether a mask column can be read (its files are local).
  virtual bool ReadsMasks() const { return true; }
};

class DiskFiles : public CsvFiles {
 public:
  std::string SpellingKey(const std::string& root, const std::string& path) const override {
    std::error_code ec;
    std::string key = fs::absolute(SourceFilePath(root, path), ec).lexically_normal().string();
    return ec ? path : key;
  }
  std::string Find(const std::string& root, const std::string& path, uint64_t* size,
                   std::string* identity) const override {
    const std::string full = SourceFilePath(root, path);
    struct stat st;
    if (::stat(full.c_str(), &st) != 0) {
      std::error_code ec;
      std::string tried = fs::absolute(full, ec).lexically_normal().string();
      if (ec) tried = full;
      std::string why = (errno == ENOENT ? "no such file " : std::string(std::strerror(errno)) + ": ") + tried;
      if (const std::string hint = CaseSuggestion(root, path); !hint.empty()) why += " (did you mean " + hint + "?)";
      return why;
    }
    if (S_ISDIR(st.st_mode)) return "is a directory";
    if (!S_ISREG(st.st_mode)) return "not a regular file";
    *size = static_cast<uint64_t>(st.st_size);
    *identity = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
    return "";
  }
};

class KeyFiles : public CsvFiles {
 public:
  explicit KeyFiles(const std::map<std::string, uint64_t>& keys) : keys_(keys) {}
  bool ReadsMasks() const override { return false; }
  std::string SpellingKey(const std::string&, const std::string& path) const override {
    return fs::path(path).lexically_normal().generic_string();
  }
  std::string Find(const std::string& root, const std::string& path, uint64_t* size,
                   std::string* identity) const override {
    const std::string normal = SpellingKey(root, path);
    if (Status s = io::CheckRelativeName(normal, path); !s.ok()) return "is not a key below " + root + " (" +
                                                                        std::string(s.message()) + ")";
    auto it = keys_.find(normal);
    if (it == keys_.end()) return "no such object " + root + normal;
    *size = it->second;
    *identity = normal;
    return "";
  }

 private:
  const std::map<std::string, uint64_t>& keys_;
};

StatusOr<Listing> ReadCsvRows(const std::string& csv_path, std::string text, const std::string& root,
                              const ListOptions& options, const CsvFiles& files);

}  // namespace

StatusOr<Listing> ReadSourceCsv(const std::string& csv_path, const ListOptions& options) {
  if (options.layout != FolderLayout::kAuto) {
    return InvalidArgumentError(csv_path +
                                ": --layout reads a folder; a CSV manifest names its splits and labels "
                                "in its columns");
  }
  if (!options.include.empty() || !options.exclude.empty()) {
    return InvalidArgumentError(csv_path +
                                ": --include and --exclude choose the files of a folder; a CSV "
                                "manifest names its files (leave the rows out instead)");
  }
  LIBSHARD_ASSIGN_OR_RETURN(std::string text, io::ReadFileToString(csv_path, 1ull << 32));
  std::string dir = Dirname(csv_path);
  std::string root = dir.empty() ? "." : dir;
  if (!options.image_root.empty()) {
    struct stat st;
    if (::stat(options.image_root.c_str(), &st) != 0) {
      return NotFoundError("--image-root " + options.image_root + ": " +
                           (errno == ENOENT ? std::string("no such folder") : std::strerror(errno)));
    }
    if (!S_ISDIR(st.st_mode)) return InvalidArgumentError("--image-root " + options.image_root + ": not a folder");
    root = options.image_root;
  }
  return ReadCsvRows(csv_path, std::move(text), root, options, DiskFiles());
}

StatusOr<Listing> ReadCsvOfKeys(const std::string& csv_url, std::string text, const std::string& root,
                                const std::map<std::string, uint64_t>& keys, const ListOptions& options) {
  if (options.layout != FolderLayout::kAuto || !options.include.empty() || !options.exclude.empty() ||
      !options.image_root.empty()) {
    return InvalidArgumentError(csv_url + ": --layout, --include, --exclude and --image-root read local files; a "
                                          "CSV in a bucket names keys beside it");
  }
  return ReadCsvRows(csv_url, std::move(text), root, options, KeyFiles(keys));
}

namespace {

StatusOr<Listing> ReadCsvRows(const std::string& csv_path, std::string text, const std::string& root,
                              const ListOptions& options, const CsvFiles& files) {
  text.erase(0, Utf8BomLength(text));
  Listing listing;
  listing.root = root;
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
    return InvalidArgumentError(at(1) + "missing header (" + path_col + "," + label_col + "[," + mask_col + "][," +
                                split_col + "])");
  }
  bool tsv = csv_path.size() >= 4 && csv_path.compare(csv_path.size() - 4, 4, ".tsv") == 0;
  tsv |= lines[0].find('\t') != std::string::npos;
  const char sep = tsv ? '\t' : ',';
  std::vector<std::string> header = SplitRow(lines[0], sep);
  int col_path = -1, col_label = -1, col_mask = -1, col_split = -1;
  // --feature columns: their place in the header, by feature.
  std::vector<int> col_features(options.features.size(), -1);
  for (size_t k = 0; k < options.features.size(); ++k) {
    const std::string& c = options.features[k].column;
    if (c == path_col || c == label_col || c == mask_col || c == split_col) {
      return InvalidArgumentError("--feature " + CsvFeatureText(options.features[k]) + ": '" + c +
                                  "' is the path, label, mask or split column");
    }
    for (size_t j = 0; j < k; ++j) {
      if (options.features[j].column == c) return InvalidArgumentError("--feature: column '" + c + "' named twice");
    }
  }
  for (size_t i = 0; i < header.size(); ++i) {
    const std::string& h = header[i];
    int* slot = h == path_col    ? &col_path
                : h == label_col ? &col_label
                : h == mask_col  ? &col_mask
                : h == split_col ? &col_split
                                 : nullptr;
    for (size_t k = 0; k < options.features.size() && slot == nullptr; ++k) {
      if (options.features[k].column == h) slot = &col_features[k];
    }
    if (slot == nullptr) {
      return InvalidArgumentError(at(1) + "unknown column '" + h + "' (expected " + expected +
                                  "; --path-col, --label-col, --mask-col, --split-col name others; --feature " + h +
                                  ":TYPE stores it in each record)");
    }
    if (*slot >= 0) return InvalidArgumentError(at(1) + "column '" + h + "' appears twice");
    *slot = static_cast<int>(i);
  }
  if (col_path < 0) return InvalidArgumentError(at(1) + "no '" + path_col + "' column");
  if (col_mask >= 0 && !files.ReadsMasks()) {
    return InvalidArgumentError(at(1) + "a '" + mask_col + "' column: masks are read from a local input, not from "
                                        "a bucket's keys");
  }
  const ListOptions defaults;
  for (const auto& [name, def, col] :
       {std::tuple(label_col, defaults.label_column, col_label), std::tuple(mask_col, defaults.mask_column, col_mask),
        std::tuple(split_col, defaults.split_column, col_split)}) {
    if (col < 0 && name != def) return InvalidArgumentError(at(1) + "no '" + name + "' column");
  }
  for (size_t k = 0; k < options.features.size(); ++k) {
    if (col_features[k] < 0) {
      return InvalidArgumentError(at(1) + "no '" + options.features[k].column + "' column (--feature " +
                                  CsvFeatureText(options.features[k]) + ")");
    }
  }

  struct Row {
    SourceSample sample;
    std::string label_text;
    int line;
    std::string refused;    // why a path leaves --image-root; the row is a reject
    std::string bad_value;  // why a --feature field does not parse; the row is a reject
  };
  std::vector<Row> rows;
  std::map<std::string, std::pair<int, std::string>> first_line;  // normalised path -> line, path
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const int line_no = static_cast<int>(i) + 1;
    bool open = false;
    std::vector<std::string> f = SplitRow(lines[i], sep, &open);
    if (open) {
      return InvalidArgumentError(at(line_no) +
                                  "a quoted field holds a line break (RFC 4180 allows it; this reader "
                                  "takes one row per line): put the field on one line");
    }
    if (f.size() != header.size()) {
      return InvalidArgumentError(at(line_no) + std::to_string(f.size()) + " fields, header has " +
                                  std::to_string(header.size()));
    }
    Row r;
    r.line = line_no;
    r.sample.path = f[col_path];
    r.sample.origin = at(line_no).substr(0, at(line_no).size() - 2);
    if (r.sample.path.empty()) return InvalidArgumentError(at(line_no) + "empty " + path_col);
    // One file, however it is spelled (./a, a//b, x/../a, absolute): by the
    // normalised absolute path here, by file identity once it is stat'ed.
    const std::string key = files.SpellingKey(listing.root, r.sample.path);
    auto [it, inserted] = first_line.emplace(key, std::pair(line_no, r.sample.path));
    if (!inserted) {
      const auto& [first_no, first_path] = it->second;
      return InvalidArgumentError(at(line_no) + r.sample.path + " is listed again (first at line " +
                                  std::to_string(first_no) +
                                  (first_path == r.sample.path ? std::string() : " as " + first_path) + ")");
    }
    r.sample.split = col_split >= 0 && !f[col_split].empty() ? f[col_split] : options.default_split;
    if (Status s = ValidateNamePart("split name", r.sample.split); !s.ok()) {
      return InvalidArgumentError(at(line_no) + s.message());
    }
    if (col_mask >= 0 && !f[col_mask].empty()) {
      r.sample.mask_path = SourceFilePath(listing.root, f[col_mask]);
    }
    if (!options.image_root.empty()) {
      for (const std::string& p : {r.sample.path, col_mask >= 0 ? f[col_mask] : std::string()}) {
        if (Status s = p.empty() ? Status::OK() : CheckInsideRoot(p, listing.root); !s.ok() && r.refused.empty()) {
          r.refused = p + " " + std::string(s.message());
        }
      }
    }
    if (col_label >= 0) r.label_text = f[col_label];
    r.sample.features.resize(options.features.size());
    for (size_t k = 0; k < options.features.size() && r.bad_value.empty(); ++k) {
      r.bad_value = internal::ParseFeatureValue(options.features[k], f[col_features[k]], &r.sample.features[k]);
    }
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
          at(r.line) + "label '" + r.label_text + "' is " + (integer ? "an integer" : "a class name") + " but line " +
          std::to_string(first_labeled->line) + "'s '" + first_labeled->label_text + "' is " +
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
  std::map<std::string, std::pair<int, std::string>> first_file;  // identity -> line, path
  listing.samples.reserve(rows.size());  // not doubled as it grows (most rows are samples)
  for (Row& r : rows) {
    if (!r.refused.empty() || !r.bad_value.empty()) {
      listing.rejects.push_back({r.sample.path, at(r.line) + (r.refused.empty() ? r.bad_value : r.refused)});
      continue;
    }
    uint64_t size = 0;
    std::string identity;
    const std::string why = files.Find(listing.root, r.sample.path, &size, &identity);
    if (!why.empty()) {
      listing.rejects.push_back({r.sample.path, at(r.line) + why});
      continue;
    }
    auto [same, inserted] = first_file.emplace(identity, std::pair(r.line, r.sample.path));
    if (!inserted) {
      return InvalidArgumentError(at(r.line) + r.sample.path + " is the same file as " + same->second.second +
                                  " (line " + std::to_string(same->second.first) +
                                  "; a link or another spelling): each file is listed once");
    }
    r.sample.size = size;
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
  listing.layout = "csv";
  bool has_split_column = col_split >= 0;
  LIBSHARD_RETURN_IF_ERROR(FinishListing(options, has_split_column, &listing));
  return listing;
}

}  // namespace
}  // namespace libshard::convert
