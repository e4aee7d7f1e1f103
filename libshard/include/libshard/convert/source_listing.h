// Source listing: the samples a conversion reads, found in a folder tree or a
// CSV/TSV manifest, with labels, splits and masks resolved, in a canonical
// order (sorted by split, then relative path, byte-wise) so the listing is the
// same on every machine for the same input.
//
// Folder layouts (ListFolder, ListOptions::layout):
//   ROOT/CLASS/**/FILE             "class": one sub-folder per class, labels
//                                  0..K-1 in sorted class-name order (or
//                                  --labels FILE)
//   ROOT/SPLIT/CLASS/**/FILE       "split/class": the top level is the splits
//   ROOT/FILE, ROOT/SPLIT/FILE     "flat", "split/flat": unlabeled samples
// kAuto takes the top level as splits when a top-level folder's name is a
// split name (SplitForFolderName: train/training, val/valid/validation/dev,
// test/testing, any case); a top-level folder beside them that is not one is
// rejected. A top-level folder taken as a class whose name looks like a split
// (a split name under kClass, or train2017, val_images...) gives a warning.
// Two folders naming one split (train and Train) are kInvalidArgument.
// In a folder that has class sub-folders, a file beside them belongs to no
// class and is rejected. Names starting with '.' are skipped, and so are
// files whose extension is not an image type (metadata.json, README.txt,
// Thumbs.db: counted in Listing::skipped, see ListOptions::include for the
// rule and the globs that change it); symbolic links
// are followed: a link to a folder above it (a loop) is not followed, with a
// warning; a folder reached by several links is listed at each place the
// tree puts it (under each class that links to it).
// Every other file is a candidate: one that is not an image (whatever its
// extension says) is rejected later, by the converter, not here. With `val_fraction` > 0, an input
// without split folders is split by a hash of each relative path (stable
// across runs and machines): a sample goes to "val" when
// Fnv1a64(path) / 2^64 < val_fraction.
//
// A CSV/TSV manifest (ReadSourceCsv) has a header naming the columns
// `path,label[,mask][,split]` (any order, each once; other names through
// ListOptions::*_column; TSV when the file name ends in .tsv or the header
// has a tab; a UTF-8 byte order mark is skipped). Paths are relative to the
// manifest's folder, or absolute (used as given); with ListOptions::image_root
// they are relative to that folder and never leave it. A row whose file is
// missing is a reject naming the line and the path tried, with "did you
// mean" for a spelling that differs only in case (looked up folder by folder,
// at most 10000 entries a folder). Each file is listed once:
// two rows naming one file (by normalised path, `./a`, `a//b`, `x/../a`,
// absolute, or by identity, a link) are an error naming both lines.
// Columns named by ListOptions::features are read into each sample's
// `features` (a field that is not of its type makes the row a reject).
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
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/convert/annotations.h"
#include "libshard/status.h"

namespace libshard::convert {

// A CSV column stored as a feature of every record (ListOptions::features,
// `shard convert --feature COLUMN:TYPE`): multi-label targets, captions,
// regression targets. The feature key is the column's name, as the
// loader's extras= takes it.
enum class FeatureType {
  kInt,        // one int64 (decimal, optional '-')
  kFloat,      // one float (decimal or exponent notation; finite)
  kBytes,      // the field's text as it is (an empty field is an empty value)
  kIntList,    // int64s separated by spaces ("3 17 42"); an empty field is an empty list
  kFloatList,  // floats separated by spaces; an empty field is an empty list
};
struct CsvFeature {
  std::string column;  // the CSV column and the feature key
  FeatureType type = FeatureType::kBytes;
};
// "COLUMN:TYPE" (split at the last ':'; TYPE int, float, bytes, int_list or
// float_list) -> CsvFeature. kInvalidArgument naming `spec` for another type,
// an empty column, a column that is not UTF-8, or one under "image/" (the
// converter's own keys).
StatusOr<CsvFeature> ParseCsvFeature(std::string_view spec);
// "COLUMN:TYPE", as ParseCsvFeature reads it.
std::string CsvFeatureText(const CsvFeature& feature);

// One sample's value of one CsvFeature: ints for kInt / kIntList, floats for
// kFloat / kFloatList, bytes for kBytes.
struct FeatureValue {
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::string bytes;
};

struct SourceSample {
  std::string path;       // relative to the root, '/'-separated
  std::string split;      // "train" when the input has no splits
  int64_t label = -1;     // -1: unlabeled
  std::string mask_path;  // path to open (not root-relative); empty: no mask
  uint64_t size = 0;      // file size in bytes at listing time
  std::string origin;     // "FILE.csv:LINE" for a CSV row; empty for a folder
  // Detection boxes (annotations.h AttachAnnotations); null without
  // annotations, an empty list for an image no annotation names.
  std::shared_ptr<const SampleObjects> objects;
  // ListOptions::features' values, in that order (a CSV row's); empty
  // without them.
  std::vector<FeatureValue> features;
  // Where a sample pack keeps its bytes (sample_pack.h): the partition and
  // the byte offsets of its image record and of its mask's (with mask_path
  // set), and the mask's size. 0 for files.
  uint32_t part = 0;
  uint64_t offset = 0;
  uint64_t mask_offset = 0;
  uint64_t mask_size = 0;
};

// Reads a listing's samples when they are not files under Listing::root (a
// sample pack). Thread-safe: the conversion's threads call it at once.
class SampleSource {
 public:
  virtual ~SampleSource() = default;
  // The bytes of `sample`'s image, refused (kInvalidArgument) past
  // `max_bytes`; errors name where it was read and the offset.
  virtual StatusOr<std::string> Read(const SourceSample& sample, uint64_t max_bytes) const = 0;
  // The bytes of its mask (a sample whose mask_path is set).
  virtual StatusOr<std::string> ReadMask(const SourceSample& sample, uint64_t max_bytes) const = 0;
};

struct ListingReject {
  std::string path;
  std::string reason;
};

// Files a folder listing left out on purpose (neither samples nor rejects).
struct ListingSkips {
  std::map<std::string, uint64_t> non_image;  // lower-case extension (".json") -> files
  uint64_t excluded = 0;                      // matched an --exclude glob
  uint64_t not_included = 0;                  // matched no --include glob
};

// How a folder's top level is read (ListOptions::layout).
enum class FolderLayout {
  kAuto,        // splits when a top-level folder has a split name, else classes or flat
  kClass,       // every top-level folder is a class (even one named train)
  kSplitClass,  // every top-level folder is a split (named by SplitForFolderName, else as it is)
  kFlat,        // every file below ROOT, unlabeled, in the default split
};
// "auto", "class", "split/class", "flat"; kInvalidArgument otherwise.
StatusOr<FolderLayout> ParseFolderLayout(std::string_view name);

struct Listing {
  std::string root;                      // folder the paths are relative to
  std::vector<SourceSample> samples;     // canonical order
  std::vector<std::string> class_names;  // label i is class_names[i]; empty: unlabeled
  std::vector<std::string> splits;       // sorted split names that have samples
  std::vector<ListingReject> rejects;    // sorted by path
  std::vector<std::string> warnings;     // worth telling the user (e.g. an empty class folder)
  ListingSkips skipped;                  // a folder's non-image and filtered files
  // The layout found: "class", "split/class", "flat", "split/flat" or "csv".
  std::string layout;
  // (top-level folder, split) for a folder with split folders.
  std::vector<std::pair<std::string, std::string>> split_folders;
  int64_t label_offset = 0;  // added to every label (ListOptions::label_offset)
  // Detection annotations attached (annotations.h AttachAnnotations); empty
  // classes without.
  AnnotationSummary annotations;
  // Reads the samples' bytes; null: they are the files root/path
  // (SourceFilePath).
  std::shared_ptr<const SampleSource> source;
};

struct ListOptions {
  // Class names, one per line (label = line number from 0; a UTF-8 byte
  // order mark and CRLF line ends are skipped). Empty: the sorted class
  // folder names. Default: "".
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
  // input never lists its own shards. A folder met there that holds any
  // file but what a conversion writes (*.tfrecord, *.tfrecord.idx,
  // manifest.json, rejects.tsv, hidden state) is kInvalidArgument naming
  // how many: its files would be left out without a word. Ignored when it
  // does not exist. Default: "" (none).
  std::string exclude_dir;
  // Globs (fnmatch(3)) choosing the files of a folder listing: a glob
  // without '/' matches the file name, one with '/' the path relative to the
  // input ('*' then matches across '/'). A file matching an `exclude` glob is
  // skipped; with `include` globs, a file matching none is skipped and one
  // matching any is a sample whatever its extension; without them a file is
  // a sample when its extension is an image type (IsImageExtension) or it has
  // none. Skipped files are counted in Listing::skipped. A CSV manifest names
  // its files: ReadSourceCsv refuses these. Default: none.
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  // How a folder's top level is read (FolderLayout). Default: kAuto.
  FolderLayout layout = FolderLayout::kAuto;
  // A class folder that holds files but no sample (annotations/boxes.json,
  // an earlier output's shards) would become a class and shift the labels
  // of the classes after it: ListFolder refuses it (kInvalidArgument naming
  // the folder and what it holds) unless this is set (it then keeps its
  // label, warned) or `labels_file` names the classes. A folder whose files
  // the `exclude` / `include` globs left out keeps its label. An empty class
  // folder keeps its label either way (warned). Default: false.
  bool keep_empty_classes = false;
  // CSV: the folder the manifest's paths (images and masks) resolve from,
  // instead of the manifest's own folder. Every path must then stay inside
  // it: an absolute path or one whose ".." parts climb out (after lexical
  // normalisation, io::CheckRelativeName) is a reject ("... is not a path
  // inside --image-root ROOT (why)"); symbolic
  // links inside it are followed, as in a folder listing. A missing folder
  // is kNotFound. Default: "" (the manifest's folder).
  std::string image_root;
  // CSV column names. Defaults: "path", "label", "mask", "split".
  std::string path_column = "path";
  std::string label_column = "label";
  std::string mask_column = "mask";
  std::string split_column = "split";
  // CSV: columns stored as features of every record (CsvFeature), in this
  // order; each must be a column of the header other than the path, label,
  // mask and split columns, named once. A row whose field does not parse as
  // its type is a reject naming the CSV file, the line and the column
  // ("labels.csv:7: column 'score': 'high' is not a float"). A folder
  // listing refuses them (kInvalidArgument). Default: none.
  std::vector<CsvFeature> features;
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
// ListFolder's rules over the keys of a bucket's objects under a prefix, as
// (path relative to the prefix, size) pairs, each a relative path of plain
// parts (io::CheckRelativeName: the caller refuses the others): "a/b/c.jpg"
// is the file c.jpg in folder a/b, a key with a hidden part is left out as
// a hidden file is, a key ending in '/' is no file. `root` names the prefix
// in messages and is Listing::root. The same listing as ListFolder of a copy
// of the objects as files; --image-root, --feature and --masks are refused.
// ReadSourceCsv's rules for a CSV in a bucket: `text` is the object's,
// `csv_url` names it in messages, and each row's path is a key relative to
// `root` (the CSV's folder, ending in '/'), looked up in `keys` (path below
// `root` -> size, from a LIST). A path that is not a plain relative key
// ("..", "/abs") or names no object is a reject naming the row. --layout,
// --include, --exclude and --image-root are refused.
StatusOr<Listing> ReadCsvOfKeys(const std::string& csv_url, std::string text, const std::string& root,
                                const std::map<std::string, uint64_t>& keys, const ListOptions& options);
StatusOr<Listing> ListObjectKeys(const std::string& root, std::vector<std::pair<std::string, uint64_t>> keys,
                                 const ListOptions& options);

// The class name of `label` (label_offset applied), or "" for an unlabeled
// sample or an integer label without a name.
std::string_view ClassName(const Listing& listing, int64_t label);

// The file a sample path names: `path` itself when absolute, else root/path.
std::string SourceFilePath(const std::string& root, const std::string& path);
// The bytes of sample `s` of `listing`: Listing::source's, or its file's
// (SourceFilePath), at most `max_bytes`.
StatusOr<std::string> ReadSourceBytes(const Listing& listing, const SourceSample& s, uint64_t max_bytes);
// The bytes of sample `s`'s mask (mask_path set): Listing::source's, or the
// file mask_path.
StatusOr<std::string> ReadMaskBytes(const Listing& listing, const SourceSample& s, uint64_t max_bytes);

// OK when `name` may be one part of a file name: not empty, not "." or "..",
// no '/' and no control character (tab, newline, DEL...). Otherwise
// kInvalidArgument naming `what` ("split name", "shard prefix").
Status ValidateNamePart(const std::string& what, const std::string& name);

// The split a top-level folder name stands for, case-insensitively: "train"
// for train/training, "test" for test/testing, "val" for val/dev/
// development, and "valid"/"validation" for those (the names earlier
// versions gave them); "" for any other name.
std::string SplitForFolderName(const std::string& name);

// The layout a listing found, as data: per split, where it was read from,
// its samples and its classes.
struct SplitLayout {
  std::string name;    // the split
  std::string folder;  // the top-level folder it was read from, when not its name; else ""
  uint64_t samples = 0;
  uint64_t classes = 0;  // distinct labels among its samples (0: unlabeled)
};
struct ListingLayout {
  std::string kind;                 // Listing::layout: "split/class", "class", "flat", "csv"
  std::vector<SplitLayout> splits;  // by name; empty when nothing was listed
};
ListingLayout LayoutOf(const Listing& listing);

// "layout split/class: split train (folder Training) 600 samples in 10
// classes, split val 100 samples in 10 classes": what the dry run and the
// summary print (LayoutOf as text).
std::string LayoutSummary(const Listing& listing);

// The lower-case extension of a path's file name with its dot (".jpg"), or
// "" for none (no dot, a leading dot, a trailing dot).
std::string Extension(const std::string& rel);

// True for the extensions of image types, supported or not (.jpg, .png,
// .webp, .gif, .bmp, .tif, .heic, ...): such files are samples whose content
// decides (a PNG named .jpg converts; a GIF is rejected, never dropped).
bool IsImageExtension(const std::string& ext);

// "skipped 14 non-image file(s): .json 7, .desktop 7; 3 file(s) matching
// --exclude", or "" when nothing was skipped.
std::string SkipSummary(const ListingSkips& skips);

// The 64-bit FNV-1a hash (used for the val split; stable by definition).
uint64_t Fnv1a64(std::string_view s);

}  // namespace libshard::convert

#endif  // LIBSHARD_CONVERT_SOURCE_LISTING_H_
