#include "libshard/convert/manifest_io.h"

#include <google/protobuf/util/json_util.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "libshard/convert/dataset_stats.h"
#include "libshard/io/mapped_file.h"
#include "libshard/io/writable_file.h"
#include "libshard/text_escape.h"

namespace libshard::convert {
namespace {

// Replaces every string field that is not valid UTF-8 by its EscapeText
// form: the JSON printer would fail on it and drop bytes.
void EscapeInvalidUtf8(google::protobuf::Message* m) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Descriptor* d = m->GetDescriptor();
  const google::protobuf::Reflection* r = m->GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->type() == FieldDescriptor::TYPE_STRING) {
      const int n = f->is_repeated() ? r->FieldSize(*m, f) : 1;
      for (int j = 0; j < n; ++j) {
        const std::string s = f->is_repeated() ? r->GetRepeatedString(*m, f, j) : r->GetString(*m, f);
        if (IsValidUtf8(s)) continue;
        if (f->is_repeated()) r->SetRepeatedString(m, f, j, EscapeText(s));
        else r->SetString(m, f, EscapeText(s));
      }
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) {
        for (int j = 0; j < r->FieldSize(*m, f); ++j) EscapeInvalidUtf8(r->MutableRepeatedMessage(m, f, j));
      } else if (r->HasField(*m, f)) {
        EscapeInvalidUtf8(r->MutableMessage(m, f));
      }
    }
  }
}

std::string ToJson(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions o;
  o.add_whitespace = true;
  o.always_print_primitive_fields = true;
  o.preserve_proto_field_names = true;
  std::unique_ptr<google::protobuf::Message> copy(m.New());
  copy->CopyFrom(m);
  EscapeInvalidUtf8(copy.get());
  std::string out;
  // With every string valid UTF-8 the printer cannot fail on these messages.
  (void)google::protobuf::util::MessageToJsonString(*copy, &out, o);
  return out;
}

Status FromJson(const std::string& path, google::protobuf::Message* m) {
  LIBSHARD_ASSIGN_OR_RETURN(std::string text, io::ReadFileToString(path, 1ull << 30));
  google::protobuf::util::JsonParseOptions o;
  o.ignore_unknown_fields = false;
  auto st = google::protobuf::util::JsonStringToMessage(text, m, o);
  if (!st.ok()) {
    return InvalidArgumentError(path + ": not a libshard manifest: " + st.ToString());
  }
  return Status::OK();
}

}  // namespace

std::string ManifestToJson(const Manifest& m) { return ToJson(m); }
std::string ShardEntryToJson(const ShardEntry& e) { return ToJson(e); }

StatusOr<Manifest> ReadManifest(const std::string& path) {
  Manifest m;
  LIBSHARD_RETURN_IF_ERROR(FromJson(path, &m));
  if (m.format() != kManifestFormat) {
    return InvalidArgumentError(path + ": manifest format '" + m.format() + "', expected '" +
                                kManifestFormat + "'");
  }
  return m;
}

StatusOr<ShardEntry> ReadShardEntry(const std::string& path) {
  ShardEntry e;
  LIBSHARD_RETURN_IF_ERROR(FromJson(path, &e));
  return e;
}

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  Status st = [&]() -> Status {
    LIBSHARD_ASSIGN_OR_RETURN(auto f, io::NewPosixWritableFile(tmp));
    LIBSHARD_RETURN_IF_ERROR(f->Append(text));
    LIBSHARD_RETURN_IF_ERROR(f->Sync());
    LIBSHARD_RETURN_IF_ERROR(f->Close());
    return io::RenameFile(tmp, path);
  }();
  // A full disk must not leave the temporary behind (the target keeps its
  // earlier contents, if any).
  if (!st.ok()) ::unlink(tmp.c_str());
  return st;
}

std::string TaskManifestName(uint32_t task_index, uint32_t num_tasks) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "manifest.task-%05u-of-%05u.json", task_index, num_tasks);
  return buf;
}

std::string TaskManifestPath(const std::string& output_dir, uint32_t task_index,
                             uint32_t num_tasks) {
  return output_dir + "/" + kStateDir + "/" + TaskManifestName(task_index, num_tasks);
}

Status WriteRejectsTsv(const std::string& path, const Manifest& m) {
  std::string text = "path\treason\n";
  for (const Reject& r : m.rejects()) {
    std::string reason = r.reason();
    for (char& c : reason) {
      if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    }
    text += r.path() + "\t" + reason + "\n";
  }
  return WriteFileAtomically(path, text);
}

StatusOr<Manifest> AssembleManifest(const ConversionOptions& options,
                                    const std::vector<LabelEntry>& labels,
                                    const std::vector<FeatureSpec>& schema,
                                    std::vector<ShardEntry> shards,
                                    const std::vector<Reject>& listing_rejects, bool complete) {
  Manifest m;
  m.set_format(kManifestFormat);
  m.set_tool_version(LIBSHARD_VERSION);
  *m.mutable_options() = options;
  for (const LabelEntry& l : labels) *m.add_labels() = l;
  for (const FeatureSpec& f : schema) *m.add_schema() = f;
  m.set_complete(complete);

  std::sort(shards.begin(), shards.end(), [](const ShardEntry& a, const ShardEntry& b) {
    return a.split() != b.split() ? a.split() < b.split() : a.index() < b.index();
  });
  std::map<std::pair<std::string, std::string>, bool> rejects;  // (path, reason)
  for (const Reject& r : listing_rejects) rejects[{r.path(), r.reason()}] = true;
  StatsAccumulator total;
  for (size_t i = 0; i < shards.size();) {
    SplitEntry* split = m.add_splits();
    split->set_name(shards[i].split());
    split->set_shard_count(shards[i].count());
    StatsAccumulator acc;
    for (; i < shards.size() && shards[i].split() == split->name(); ++i) {
      const ShardEntry& e = shards[i];
      if (i > 0 && shards[i - 1].split() == e.split() && shards[i - 1].index() == e.index()) {
        return InvalidArgumentError("shard " + e.file() + " listed twice");
      }
      LIBSHARD_ASSIGN_OR_RETURN(StatsAccumulator s, StatsAccumulator::FromProto(e.stats()));
      acc.Merge(s);
      split->set_records(split->records() + e.records());
      for (const Reject& r : e.rejects()) rejects[{r.path(), r.reason()}] = true;
      *split->add_shards() = e;
    }
    acc.ToProto(split->mutable_stats());
    total.Merge(acc);
  }
  total.ToProto(m.mutable_stats());
  m.mutable_stats()->set_rejected(rejects.size());
  for (const auto& [key, unused] : rejects) {
    Reject* r = m.add_rejects();
    r->set_path(key.first);
    r->set_reason(key.second);
  }
  return m;
}

}  // namespace libshard::convert
