// What a TFRecord file holds, as a typed call: the record count, every
// feature key with its kind and value counts, and a preview of the first
// records (`shard inspect`, libshard.inspect). The program
// (tools/cmd_inspect.cc) prints it as text or as the JSON document
// InspectionJson writes; Python's libshard.inspect
// (python/py_inspect_report.cc) parses that same document into its
// Inspection.
//
//   reader::InspectOptions o;                     // the first 3 records, compression detected
//   StatusOr<reader::Inspection> in = reader::InspectFile("a.tfrecord", o);
//   if (!in.ok()) ...                             // nothing could be read
//   std::cout << reader::InspectionJson(*in);
//   return in->error.empty() ? 0 : 1;             // damage: the summary covers what came before
//
// The file is read once, front to back, through record::RecordStreamReader
// (plain, GZIP or ZLIB); every record is checked (framing and CRCs) and
// parsed as a tf.Example where it is one. Damage is not an error: reading
// stops there, the summary covers the records before it, and `error` holds
// the reader's message (the file and the byte offset).
//
// Errors: InvalidArgument for an option out of range; the reader's status
// when the file cannot be opened (NotFound, IOError, ... naming it);
// ResourceExhausted naming the file when a record is larger than the memory
// left. Thread-safety: a pure function apart from reading the named file.
#ifndef LIBSHARD_READER_INSPECT_H_
#define LIBSHARD_READER_INSPECT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "libshard/example/example_view.h"
#include "libshard/record/stream_reader.h"
#include "libshard/status.h"

namespace libshard::reader {

struct InspectOptions {
  // How many of the first records to summarize, 0..kMaxInspectShow. Default: 3.
  size_t show = 3;
  // How the file is compressed; kAuto detects it. Default: kAuto.
  record::Compression compression = record::Compression::kAuto;
};

// The largest InspectOptions::show.
inline constexpr size_t kMaxInspectShow = 1000000;

// One feature key over the whole file (every tf.Example holding it).
struct FeatureStats {
  std::string key;
  example::FeatureKind kind = example::FeatureKind::kNone;  // the last record's kind
  bool mixed_kinds = false;                                 // records disagree on the kind
  uint64_t records = 0;                                     // records holding the key
  uint64_t min_values = 0;                                  // fewest values in one record
  uint64_t max_values = 0;                                  // most values in one record
  // "bytes", "int64", "float" (example::FeatureKindName), or "mixed".
  const char* KindName() const;
};

// One feature of one of the first records.
struct FeaturePreview {
  std::string key;
  example::FeatureKind kind = example::FeatureKind::kNone;
  uint64_t count = 0;   // values
  std::string preview;  // the first values as text ("PNG image, 812 bytes", "3, 4", "\"cat\"")
};

// One of the first records.
struct RecordSummary {
  uint64_t offset = 0;  // of its header in the (uncompressed) stream
  uint64_t size = 0;    // framed: header, data and CRCs
  bool is_example = false;
  std::vector<FeaturePreview> features;  // a tf.Example's, in its order
  std::string raw_preview;               // what the bytes look like, for a record that is no tf.Example
};

struct Inspection {
  std::string file;                                              // the path inspected
  record::Compression compression = record::Compression::kNone;  // as detected or given
  uint64_t records = 0;                                          // intact records read (up to the damage, if any)
  uint64_t examples = 0;                                         // of those, tf.Examples
  uint64_t bytes = 0;                                            // their framed bytes
  std::vector<FeatureStats> features;                            // sorted by key
  std::vector<RecordSummary> first_records;                      // at most InspectOptions::show
  // The damage that stopped reading (the reader's message: file, byte
  // offset), or empty when the file was read to its end.
  std::string error;
};

// Checks the ranges above; InvalidArgument names the field.
Status ValidateInspectOptions(const InspectOptions& options);

// Reads `path` as described above.
StatusOr<Inspection> InspectFile(const std::string& path, const InspectOptions& options = {});

// The document `shard inspect --json` prints, ending in a newline: file,
// compression, records, examples, bytes, features (key, kind, records,
// min_values, max_values), first_records (index, offset, size, example,
// preview for a non-Example, features: key, kind, count, preview), error
// (a string or null).
std::string InspectionJson(const Inspection& inspection);

// Rewrites `file` and `error` through `map` (a staged remote object's
// local path back to its URL).
void MapText(const std::function<std::string(const std::string&)>& map, Inspection* inspection);

}  // namespace libshard::reader

#endif  // LIBSHARD_READER_INSPECT_H_
