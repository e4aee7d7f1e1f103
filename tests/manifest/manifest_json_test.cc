// manifest/manifest_json.h: the checksum text, the one unknown-field policy
// and the format check, and that convert, verify and the reader all read a
// manifest through it (the same file accepted or refused by each).
#include "libshard/manifest/manifest_json.h"

#include <gtest/gtest.h>

#include <string>

#include "libshard/reader/dataset.h"
#include "libshard/verify/verifier.h"
#include "testutil.h"

namespace libshard::manifest {
namespace {

using ::libshard::testing::MakeTempDir;
using ::libshard::testing::WriteFileOrDie;

TEST(ChecksumTest, FormatsAndParsesBack) {
  EXPECT_EQ(FormatChecksum(0), "crc32c:00000000");
  EXPECT_EQ(FormatChecksum(0xdeadbeef), "crc32c:deadbeef");
  for (uint32_t crc : {0u, 1u, 0x89abcdefu, 0xffffffffu}) EXPECT_EQ(*ParseChecksum(FormatChecksum(crc)), crc);
  EXPECT_EQ(*ParseChecksum("crc32c:DEADBEEF"), 0xdeadbeefu);
  for (const char* bad :
       {"", "crc32c:", "crc32c:1234567", "crc32c:123456789", "crc32:12345678", "crc32c:1234567g", "CRC32C:12345678"}) {
    StatusOr<uint32_t> v = ParseChecksum(bad);
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_EQ(v.status().message(), std::string("checksum \"") + bad + "\" is not of the form crc32c:xxxxxxxx");
  }
}

// A manifest of no shards, with `extra` spliced into its top-level object.
std::string ManifestText(const std::string& format, const std::string& extra) {
  return "{\"format\": \"" + format + "\", " + extra + "\"splits\": []}";
}

TEST(ManifestJsonTest, AFolderResolvesToItsManifest) {
  EXPECT_EQ(ManifestInFolder("out"), "out/manifest.json");
  EXPECT_EQ(ManifestInFolder("out//"), "out/manifest.json");
  EXPECT_EQ(ManifestInFolder("/"), "/manifest.json");
  EXPECT_EQ(ManifestInFolder(""), "manifest.json");
  EXPECT_EQ(ManifestOf("ds/prefix"), "ds/prefix/manifest.json");
  EXPECT_EQ(ManifestOf("ds/other.json"), "ds/other.json");
  EXPECT_EQ(ManifestOf(""), "manifest.json");
  EXPECT_STREQ(kManifestName, "manifest.json");
}

TEST(ManifestJsonTest, UnknownFieldsAreIgnoredByEveryReader) {
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/manifest.json";
  // (complete: verify faults a manifest that says it is not, issue 23 item 13.)
  WriteFileOrDie(path, ManifestText(kFormat, "\"complete\": true, \"added_by_a_later_libshard\": {\"x\": 1}, "));
  StatusOr<Manifest> m = ReadManifest(path);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->format(), kFormat);
  verify::VerifyOptions allow_empty;
  allow_empty.allow_empty = true;  // (no records: a manifest_empty fault otherwise)
  verify::SetResult set = verify::VerifySet({}, {path}, allow_empty);
  ASSERT_EQ(set.manifests.size(), 1u);
  EXPECT_TRUE(set.manifests[0].faults.empty()) << set.manifests[0].faults[0].message;
  StatusOr<std::unique_ptr<reader::Dataset>> ds = reader::Dataset::Open({path});
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ((*ds)->size(), 0u);
}

TEST(ManifestJsonTest, AnotherFormatOrNotJsonIsRefusedNamingTheFile) {
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/manifest.json";
  WriteFileOrDie(path, ManifestText("libshard.manifest/2", ""));
  StatusOr<Manifest> m = ReadManifest(path);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), path + ": manifest format \"libshard.manifest/2\", expected \"libshard.manifest/1\"");
  EXPECT_EQ(reader::Dataset::Open({path}).status().message(), m.status().message());

  WriteFileOrDie(path, "{\"format\": 7,");
  m = ReadManifest(path);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(m.status().message().rfind(path + ": not a libshard manifest (JSON of libshard.Manifest): ", 0), 0u)
      << m.status();
}

TEST(ManifestJsonTest, PrintsWhatItReadsAndEscapesInvalidUtf8) {
  Manifest m;
  m.set_format(kFormat);
  m.set_tool_version("0.1.0");
  m.mutable_options()->set_input(std::string("in/cl\xe4ss"));
  const std::string text = ToJson(m);
  EXPECT_NE(text.find("\"input\": \"in/cl\\\\xe4ss\""), std::string::npos) << text;
  Manifest back;
  ASSERT_TRUE(FromJson(text, &back).ok());
  EXPECT_EQ(back.options().input(), "in/cl\\xe4ss");
  EXPECT_EQ(back.tool_version(), "0.1.0");
}

}  // namespace
}  // namespace libshard::manifest
