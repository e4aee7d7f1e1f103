// Remote datasets staged locally: what `shard verify`, `report`, `inspect`
// and `merge` (and libshard.verify / report) do with s3:// and https://
// locations. The objects are downloaded once into a temporary folder
// ($TMPDIR/shard-staging-XXXXXX, removed when the StagedObjects goes away),
// each shard the manifest lists checked against its size and CRC-32C as it
// streams in; the local checks then run on that folder, and ToUrl() turns
// its paths back into URLs for what the user reads.
//
// Everything a server says is untrusted: every local path made from a
// remote name (a LIST key, a manifest's `file` / `index_file`, a task
// manifest's key) goes through io::CheckRelativeName (io/contained_path.h)
// and is written with io::FileBeneath: no `..`, absolute or empty part, no
// key outside the prefix, no symbolic link followed, bytes under a
// temporary name until the download ends. A refused name is InvalidArgument
// naming its URL; folder-marker objects ("ds/") are skipped.
//
//   LIBSHARD_ASSIGN_OR_RETURN(auto staged, remote::StagedObjects::Stage("s3://bkt/ds"));
//   ... check staged->local() ...; report staged->ToUrl(message);
//
// Errors: a bad URL is InvalidArgument; a dataset with nothing there is
// NotFound naming the URL; the store's errors pass through (they name the
// object); a local write error (a full $TMPDIR) is IOError. No message
// names the temporary folder. Thread-safety: Stage runs its downloads on
// threads of its own; a StagedObjects is then read-only (thread-safe).
#ifndef LIBSHARD_REMOTE_STAGING_H_
#define LIBSHARD_REMOTE_STAGING_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "libshard/status.h"
#include "libshard/store/object_store.h"

namespace libshard::remote {

class StagedObjects {
 public:
  ~StagedObjects();
  StagedObjects(const StagedObjects&) = delete;
  StagedObjects& operator=(const StagedObjects&) = delete;
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
  static StatusOr<std::unique_ptr<StagedObjects>> Stage(const std::string& url);

  // For `shard merge s3://BUCKET/PREFIX`: only the task manifests
  // (PREFIX/.libshard/manifest.task-*.json, small objects) into the local
  // folder; the shards stay where they are. listed() is what one LIST of the
  // prefix found and store() the store, for checking the shards in place.
  static StatusOr<std::unique_ptr<StagedObjects>> StageTaskManifests(const std::string& url);
  store::ObjectStore& store() const { return *store_; }
  // Object key -> size, as LIST reported them (StageTaskManifests).
  const std::map<std::string, uint64_t>& listed() const { return listed_; }
  // The object key of `rel` (a name relative to the prefix).
  std::string KeyOf(const std::string& rel) const { return key_prefix_ + rel; }

 private:
  StagedObjects() = default;
  // Makes the temporary folder ($TMPDIR/shard-staging-XXXXXX).
  Status MakeRoot();
  // `s` with the temporary folder named by the URL prefix.
  Status Named(const Status& s) const;
  Status StageDataset(const store::Location& loc, const std::string& url);

  std::string root_;   // the temporary folder
  std::string local_;  // root_ or a file in it
  std::string url_prefix_;
  std::vector<std::string> damaged_;
  std::unique_ptr<store::ObjectStore> store_;
  std::map<std::string, uint64_t> listed_;
  std::string key_prefix_;  // "PREFIX/"
};

// Removes the temporary folders of every StagedObjects alive in the process
// (their downloads may still run: what they write next fails). For a
// program's SIGINT / SIGTERM path, called from an ordinary thread (not from
// a signal handler: it allocates and takes a lock), just before the process
// ends. Thread-safe.
void RemoveStagingFolders();

}  // namespace libshard::remote

#endif  // LIBSHARD_REMOTE_STAGING_H_
