#include "libshard/remote/remote_convert.h"

#include <memory>

#include "libshard/remote/uploader.h"
#include "libshard/store/object_store.h"
#include "libshard/store/shard_cache.h"
#include "libshard/util/strings.h"

namespace libshard::remote {
namespace {

// An upload error: exit 1 in the CLI whatever the server said (a missing
// bucket is no usage error), the URL and the way out in the message.
Status UploadError(const std::string& url, const Status& s) {
  std::string m =
      "uploading to " + url + ": " + s.message() + " (rerun the same command to resume; objects already up are kept)";
  return s.code() == StatusCode::kDataLoss ? DataLossError(std::move(m)) : IOError(std::move(m));
}

}  // namespace

bool IsRemoteOutput(const std::string& output) { return util::StartsWith(output, "s3://"); }

StatusOr<RemoteConvertResult> ConvertToObjectStore(const RemoteConvertOptions& options,
                                                   const convert::ProgressFn& progress) {
  RemoteConvertResult result;
  result.url = options.convert.output;
  LIBSHARD_ASSIGN_OR_RETURN(store::Location loc, store::ParseLocation(result.url));
  if (loc.scheme != store::Location::Scheme::kS3) {
    return InvalidArgumentError(result.url + ": only s3:// locations can be converted into");
  }
  result.staging =
      !options.staging.empty() ? options.staging : store::DefaultCacheDir() + "/staging/" + loc.root + "/" + loc.key;
  StatusOr<std::unique_ptr<ShardUploader>> started = ShardUploader::Start(result.url, result.staging, options.recheck);
  if (!started.ok()) {
    if (started.status().code() == StatusCode::kInvalidArgument) return started.status();
    return UploadError(result.url, started.status());
  }
  std::unique_ptr<ShardUploader> up = std::move(*started);
  convert::ConvertOptions o = options.convert;
  o.output = result.staging;
  // Resume: a shard uploaded (and let go of) by an earlier run is kept when
  // its object matches its entry, not converted again.
  o.shard_elsewhere = [u = up.get()](const std::string& file, std::string* why) { return u->ShardUpHere(file, why); };
  // Each finished shard goes to the uploader as it is written.
  o.on_shard_written = [u = up.get()](const ShardEntry& e) { return u->ShardWritten(e); };
  StatusOr<convert::ConvertResult> r = convert::Convert(o, progress);
  // Every input rejected: nothing to commit (the CLI exits 1).
  const bool commit = r.ok() && !(r->manifest.stats().converted() == 0 && r->rejected > 0);
  Status finished = up->Finish(commit);
  if (!finished.ok()) {
    // An upload error stops the conversion through on_shard_written: the
    // conversion then fails with it, and it is said once.
    if (r.ok() || r.status().message() == finished.message()) return UploadError(result.url, finished);
    return IOError(UploadError(result.url, finished).message() + "; the conversion: " + r.status().message());
  }
  if (!r.ok()) return r.status();
  result.converted = std::move(*r);
  result.committed = commit;
  result.uploaded = up->uploaded();
  result.skipped = up->skipped();
  return result;
}

}  // namespace libshard::remote
