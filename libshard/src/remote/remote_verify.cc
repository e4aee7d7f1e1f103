// remote::VerifyLocation: stage, verify, name the URLs, the exit code
// (remote/remote_verify.h).
#include "libshard/remote/remote_verify.h"

#include <memory>
#include <string>

#include "libshard/remote/staging.h"
#include "libshard/store/object_store.h"

namespace libshard::remote {

StatusOr<VerifyOutcome> VerifyLocation(const verify::VerifyRequest& request) {
  verify::VerifyRequest local = request;
  std::unique_ptr<StagedObjects> staged;
  for (const std::string& p : request.paths) {
    if (!store::IsObjectUrl(p)) continue;
    if (request.paths.size() != 1 || !request.manifest.empty()) {
      return InvalidArgumentError(p + ": an s3:// or https:// location is checked on its own (one path, no manifest)");
    }
    LIBSHARD_RETURN_IF_ERROR(verify::ValidateOptions(request.options));  // before any download
    LIBSHARD_ASSIGN_OR_RETURN(staged, StagedObjects::Stage(p));
    local.paths = {staged->local()};
  }
  StatusOr<verify::VerifyReport> report = verify::Verify(local);
  if (!report.ok()) {
    const std::string message = report.status().message();
    return InvalidArgumentError(staged ? staged->ToUrl(message) : message);
  }
  VerifyOutcome v;
  v.report = std::move(*report);
  v.remote = staged != nullptr;
  if (staged) verify::MapText([&](const std::string& s) { return staged->ToUrl(s); }, &v.report);
  const verify::VerifySummary& s = v.report.summary;
  v.exit_code = s.unreadable ? 2 : s.faults > 0 ? 1 : 0;
  return v;
}

}  // namespace libshard::remote
