// A conversion into object storage: `shard convert -o s3://BUCKET/PREFIX`
// and libshard.convert(IN, "s3://BUCKET/PREFIX") are this one call.
//
// The conversion runs into a local staging folder; the converter hands each
// finished shard to the uploader (remote/uploader.h) through
// ConvertOptions::on_shard_written, which sends it up with its index and
// entry and lets go of it; rejects.tsv, the task manifests and manifest.json
// (the commit point) go up last, once the conversion succeeded. A rerun
// resumes from the objects (ConvertOptions::shard_elsewhere), with or
// without the staging folder.
//
//   remote::RemoteConvertOptions o;
//   o.convert = options;            // output: "s3://bkt/ds"
//   LIBSHARD_ASSIGN_OR_RETURN(remote::RemoteConvertResult r, remote::ConvertToObjectStore(o, progress));
//
// Errors: a bad URL is InvalidArgument; the conversion's own errors pass
// through as Convert returns them; an upload error (or the LIST of the
// prefix failing) is IOError "uploading to URL: ... (rerun the same command
// to resume; objects already up are kept)", DataLoss for a staged shard
// changed on disk. Thread-safety: one call per staging folder at a time (the
// converter's output lock guards it); `progress` as Convert calls it.
#ifndef LIBSHARD_REMOTE_REMOTE_CONVERT_H_
#define LIBSHARD_REMOTE_REMOTE_CONVERT_H_

#include <cstdint>
#include <string>

#include "libshard/convert/converter.h"
#include "libshard/status.h"

namespace libshard::remote {

// True for an output that names an object store this module writes to
// (s3://).
bool IsRemoteOutput(const std::string& output);

struct RemoteConvertOptions {
  // What to convert; `output` is the s3://BUCKET/PREFIX to upload to.
  // on_shard_written and shard_elsewhere are set by ConvertToObjectStore.
  convert::ConvertOptions convert;
  // The local folder converted into first. Default: "" =
  // DefaultCacheDir()/staging/BUCKET/PREFIX (store/shard_cache.h).
  std::string staging;
  // A rerun reads every object it would keep back and checks its bytes
  // against its entry's size and CRC-32C instead of trusting the
  // x-amz-meta-crc32c recorded at upload; a damaged one is converted and
  // uploaded again (`shard convert --recheck`). Default: false.
  bool recheck = false;
};

struct RemoteConvertResult {
  // The conversion's result; manifest_path and the paths in its messages
  // are in the staging folder.
  convert::ConvertResult converted;
  bool committed = false;  // manifest.json went up (not when every input was rejected)
  uint64_t uploaded = 0;   // objects put
  uint64_t skipped = 0;    // objects already up with the same size and CRC-32C
  std::string url;         // options.convert.output
  std::string staging;     // the staging folder used
};

StatusOr<RemoteConvertResult> ConvertToObjectStore(const RemoteConvertOptions& options,
                                                   const convert::ProgressFn& progress);

}  // namespace libshard::remote

#endif  // LIBSHARD_REMOTE_REMOTE_CONVERT_H_
