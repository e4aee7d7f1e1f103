#include "libshard/remote/uploader.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "libshard/convert/manifest_io.h"
#include "libshard/io/contained_path.h"
#include "libshard/io/open_file.h"
#include "libshard/io/writable_file.h"
#include "libshard/manifest/manifest_checks.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/util/strings.h"

namespace libshard::remote {
namespace {

namespace fs = std::filesystem;
using util::EndsWith;
using util::StartsWith;

// Bounds an entry object's body (an entry is a few KiB; its rejects add more).
constexpr uint64_t kMaxEntryBytes = 64ull << 20;

}  // namespace

std::string CrcMetadata(uint32_t crc) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%08x", crc);
  return buf;
}

std::optional<std::string> MetadataChecksum(const store::ObjectInfo& info) {
  const auto meta = info.metadata.find(kCrcMetadataKey);
  if (meta == info.metadata.end()) return std::nullopt;
  // The server's text, untrusted: only 8 hex digits are a CRC.
  StatusOr<uint32_t> crc = manifest::ParseChecksum(manifest::kChecksumPrefix + meta->second);
  if (!crc.ok()) return std::nullopt;
  return manifest::FormatChecksum(*crc);
}

StatusOr<std::unique_ptr<ShardUploader>> ShardUploader::Start(const std::string& url, const std::string& staging,
                                                              bool recheck) {
  LIBSHARD_ASSIGN_OR_RETURN(store::Location loc, store::ParseLocation(url));
  if (loc.scheme != store::Location::Scheme::kS3) {
    return InvalidArgumentError(url + ": only s3:// locations can be written");
  }
  auto u = std::unique_ptr<ShardUploader>(new ShardUploader());
  LIBSHARD_ASSIGN_OR_RETURN(u->store_, store::OpenStore(loc));
  while (!loc.key.empty() && loc.key.back() == '/') loc.key.pop_back();
  u->prefix_ = loc.key;
  u->staging_ = staging;
  u->recheck_ = recheck;
  // What is up already: one LIST (a fresh prefix answers empty, and then no
  // object is HEADed before its PUT).
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<store::ObjectInfo> objects,
                            u->store_->List(u->prefix_.empty() ? "" : u->prefix_ + "/"));
  for (const store::ObjectInfo& o : objects) u->listed_[o.key] = o.size;
  u->sender_ = std::thread([p = u.get()] { p->SendLoop(); });
  return u;
}

ShardUploader::~ShardUploader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  if (sender_.joinable()) sender_.join();
}

void ShardUploader::Fail(const Status& s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (error_.ok()) error_ = s;
}

Status ShardUploader::ShardWritten(const ShardEntry& entry) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_.ok()) return error_;
    queue_.push_back(entry.file() + ".json");
  }
  wake_.notify_one();
  return Status::OK();
}

void ShardUploader::SendLoop() {
  while (true) {
    std::string name;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // Woken by ShardWritten, Finish or the destructor: no timed polling.
      wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopped and drained
      name = std::move(queue_.front());
      queue_.pop_front();
      if (!error_.ok()) continue;  // after a failure: drained, nothing sent
    }
    if (Status s = SendShard(name, /*sweeping=*/false); !s.ok()) Fail(s);
  }
}

Status ShardUploader::Upload(const std::string& rel, std::optional<uint32_t> known_crc) {
  const std::string path = staging_ + "/" + rel, key = store::JoinKey(prefix_, rel);
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec) return IOError(path + ": " + ec.message());
  uint32_t crc;
  if (known_crc) {
    crc = *known_crc;
  } else {
    LIBSHARD_ASSIGN_OR_RETURN(crc, io::Crc32cOfFile(path));
  }
  // HEAD only what LIST found with this size: a resumed run's objects.
  auto listed = listed_.find(key);
  if (listed != listed_.end() && listed->second == size) {
    StatusOr<store::ObjectInfo> there = store_->Head(key);
    bool same = there.ok() && there->size == size && there->metadata[kCrcMetadataKey] == CrcMetadata(crc);
    if (same && recheck_ && known_crc) {  // a shard: its bytes, not its metadata
      std::string why;
      LIBSHARD_ASSIGN_OR_RETURN(same, ReadBackMatches(key, size, crc, &why));
    }
    if (same) {
      ++skipped_;  // a resumed run: already up
      Sent(key, size, crc);
      return Status::OK();
    }
    if (!there.ok() && there.status().code() != StatusCode::kNotFound) return there.status();
  }
  store::PutOptions o;
  o.metadata[kCrcMetadataKey] = CrcMetadata(crc);
  LIBSHARD_RETURN_IF_ERROR(store_->PutFile(key, path, o));
  ++uploaded_;
  Sent(key, size, crc);
  return Status::OK();
}

std::optional<ShardEntry> ShardUploader::ShardUpHere(const std::string& file, std::string* why) {
  const std::string entry_rel = std::string(convert::kStateDir) + "/" + file + ".json";
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
    if (!io::WriteFileAtomically(entry_path, *text, /*sync=*/false).ok()) return std::nullopt;
  }
  StatusOr<ShardEntry> e = convert::ReadShardEntry(entry_path);
  if (!e.ok() || e->file() != file) return std::nullopt;
  StatusOr<uint32_t> crc = manifest::ParseChecksum(e->checksum());
  if (!crc.ok()) return std::nullopt;
  StatusOr<store::ObjectInfo> there = store_->Head(key);
  if (!there.ok()) return std::nullopt;
  const std::string got = MetadataChecksum(*there).value_or("no crc32c metadata");
  if (there->size != e->bytes() || got != e->checksum()) {
    *why = "the object " + store_->UrlOf(key) + " has " + std::to_string(there->size) + " bytes, " + got +
           "; its entry says " + std::to_string(e->bytes()) + " bytes, " + e->checksum();
    return std::nullopt;
  }
  if (recheck_) {
    // --recheck: the bytes, read back, not the metadata recorded at upload.
    StatusOr<bool> same = ReadBackMatches(key, e->bytes(), *crc, why);
    if (!same.ok()) {
      Fail(same.status());
      return std::nullopt;
    }
    if (!*same) return std::nullopt;
  }
  // The index and labels go up before their shard (Sweep): a matching
  // shard object follows its own companions. They are still checked for.
  for (const manifest::ShardCompanion& c : manifest::ShardCompanions(*e)) {
    if (!listed_.count(store::JoinKey(prefix_, c.name))) {
      *why = std::string("its ") + c.what + " " + store_->UrlOf(store::JoinKey(prefix_, c.name)) + " is missing";
      return std::nullopt;
    }
  }
  if (staged_entry) {
    // Killed between the shard and its entry: the entry goes up now.
    if (Status s = Upload(entry_rel); !s.ok()) {
      Fail(s);
      return std::nullopt;
    }
  }
  Sent(key, e->bytes(), *crc);
  for (const manifest::ShardCompanion& c : manifest::ShardCompanions(*e)) {
    const std::string key = store::JoinKey(prefix_, c.name);
    Sent(key, listed_.at(key), std::nullopt);
  }
  // Not marked done: the converter may still redo the shard (another plan,
  // rejects to retry), and its new entry (a new file) then goes up.
  return *e;
}

Status ShardUploader::SendShard(const std::string& name, bool sweeping) {
  const std::string entry_rel = ".libshard/" + name;
  const std::string entry_path = staging_ + "/" + entry_rel;
  std::error_code ec;
  StatusOr<ShardEntry> e = convert::ReadShardEntry(entry_path);
  if (!e.ok()) return e.status();
  // The entry names its shard, index and labels: checked names, inside the folder.
  LIBSHARD_RETURN_IF_ERROR(io::CheckRelativeName(e->file(), entry_path + ": file \"" + e->file() + "\""));
  const std::vector<manifest::ShardCompanion> companions = manifest::ShardCompanions(*e);
  for (const manifest::ShardCompanion& c : companions) {
    LIBSHARD_RETURN_IF_ERROR(
        io::CheckRelativeName(c.name, entry_path + ": " + c.field + " \"" + c.name + "\""));
  }
  const std::string shard = staging_ + "/" + e->file();
  if (!fs::is_regular_file(fs::symlink_status(shard, ec))) return Status::OK();  // sent, or kept up already
  if (fs::file_size(shard, ec) != e->bytes() || ec) {
    if (sweeping) return Status::OK();  // a shard of an earlier run the converter did not take: not sent
    return DataLossError(shard + ": the staged shard has " + std::to_string(fs::file_size(shard, ec)) +
                         " bytes, its entry says " + std::to_string(e->bytes()));
  }
  // The staged bytes must still be what the entry says (read once more:
  // hardware CRC-32C over a file just written, a fraction of a millisecond
  // per MiB): the object's recorded CRC-32C is what resume and merge trust.
  LIBSHARD_ASSIGN_OR_RETURN(uint32_t crc, io::Crc32cOfFile(shard));
  if (manifest::FormatChecksum(crc) != e->checksum()) {
    return DataLossError(shard + ": the staged shard has " + manifest::FormatChecksum(crc) + ", its entry says " +
                         e->checksum() + " (changed on disk since it was written)");
  }
  // Index, shard, entry: a shard object with its entry's checksum is
  // preceded by its index and labels (ShardUpHere relies on it).
  for (const manifest::ShardCompanion& c : companions) {
    if (fs::exists(staging_ + "/" + c.name, ec)) LIBSHARD_RETURN_IF_ERROR(Upload(c.name));
  }
  LIBSHARD_RETURN_IF_ERROR(Upload(e->file(), crc));
  LIBSHARD_RETURN_IF_ERROR(Upload(entry_rel));
  // Up: the staging folder lets go of the shard (bounded by the shards in
  // flight). The entry stays; a rerun keeps the shard (ShardUpHere).
  fs::remove(shard, ec);
  for (const manifest::ShardCompanion& c : companions) fs::remove(staging_ + "/" + c.name, ec);
  return Status::OK();
}

Status ShardUploader::Sweep() {
  std::error_code ec;
  std::vector<std::string> entries;
  for (auto it = fs::directory_iterator(staging_ + "/.libshard", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (EndsWith(name, ".json") && !StartsWith(name, "manifest.") && it->is_regular_file(ec)) entries.push_back(name);
  }
  std::sort(entries.begin(), entries.end());  // plan order within a split
  for (const std::string& name : entries) {
    // Only an entry whose shard is staged (a kept one is up already).
    if (!fs::exists(staging_ + "/" + name.substr(0, name.size() - 5), ec)) continue;
    LIBSHARD_RETURN_IF_ERROR(SendShard(name, /*sweeping=*/true));
  }
  return Status::OK();
}

Status ShardUploader::Finish(bool commit) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;  // the sender drains the queue, then returns
  }
  wake_.notify_all();
  if (sender_.joinable()) sender_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_.ok()) return error_;
  }
  LIBSHARD_RETURN_IF_ERROR(Sweep());
  if (!commit) return Status::OK();
  std::error_code ec;
  // the leak check's pairs and the object label map, when they were written
  for (const char* name : {"rejects.tsv", "duplicates.tsv", "label_map.pbtxt"}) {
    if (fs::exists(staging_ + "/" + name, ec)) LIBSHARD_RETURN_IF_ERROR(Upload(name));
  }
  for (auto it = fs::directory_iterator(staging_ + "/.libshard", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (StartsWith(name, "manifest.") && EndsWith(name, ".json")) {
      LIBSHARD_RETURN_IF_ERROR(Upload(".libshard/" + name));  // a task's manifest, for merge
    }
  }
  if (!fs::exists(manifest::ManifestInFolder(staging_), ec)) return Status::OK();
  LIBSHARD_RETURN_IF_ERROR(CheckStillOurs());
  return Upload(manifest::kManifestName);
}

StatusOr<bool> ShardUploader::ReadBackMatches(const std::string& key, uint64_t size, uint32_t crc, std::string* why) {
  Status s = store_->GetVerified(key, {size, crc}, [](std::string_view) { return Status::OK(); });
  if (s.ok()) return true;
  if (s.code() != StatusCode::kDataLoss) return s;
  *why = s.message() + " (read back by --recheck; its x-amz-meta-crc32c says " + CrcMetadata(crc) + ")";
  return false;
}

void ShardUploader::Sent(const std::string& key, uint64_t size, std::optional<uint32_t> crc) {
  std::lock_guard<std::mutex> lock(sent_mu_);
  sent_[key] = {size, crc};
}

Status ShardUploader::CheckStillOurs() {
  std::vector<std::pair<std::string, std::pair<uint64_t, std::optional<uint32_t>>>> sent;
  {
    std::lock_guard<std::mutex> lock(sent_mu_);
    sent.assign(sent_.begin(), sent_.end());
  }
  std::mutex mu;
  std::vector<std::string> changed;
  Status error;
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < sent.size();) {
      const auto& [key, want] = sent[i];
      StatusOr<store::ObjectInfo> there = store_->Head(key);
      std::string now;
      if (!there.ok() && there.status().code() == StatusCode::kNotFound) {
        now = "now missing";
      } else if (!there.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (error.ok()) error = there.status();
        continue;
      } else {
        const std::string crc = MetadataChecksum(*there).value_or("no crc32c metadata");
        if (there->size == want.first && (!want.second || crc == manifest::FormatChecksum(*want.second))) continue;
        now = "now " + std::to_string(there->size) + " bytes, " + crc;
      }
      std::string was = std::to_string(want.first) + " bytes";
      if (want.second) was += ", " + manifest::FormatChecksum(*want.second);
      std::lock_guard<std::mutex> lock(mu);
      changed.push_back(store_->UrlOf(key) + " (" + now + "; this run: " + was + ")");
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min<size_t>(8, sent.size()); ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  LIBSHARD_RETURN_IF_ERROR(error);
  if (changed.empty()) return Status::OK();
  std::sort(changed.begin(), changed.end());
  std::string names;
  for (size_t i = 0; i < changed.size() && i < 10; ++i) names += (i ? ", " : "") + changed[i];
  if (changed.size() > 10) names += ", ... (" + std::to_string(changed.size() - 10) + " more)";
  return FailedPreconditionError(std::to_string(changed.size()) +
                                 " object(s) changed since this run uploaded them (another run writing into the "
                                 "same prefix?); manifest.json not written: " +
                                 names);
}

}  // namespace libshard::remote
