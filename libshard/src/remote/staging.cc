#include "libshard/remote/staging.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "libshard/io/contained_path.h"
#include "libshard/manifest.pb.h"
#include "libshard/manifest/manifest_checks.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/store/object_store.h"
#include "libshard/util/strings.h"

namespace libshard::remote {
namespace {

namespace fs = std::filesystem;
using util::EndsWith;

// Streams `key` into `root`/`rel` (`rel` a checked name, written under a
// temporary name and without following a link: io/contained_path.h):
// verified against `expected` when given (a DataLoss is returned after the
// bytes are kept, for the local checks to describe), else whole.
Status Download(store::ObjectStore& s, const std::string& key, const std::string& root, const std::string& rel,
                const store::Expected* expected) {
  LIBSHARD_ASSIGN_OR_RETURN(std::unique_ptr<io::FileBeneath> f, io::FileBeneath::Create(root, rel));
  io::WritableFile& out = f->file();
  Status got;
  if (expected != nullptr) {
    got = s.GetVerified(key, *expected, [&](std::string_view b) { return out.Append(b); });
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
      got = out.Append(*part);
      done += part->size();
      if (part->empty()) break;
    }
  }
  if (!got.ok() && got.code() != StatusCode::kDataLoss) return got;
  Status committed = f->Commit();
  return got.ok() ? committed : got;
}

// Writes `text` as `root`/`rel` (a checked name).
Status WriteBeneath(const std::string& root, const std::string& rel, std::string_view text) {
  LIBSHARD_ASSIGN_OR_RETURN(std::unique_ptr<io::FileBeneath> f, io::FileBeneath::Create(root, rel));
  LIBSHARD_RETURN_IF_ERROR(f->file().Append(text));
  return f->Commit();
}

// The staging folders alive in the process (RemoveStagingFolders).
std::mutex g_folders_mu;
std::set<std::string>& Folders() {
  static auto* folders = new std::set<std::string>();  // never destroyed: used until the process ends
  return *folders;
}

}  // namespace

void RemoveStagingFolders() {
  std::lock_guard<std::mutex> lock(g_folders_mu);
  for (const std::string& f : Folders()) {
    // A download may add a file while the folder is walked: a few passes.
    std::error_code ec;
    for (int pass = 0; pass < 3 && fs::exists(f, ec); ++pass) fs::remove_all(f, ec);
  }
}

StagedObjects::~StagedObjects() {
  if (root_.empty()) return;
  std::error_code ec;
  fs::remove_all(root_, ec);
  std::lock_guard<std::mutex> lock(g_folders_mu);
  Folders().erase(root_);
}

std::string StagedObjects::ToUrl(const std::string& text) const {
  std::string out = text;
  if (root_.empty()) return out;
  for (size_t at = 0; (at = out.find(root_, at)) != std::string::npos;) {
    size_t len = root_.size();
    if (at + len < out.size() && out[at + len] == '/') ++len;
    out.replace(at, len, url_prefix_);
    at += url_prefix_.size();
  }
  return out;
}

Status StagedObjects::MakeRoot() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/shard-staging-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    return ErrnoError("cannot make a staging folder in " + templ.substr(0, templ.rfind('/')), errno);
  }
  root_ = local_ = templ;
  std::lock_guard<std::mutex> lock(g_folders_mu);
  Folders().insert(root_);
  return Status::OK();
}

Status StagedObjects::Named(const Status& s) const {
  if (s.ok() || root_.empty() || s.message().find(root_) == std::string::npos) return s;
  // The same code, the message naming objects: a full $TMPDIR is an IOError
  // about the object being staged.
  const std::string m = ToUrl(s.message()) + " (while staging it in $TMPDIR)";
  switch (s.code()) {
    case StatusCode::kNotFound:
      return NotFoundError(m);
    case StatusCode::kInvalidArgument:
      return InvalidArgumentError(m);
    case StatusCode::kDataLoss:
      return DataLossError(m);
    case StatusCode::kResourceExhausted:
      return ResourceExhaustedError(m);
    default:
      return IOError(m);
  }
}

StatusOr<std::unique_ptr<StagedObjects>> StagedObjects::Stage(const std::string& url) {
  LIBSHARD_ASSIGN_OR_RETURN(store::Location loc, store::ParseLocation(url));
  auto staged = std::unique_ptr<StagedObjects>(new StagedObjects());
  LIBSHARD_ASSIGN_OR_RETURN(staged->store_, store::OpenStore(loc));
  LIBSHARD_RETURN_IF_ERROR(staged->MakeRoot());
  LIBSHARD_RETURN_IF_ERROR(staged->Named(staged->StageDataset(loc, url)));
  return staged;
}

Status StagedObjects::StageDataset(const store::Location& loc, const std::string& url) {
  store::ObjectStore& s = *store_;
  const bool one_object =
      !loc.key.empty() && !EndsWith(loc.key, ".json") && !EndsWith(loc.key, "/") && s.Head(loc.key).ok();
  if (one_object) {
    const std::string name = fs::path(loc.key).filename().string();
    const std::string dir = loc.key.substr(0, loc.key.size() - name.size());
    url_prefix_ = s.UrlOf(dir);
    local_ = root_ + "/" + name;
    LIBSHARD_RETURN_IF_ERROR(Download(s, loc.key, root_, name, nullptr));
    if (s.Head(loc.key + ".idx").ok())
      LIBSHARD_RETURN_IF_ERROR(Download(s, loc.key + ".idx", root_, name + ".idx", nullptr));
    return Status::OK();
  }
  const std::string manifest_key = manifest::ManifestOf(loc.key);
  const std::string manifest_name = fs::path(manifest_key).filename().string();
  const std::string prefix = manifest_key.substr(0, manifest_key.size() - manifest_name.size());
  url_prefix_ = s.UrlOf(prefix);

  // The manifest's shards, with the size and CRC to check as they stream.
  std::map<std::string, store::Expected> expected;  // relative name -> size, crc
  std::vector<std::string> names;
  StatusOr<std::string> text = s.GetSmall(manifest_key, manifest::kMaxBytes);
  if (text.ok()) {
    LIBSHARD_RETURN_IF_ERROR(WriteBeneath(root_, manifest_name, *text));
    Manifest m;
    if (manifest::FromJson(*text, &m).ok()) {
      for (const auto& split : m.splits()) {
        for (const auto& sh : split.shards()) {
          // The manifest's names stay inside its folder.
          std::vector<std::string> files = {sh.file()};
          for (const manifest::ShardCompanion& c : manifest::ShardCompanions(sh)) files.push_back(c.name);
          for (const std::string& n : files) {
            LIBSHARD_RETURN_IF_ERROR(
                io::CheckRelativeName(n, s.UrlOf(manifest_key) + ": the shard name \"" + n + "\""));
            names.push_back(n);
          }
          StatusOr<uint32_t> crc = manifest::ParseChecksum(sh.checksum());
          if (crc.ok()) expected[sh.file()] = {sh.bytes(), *crc};
        }
      }
    }
  } else if (text.status().code() != StatusCode::kNotFound) {
    return text.status();
  }
  // What is there: LIST on S3 (unlisted objects are fetched too, for the
  // set check to name); the manifest's names elsewhere.
  if (loc.scheme == store::Location::Scheme::kS3) {
    LIBSHARD_ASSIGN_OR_RETURN(std::vector<store::ObjectInfo> objects, s.List(prefix));
    names.clear();
    for (const auto& o : objects) {
      if (EndsWith(o.key, "/")) continue;  // a folder marker ("Create folder" in a console), no data
      LIBSHARD_ASSIGN_OR_RETURN(std::string rel, io::NameUnderPrefix(o.key, prefix, s.UrlOf(o.key)));
      if (rel != manifest_name) names.push_back(rel);
    }
    if (names.empty() && !text.ok()) {
      return NotFoundError(url + ": no dataset there: no objects under " + s.UrlOf(prefix) + " and " +
                           text.status().message());
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
      Status d = Download(s, prefix + rel, root_, rel, it == expected.end() ? nullptr : &it->second);
      std::lock_guard<std::mutex> lock(mu);
      if (d.code() == StatusCode::kDataLoss) {
        damaged_.push_back(d.message());
      } else if (d.code() == StatusCode::kNotFound && loc.scheme != store::Location::Scheme::kS3) {
        // missing (nothing kept under its name): the set check names it
      } else if (!d.ok() && first_error.ok()) {
        first_error = d;
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min<size_t>(8, names.size()); ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  return first_error;
}

StatusOr<std::unique_ptr<StagedObjects>> StagedObjects::StageTaskManifests(const std::string& url) {
  LIBSHARD_ASSIGN_OR_RETURN(store::Location loc, store::ParseLocation(url));
  if (loc.scheme != store::Location::Scheme::kS3) {
    return InvalidArgumentError(url + ": only s3:// prefixes can be merged in place");
  }
  auto staged = std::unique_ptr<StagedObjects>(new StagedObjects());
  LIBSHARD_ASSIGN_OR_RETURN(staged->store_, store::OpenStore(loc));
  std::string prefix = loc.key;
  if (EndsWith(prefix, std::string("/") + manifest::kManifestName))
    prefix.resize(prefix.size() - sizeof(manifest::kManifestName) + 1);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  staged->key_prefix_ = prefix.empty() ? "" : prefix + "/";
  staged->url_prefix_ = staged->store_->UrlOf(staged->key_prefix_);
  LIBSHARD_RETURN_IF_ERROR(staged->MakeRoot());
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<store::ObjectInfo> objects, staged->store_->List(staged->key_prefix_));
  const std::string state = staged->key_prefix_ + ".libshard/manifest.task-";
  for (const store::ObjectInfo& o : objects) {
    staged->listed_[o.key] = o.size;
    if (!util::StartsWith(o.key, state) || !EndsWith(o.key, ".json")) continue;
    LIBSHARD_ASSIGN_OR_RETURN(std::string rel,
                              io::NameUnderPrefix(o.key, staged->key_prefix_, staged->store_->UrlOf(o.key)));
    LIBSHARD_ASSIGN_OR_RETURN(std::string text, staged->store_->GetSmall(o.key, manifest::kMaxBytes));
    LIBSHARD_RETURN_IF_ERROR(staged->Named(WriteBeneath(staged->root_, rel, text)));
  }
  return staged;
}

}  // namespace libshard::remote
