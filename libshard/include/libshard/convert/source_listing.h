// Source listing: the samples a conversion reads, found in a folder tree or a
// CSV/TSV manifest, with labels, splits and masks resolved, in a canonical
// order (sorted by split, then relative path, byte-wise) so the listing is the
// same on every machine for the same input.
//
// Folder layouts (ListFolder):
//   ROOT/CLASS/**/FILE             one sub-folder per class, labels 0..K-1 in
//                                  sorted class-name order (or --labels FILE)
//   ROOT/SPLIT/CLASS/**/FILE       SPLIT one of train, val, validation, valid,
//                                  test: the top level becomes the splits
//   ROOT/FILE, ROOT/SPLIT/FILE     flat folders: unlabeled samples
// In a folder that has class sub-folders, a file beside them belongs to no
// class and is rejected. Names starting with '.' are skipped; symbolic links
// are followed, and a directory reached twice (a link loop) is walked once.
// Every other file is a candidate: one that is not an image is rejected
// later, by the converter, not here. With `val_fraction` > 0, an input
// without split folders is split by a hash of each relative path (stable
// across runs and machines): a sample goes to "val" when
// Fnv1a64(path) / 2^64 < val_fraction.
//
// A CSV/TSV manifest (ReadSourceCsv) has a header naming the columns
// `path,label[,mask][,split]` (any order, each once; other names through
// ListOptions::*_column; TSV when the file name ends in .tsv or the header
// has a tab; a UTF-8 byte order mark is skipped). Paths are relative to the
// manifest's folder, or absolute (used as given). Each path is listed once.
// Labels are all integers (kept as given, 0..2^63-1) or all class names
// (numbered 0..K-1 in sorted order, or by `labels_file`, which makes every
// label a name); a column mixing the two is an error naming the line. An
// empty label means unlabeled. Split names must be valid name parts
// (ValidateNamePart). A manifest without data rows is an error.
//
// Masks (`masks` option): the mask of ROOT/REL/STEM.EXT is the first of
// MASKS/REL/STEM{suffix}.{png,PNG} and MASKS/STEM{suffix}.{png,PNG} that
// exists; a sample without one is rejected. "{split}" in MASKS is replaced by
// the sample's split, for CamVid's ROOT/train, ROOT/train_labels, ROOT/val,
// ROOT/val_labels... layout (masks = "ROOT/{split}_labels"). A mask folder
// and the `ignore` paths inside the input are skipped, not rejected.
//
//   ListOptions opts;
//   opts.val_fraction = 0.1;
//   StatusOr<Listing> listing = ListFolder("OCT2017/train", opts);
//
// Errors: kNotFound / kInvalidArgument for an unreadable root, labels file or
// manifest (naming it and, for a CSV, the line). Unreadable sub-folders and
// files outside classes are Listing::rejects, not errors.
// Thread-safety: pure functions apart from reading the file system.
#ifndef LIBSHARD_CONVERT_SOURCE_LISTING_H_
#define LIBSHARD_CONVERT_SOURCE_LISTING_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/status.h"

namespace libshard::convert {

struct SourceSample {
  std::string path;       // relative to the root, '/'-separated
  std::string split;      // "train" when the input has no splits
  int64_t label = -1;     // -1: unlabeled
  std::string mask_path;  // path to open (not root-relative); empty: no mask
  uint64_t size = 0;      // file size in bytes at listing time
  std::string origin;     // "FILE.csv:LINE" for a CSV row; empty for a folder
};

struct ListingReject {
  std::string path;
  std::string reason;
};

struct Listing {
  std::string root;                      // folder the paths are relative to
  std::vector<SourceSample> samples;     // canonical order
  std::vector<std::string> class_names;  // label i is class_names[i]; empty: unlabeled
  std::vector<std::string> splits;       // sorted split names that have samples
  std::vector<ListingReject> rejects;    // sorted by path
  std::vector<std::string> warnings;     // worth telling the user (e.g. an empty class folder)
  int64_t label_offset = 0;              // added to every label (ListOptions::label_offset)
};

struct ListOptions {
  // Class names, one per line (label = line number from 0). Empty: the
  // sorted class folder names. Default: "".
  std::string labels_file;
  // Deterministic hash split of an input without split folders into "train"
  // and "val". Must be in [0, 1). Default: 0 (no split).
  double val_fraction = 0;
  // Folder of segmentation masks; "{split}" stands for the sample's split.
  // Default: "" (no masks).
  std::string masks;
  // Files or folders that may lie inside the input but are not samples (a
  // class_dict.csv): skipped without a reject. Default: none.
  std::vector<std::string> ignore;
  // Appended to the image stem to find its mask, e.g. "_L" for CamVid.
  // Default: "".
  std::string mask_suffix;
  // A folder left out of a folder listing wherever it appears under the
  // input (matched by device and inode, so any spelling of the path works):
  // `shard convert` passes its output folder, so that output inside the
  // input never lists its own shards. Ignored when it does not exist.
  // Default: "" (none).
  std::string exclude_dir;
  // CSV column names. Defaults: "path", "label", "mask", "split".
  std::string path_column = "path";
  std::string label_column = "label";
  std::string mask_column = "mask";
  std::string split_column = "split";
  // Added to every label, class-folder labels and CSV integers alike (1 gives
  // TF's build_imagenet_data convention, 0 being "background"). Class i of
  // class_names then has label i + label_offset. 0..1000000. Default: 0.
  int64_t label_offset = 0;
  // The split of a sample whose input names none (a flat or class-per-folder
  // input, an empty CSV split field); any other value than the default is an
  // error for a folder with split folders. Default: "train".
  std::string default_split = "train";
};

StatusOr<Listing> ListFolder(const std::string& root, const ListOptions& options);
StatusOr<Listing> ReadSourceCsv(const std::string& csv_path, const ListOptions& options);

// The class name of `label` (label_offset applied), or "" for an unlabeled
// sample or an integer label without a name.
std::string_view ClassName(const Listing& listing, int64_t label);

// The file a sample path names: `path` itself when absolute, else root/path.
std::string SourceFilePath(const std::string& root, const std::string& path);

// OK when `name` may be one part of a file name: not empty, not "." or "..",
// no '/' and no control character (tab, newline, DEL...). Otherwise
// kInvalidArgument naming `what` ("split name", "shard prefix").
Status ValidateNamePart(const std::string& what, const std::string& name);

// The 64-bit FNV-1a hash (used for the val split; stable by definition).
uint64_t Fnv1a64(std::string_view s);

}  // namespace libshard::convert

#endif  // LIBSHARD_CONVERT_SOURCE_LISTING_H_
