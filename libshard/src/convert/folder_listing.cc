// ListFolder: the samples of a folder tree (class per folder, split folders,
// flat), walked in a canonical order; source_listing.h states the layouts.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "convert/listing_internal.h"
#include "libshard/convert/source_listing.h"
#include "libshard/text_escape.h"

namespace libshard::convert {
namespace fs = std::filesystem;
namespace {

using internal::FinishListing;
using internal::LabelIndex;
using internal::MaskFolder;

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

}  // namespace

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
  LIBSHARD_RETURN_IF_ERROR(FinishListing(options, has_splits, &listing));
  return listing;
}

}  // namespace libshard::convert
