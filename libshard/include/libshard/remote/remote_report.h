// The dataset report of a local or remote dataset as one call: what
// `shard report` and libshard.report both make. A local folder, manifest or
// mixture file goes straight to report::WriteReportPage (report/report.h);
// an s3:// or https:// dataset is staged first (staging.h: downloaded once
// into a temporary folder, each listed shard checked against its size and
// CRC-32C as it streams in, the folder removed before the call returns),
// its page written from there, and every path of the staged folder on the
// page (and in any message) turned back into the dataset's URL: the page
// of s3://bkt/ds is the page of the same local folder, naming the objects.
//
//   LIBSHARD_ASSIGN_OR_RETURN(std::string page,
//                             remote::WriteDatasetReport("s3://bkt/ds", "ds.html", opts));
//
// Errors: InvalidArgument when a remote dataset has no `output_path` (its
// page has no folder to go beside), or for bad options; staging's errors
// (staging.h: a bad URL, nothing there, the store's errors naming the
// object, a full $TMPDIR); report's (report.h). No message names the
// temporary folder. Thread-safety: as staging.h and report.h (reentrant;
// files written are the caller's to keep apart).
#ifndef LIBSHARD_REMOTE_REMOTE_REPORT_H_
#define LIBSHARD_REMOTE_REMOTE_REPORT_H_

#include <string>

#include "libshard/report/report.h"
#include "libshard/status.h"

namespace libshard::remote {

// Writes the page of `source` to `output_path` (for a local source, empty
// means report.html beside its manifest) and returns the path written.
StatusOr<std::string> WriteDatasetReport(const std::string& source, const std::string& output_path,
                                         const report::ReportOptions& options = {});

}  // namespace libshard::remote

#endif  // LIBSHARD_REMOTE_REMOTE_REPORT_H_
