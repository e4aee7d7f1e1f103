#include "remote_upload.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "libshard/convert/manifest_io.h"
#include "libshard/io/open_file.h"
#include "libshard/util/strings.h"

namespace shard_tool {
namespace {

namespace fs = std::filesystem;
namespace store = libshard::store;
using libshard::Status;
using libshard::StatusOr;

using libshard::util::EndsWith;

std::string CrcText(uint32_t crc) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%08x", crc);
  return buf;
}

}  // namespace

StatusOr<std::unique_ptr<ShardUploader>> ShardUploader::Start(const std::string& url, const std::string& staging) {
  LIBSHARD_ASSIGN_OR_RETURN(store::Location loc, store::ParseLocation(url));
  if (loc.scheme != store::Location::Scheme::kS3) {
    return libshard::InvalidArgumentError(url + ": only s3:// locations can be written");
  }
  auto u = std::unique_ptr<ShardUploader>(new ShardUploader());
  LIBSHARD_ASSIGN_OR_RETURN(u->store_, store::OpenStore(loc));
  u->prefix_ = loc.key;
  u->staging_ = staging;
  u->watcher_ = std::thread([p = u.get()] { p->Watch(); });
  return u;
}

ShardUploader::~ShardUploader() {
  stop_ = true;
  if (watcher_.joinable()) watcher_.join();
}

void ShardUploader::Watch() {
  while (!stop_) {
    Status s = Sweep();
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (error_.ok()) error_ = s;
      return;
    }
    for (int i = 0; i < 20 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Status ShardUploader::Upload(const std::string& rel) {
  const std::string path = staging_ + "/" + rel, key = store::JoinKey(prefix_, rel);
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec) return libshard::IOError(path + ": " + ec.message());
  LIBSHARD_ASSIGN_OR_RETURN(uint32_t crc, libshard::io::Crc32cOfFile(path));
  StatusOr<store::ObjectInfo> there = store_->Head(key);
  if (there.ok() && there->size == size && there->metadata["crc32c"] == CrcText(crc)) {
    ++skipped_;  // a resumed run: already up
    return Status::OK();
  }
  if (!there.ok() && there.status().code() != libshard::StatusCode::kNotFound) return there.status();
  store::PutOptions o;
  o.metadata["crc32c"] = CrcText(crc);
  LIBSHARD_RETURN_IF_ERROR(store_->PutFile(key, path, o));
  ++uploaded_;
  return Status::OK();
}

Status ShardUploader::Sweep() {
  std::error_code ec;
  std::vector<std::string> entries;
  for (auto it = fs::directory_iterator(staging_ + "/.libshard", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (EndsWith(name, ".json") && name.rfind("manifest.", 0) != 0) entries.push_back(name);
  }
  for (const std::string& name : entries) {
    if (done_.count(name)) continue;
    StatusOr<libshard::ShardEntry> e = libshard::convert::ReadShardEntry(staging_ + "/.libshard/" + name);
    if (!e.ok()) continue;  // being written: next sweep
    const std::string shard = staging_ + "/" + e->file();
    if (fs::file_size(shard, ec) != e->bytes() || ec) continue;
    LIBSHARD_RETURN_IF_ERROR(Upload(e->file()));
    if (!e->index_file().empty() && fs::exists(staging_ + "/" + e->index_file(), ec)) {
      LIBSHARD_RETURN_IF_ERROR(Upload(e->index_file()));
    }
    LIBSHARD_RETURN_IF_ERROR(Upload(".libshard/" + name));
    done_.insert(name);
    // Up: the staging folder lets go of the shard (bounded by the shards in
    // flight). The entry stays; a rerun converts the shard again (the same
    // bytes) and finds the object already there.
    fs::remove(shard, ec);
    if (!e->index_file().empty()) fs::remove(staging_ + "/" + e->index_file(), ec);
  }
  return Status::OK();
}

Status ShardUploader::Finish(bool commit) {
  stop_ = true;
  if (watcher_.joinable()) watcher_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_.ok()) return error_;
  }
  LIBSHARD_RETURN_IF_ERROR(Sweep());
  if (!commit) return Status::OK();
  std::error_code ec;
  if (fs::exists(staging_ + "/rejects.tsv", ec)) LIBSHARD_RETURN_IF_ERROR(Upload("rejects.tsv"));
  for (auto it = fs::directory_iterator(staging_ + "/.libshard", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("manifest.", 0) == 0 && EndsWith(name, ".json")) {
      LIBSHARD_RETURN_IF_ERROR(Upload(".libshard/" + name));  // a task's manifest, for merge
    }
  }
  if (fs::exists(staging_ + "/manifest.json", ec)) LIBSHARD_RETURN_IF_ERROR(Upload("manifest.json"));
  return Status::OK();
}

}  // namespace shard_tool
