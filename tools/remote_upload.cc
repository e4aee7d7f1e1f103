#include "remote_upload.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "libshard/convert/manifest_io.h"
#include "libshard/io/open_file.h"
#include "libshard/io/writable_file.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/util/strings.h"

namespace shard_tool {
namespace {

namespace fs = std::filesystem;
namespace store = libshard::store;
using libshard::Status;
using libshard::StatusOr;

using libshard::util::EndsWith;

std::pair<uint64_t, int64_t> Identity(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_ino), static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

// Bounds an entry object's body (an entry is a few KiB; its rejects add more).
constexpr uint64_t kMaxEntryBytes = 64ull << 20;

}  // namespace

std::string CrcMetadata(uint32_t crc) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%08x", crc);
  return buf;
}

StatusOr<std::unique_ptr<ShardUploader>> ShardUploader::Start(const std::string& url, const std::string& staging) {
  LIBSHARD_ASSIGN_OR_RETURN(store::Location loc, store::ParseLocation(url));
  if (loc.scheme != store::Location::Scheme::kS3) {
    return libshard::InvalidArgumentError(url + ": only s3:// locations can be written");
  }
  auto u = std::unique_ptr<ShardUploader>(new ShardUploader());
  LIBSHARD_ASSIGN_OR_RETURN(u->store_, store::OpenStore(loc));
  while (!loc.key.empty() && loc.key.back() == '/') loc.key.pop_back();
  u->prefix_ = loc.key;
  u->staging_ = staging;
  // What is up already: one LIST (a fresh prefix answers empty, and then no
  // object is HEADed before its PUT).
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<store::ObjectInfo> objects,
                            u->store_->List(u->prefix_.empty() ? "" : u->prefix_ + "/"));
  for (const store::ObjectInfo& o : objects) u->listed_[o.key] = o.size;
  return u;
}

ShardUploader::~ShardUploader() {
  stop_ = true;
  if (watcher_.joinable()) watcher_.join();
}

void ShardUploader::Watch() {
  std::call_once(watching_, [this] { watcher_ = std::thread([this] { WatchLoop(); }); });
}

void ShardUploader::WatchLoop() {
  while (!stop_) {
    Status s = Sweep();
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (error_.ok()) error_ = s;
      return;
    }
    for (int i = 0; i < 10 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Status ShardUploader::Upload(const std::string& rel, std::optional<uint32_t> known_crc) {
  const std::string path = staging_ + "/" + rel, key = store::JoinKey(prefix_, rel);
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec) return libshard::IOError(path + ": " + ec.message());
  uint32_t crc;
  if (known_crc) {
    crc = *known_crc;
  } else {
    LIBSHARD_ASSIGN_OR_RETURN(crc, libshard::io::Crc32cOfFile(path));
  }
  // HEAD only what LIST found with this size: a resumed run's objects.
  auto listed = listed_.find(key);
  if (listed != listed_.end() && listed->second == size) {
    StatusOr<store::ObjectInfo> there = store_->Head(key);
    if (there.ok() && there->size == size && there->metadata["crc32c"] == CrcMetadata(crc)) {
      ++skipped_;  // a resumed run: already up
      return Status::OK();
    }
    if (!there.ok() && there.status().code() != libshard::StatusCode::kNotFound) return there.status();
  }
  store::PutOptions o;
  o.metadata["crc32c"] = CrcMetadata(crc);
  LIBSHARD_RETURN_IF_ERROR(store_->PutFile(key, path, o));
  ++uploaded_;
  return Status::OK();
}

std::optional<libshard::ShardEntry> ShardUploader::ShardUpHere(const std::string& file, std::string* why) {
  const std::string entry_rel = std::string(libshard::convert::kStateDir) + "/" + file + ".json";
  const std::string entry_path = staging_ + "/" + entry_rel, entry_key = store::JoinKey(prefix_, entry_rel);
  const std::string key = store::JoinKey(prefix_, file);
  std::error_code ec;
  const bool staged_entry = fs::is_regular_file(entry_path, ec);
  // The shard object first: a fresh prefix (nothing listed) costs no request.
  if (!listed_.count(key) || (!staged_entry && !listed_.count(entry_key))) return std::nullopt;
  if (!staged_entry) {
    // A rerun without the staging folder: the entry that went up last.
    StatusOr<std::string> text = store_->GetSmall(entry_key, kMaxEntryBytes);
    if (!text.ok()) return std::nullopt;
    fs::create_directories(fs::path(entry_path).parent_path(), ec);
    if (!libshard::io::WriteFileAtomically(entry_path, *text, /*sync=*/false).ok()) return std::nullopt;
  }
  StatusOr<libshard::ShardEntry> e = libshard::convert::ReadShardEntry(entry_path);
  if (!e.ok() || e->file() != file) return std::nullopt;
  StatusOr<uint32_t> crc = libshard::manifest::ParseChecksum(e->checksum());
  if (!crc.ok()) return std::nullopt;
  StatusOr<store::ObjectInfo> there = store_->Head(key);
  if (!there.ok()) return std::nullopt;
  const auto meta = there->metadata.find("crc32c");
  const std::string got = meta == there->metadata.end() ? "no crc32c metadata" : "crc32c:" + meta->second;
  if (there->size != e->bytes() || got != e->checksum()) {
    *why = "the object " + store_->UrlOf(key) + " has " + std::to_string(there->size) + " bytes, " + got +
           "; its entry says " + std::to_string(e->bytes()) + " bytes, " + e->checksum();
    return std::nullopt;
  }
  // The index goes up before its shard (Sweep): a matching shard object
  // follows its own index. It is still checked for.
  if (!e->index_file().empty() && !listed_.count(store::JoinKey(prefix_, e->index_file()))) {
    *why = "its index " + store_->UrlOf(store::JoinKey(prefix_, e->index_file())) + " is missing";
    return std::nullopt;
  }
  if (staged_entry) {
    // Killed between the shard and its entry: the entry goes up now.
    if (Status s = Upload(entry_rel); !s.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (error_.ok()) error_ = s;
      return std::nullopt;
    }
  }
  // Not marked done: the converter may still redo the shard (another plan,
  // rejects to retry), and its new entry (a new file) then goes up.
  return *e;
}

Status ShardUploader::Sweep() {
  std::error_code ec;
  std::vector<std::string> entries;
  for (auto it = fs::directory_iterator(staging_ + "/.libshard", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (EndsWith(name, ".json") && name.rfind("manifest.", 0) != 0) entries.push_back(name);
  }
  std::sort(entries.begin(), entries.end());  // plan order within a split
  for (const std::string& name : entries) {
    // Only a shard in the staging folder is sent (a kept one is up already).
    if (!fs::exists(staging_ + "/" + name.substr(0, name.size() - 5), ec)) continue;
    // An entry is handled once; a redone shard's entry is a new file.
    struct stat st;
    const std::string entry_path = staging_ + "/.libshard/" + name;
    if (::stat(entry_path.c_str(), &st) != 0) continue;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto d = done_.find(name);
      if (d != done_.end() && d->second == Identity(st)) continue;
    }
    StatusOr<libshard::ShardEntry> e = libshard::convert::ReadShardEntry(staging_ + "/.libshard/" + name);
    if (!e.ok()) continue;  // being written: next sweep
    const std::string shard = staging_ + "/" + e->file();
    if (fs::file_size(shard, ec) != e->bytes() || ec) continue;  // not renamed into place yet
    // The staged bytes must still be what the entry says (read once more:
    // hardware CRC-32C over a file just written, a fraction of a millisecond
    // per MiB): the object's recorded CRC-32C is what resume and merge trust.
    LIBSHARD_ASSIGN_OR_RETURN(uint32_t crc, libshard::io::Crc32cOfFile(shard));
    if (libshard::manifest::FormatChecksum(crc) != e->checksum()) {
      return libshard::DataLossError(shard + ": the staged shard has " + libshard::manifest::FormatChecksum(crc) +
                                     ", its entry says " + e->checksum() + " (changed on disk since it was written)");
    }
    // Index, shard, entry: a shard object with its entry's checksum is
    // preceded by its index (ShardUpHere relies on it).
    if (!e->index_file().empty() && fs::exists(staging_ + "/" + e->index_file(), ec)) {
      LIBSHARD_RETURN_IF_ERROR(Upload(e->index_file()));
    }
    LIBSHARD_RETURN_IF_ERROR(Upload(e->file(), crc));
    LIBSHARD_RETURN_IF_ERROR(Upload(".libshard/" + name));
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_[name] = Identity(st);
    }
    // Up: the staging folder lets go of the shard (bounded by the shards in
    // flight). The entry stays; a rerun keeps the shard (ShardUpHere).
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
