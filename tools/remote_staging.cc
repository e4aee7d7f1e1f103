#include "remote_staging.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "libshard/io/writable_file.h"
#include "libshard/manifest.pb.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/store/object_store.h"
#include "libshard/util/strings.h"

namespace shard_tool {
namespace {

namespace fs = std::filesystem;
namespace store = libshard::store;
using libshard::Status;
using libshard::StatusOr;

using libshard::util::EndsWith;

// Streams `key` into `path`: verified against `expected` when given (a
// DataLoss is returned after the bytes are written), else whole.
Status Download(store::ObjectStore& s, const std::string& key, const std::string& path,
                const store::Expected* expected) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  LIBSHARD_ASSIGN_OR_RETURN(auto out, libshard::io::NewPosixWritableFile(path));
  Status got;
  if (expected != nullptr) {
    got = s.GetVerified(key, *expected, [&](std::string_view b) { return out->Append(b); });
  } else {
    StatusOr<store::ObjectInfo> info = s.Head(key);
    if (!info.ok()) return info.status();
    uint64_t done = 0;
    while (got.ok() && done < info->size) {
      const uint64_t n = std::min<uint64_t>(64 << 20, info->size - done);
      StatusOr<std::string> part = s.GetRange(key, done, n);
      if (!part.ok()) {
        got = part.status();
        break;
      }
      got = out->Append(*part);
      done += part->size();
      if (part->empty()) break;
    }
  }
  Status closed = out->Close();
  return got.ok() ? closed : got;
}

}  // namespace

StagedObjects::~StagedObjects() {
  std::error_code ec;
  if (!root_.empty()) fs::remove_all(root_, ec);
}

std::string StagedObjects::ToUrl(const std::string& text) const {
  std::string out = text;
  for (size_t at = 0; (at = out.find(root_, at)) != std::string::npos;) {
    size_t len = root_.size();
    if (at + len < out.size() && out[at + len] == '/') ++len;
    out.replace(at, len, url_prefix_);
    at += url_prefix_.size();
  }
  return out;
}

StatusOr<std::unique_ptr<StagedObjects>> StagedObjects::Stage(const std::string& url) {
  LIBSHARD_ASSIGN_OR_RETURN(store::Location loc, store::ParseLocation(url));
  LIBSHARD_ASSIGN_OR_RETURN(std::unique_ptr<store::ObjectStore> s, store::OpenStore(loc));
  auto staged = std::unique_ptr<StagedObjects>(new StagedObjects());
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/shard-staging-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) return libshard::ErrnoError("mkdtemp " + templ, errno);
  staged->root_ = templ;

  const bool one_object =
      !loc.key.empty() && !EndsWith(loc.key, ".json") && !EndsWith(loc.key, "/") && s->Head(loc.key).ok();
  if (one_object) {
    const std::string name = fs::path(loc.key).filename().string();
    const std::string dir = loc.key.substr(0, loc.key.size() - name.size());
    staged->url_prefix_ = s->UrlOf(dir);
    staged->local_ = staged->root_ + "/" + name;
    LIBSHARD_RETURN_IF_ERROR(Download(*s, loc.key, staged->local_, nullptr));
    if (s->Head(loc.key + ".idx").ok()) {
      LIBSHARD_RETURN_IF_ERROR(Download(*s, loc.key + ".idx", staged->local_ + ".idx", nullptr));
    }
    return staged;
  }
  const std::string manifest_key = EndsWith(loc.key, ".json") ? loc.key : store::JoinKey(loc.key, "manifest.json");
  const std::string prefix =
      manifest_key.substr(0, manifest_key.size() - fs::path(manifest_key).filename().string().size());
  staged->url_prefix_ = s->UrlOf(prefix);
  staged->local_ = staged->root_;

  // The manifest's shards, with the size and CRC to check as they stream.
  std::map<std::string, store::Expected> expected;  // relative name -> size, crc
  std::vector<std::string> names;
  StatusOr<std::string> text = s->GetSmall(manifest_key, libshard::manifest::kMaxBytes);
  if (text.ok()) {
    LIBSHARD_ASSIGN_OR_RETURN(
        auto out, libshard::io::NewPosixWritableFile(staged->root_ + "/" + fs::path(manifest_key).filename().string()));
    LIBSHARD_RETURN_IF_ERROR(out->Append(*text));
    LIBSHARD_RETURN_IF_ERROR(out->Close());
    libshard::Manifest m;
    if (libshard::manifest::FromJson(*text, &m).ok()) {
      for (const auto& split : m.splits()) {
        for (const auto& sh : split.shards()) {
          StatusOr<uint32_t> crc = libshard::manifest::ParseChecksum(sh.checksum());
          if (crc.ok()) expected[sh.file()] = {sh.bytes(), *crc};
          names.push_back(sh.file());
          if (!sh.index_file().empty()) names.push_back(sh.index_file());
        }
      }
    }
  } else if (text.status().code() != libshard::StatusCode::kNotFound) {
    return text.status();
  }
  // What is there: LIST on S3 (unlisted objects are fetched too, for the
  // set check to name); the manifest's names elsewhere.
  if (loc.scheme == store::Location::Scheme::kS3) {
    LIBSHARD_ASSIGN_OR_RETURN(std::vector<store::ObjectInfo> objects, s->List(prefix));
    names.clear();
    for (const auto& o : objects) {
      const std::string rel = o.key.substr(prefix.size());
      if (rel != fs::path(manifest_key).filename().string()) names.push_back(rel);
    }
  } else if (!text.ok()) {
    return text.status();
  }
  // Several objects at once, each streamed once.
  std::mutex mu;
  std::atomic<size_t> next{0};
  Status first_error;
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < names.size();) {
      const std::string& rel = names[i];
      auto it = expected.find(rel);
      Status d = Download(*s, prefix + rel, staged->root_ + "/" + rel, it == expected.end() ? nullptr : &it->second);
      std::lock_guard<std::mutex> lock(mu);
      if (d.code() == libshard::StatusCode::kDataLoss) {
        staged->damaged_.push_back(d.message());
      } else if (d.code() == libshard::StatusCode::kNotFound && loc.scheme != store::Location::Scheme::kS3) {
        std::error_code ec;
        fs::remove(staged->root_ + "/" + rel, ec);  // missing: the set check names it
      } else if (!d.ok() && first_error.ok()) {
        first_error = d;
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min<size_t>(8, names.size()); ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  LIBSHARD_RETURN_IF_ERROR(first_error);
  return staged;
}

StatusOr<std::unique_ptr<StagedObjects>> StagedObjects::StageTaskManifests(const std::string& url) {
  LIBSHARD_ASSIGN_OR_RETURN(store::Location loc, store::ParseLocation(url));
  if (loc.scheme != store::Location::Scheme::kS3) {
    return libshard::InvalidArgumentError(url + ": only s3:// prefixes can be merged in place");
  }
  auto staged = std::unique_ptr<StagedObjects>(new StagedObjects());
  LIBSHARD_ASSIGN_OR_RETURN(staged->store_, store::OpenStore(loc));
  std::string prefix = loc.key;
  if (EndsWith(prefix, "/manifest.json")) prefix.resize(prefix.size() - 13);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  staged->key_prefix_ = prefix.empty() ? "" : prefix + "/";
  staged->url_prefix_ = staged->store_->UrlOf(staged->key_prefix_);
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/shard-merge-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) return libshard::ErrnoError("mkdtemp " + templ, errno);
  staged->root_ = staged->local_ = templ;
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<store::ObjectInfo> objects, staged->store_->List(staged->key_prefix_));
  const std::string state = staged->key_prefix_ + ".libshard/manifest.task-";
  for (const store::ObjectInfo& o : objects) {
    staged->listed_[o.key] = o.size;
    if (o.key.rfind(state, 0) != 0 || !EndsWith(o.key, ".json")) continue;
    LIBSHARD_ASSIGN_OR_RETURN(std::string text, staged->store_->GetSmall(o.key, libshard::manifest::kMaxBytes));
    const std::string path = staged->root_ + "/" + o.key.substr(staged->key_prefix_.size());
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    LIBSHARD_ASSIGN_OR_RETURN(auto out, libshard::io::NewPosixWritableFile(path));
    LIBSHARD_RETURN_IF_ERROR(out->Append(text));
    LIBSHARD_RETURN_IF_ERROR(out->Close());
  }
  return staged;
}

}  // namespace shard_tool
