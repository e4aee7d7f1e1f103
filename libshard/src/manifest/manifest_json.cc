#include "libshard/manifest/manifest_json.h"

#include <google/protobuf/util/json_util.h>

#include <cstdio>
#include <memory>

#include "libshard/io/open_file.h"
#include "libshard/manifest/manifest_checks.h"
#include "libshard/text_escape.h"

namespace libshard::manifest {

std::string FormatChecksum(uint32_t crc) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", crc);
  return kChecksumPrefix + std::string(buf);
}

StatusOr<uint32_t> ParseChecksum(std::string_view text) {
  constexpr std::string_view kPrefix = kChecksumPrefix;
  const auto bad = [&] {
    return InvalidArgumentError("checksum \"" + std::string(text) + "\" is not of the form crc32c:xxxxxxxx");
  };
  if (text.size() != kPrefix.size() + 8 || text.substr(0, kPrefix.size()) != kPrefix) return bad();
  uint32_t v = 0;
  for (char c : text.substr(kPrefix.size())) {
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (d < 0) return bad();
    v = (v << 4) | static_cast<uint32_t>(d);
  }
  return v;
}

// The JSON printer would fail on a string that is not UTF-8 and drop bytes.
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
        if (f->is_repeated())
          r->SetRepeatedString(m, f, j, EscapeText(s));
        else
          r->SetString(m, f, EscapeText(s));
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

Status FromJson(std::string_view text, google::protobuf::Message* m) {
  google::protobuf::util::JsonParseOptions o;
  o.ignore_unknown_fields = true;  // `format` says what must be there
  auto st = google::protobuf::util::JsonStringToMessage(google::protobuf::StringPiece(text.data(), text.size()), m, o);
  if (!st.ok()) {
    return InvalidArgumentError("not a libshard manifest (JSON of " + m->GetTypeName() +
                                "): " + std::string(st.message()));
  }
  return Status::OK();
}

Status ReadJsonFile(const std::string& path, google::protobuf::Message* m) {
  LIBSHARD_ASSIGN_OR_RETURN(std::string text, io::ReadFileToString(path, kMaxBytes));
  return FromJson(text, m).WithContext(path);
}

std::string ManifestInFolder(std::string_view folder) {
  while (folder.size() > 1 && folder.back() == '/') folder.remove_suffix(1);
  if (folder.empty()) return kManifestName;
  return std::string(folder) + (folder.back() == '/' ? "" : "/") + kManifestName;
}

std::string ManifestOf(std::string_view folder_or_manifest) {
  const std::string_view ext = ".json";
  const bool is_json = folder_or_manifest.size() >= ext.size() &&
                       folder_or_manifest.substr(folder_or_manifest.size() - ext.size()) == ext;
  return is_json ? std::string(folder_or_manifest) : ManifestInFolder(folder_or_manifest);
}

Status CheckFormat(const Manifest& m) {
  if (m.format() == kFormat) return Status::OK();
  return InvalidArgumentError("manifest format \"" + m.format() + "\", expected \"" + kFormat + "\"");
}

StatusOr<Manifest> ReadManifest(const std::string& path) {
  Manifest m;
  LIBSHARD_RETURN_IF_ERROR(ReadJsonFile(path, &m));
  LIBSHARD_RETURN_IF_ERROR(CheckFormat(m).WithContext(path));
  LIBSHARD_RETURN_IF_ERROR(CheckContents(m).WithContext(path));
  return m;
}

}  // namespace libshard::manifest
