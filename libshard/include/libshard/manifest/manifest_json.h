// manifest.json as text: the one JSON reader and printer of the project's own
// files (libshard.Manifest, and the converter's shard entries), the format
// constant, and the whole-file checksum text. convert, merge, verify and the
// reader all go through here, so they agree on what a manifest is.
//
//   LIBSHARD_ASSIGN_OR_RETURN(Manifest m, manifest::ReadManifest("out/manifest.json"));
//   LIBSHARD_ASSIGN_OR_RETURN(uint32_t crc, manifest::ParseChecksum(shard.checksum()));
//
// JSON is protobuf's proto3 mapping with the proto's snake_case field names.
// Unknown fields are ignored when reading (one policy for every reader):
// `format` names what must be there, and a later libshard may add fields
// without changing it. Printing escapes any string that is not valid UTF-8
// (text_escape.h) instead of dropping bytes, so the output is always valid.
//
// Errors: NotFound / InvalidArgument (not a regular file) from reading;
// InvalidArgument for text that is not JSON of the message, or a `format`
// other than kFormat; each names the file.
// Thread-safety: pure functions apart from the named files.
#ifndef LIBSHARD_MANIFEST_MANIFEST_JSON_H_
#define LIBSHARD_MANIFEST_MANIFEST_JSON_H_

#include <google/protobuf/message.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "libshard/manifest.pb.h"
#include "libshard/status.h"

namespace libshard::manifest {

// The manifest's file name in a converted set's folder (local or remote).
inline constexpr char kManifestName[] = "manifest.json";
// manifest.json's `format`; readers refuse any other value.
inline constexpr char kFormat[] = "libshard.manifest/1";
// Largest manifest or entry file read: 1 GiB.
inline constexpr uint64_t kMaxBytes = uint64_t{1} << 30;

// "crc32c:%08x": the CRC-32C (not masked) of a whole shard file.
inline constexpr char kChecksumPrefix[] = "crc32c:";
std::string FormatChecksum(uint32_t crc);
// The CRC of FormatChecksum's text (8 hex digits, either case); InvalidArgument
// for anything else.
StatusOr<uint32_t> ParseChecksum(std::string_view text);

// The manifest of the set in `folder`: folder + "/manifest.json" (a path or
// an object key; trailing slashes dropped, "" gives "manifest.json").
std::string ManifestInFolder(std::string_view folder);
// What a source names as its manifest: itself when it ends in ".json", else
// ManifestInFolder(source). Text only: nothing is opened.
std::string ManifestOf(std::string_view folder_or_manifest);

// Replaces every string field of `*m` (nested messages included) that is
// not valid UTF-8 by its EscapeText form, as ToJson prints it: a proto3
// string holds UTF-8 (protobuf logs an error serializing one that does not).
void EscapeInvalidUtf8(google::protobuf::Message* m);
// JSON (two-space indent, default values printed, proto field names).
std::string ToJson(const google::protobuf::Message& m);
// Parses `text` into `*m` (unknown fields ignored). The error says "not a
// libshard manifest (JSON of TYPE): ..." without a file name.
Status FromJson(std::string_view text, google::protobuf::Message* m);
// Reads and parses `path` into `*m` (no `format` check: for entries); errors
// name the file.
Status ReadJsonFile(const std::string& path, google::protobuf::Message* m);
// The one check of a manifest's `format`: InvalidArgument `manifest format
// "X", expected "libshard.manifest/1"` (no file name) for any value but
// kFormat.
Status CheckFormat(const Manifest& m);
// Reads a manifest and checks its `format` (CheckFormat) and what it says
// (manifest_checks.h CheckContents: names inside its folder, statistics that
// agree with their sums); errors name the file.
StatusOr<Manifest> ReadManifest(const std::string& path);

}  // namespace libshard::manifest

#endif  // LIBSHARD_MANIFEST_MANIFEST_JSON_H_
