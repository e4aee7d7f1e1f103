// One verify run as a typed call: the arguments of `shard verify` in
// (VerifyRequest), its whole result out (VerifyReport: every file's and
// manifest's faults and the summary), and the one JSON document that
// `shard verify --json` prints (VerifyReportJson, schema in docs/verify.md).
// The program (tools/cmd_verify.cc) and Python's libshard.verify
// (python/py_tools.cc, which parses that same document) are faces over this
// call, through remote::VerifyLocation (remote/remote_verify.h: an s3:// or
// https:// dataset staged first).
//
//   verify::VerifyRequest request;
//   request.paths = {"out"};                     // folders, files, globs
//   StatusOr<verify::VerifyReport> report = verify::Verify(request);
//   if (!report.ok()) ...                        // a usage error: nothing was checked
//   std::cout << verify::VerifyReportJson(*report);
//   return report->summary.faults > 0 ? 1 : 0;
//
// Errors: Verify returns InvalidArgument for what the request names badly
// (nothing to check, an option out of range, a path that matches nothing:
// io::ExpandPaths's message). Damage is never an error: it is in the report.
// Thread-safety: as verifier.h (pure apart from reading the named files).
#ifndef LIBSHARD_VERIFY_VERIFY_REPORT_H_
#define LIBSHARD_VERIFY_VERIFY_REPORT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "libshard/status.h"
#include "libshard/verify/verifier.h"

namespace libshard::verify {

struct VerifyRequest {
  // Files, folders (searched for shards recursively) and glob patterns.
  // Default: none (then `manifest` must be given).
  std::vector<std::string> paths;
  // A manifest.json to check the set against, besides those found directly
  // inside folder arguments. Default: "" (none).
  std::string manifest;
  // Do not use a manifest.json found in a folder argument. Default: false.
  bool no_manifest = false;
  // The checks. Default: VerifyOptions's defaults.
  VerifyOptions options;
};

// The report's totals (the summary line of `shard verify`).
struct VerifySummary {
  uint64_t files = 0;
  uint64_t files_with_faults = 0;
  uint64_t records = 0;          // intact records in all files
  uint64_t bytes = 0;            // bytes of those records
  uint64_t unchecked_bytes = 0;  // bytes after a framing fault (known sizes only)
  uint64_t faults = 0;           // file faults (omitted ones too) and set faults
  // A file or manifest could not be read at all (the program exits 2).
  bool unreadable = false;
  double seconds = 0;  // wall time of the checks
  double mb_per_s() const { return seconds > 0 ? bytes / seconds / 1e6 : 0; }
};

struct VerifyReport {
  SetResult set;  // files, manifests, the numbered-set faults, no_manifest
  VerifySummary summary;
  bool ok() const { return summary.faults == 0; }
};

// The totals of `set`, checked in `seconds`.
VerifySummary Summarize(const SetResult& set, double seconds);

// Checks what `request` names: the files found under its paths, against
// each manifest (given, or found in a folder argument unless no_manifest);
// with no manifest at all, the numbered sets of folder arguments by their
// names (CheckNumberedSets; a file named alone is not held to its set).
StatusOr<VerifyReport> Verify(const VerifyRequest& request);

// The document `shard verify --json` prints, ending in a newline: files
// (path, compression, records, bytes, unchecked_bytes, faults_omitted,
// faults: offset, record, kind, message), manifests (path, shards, faults:
// path, kind, message), summary, no_manifest, sets (docs/verify.md).
std::string VerifyReportJson(const VerifyReport& report);

// Rewrites every path and message of `report` through `map` (a staged
// remote dataset's local folder back to its URL).
void MapText(const std::function<std::string(const std::string&)>& map, VerifyReport* report);

}  // namespace libshard::verify

#endif  // LIBSHARD_VERIFY_VERIFY_REPORT_H_
