// `shard verify` of local shards or of an object-storage dataset as one
// call: what `shard verify` and libshard.verify both run. Local paths go
// straight to verify::Verify (verify/verify_report.h); an s3:// or https://
// location (given alone: one path, no manifest) is staged first (staging.h:
// downloaded once into a temporary folder, each listed shard checked
// against its size and CRC-32C as it streams in, the folder removed before
// the call returns) and checked there, every path and message of the report
// naming the objects, never the folder.
//
//   verify::VerifyRequest request;
//   request.paths = {"s3://bkt/ds"};
//   LIBSHARD_ASSIGN_OR_RETURN(remote::VerifyOutcome v, remote::VerifyLocation(request));
//   std::cout << verify::VerifyReportJson(v.report);
//   return v.exit_code;
//
// Errors: staging's keep their codes (staging.h: NotFound for nothing
// there, IOError / DataLoss / ResourceExhausted for what failed at the
// server or here); everything else is InvalidArgument, the request's fault:
// a remote location given with other paths or a manifest, and Verify's own
// errors (nothing to check, an option out of range, a path that matches
// nothing). Damage is never an error: it is in the report.
// Thread-safety: as staging.h and verify::Verify (reentrant).
#ifndef LIBSHARD_REMOTE_REMOTE_VERIFY_H_
#define LIBSHARD_REMOTE_REMOTE_VERIFY_H_

#include "libshard/status.h"
#include "libshard/verify/verify_report.h"

namespace libshard::remote {

struct VerifyOutcome {
  verify::VerifyReport report;  // naming the URLs when `remote`
  bool remote = false;          // an s3:// or https:// location was staged
  // shard verify's exit code: 0 no fault, 1 faults found, 2 a file or
  // manifest could not be read.
  int exit_code = 0;
};

StatusOr<VerifyOutcome> VerifyLocation(const verify::VerifyRequest& request);

}  // namespace libshard::remote

#endif  // LIBSHARD_REMOTE_REMOTE_VERIFY_H_
