// Writing the shards of a conversion and finding what an earlier run left
// (converter_internal.h).
#include <unistd.h>

#include <filesystem>
#include <set>

#include "convert/converter_internal.h"
#include "libshard/crc32c.h"
#include "libshard/io/open_file.h"
#include "libshard/io/shard_paths.h"
#include "libshard/io/writable_file.h"
#include "libshard/manifest/manifest_checks.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/record/index.h"
#include "libshard/record/record_labels.h"
#include "libshard/text_escape.h"
#include "libshard/util/strings.h"

namespace libshard::convert::internal {
namespace {

namespace fs = std::filesystem;

// Forwards to a file and keeps the CRC-32C of everything appended, so the
// shard's whole-file checksum costs no second read.
class Crc32cFile : public io::WritableFile {
 public:
  Crc32cFile(std::unique_ptr<io::WritableFile> file, uint32_t* crc) : file_(std::move(file)), crc_(crc) {}
  Status Append(std::string_view data) override {
    *crc_ = crc32c::Extend(*crc_, data.data(), data.size());
    return file_->Append(data);
  }
  Status Flush() override { return file_->Flush(); }
  Status Sync() override { return file_->Sync(); }
  Status Close() override { return file_->Close(); }
  const std::string& name() const override { return file_->name(); }

 private:
  std::unique_ptr<io::WritableFile> file_;
  uint32_t* crc_;
};

}  // namespace

Status ShardSink::Add(Item& item) {
  const Work& w = *item.work;
  if (w.first) LIBSHARD_RETURN_IF_ERROR(Begin(w.shard));
  const SourceSample& s = listing_.samples[w.sample];
  if (item.reject.empty()) {
    LIBSHARD_RETURN_IF_ERROR(writer_->Write(item.record));
    labels_.push_back(s.label >= 0 ? s.label : -1);  // as the record stores it (sample_encoder.cc)
    stats_.Merge(item.stats);
    if (o_.encode.fingerprint) *entry_.add_image_hashes() = ImageHashOf(EscapeText(s.path), item.fingerprint);
  } else {
    Reject* r = entry_.add_rejects();
    r->set_path(EscapeText(s.path));
    const std::string reason = item.reject + (item.transient ? kRetryNote : "");
    r->set_reason(EscapeText(s.origin.empty() ? reason : s.origin + ": " + reason));
    stats_.AddRejected();
  }
  if (w.last) return Finish();
  return Status::OK();
}

void ShardSink::Abort() {
  if (writer_ != nullptr) (void)writer_->Close();
  writer_.reset();
  if (temp_.empty()) return;
  ::unlink(temp_.c_str());
  ::unlink(record::IndexPathFor(temp_).c_str());
  temp_.clear();
}

Status ShardSink::Begin(size_t pos) {
  const PlannedShard& s = plan_.shards[pos];
  temp_ = o_.output + "/" + kStateDir + "/" + s.file + ".partial";
  record::WriterOptions wo;
  wo.write_index = true;
  wo.sync_on_close = o_.sync;
  crc_ = 0;
  LIBSHARD_ASSIGN_OR_RETURN(auto data, io::NewPosixWritableFile(temp_));
  LIBSHARD_ASSIGN_OR_RETURN(auto index, io::NewPosixWritableFile(record::IndexPathFor(temp_)));
  writer_ = std::make_unique<record::RecordWriter>(std::make_unique<Crc32cFile>(std::move(data), &crc_),
                                                   std::move(index), wo);
  entry_.Clear();
  entry_.set_file(s.file);
  entry_.set_split(s.split);
  entry_.set_index(s.index);
  entry_.set_count(s.count);
  entry_.set_index_file(record::IndexPathFor(s.file));
  entry_.set_labels_file(record::LabelsPathFor(s.file));
  entry_.set_planned(s.samples.size());
  entry_.set_plan_id(plan_ids_.at(pos));
  stats_ = StatsAccumulator();
  labels_.clear();
  return Status::OK();
}

Status ShardSink::Finish() {
  entry_.set_records(writer_->records_written());
  LIBSHARD_RETURN_IF_ERROR(writer_->Close());
  writer_.reset();
  entry_.set_bytes(FileSize(temp_));
  entry_.set_checksum(manifest::FormatChecksum(crc_));
  stats_.ToProto(entry_.mutable_stats());
  const std::string dir = o_.output + "/";
  const std::string state = dir + kStateDir + "/";
  // The entry first, then the index and labels, then the shard: a shard
  // under its final name always has its entry and companions beside it.
  LIBSHARD_RETURN_IF_ERROR(io::WriteFileAtomically(state + entry_.file() + ".json", manifest::ToJson(entry_), o_.sync));
  LIBSHARD_RETURN_IF_ERROR(io::RenameFile(record::IndexPathFor(temp_), dir + entry_.index_file(), o_.sync));
  LIBSHARD_RETURN_IF_ERROR(
      io::WriteFileAtomically(dir + entry_.labels_file(), record::FormatLabels(labels_), o_.sync));
  LIBSHARD_RETURN_IF_ERROR(io::RenameFile(temp_, dir + entry_.file(), o_.sync));
  temp_.clear();
  entries_.push_back(entry_);
  if (o_.on_shard_written) return o_.on_shard_written(entry_);
  return Status::OK();
}

// A complete shard from an earlier run with the same plan, or nothing.
bool IsTransient(const Status& reject) {
  return reject.code() == StatusCode::kIOError ||
         (reject.code() == StatusCode::kResourceExhausted && util::StartsWith(reject.message(), "out of memory"));
}

std::optional<ShardEntry> ReusableShard(const ConvertOptions& o, const PlannedShard& s, const std::string& plan_id,
                                        std::string* damaged, std::string* retried) {
  const std::string path = o.output + "/" + s.file;
  const std::string entry_path = o.output + "/" + kStateDir + "/" + s.file + ".json";
  std::optional<ShardEntry> e;
  if (IsRegularFile(path)) {
    if (!IsRegularFile(entry_path)) return std::nullopt;
    StatusOr<ShardEntry> here = ReadShardEntry(entry_path);
    if (!here.ok() || here->plan_id() != plan_id || here->bytes() != FileSize(path)) return std::nullopt;
    for (const manifest::ShardCompanion& c : manifest::ShardCompanions(*here)) {
      if (FileSize(o.output + "/" + c.name) == UINT64_MAX) return std::nullopt;
    }
    // The right size is not the right bytes: a shard is kept only when it
    // still has the CRC-32C its entry records (one read of each kept shard).
    StatusOr<uint32_t> crc = io::Crc32cOfFile(path);
    const std::string sum = crc.ok() ? manifest::FormatChecksum(*crc) : crc.status().message();
    if (sum != here->checksum()) {
      *damaged = s.file + " (" + sum + ", its entry says " + here->checksum() + ")";
      return std::nullopt;
    }
    e = std::move(*here);
  } else {
    // Uploaded and let go of: ConvertOptions::shard_elsewhere checks the copy.
    if (!o.shard_elsewhere) return std::nullopt;
    std::string why;
    e = o.shard_elsewhere(s.file, &why);
    if (!e) {
      if (!why.empty()) *damaged = s.file + " (" + why + ")";
      return std::nullopt;
    }
    if (e->plan_id() != plan_id || e->file() != s.file) return std::nullopt;
  }
  const std::string_view note = kRetryNote;
  int transient = 0;
  for (const Reject& r : e->rejects()) {
    const std::string& why = r.reason();
    transient += why.size() >= note.size() && why.compare(why.size() - note.size(), note.size(), note) == 0;
  }
  if (transient > 0) {
    *retried = s.file + " (" + std::to_string(transient) + " reject(s) not caused by the file)";
    return std::nullopt;
  }
  return *e;
}

// Shards of an earlier run into this folder under another plan (another
// shard count, a split this plan no longer has) are removed with everything
// of theirs: a shard is stale when it is not in this plan and either is named
// PREFIX-SPLIT-NNNNN-of-MMMMM.tfrecord for a split of this plan, or has an
// entry in .libshard/ that this prefix names. Returns the removed shard names.
std::vector<std::string> RemoveStaleShards(const std::string& out, const std::string& prefix, const ShardPlan& plan) {
  std::set<std::string> planned, splits;
  for (const PlannedShard& s : plan.shards) {
    planned.insert(s.file);
    splits.insert(s.split);
  }
  const std::string state = out + "/" + kStateDir;
  // Shard names with a file of theirs here: the shard, its index and labels, its entry,
  // its temporary files.
  std::set<std::string> candidates;
  auto collect = [&candidates](const std::string& folder, std::initializer_list<const char*> suffixes) {
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      for (std::string_view suffix : suffixes) {
        if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
          candidates.insert(name.substr(0, name.size() - suffix.size()));
          break;
        }
      }
    }
  };
  collect(out, {".idx", ".labels", ".labels.tmp", ""});
  collect(state, {".json", ".json.tmp", ".partial", ".partial.idx"});
  std::vector<std::string> removed;
  for (const std::string& name : candidates) {
    if (planned.count(name) || name.size() < 9 || name.compare(name.size() - 9, 9, ".tfrecord") != 0) continue;
    bool stale = false;
    const std::optional<io::ShardNumbering> numbered = io::ParseShardNumbering(name);
    for (const std::string& split : splits) {
      if (numbered && numbered->tail == ".tfrecord" && numbered->head == prefix + "-" + split) {
        stale = true;
      }
    }
    if (!stale && IsRegularFile(state + "/" + name + ".json")) {
      StatusOr<ShardEntry> e = ReadShardEntry(state + "/" + name + ".json");
      stale = e.ok() && e->file() == name && name == ShardFileName(prefix, e->split(), e->index(), e->count());
    }
    if (!stale) continue;
    for (const std::string& path :
         {out + "/" + name, out + "/" + name + ".idx", out + "/" + name + ".labels", out + "/" + name + ".labels.tmp",
          state + "/" + name + ".json", state + "/" + name + ".json.tmp",
          state + "/" + name + ".partial", state + "/" + name + ".partial.idx"}) {
      ::unlink(path.c_str());
    }
    removed.push_back(name);
  }
  return removed;
}

}  // namespace libshard::convert::internal
