// What `shard verify` and `shard inspect` do with s3:// and https:// paths:
// the objects are downloaded once into a temporary local folder (removed
// when the StagedObjects goes away), each shard the manifest lists checked
// against its size and CRC-32C as it streams in, and the local checks then
// run on that folder; ToUrl() turns the folder's paths back into URLs for
// the report.
#ifndef LIBSHARD_TOOLS_REMOTE_STAGING_H_
#define LIBSHARD_TOOLS_REMOTE_STAGING_H_

#include <memory>
#include <string>
#include <vector>

#include "libshard/status.h"

namespace shard_tool {

class StagedObjects {
 public:
  ~StagedObjects();
  // The local folder (for a prefix) or file (for one object).
  const std::string& local() const { return local_; }
  // `text` with the staging folder replaced by the URL prefix.
  std::string ToUrl(const std::string& text) const;
  // Objects whose download failed its size/CRC check (the bytes are kept
  // for the local checks to describe).
  const std::vector<std::string>& damaged() const { return damaged_; }

  // s3://BUCKET/PREFIX (or .../manifest.json): every object under PREFIX/
  // (listed with LIST), manifest.json included. https:// has no LIST: the
  // manifest and the objects it names.
  // s3://BUCKET/KEY.tfrecord (or https://): that object and KEY.tfrecord.idx
  // when there is one.
  static libshard::StatusOr<std::unique_ptr<StagedObjects>> Stage(const std::string& url);

 private:
  std::string root_;   // the temporary folder
  std::string local_;  // root_ or a file in it
  std::string url_prefix_;
  std::vector<std::string> damaged_;
};

}  // namespace shard_tool

#endif  // LIBSHARD_TOOLS_REMOTE_STAGING_H_
