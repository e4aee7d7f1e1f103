// ListFolder: the samples of a folder tree (class per folder, split folders,
// flat), walked in a canonical order; source_listing.h states the layouts.
#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "convert/listing_internal.h"
#include "libshard/convert/source_listing.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/text_escape.h"
#include "libshard/util/strings.h"

namespace libshard::convert {
namespace fs = std::filesystem;
namespace {

using internal::FinishListing;
using internal::LabelIndex;
using internal::MaskFolder;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A name that starts like a split (train2017, val_images, TestSet) without
// being one: worth a warning when it becomes a class.
bool LooksLikeSplit(const std::string& name) {
  const std::string l = Lower(name);
  for (const char* p : {"train", "val", "test", "dev"}) {
    if (util::StartsWith(l, p)) return true;
  }
  return false;
}

// Hidden names, and the folder of resource forks that macOS's zip adds
// (`__MACOSX/`, its `._x` files): skipped without a reject.
bool Hidden(const std::string& name) { return (!name.empty() && name[0] == '.') || name == "__MACOSX"; }

// Why `path` cannot be stat'ed: a dangling symbolic link says so, with its
// target.
std::string CannotStat(const std::string& path, int err) {
  struct stat link;
  if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    std::error_code ec;
    const fs::path target = fs::read_symlink(path, ec);
    return "symbolic link to " + (ec ? std::string("an unreadable target") : EscapeText(target.string())) +
           ", which cannot be followed: " + std::strerror(err) + (err == ENOENT ? " (a dangling link)" : "");
  }
  return std::string("cannot stat: ") + std::strerror(err);
}

struct Entry {
  std::string name;
  bool is_dir = false;
  uint64_t size = 0;
};

// A folder's identity, for ListOptions::exclude_dir, and the relative paths
// under which the listing met it (left out there).
struct FolderId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool set = false;
  std::vector<std::string>* met = nullptr;
};

// What `shard convert` writes into its output folder (its hidden .libshard/
// state is skipped as every hidden name is).
bool IsConvertOutputName(const std::string& name) {
  auto ends = [&name](const char* tail) {
    const size_t n = std::strlen(tail);
    return name.size() >= n && name.compare(name.size() - n, n, tail) == 0;
  };
  return ends(".tfrecord") || ends(".tfrecord.idx") || ends(".tfrecord.labels") || name == manifest::kManifestName ||
         name == "rejects.tsv" || (util::StartsWith(name, "manifest.task-") && ends(".json"));
}

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
      rejects->push_back({child_rel, CannotStat(it->path().string(), errno)});
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      if (skip.set && st.st_dev == skip.dev && st.st_ino == skip.ino) {
        if (skip.met != nullptr) skip.met->push_back(child_rel);
        continue;
      }
      out->push_back({name, true, 0});
    } else if (S_ISREG(st.st_mode)) {
      out->push_back({name, false, static_cast<uint64_t>(st.st_size)});
    } else {
      rejects->push_back({child_rel, "not a regular file"});
    }
  }
  std::sort(out->begin(), out->end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return Status::OK();
}

// Walks folders below ROOT. Symbolic links are followed; a folder that is
// its own ancestor on the current path (a link loop) is not entered again,
// and said in *warnings. A folder reached twice otherwise (two links to one
// folder, in two classes) is walked each time, listed where the tree puts it.
// Decides which files of a folder listing are samples: the --exclude and
// --include globs, then the file's extension (source_listing.h).
class FileFilter {
 public:
  explicit FileFilter(const ListOptions& o) : include_(o.include), exclude_(o.exclude) {}

  // True when `rel` is a sample; otherwise counts it in *skips.
  bool Take(const std::string& rel, ListingSkips* skips) const {
    for (const std::string& g : exclude_) {
      if (Matches(g, rel)) {
        ++skips->excluded;
        return false;
      }
    }
    if (!include_.empty()) {
      for (const std::string& g : include_) {
        if (Matches(g, rel)) return true;
      }
      ++skips->not_included;
      return false;
    }
    const std::string ext = Extension(rel);
    if (ext.empty() || IsImageExtension(ext)) return true;
    ++skips->non_image[ext];
    return false;
  }

 private:
  static bool Matches(const std::string& glob, const std::string& rel) {
    const std::string target = glob.find('/') == std::string::npos ? rel.substr(rel.rfind('/') + 1) : rel;
    return ::fnmatch(glob.c_str(), target.c_str(), 0) == 0;
  }
  std::vector<std::string> include_, exclude_;
};

class Walker {
 public:
  Walker(std::string root, FolderId skip, std::vector<std::string>* warnings = nullptr)
      : root_(std::move(root)), skip_(skip), warnings_(warnings) {}

  // Every regular file under ROOT/rel (recursively), as (rel path, size).
  void Walk(const std::string& rel, std::vector<std::pair<std::string, uint64_t>>* files,
            std::vector<ListingReject>* rejects) {
    std::string dir = rel.empty() ? root_ : root_ + "/" + rel;
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0) {
      rejects->push_back({rel, std::string("cannot stat folder: ") + std::strerror(errno)});
      return;
    }
    const std::pair<dev_t, ino_t> id{st.st_dev, st.st_ino};
    if (auto it = ancestors_.find(id); it != ancestors_.end()) {
      if (warnings_ != nullptr) {
        warnings_->push_back("folder " + EscapeText(rel) + " is a link back to " +
                             (it->second.empty() ? std::string("the input folder") : EscapeText(it->second)) +
                             " (a loop): not followed");
      }
      return;
    }
    ancestors_.emplace(id, rel);
    std::vector<Entry> entries;
    Status s = ReadDir(dir, rel, &entries, rejects, skip_);
    if (!s.ok()) {
      rejects->push_back({rel, s.message()});
    } else {
      for (const Entry& e : entries) {
        std::string child = rel.empty() ? e.name : rel + "/" + e.name;
        if (e.is_dir) {
          Walk(child, files, rejects);
        } else {
          files->push_back({child, e.size});
        }
      }
    }
    ancestors_.erase(id);
  }

  // The folders above the next walks (the root, a split folder): a link
  // back to one of them is a loop.
  void SetAncestors(const std::vector<std::string>& rels) {
    ancestors_.clear();
    for (const std::string& rel : rels) {
      std::string dir = rel.empty() ? root_ : root_ + "/" + rel;
      struct stat st;
      if (::stat(dir.c_str(), &st) == 0) ancestors_.emplace(std::pair{st.st_dev, st.st_ino}, rel);
    }
  }

 private:
  std::string root_;
  FolderId skip_;
  std::vector<std::string>* warnings_;
  std::map<std::pair<dev_t, ino_t>, std::string> ancestors_;  // the current path's folders -> rel
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

// What the layout rules read of a folder tree: on disk (FileTree) or as the
// keys of a bucket's objects (KeyTree). Paths are relative to the root,
// '/'-separated; hidden names (Hidden) are never returned.
class Tree {
 public:
  virtual ~Tree() = default;
  // The entries of folder `rel` ("" the root), sorted by name. Entries that
  // cannot be read go to *rejects.
  virtual Status ReadDir(const std::string& rel, std::vector<Entry>* out, std::vector<ListingReject>* rejects) = 0;
  // Every file below folder `rel`, recursively, as (rel path, size).
  virtual void Walk(const std::string& rel, std::vector<std::pair<std::string, uint64_t>>* files,
                    std::vector<ListingReject>* rejects) = 0;
  // The folders above the next walks (the root, a split folder).
  virtual void SetAncestors(const std::vector<std::string>& rels) { (void)rels; }
  // Whether `rel` is one of ListOptions::ignore or a split's mask folder,
  // once Ignore() was told the splits.
  virtual void Ignore(const ListOptions& options, const std::vector<std::string>& splits) {
    (void)options;
    (void)splits;
  }
  virtual bool Ignored(const std::string& rel) const {
    (void)rel;
    return false;
  }
};

class FileTree : public Tree {
 public:
  FileTree(std::string root, FolderId skip, std::vector<std::string>* warnings)
      : root_(std::move(root)), skip_(skip), walker_(root_, skip, warnings) {}
  Status ReadDir(const std::string& rel, std::vector<Entry>* out, std::vector<ListingReject>* rejects) override {
    return libshard::convert::ReadDir(rel.empty() ? root_ : root_ + "/" + rel, rel, out, rejects, skip_);
  }
  void Walk(const std::string& rel, std::vector<std::pair<std::string, uint64_t>>* files,
            std::vector<ListingReject>* rejects) override {
    walker_.Walk(rel, files, rejects);
  }
  void SetAncestors(const std::vector<std::string>& rels) override { walker_.SetAncestors(rels); }
  void Ignore(const ListOptions& options, const std::vector<std::string>& splits) override {
    ignored_ids_ = IgnoredIds(options, splits);
  }
  bool Ignored(const std::string& rel) const override {
    struct stat st;
    return !ignored_ids_.empty() && ::stat((root_ + "/" + rel).c_str(), &st) == 0 &&
           ignored_ids_.count({st.st_dev, st.st_ino}) > 0;
  }

 private:
  std::string root_;
  FolderId skip_;
  Walker walker_;
  std::set<std::pair<dev_t, ino_t>> ignored_ids_;
};

// Object keys as a tree: "a/b/c.jpg" is file c.jpg in folder a/b. Keys with
// a hidden part are left out (as hidden files and folders are); a key
// ending in '/' (a folder marker) is no file.
class KeyTree : public Tree {
 public:
  explicit KeyTree(std::vector<std::pair<std::string, uint64_t>> keys) : keys_(std::move(keys)) {
    std::sort(keys_.begin(), keys_.end());
    keys_.erase(std::remove_if(keys_.begin(), keys_.end(),
                               [](const auto& k) {
                                 if (k.first.empty() || k.first.back() == '/') return true;
                                 size_t start = 0;
                                 while (start <= k.first.size()) {
                                   const size_t end = std::min(k.first.find('/', start), k.first.size());
                                   if (Hidden(k.first.substr(start, end - start))) return true;
                                   start = end + 1;
                                 }
                                 return false;
                               }),
                keys_.end());
  }
  Status ReadDir(const std::string& rel, std::vector<Entry>* out, std::vector<ListingReject>*) override {
    const std::string prefix = rel.empty() ? "" : rel + "/";
    for (auto it = std::lower_bound(keys_.begin(), keys_.end(), std::pair<std::string, uint64_t>(prefix, 0));
         it != keys_.end() && util::StartsWith(it->first, prefix); ++it) {
      const std::string rest = it->first.substr(prefix.size());
      const size_t slash = rest.find('/');
      Entry e{rest.substr(0, slash), slash != std::string::npos, slash == std::string::npos ? it->second : 0};
      if (!out->empty() && out->back().name == e.name && out->back().is_dir == e.is_dir) continue;
      out->push_back(std::move(e));
    }
    std::stable_sort(out->begin(), out->end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
    return Status::OK();
  }
  void Walk(const std::string& rel, std::vector<std::pair<std::string, uint64_t>>* files,
            std::vector<ListingReject>*) override {
    const std::string prefix = rel + "/";
    for (auto it = std::lower_bound(keys_.begin(), keys_.end(), std::pair<std::string, uint64_t>(prefix, 0));
         it != keys_.end() && util::StartsWith(it->first, prefix); ++it) {
      files->push_back(*it);
    }
  }

 private:
  std::vector<std::pair<std::string, uint64_t>> keys_;  // sorted by key
};

// A class folder whose files are none of them samples: refused unless the
// options keep it (ListOptions::keep_empty_classes) or name the classes.
Status NoImagesInClass(const std::string& root, const std::string& rel, const std::string& class_name,
                       const std::vector<std::pair<std::string, uint64_t>>& files, const ListOptions& options,
                       std::vector<std::string>* warnings) {
  std::map<std::string, uint64_t> by_ext;
  bool output = false;
  for (const auto& [path, size] : files) {
    const std::string ext = Extension(path);
    ++by_ext[ext.empty() ? "(no extension)" : ext];
    output |= IsConvertOutputName(path.substr(path.rfind('/') + 1));
  }
  std::string held;
  for (const auto& [ext, n] : by_ext) held += (held.empty() ? "" : ", ") + EscapeText(ext) + " " + std::to_string(n);
  const std::string what = "class folder " + EscapeText(root + "/" + rel) + " holds " + std::to_string(files.size()) +
                           " file(s) and no image (" + held + ")" +
                           (output ? ", like an earlier `shard convert` output" : "");
  if (!options.labels_file.empty()) return Status::OK();  // the labels file names the classes
  if (options.keep_empty_classes) {
    warnings->push_back(what + "; class '" + EscapeText(class_name) + "' keeps its label (--keep-empty-classes)");
    return Status::OK();
  }
  return InvalidArgumentError(what + ": it would become class '" + EscapeText(class_name) +
                              "' and shift the labels of the classes after it; move it out of the input, give "
                              "--labels FILE (the class names in label order), or --keep-empty-classes to keep it "
                              "as a class without samples");
}

// The layout rules (source_listing.h) over `tree`, whose root `root` names
// in messages.
Status ListTree(Tree& tree, const std::string& root, const ListOptions& options, Listing* out) {
  Listing& listing = *out;
  std::vector<Entry> top;
  LIBSHARD_RETURN_IF_ERROR(tree.ReadDir("", &top, &listing.rejects));
  const FolderLayout layout = options.layout;
  // The split a top-level folder stands for ("" for none).
  const auto split_of = [layout](const Entry& e) -> std::string {
    if (!e.is_dir || layout == FolderLayout::kClass || layout == FolderLayout::kFlat) return "";
    std::string split = SplitForFolderName(e.name);
    return split.empty() && layout == FolderLayout::kSplitClass ? e.name : split;
  };
  std::vector<std::string> split_names = {options.default_split};
  for (const Entry& e : top) {
    if (!split_of(e).empty()) split_names.push_back(split_of(e));
  }
  tree.Ignore(options, split_names);
  top.erase(std::remove_if(top.begin(), top.end(), [&](const Entry& e) { return tree.Ignored(e.name); }), top.end());
  bool has_splits = false;
  for (const Entry& e : top) has_splits |= !split_of(e).empty();

  // (split folder rel path or "", split name) pairs to read classes from.
  std::vector<std::pair<std::string, std::string>> groups;
  if (has_splits && options.default_split != ListOptions().default_split) {
    return InvalidArgumentError("split '" + options.default_split + "' given for " + root +
                                ", which has split folders (train, val, ...): they name the splits");
  }
  const FileFilter filter(options);
  if (has_splits) {
    std::map<std::string, std::string> folder_of;  // split -> its folder
    for (const Entry& e : top) {
      if (const std::string split = split_of(e); !split.empty()) {
        LIBSHARD_RETURN_IF_ERROR(ValidateNamePart("split name", split));
        if (auto [it, inserted] = folder_of.emplace(split, e.name); !inserted) {
          return InvalidArgumentError("folders " + EscapeText(it->second) + " and " + EscapeText(e.name) + " of " +
                                      root + " both name split '" + split +
                                      "'; merge or rename one (or --layout class: the top-level folders are "
                                      "classes)");
        }
        groups.push_back({e.name, split});
        listing.split_folders.push_back({e.name, split});
      } else if (!e.is_dir && !filter.Take(e.name, &listing.skipped)) {
        continue;
      } else {
        listing.rejects.push_back({e.name, e.is_dir ? "folder is not a split (train/training, val/valid/"
                                                      "validation/dev, test/testing, any case) beside split "
                                                      "folders; --layout split/class takes every top-level "
                                                      "folder as a split"
                                                    : "file beside the split folders"});
      }
    }
  } else {
    LIBSHARD_RETURN_IF_ERROR(ValidateNamePart("split name", options.default_split));
    groups.push_back({"", options.default_split});
    if (layout != FolderLayout::kFlat) {
      for (const Entry& e : top) {
        if (e.is_dir && (!SplitForFolderName(e.name).empty() || LooksLikeSplit(e.name))) {
          listing.warnings.push_back(
              "top-level folder '" + EscapeText(e.name) + "' looks like a split but was taken as a class" +
              (layout == FolderLayout::kClass ? std::string(" (--layout class)")
                                              : std::string("; --layout split/class makes the top-level folders "
                                                            "splits")));
        }
      }
    }
  }

  struct Pending {
    std::string path;
    std::string split;
    std::string class_name;  // empty: unlabeled
    uint64_t size;
  };
  std::vector<Pending> pending;
  std::set<std::string> class_seen;
  bool any_classes = false;
  for (const auto& [rel, split] : groups) {
    std::vector<Entry> entries;
    tree.SetAncestors(rel.empty() ? std::vector<std::string>{""} : std::vector<std::string>{"", rel});
    if (rel.empty()) {
      entries = top;
    } else {
      Status s = tree.ReadDir(rel, &entries, &listing.rejects);
      if (!s.ok()) {
        listing.rejects.push_back({rel, s.message()});
        continue;
      }
      const std::string dir = rel + "/";  // (a structured binding cannot be captured in C++17)
      entries.erase(
          std::remove_if(entries.begin(), entries.end(), [&](const Entry& e) { return tree.Ignored(dir + e.name); }),
          entries.end());
    }
    const bool has_classes = layout != FolderLayout::kFlat &&
                             std::any_of(entries.begin(), entries.end(), [](const Entry& e) { return e.is_dir; });
    any_classes |= has_classes;
    for (const Entry& e : entries) {
      std::string child = rel.empty() ? e.name : rel + "/" + e.name;
      if (!e.is_dir && !filter.Take(child, &listing.skipped)) {
        continue;
      } else if (!has_classes && e.is_dir) {  // --layout flat: every file below, unlabeled
        std::vector<std::pair<std::string, uint64_t>> files;
        tree.Walk(child, &files, &listing.rejects);
        for (auto& [path, size] : files) {
          if (filter.Take(path, &listing.skipped)) pending.push_back({path, split, "", size});
        }
      } else if (!has_classes) {
        pending.push_back({child, split, "", e.size});
      } else if (!e.is_dir) {
        listing.rejects.push_back({child, "file outside any class folder"});
      } else {
        std::vector<std::pair<std::string, uint64_t>> files;
        tree.Walk(child, &files, &listing.rejects);
        // An empty class keeps its label, so the later classes' do not shift.
        class_seen.insert(e.name);
        if (files.empty()) {
          listing.warnings.push_back("class folder " + child + " has no files; class '" + e.name + "' keeps its label");
        }
        size_t taken = 0;
        const uint64_t filtered = listing.skipped.excluded + listing.skipped.not_included;
        for (auto& [path, size] : files) {
          if (filter.Take(path, &listing.skipped)) {
            pending.push_back({path, split, e.name, size});
            ++taken;
          }
        }
        // (Files left out by the user's own --exclude / --include globs are a choice, not a surprise.)
        if (taken == 0 && !files.empty() && listing.skipped.excluded + listing.skipped.not_included == filtered) {
          LIBSHARD_RETURN_IF_ERROR(NoImagesInClass(root, child, e.name, files, options, &listing.warnings));
        }
      }
    }
  }

  LIBSHARD_ASSIGN_OR_RETURN(auto index, LabelIndex(options, class_seen, &listing.class_names));
  // Reserved: 18 MB at 10^5 samples; grown by doubling it was 24 MB, and a copy of it as it grew.
  listing.samples.reserve(pending.size());
  for (Pending& p : pending) {
    SourceSample s;
    s.path = std::move(p.path);
    s.split = std::move(p.split);
    s.size = p.size;
    if (!p.class_name.empty()) {
      auto it = index.find(p.class_name);
      if (it == index.end()) {
        listing.rejects.push_back({s.path, "class '" + p.class_name + "' is not in " + options.labels_file});
        continue;
      }
      s.label = it->second;
    }
    listing.samples.push_back(std::move(s));
  }
  std::vector<Pending>().swap(pending);  // freed before the sort
  listing.layout = std::string(has_splits ? "split/" : "") + (any_classes ? "class" : "flat");
  return FinishListing(options, has_splits, &listing);
}


}  // namespace

StatusOr<Listing> ListFolder(const std::string& root_in, const ListOptions& options) {
  std::string root = root_in;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (!options.image_root.empty()) {
    return InvalidArgumentError(root +
                                ": --image-root is where a CSV manifest's paths lead; a folder is read as it is");
  }
  if (!options.features.empty()) {
    return InvalidArgumentError(root + ": --feature " + CsvFeatureText(options.features[0]) +
                                " stores a CSV manifest's column; a folder has none");
  }
  struct stat st;
  if (::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return NotFoundError(root + ": not a readable folder");
  }
  Listing listing;
  listing.root = root;
  FolderId skip;
  std::vector<std::string> excluded_at;  // where the listing met exclude_dir
  struct stat excluded;
  if (!options.exclude_dir.empty() && ::stat(options.exclude_dir.c_str(), &excluded) == 0 &&
      S_ISDIR(excluded.st_mode)) {
    skip = {excluded.st_dev, excluded.st_ino, true, &excluded_at};
  }
  FileTree tree(root, skip, &listing.warnings);
  LIBSHARD_RETURN_IF_ERROR(ListTree(tree, root, options, &listing));
  const FileFilter filter(options);
  // The excluded folder (the output) may hold only what a conversion writes
  // there: anything else would be left out of the listing without a word.
  for (const std::string& rel : excluded_at) {
    std::vector<std::pair<std::string, uint64_t>> files;
    std::vector<ListingReject> ignored_rejects;
    Walker(root, FolderId{}).Walk(rel, &files, &ignored_rejects);
    std::vector<std::string> inputs;
    ListingSkips unused;
    for (const auto& [path, size] : files) {
      if (!IsConvertOutputName(path.substr(path.rfind('/') + 1)) && filter.Take(path, &unused)) {
        inputs.push_back(path);
      }
    }
    if (!inputs.empty()) {
      return InvalidArgumentError("output folder " + options.exclude_dir + " lies inside the input " + root + " (as " +
                                  rel + ") and holds " + std::to_string(inputs.size()) + " input image(s) (e.g. " +
                                  EscapeText(inputs.front()) +
                                  ") that the conversion would leave out; write the shards to a folder "
                                  "outside the input (or to an empty or earlier output folder)");
    }
  }

  return listing;
}

StatusOr<Listing> ListObjectKeys(const std::string& root, std::vector<std::pair<std::string, uint64_t>> keys,
                                 const ListOptions& options) {
  if (!options.image_root.empty() || !options.features.empty() || !options.masks.empty()) {
    return InvalidArgumentError(root + ": --image-root, --feature and --masks are not read from a bucket's keys");
  }
  Listing listing;
  listing.root = root;
  KeyTree tree(std::move(keys));
  LIBSHARD_RETURN_IF_ERROR(ListTree(tree, root, options, &listing));
  return listing;
}

}  // namespace libshard::convert
