// remote::WriteDatasetReport: stage, write the page, name the URLs
// (remote/remote_report.h).
#include "libshard/remote/remote_report.h"

#include <memory>

#include "libshard/io/open_file.h"
#include "libshard/io/writable_file.h"
#include "libshard/remote/staging.h"
#include "libshard/store/object_store.h"

namespace libshard::remote {

namespace {

// The largest page read back to name its URLs (a page is bounded by its
// options: report.h; this is far above it).
constexpr uint64_t kMaxPageBytes = uint64_t{1} << 30;

}  // namespace

StatusOr<std::string> WriteDatasetReport(const std::string& source, const std::string& output_path,
                                         const report::ReportOptions& options) {
  if (!store::IsObjectUrl(source)) return report::WriteReportPage(source, output_path, options);
  if (output_path.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  source + ": the page of an object-storage dataset needs an output path");
  }
  LIBSHARD_RETURN_IF_ERROR(report::ValidateReportOptions(options));  // before any download
  LIBSHARD_ASSIGN_OR_RETURN(std::unique_ptr<StagedObjects> staged, StagedObjects::Stage(source));
  StatusOr<std::string> path = report::WriteReportPage(staged->local(), output_path, options);
  if (!path.ok()) return Status(path.status().code(), staged->ToUrl(path.status().message()));
  // The page names the objects, not the temporary folder they were read from.
  LIBSHARD_ASSIGN_OR_RETURN(std::string text, io::ReadFileToString(*path, kMaxPageBytes));
  LIBSHARD_RETURN_IF_ERROR(io::WriteFileAtomically(*path, staged->ToUrl(text)));
  return path;
}

}  // namespace libshard::remote
