// Verifying TFRecord shards: the checks behind `shard verify`, the CI gate
// for shards. Every record's framing and CRCs are checked, each payload is
// parsed as a tf.Example, and a `<shard>.idx` beside a plain shard is
// compared with the records. Damage never stops the run: it is reported as a
// list of faults per file, each with the byte offset, the record number and
// a stable kind name.
//
//   libshard::verify::VerifyOptions opts;
//   LIBSHARD_ASSIGN_OR_RETURN(auto paths, libshard::io::ExpandPaths(args));
//   std::vector<libshard::verify::FileResult> results = libshard::verify::VerifyFiles(paths, opts);
//   for (const auto& r : results)
//     for (const auto& f : r.faults) Report(r.path, f.offset, f.record, FaultKindName(f.kind), f.message);
//
// Contract:
//   - Faults are data, not errors: VerifyBuffer/VerifyFile/VerifyFiles never
//     fail, they return a FileResult whose `faults` is empty for a good file.
//     A file that cannot be opened or read is an `kUnreadable` fault.
//   - Within a file, checking stops at the first framing fault (the framing
//     cannot be trusted past it; no resynchronisation): `unchecked_bytes`
//     says how much was left. A payload that is not a tf.Example does not
//     stop the walk (its framing and CRCs are good).
//   - Record numbers count from 0: record N has N intact records before it.
//   - Offsets count bytes of the uncompressed stream (for plain files: of the
//     file); the first record starts at 0.
//   - Results of VerifyFiles are in the order of `paths`, whatever the number
//     of threads; each FileResult is the same bytes for any thread count.
//
// A shard set written by `shard convert` carries a manifest.json
// (proto/libshard/manifest.proto). VerifySet() checks the files against it:
// set-level faults (a listed shard missing, an unlisted one, a record count,
// size or checksum that differs) come back as SetFaults naming the file;
// per-record checks (labels inside the label map, the schema's keys and
// kinds) run during the same walk as the framing and come back as Faults of
// the file, with offset and record. With VerifyOptions::decode_images every
// image, raw array and mask is decoded as well.
//
// Thread-safety: all functions are pure apart from reading the named files;
// they may be called concurrently.
#ifndef LIBSHARD_VERIFY_VERIFIER_H_
#define LIBSHARD_VERIFY_VERIFIER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/example/example_view.h"
#include "libshard/record/format.h"
#include "libshard/record/stream_reader.h"
#include "libshard/status.h"

namespace libshard::verify {

struct VerifyOptions {
  // How the files are compressed; kAuto detects it per file from the first
  // bytes (record::DetectCompression). Default: kAuto.
  record::Compression compression = record::Compression::kAuto;
  // A record whose (CRC-valid) length exceeds this is a length_too_large
  // fault. Default: record::kDefaultMaxRecordLength (1 GiB).
  uint64_t max_record_length = record::kDefaultMaxRecordLength;
  // Parse every payload as a tf.Example; a payload that is not one is a
  // not_an_example fault. false checks framing and CRCs only. Default: true.
  bool check_examples = true;
  // Compare `<shard>.idx` and the labels sidecar `<shard>.labels`
  // (record/record_labels.h) with the records when they exist beside a
  // plain (uncompressed) shard; a missing one is not a fault (a manifest that
  // lists one it lacks is). Default: true.
  bool check_index = true;
  // Accept a file with no records, and a manifest that lists none. false
  // reports an empty file as an empty_file fault (a shard writer that wrote
  // nothing is usually a bug) and a manifest of 0 records as manifest_empty
  // (an empty dataset, e.g. converted from a folder that was not mounted).
  // Default: false.
  bool allow_empty = false;
  // At most this many faults are listed per file; further ones are only
  // counted (FileResult::faults_omitted). Must be at least 1. Default: 100.
  uint64_t max_faults_per_file = 100;
  // Files checked at the same time (VerifyFiles), 0..256; 0 = one per core
  // (util::ThreadCount, as convert and the BatchLoader take it), whatever
  // task arena the caller is in. With decode_images, records of one file are
  // decoded on the same threads too. Default: 0.
  int threads = 0;
  // Decode every image (`image/encoded`: JPEG, PNG or a raw array) and
  // segmentation mask, and compare their sizes with `image/height`,
  // `image/width` and `image/channels`. Records without `image/encoded` are
  // not decoded. Needs check_examples. Default: false.
  bool decode_images = false;
  // Largest width * height decoded (checked from the header before any
  // pixel buffer is allocated); larger images are image_undecodable.
  // Default: 100'000'000.
  uint64_t max_pixels = 100'000'000;
};

// Checks the options once; InvalidArgument names the bad field.
Status ValidateOptions(const VerifyOptions& options);

// What is wrong with a file, found while walking it: each comes as a Fault
// with the byte offset and record number. Names (FaultKindName) are stable:
// they appear in JSON.
enum class FaultKind {
  kLengthCrcMismatch,        // a header's CRC does not match its length bytes
  kLengthTooLarge,           // a CRC-valid length above max_record_length
  kTruncatedHeader,          // 1..11 bytes after the last record
  kTruncatedData,            // a record's data or data CRC runs past the end
  kDataCrcMismatch,          // a record's data does not match its CRC
  kNotAnExample,             // a good record whose payload is not a tf.Example
  kEmptyFile,                // no records at all (unless allow_empty)
  kIndexMismatch,            // `<shard>.idx` unparseable or not describing the shard
  kLabelsMismatch,           // `<shard>.labels` unparseable or not the records' labels
  kNotTfrecord,              // the first header is not TFRecord framing at all
  kUnreadable,               // the file (or its index) cannot be opened or read
  kCompressedStreamCorrupt,  // the gzip/zlib stream is corrupt or truncated
  // Against a manifest's rules (VerifySet), record by record.
  kManifestLabelOutOfRange,  // `image/class/label` not in the manifest's labels[]
  kManifestSchema,           // a required feature missing, or a feature of the wrong kind
  // With decode_images.
  kImageUndecodable,   // `image/encoded` does not decode (or its format is unknown)
  kImageSizeMismatch,  // decoded size differs from image/height, image/width or image/channels
  kRawArrayInvalid,    // a raw array's shape/dtype missing or bad, or bytes not of that shape
  kMaskUndecodable,    // the segmentation mask does not decode (or its format is unknown)
  kMaskSizeMismatch,   // the mask's size differs from the image's
  kLabelInvalid,       // `image/class/label` is present but not int64
  // Detection boxes (example/box_record.h), whenever a record has box keys.
  kBoxInvalid,                  // unequal lists, a coordinate outside [0, 1] or NaN, min > max, a label missing or < 0
  kManifestBoxLabelOutOfRange,  // `image/object/class/label` not in the manifest's object label map
};

// What is wrong with a set (VerifySet, CheckNumberedSets): about a whole
// file, a shard or the manifest itself; each comes as a SetFault naming it.
// Names (FaultKindName) are stable: they appear in JSON.
enum class SetFaultKind {
  kManifestUnreadable,     // the manifest cannot be opened or read
  kManifestInvalid,        // the manifest does not parse, or an entry makes no sense
  kManifestFormat,         // `format` is not "libshard.manifest/1"
  kManifestShardMissing,   // a listed shard (or its listed index file) does not exist
  kManifestShardUnlisted,  // a shard in the manifest's folder that it does not list
  kManifestRecordCount,    // the shard's record count differs from the manifest's
  kManifestSize,           // the shard's size in bytes differs from the manifest's
  kManifestChecksum,       // the shard's CRC-32C differs from the manifest's
  kManifestEmpty,          // the manifest lists no records at all (unless allow_empty)
  // Without a manifest: from the file names alone.
  kSetIncomplete,  // a -NNNNN-of-MMMMM set lacks numbers, has one >= M, or mixes counts
};

// "length_crc_mismatch", "not_an_example", ... (the names in docs/verify.md).
const char* FaultKindName(FaultKind kind);
// "manifest_shard_missing", "set_incomplete", ... (the names in docs/verify.md).
const char* FaultKindName(SetFaultKind kind);
// The kind of a framing fault (one vocabulary with the record module: the
// framing kinds' names are record::RecordFaultName's). kUnreadable for kNone
// and kEndOfData, which are not faults.
FaultKind FramingFaultKind(record::RecordFault fault);

struct Fault {
  uint64_t offset = 0;  // byte where the faulty record (or region) starts
  uint64_t record = 0;  // number of the record, from 0
  FaultKind kind = FaultKind::kUnreadable;
  // What is wrong, without the file name or offset; except that an
  // unreadable fault passes io's error on as it is, and io's errors name the
  // file (the shard, or its index: "open a.tfrecord.idx: Permission denied").
  std::string message;
};

struct FileResult {
  std::string path;  // as given
  // The compression the file was read with (never kAuto).
  record::Compression compression = record::Compression::kNone;
  uint64_t records = 0;  // intact records (framing and CRCs good)
  // Bytes of intact records, framing included: for a good file, its
  // (uncompressed) size.
  uint64_t bytes = 0;
  // Bytes after the first framing fault that were not checked. 0 when the
  // walk reached the end; unknown (nullopt) for a compressed file that
  // stopped early, whose remaining uncompressed size is not known.
  std::optional<uint64_t> unchecked_bytes = 0;
  // After a data_crc_mismatch in a plain file (its length, and so the
  // framing, can still be trusted): the records after the damaged one whose
  // framing holds (length CRC good, the whole record present), counted to
  // the end or the next framing fault; their payloads are not checked.
  // nullopt for any other file.
  std::optional<uint64_t> frames_after_fault;
  // Size of the file as stored (compressed for gzip/zlib); for VerifyBuffer
  // the buffer's size.
  uint64_t file_size = 0;
  // CRC-32C (unmasked) of the whole file as stored, when asked for
  // (FileChecks::checksum) and the file could be read to its end.
  std::optional<uint32_t> crc32c;
  std::vector<Fault> faults;    // in file order, at most max_faults_per_file
  uint64_t faults_omitted = 0;  // faults found beyond max_faults_per_file

  bool ok() const { return faults.empty() && faults_omitted == 0; }
  uint64_t fault_count() const { return faults.size() + faults_omitted; }
  // True when a fault of `kind` was found (among those listed).
  bool Has(FaultKind kind) const;
};

// What every record of a file must hold beyond being a tf.Example: the
// label map and the schema of a manifest.
struct FeatureRule {
  std::string key;
  example::FeatureKind kind = example::FeatureKind::kBytes;
  bool required = false;
};
struct RecordRules {
  std::vector<FeatureRule> schema;  // every record: required keys present, kinds as stated
  // Values `image/class/label` may take, sorted; empty: not checked.
  std::vector<int64_t> labels;
  // Values `image/object/class/label` may take, sorted; empty: not checked.
  std::vector<int64_t> object_labels;
  std::string source;  // where the rules come from (the manifest), for messages
};

// Extra per-file checks (VerifySet fills them from a manifest).
struct FileChecks {
  const RecordRules* rules = nullptr;  // borrowed; nullptr: none
  bool checksum = false;               // compute FileResult::crc32c
  // A file its manifest lists with 0 records (every input planned for it was
  // rejected): no empty_file fault, as with allow_empty.
  bool empty_listed = false;
};

// Verifies a whole file held in memory (`data` is borrowed for the call
// only). `name` becomes FileResult::path. No index check.
FileResult VerifyBuffer(std::string_view data, std::string name, const VerifyOptions& options,
                        const FileChecks& checks = {});

// Verifies the file at `path`, and its `.idx` when present and
// options.check_index is set. A plain file is read sequentially with pread
// into one reusable buffer (cache-sized, grown only for a longer record); a
// gzip/zlib file is inflated as it is read (streamed with read(2), never
// mapped, so a file that shrinks meanwhile is a fault, not a SIGBUS).
FileResult VerifyFile(const std::string& path, const VerifyOptions& options, const FileChecks& checks = {});

// Verifies `paths` in parallel (options.threads); results in `paths` order.
// `checks`, when not empty, has one entry per path.
std::vector<FileResult> VerifyFiles(const std::vector<std::string>& paths, const VerifyOptions& options,
                                    const std::vector<FileChecks>& checks = {});

// A set-level fault: about a whole file (a shard, or the manifest itself).
struct SetFault {
  std::string path;  // the shard (as the manifest lists it, joined to its folder) or the manifest
  SetFaultKind kind = SetFaultKind::kManifestInvalid;
  std::string message;
};

struct ManifestResult {
  std::string path;     // the manifest, as given or found
  uint64_t shards = 0;  // shards it lists
  std::vector<SetFault> faults;
};

struct SetResult {
  // Files in `paths` order, then listed shards that `paths` did not hold,
  // in manifest order.
  std::vector<FileResult> files;
  std::vector<ManifestResult> manifests;  // in `manifests` order
  // With no manifest at all, the caller's CheckNumberedSets of the files
  // found in folder arguments (a file named alone is not held to its set).
  std::vector<SetFault> name_set_faults;
  bool no_manifest = false;      // no manifest was given or found
  uint64_t fault_count() const;  // file faults (omitted ones too) and set faults
};

// Without a manifest, the one set check the names allow: files among
// `paths` named HEAD-NNNNN-of-MMMMM[TAIL] (five or more digits each) form a
// set per folder, HEAD, MMMMM and TAIL, which must hold every number 0..M-1.
// One kSetIncomplete SetFault per incomplete set (path: the folder's
// HEAD-*-of-MMMMMTAIL, naming the missing numbers), per file numbered M or
// more, and per HEAD/TAIL in one folder with two counts (shards of two
// plans). Sorted by path.
std::vector<SetFault> CheckNumberedSets(const std::vector<std::string>& paths);

// With `manifests` empty: VerifyFiles(paths), no_manifest set (the caller
// may add CheckNumberedSets). Otherwise:
// Verifies `paths` (as VerifyFiles) and checks them against each manifest
// (a manifest.json, parsed with protobuf's JSON parser into
// libshard::Manifest; unknown fields are ignored): every listed shard exists
// and has the listed record count, size and CRC-32C; its listed index file
// exists; every file in the manifest's folder (recursively) that looks like
// a shard is listed; the records of listed shards hold the manifest's label
// map and schema. Listed shards missing from `paths` are verified too. A
// manifest that cannot be read, parsed or is of another format is a
// SetFault, and only that is checked of it.
SetResult VerifySet(const std::vector<std::string>& paths, const std::vector<std::string>& manifests,
                    const VerifyOptions& options);

// The `manifest.json` directly inside each folder among `args`, in argument
// order, duplicates dropped.
std::vector<std::string> FindManifests(const std::vector<std::string>& args);

}  // namespace libshard::verify

#endif  // LIBSHARD_VERIFY_VERIFIER_H_
