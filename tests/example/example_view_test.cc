// Tests of ExampleView and ExampleBuilder against protobuf's own
// tensorflow::Example parser: on every record of the interop files, on random
// Examples, on hand-written wire bytes that exercise the corners of the
// protobuf wire format, and on malformed records.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/example/example_builder.h"
#include "libshard/example/example_view.h"
#include "libshard/example/schema_kind.h"
#include "libshard/io/mapped_file.h"
#include "libshard/record/record_reader.h"
#include "libshard/record/stream_reader.h"
#include "tensorflow/core/example/example.pb.h"
#include "testutil.h"

namespace libshard::example {
namespace {

using ::libshard::testing::SharedPath;

using ::libshard::testing::HasSubstr;

uint32_t FloatBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

FeatureKind ProtoKind(const tensorflow::Feature& f) {
  switch (f.kind_case()) {
    case tensorflow::Feature::kBytesList:
      return FeatureKind::kBytes;
    case tensorflow::Feature::kFloatList:
      return FeatureKind::kFloat;
    case tensorflow::Feature::kInt64List:
      return FeatureKind::kInt64;
    case tensorflow::Feature::KIND_NOT_SET:
      return FeatureKind::kNone;
  }
  return FeatureKind::kNone;
}

// Compares one feature value by value (bitwise for floats), through both the
// bulk accessors and the indexed ones.
void ExpectFeatureMatches(const std::string& key, const FeatureView& v, const tensorflow::Feature& f) {
  SCOPED_TRACE("feature \"" + key + "\"");
  ASSERT_EQ(v.kind(), ProtoKind(f)) << FeatureKindName(v.kind()) << " vs " << FeatureKindName(ProtoKind(f));
  switch (v.kind()) {
    case FeatureKind::kNone:
      EXPECT_EQ(v.size(), 0u);
      break;
    case FeatureKind::kBytes: {
      const auto& want = f.bytes_list().value();
      ASSERT_EQ(v.size(), static_cast<size_t>(want.size()));
      std::vector<std::string_view> got;
      v.ForEachBytes([&](std::string_view b) { got.push_back(b); });
      ASSERT_EQ(got.size(), v.size());
      for (int i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "value " << i;
      if (!want.empty()) {
        EXPECT_EQ(v.bytes(0), want[0]);
        EXPECT_EQ(v.bytes(want.size() - 1), want[want.size() - 1]);
        EXPECT_EQ(v.bytes(want.size() / 2), want[want.size() / 2]);
      }
      EXPECT_EQ(v.bytes(want.size()), "");
      EXPECT_EQ(v.CopyInt64s(nullptr, 0), 0u);  // wrong kind
      break;
    }
    case FeatureKind::kInt64: {
      const auto& want = f.int64_list().value();
      ASSERT_EQ(v.size(), static_cast<size_t>(want.size()));
      std::vector<int64_t> got(v.size() + 1, 777);
      EXPECT_EQ(v.CopyInt64s(got.data(), v.size()), v.size());
      EXPECT_EQ(got.back(), 777);  // nothing written past cap
      for (int i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "value " << i;
      if (!want.empty()) {
        EXPECT_EQ(v.int64(0), want[0]);
        EXPECT_EQ(v.int64(want.size() - 1), want[want.size() - 1]);
      }
      EXPECT_EQ(v.int64(want.size()), 0);
      EXPECT_EQ(v.CopyFloats(nullptr, 0), 0u);
      break;
    }
    case FeatureKind::kFloat: {
      const auto& want = f.float_list().value();
      ASSERT_EQ(v.size(), static_cast<size_t>(want.size()));
      std::vector<float> got(v.size());
      EXPECT_EQ(v.CopyFloats(got.data(), got.size()), v.size());
      for (int i = 0; i < want.size(); ++i) ASSERT_EQ(FloatBits(got[i]), FloatBits(want[i])) << "value " << i;
      if (!want.empty()) {
        EXPECT_EQ(FloatBits(v.float_value(0)), FloatBits(want[0]));
        EXPECT_EQ(FloatBits(v.float_value(want.size() - 1)), FloatBits(want[want.size() - 1]));
      }
      EXPECT_EQ(v.float_value(want.size()), 0.0f);
      int calls = 0;
      v.ForEachBytes([&](std::string_view) { ++calls; });
      EXPECT_EQ(calls, 0);  // wrong kind
      break;
    }
  }
}

// Parses `record` with both parsers; they must agree on everything.
void ExpectViewMatchesProto(std::string_view record) {
  tensorflow::Example proto;
  ASSERT_TRUE(proto.ParseFromArray(record.data(), static_cast<int>(record.size())));
  auto view = ExampleView::Parse(record);
  ASSERT_TRUE(view.ok()) << view.status();
  const auto& map = proto.features().feature();

  std::set<std::string> view_keys;
  size_t visits = 0;
  view->ForEachFeature([&](std::string_view key, const FeatureView&) {
    view_keys.emplace(key);
    ++visits;
  });
  EXPECT_EQ(visits, view->entry_count());
  std::set<std::string> proto_keys;
  for (const auto& kv : map) proto_keys.insert(kv.first);
  ASSERT_EQ(view_keys, proto_keys);

  for (const auto& kv : map) {
    FeatureView v;
    ASSERT_TRUE(view->Find(kv.first, &v)) << kv.first;
    ExpectFeatureMatches(kv.first, v, kv.second);
  }
  FeatureView absent;
  EXPECT_FALSE(view->Find("no such key \x01", &absent));
}

// ---------------------------------------------------------------- interop files

// Calls fn(file_name, record) for every record of every interop file.
template <typename Fn>
void ForEachInteropRecord(const std::string& dir, Fn&& fn) {
  for (const char* name : {"beam_foo.tfrecord", "beam_foo_bar.tfrecord", "tfx_cifar10_train.tfrecord",
                           "tfx_cifar10_test.tfrecord", "tfx_flowers_jpeg.tfrecord", "tfx_mnist_floats.tfrecord",
                           "tfx_penguin_train.tfrecord.gz", "tfx_tfjs_next_page.tfrecord.gz"}) {
    auto reader = record::RecordStreamReader::Open(dir + "/" + name);
    ASSERT_TRUE(reader.ok()) << reader.status();
    record::RecordView rec;
    Status s;
    while ((s = (*reader)->Next(&rec)).ok()) fn(std::string(name), rec.data);
    ASSERT_EQ(s.code(), StatusCode::kOutOfRange) << s;
  }
}

// Every record of every interop file that protobuf parses as an Example.
TEST(ExampleViewInteropTest, AgreesWithProtobufOnEveryRecord) {
  std::string dir = SharedPath("interop/tfrecord");
  if (dir.empty()) GTEST_SKIP() << "shared interop data not found";
  std::map<std::string, int> examples;
  ForEachInteropRecord(dir, [&](const std::string& name, std::string_view rec) {
    if (name.rfind("beam_", 0) == 0) return;  // "foo"/"bar" are not Examples
    SCOPED_TRACE(name + " record " + std::to_string(examples[name]));
    ExpectViewMatchesProto(rec);
    ++examples[name];
  });
  EXPECT_EQ(examples["tfx_cifar10_train.tfrecord"], 128);
  EXPECT_EQ(examples["tfx_cifar10_test.tfrecord"], 128);
  EXPECT_EQ(examples["tfx_flowers_jpeg.tfrecord"], 25);
  EXPECT_EQ(examples["tfx_mnist_floats.tfrecord"], 1000);
  EXPECT_EQ(examples["tfx_penguin_train.tfrecord.gz"], 234);
  EXPECT_EQ(examples["tfx_tfjs_next_page.tfrecord.gz"], 100);
}

std::set<std::string> Keys(const ExampleView& v) {
  std::set<std::string> keys;
  v.ForEachFeature([&](std::string_view k, const FeatureView&) { keys.emplace(k); });
  return keys;
}

uint32_t BigEndian32(std::string_view b, size_t at) {
  return (uint32_t{static_cast<unsigned char>(b[at])} << 24) | (uint32_t{static_cast<unsigned char>(b[at + 1])} << 16) |
         (uint32_t{static_cast<unsigned char>(b[at + 2])} << 8) | uint32_t{static_cast<unsigned char>(b[at + 3])};
}

TEST(ExampleViewInteropTest, Cifar10Facts) {
  std::string dir = SharedPath("interop/tfrecord");
  if (dir.empty()) GTEST_SKIP() << "shared interop data not found";
  int n = 0;
  ForEachInteropRecord(dir, [&](const std::string& name, std::string_view rec) {
    if (name.rfind("tfx_cifar10_", 0) != 0) return;
    SCOPED_TRACE(name + " record " + std::to_string(n++));
    auto ex = ExampleView::Parse(rec);
    ASSERT_TRUE(ex.ok()) << ex.status();
    EXPECT_EQ(Keys(*ex), (std::set<std::string>{"id", "image", "label"}));
    FeatureView id, image, label;
    ASSERT_TRUE(ex->Find("id", &id) && ex->Find("image", &image) && ex->Find("label", &label));
    ASSERT_EQ(id.kind(), FeatureKind::kBytes);
    ASSERT_EQ(id.size(), 1u);
    if (name == "tfx_cifar10_train.tfrecord") {
      EXPECT_EQ(id.bytes(0).substr(0, 6), "train_");
    }
    ASSERT_EQ(image.kind(), FeatureKind::kBytes);
    ASSERT_EQ(image.size(), 1u);
    std::string_view png = image.bytes(0);
    ASSERT_GE(png.size(), 33u);
    EXPECT_EQ(png.substr(0, 8), std::string_view("\x89PNG\r\n\x1a\n", 8));
    EXPECT_EQ(png.substr(12, 4), "IHDR");
    EXPECT_EQ(BigEndian32(png, 16), 32u);  // width
    EXPECT_EQ(BigEndian32(png, 20), 32u);  // height
    EXPECT_EQ(png[24], 8);                 // bit depth
    EXPECT_EQ(png[25], 2);                 // colour type RGB
    ASSERT_EQ(label.kind(), FeatureKind::kInt64);
    ASSERT_EQ(label.size(), 1u);
    EXPECT_GE(label.int64(0), 0);
    EXPECT_LT(label.int64(0), 10);
  });
  EXPECT_EQ(n, 256);
}

// Height and width from a JPEG's SOF0 marker; false if there is none.
bool JpegSof0Size(std::string_view jpeg, int64_t* height, int64_t* width) {
  auto u = [&](size_t i) { return static_cast<unsigned char>(jpeg[i]); };
  size_t p = 2;  // after SOI
  while (p + 4 <= jpeg.size()) {
    if (u(p) != 0xff) return false;
    unsigned char marker = u(p + 1);
    if (marker == 0xff) {  // fill byte
      ++p;
      continue;
    }
    if (marker == 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      p += 2;
      continue;
    }
    size_t len = (size_t{u(p + 2)} << 8) | u(p + 3);
    if (marker == 0xc0) {
      if (p + 9 > jpeg.size()) return false;
      *height = (int64_t{u(p + 5)} << 8) | u(p + 6);
      *width = (int64_t{u(p + 7)} << 8) | u(p + 8);
      return true;
    }
    if (marker == 0xda) return false;  // start of scan before any SOF0
    p += 2 + len;
  }
  return false;
}

TEST(ExampleViewInteropTest, FlowersJpegSizesMatchFeatures) {
  std::string dir = SharedPath("interop/tfrecord");
  if (dir.empty()) GTEST_SKIP() << "shared interop data not found";
  int n = 0;
  ForEachInteropRecord(dir, [&](const std::string& name, std::string_view rec) {
    if (name != "tfx_flowers_jpeg.tfrecord") return;
    SCOPED_TRACE("record " + std::to_string(n++));
    auto ex = ExampleView::Parse(rec);
    ASSERT_TRUE(ex.ok()) << ex.status();
    EXPECT_EQ(Keys(*ex), (std::set<std::string>{"height", "width", "depth", "label", "image_raw"}));
    FeatureView image, height, width;
    ASSERT_TRUE(ex->Find("image_raw", &image) && ex->Find("height", &height) && ex->Find("width", &width));
    ASSERT_EQ(image.kind(), FeatureKind::kBytes);
    std::string_view jpeg = image.bytes(0);
    ASSERT_GE(jpeg.size(), 4u);
    EXPECT_EQ(jpeg.substr(0, 2), "\xff\xd8");
    int64_t h = 0, w = 0;
    ASSERT_TRUE(JpegSof0Size(jpeg, &h, &w));
    EXPECT_GT(h, 0);
    EXPECT_EQ(height.kind(), FeatureKind::kInt64);
    EXPECT_EQ(height.int64(0), h);
    EXPECT_EQ(width.int64(0), w);
  });
  EXPECT_EQ(n, 25);
}

TEST(ExampleViewInteropTest, MnistHas784Floats) {
  std::string dir = SharedPath("interop/tfrecord");
  if (dir.empty()) GTEST_SKIP() << "shared interop data not found";
  int n = 0;
  ForEachInteropRecord(dir, [&](const std::string& name, std::string_view rec) {
    if (name != "tfx_mnist_floats.tfrecord") return;
    ++n;
    auto ex = ExampleView::Parse(rec);
    ASSERT_TRUE(ex.ok()) << ex.status();
    FeatureView floats, cls;
    ASSERT_TRUE(ex->Find("image_floats", &floats));
    ASSERT_EQ(floats.kind(), FeatureKind::kFloat);
    ASSERT_EQ(floats.size(), 784u);
    ASSERT_TRUE(ex->Find("image_class", &cls));
    ASSERT_EQ(cls.kind(), FeatureKind::kInt64);
    ASSERT_EQ(cls.size(), 1u);
  });
  EXPECT_EQ(n, 1000);
}

TEST(ExampleViewInteropTest, GzipFilesFeatures) {
  std::string dir = SharedPath("interop/tfrecord");
  if (dir.empty()) GTEST_SKIP() << "shared interop data not found";
  ForEachInteropRecord(dir, [&](const std::string& name, std::string_view rec) {
    auto ex = ExampleView::Parse(rec);
    FeatureView f;
    if (name == "tfx_penguin_train.tfrecord.gz") {
      ASSERT_TRUE(ex.ok()) << ex.status();
      for (const char* k : {"culmen_length_mm", "culmen_depth_mm", "flipper_length_mm", "body_mass_g"}) {
        ASSERT_TRUE(ex->Find(k, &f)) << k;
        EXPECT_EQ(f.kind(), FeatureKind::kFloat) << k;
      }
      ASSERT_TRUE(ex->Find("species", &f));
      EXPECT_EQ(f.kind(), FeatureKind::kInt64);
    } else if (name == "tfx_tfjs_next_page.tfrecord.gz") {
      ASSERT_TRUE(ex.ok()) << ex.status();
      ASSERT_TRUE(ex->Find("cur_page", &f));
      EXPECT_EQ(f.kind(), FeatureKind::kBytes);
      ASSERT_TRUE(ex->Find("label", &f));
      EXPECT_EQ(f.kind(), FeatureKind::kBytes);
      ASSERT_TRUE(ex->Find("session_index", &f));
      EXPECT_EQ(f.kind(), FeatureKind::kInt64);
    }
  });
}

// ---------------------------------------------------------------- random Examples

std::string RandomKey(std::mt19937_64& rng) {
  static const char* const kPieces[] = {"a",
                                        "image",
                                        "/",
                                        "label",
                                        "_",
                                        "0",
                                        "\xc3\xa9" /* é */,
                                        "\xe6\x97\xa5\xe6\x9c\xac" /* 日本 */,
                                        "\xf0\x9f\x98\x80" /* 😀 */,
                                        "\xef\xbf\xbf",
                                        " ",
                                        "\x01"};
  std::string key;
  for (int n = static_cast<int>(rng() % 5); n > 0; --n) key += kPieces[rng() % std::size(kPieces)];
  return key;  // may be empty
}

size_t RandomCount(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:
      return 0;
    case 1:
      return 1000 + rng() % 5000;  // big list
    default:
      return rng() % 10;
  }
}

int64_t RandomInt64(std::mt19937_64& rng) {
  switch (rng() % 5) {
    case 0:
      return std::numeric_limits<int64_t>::min();
    case 1:
      return std::numeric_limits<int64_t>::max();
    case 2:
      return static_cast<int64_t>(rng() % 300) - 150;
    default:
      return static_cast<int64_t>(rng());
  }
}

float RandomFloat(std::mt19937_64& rng) {
  uint32_t bits = static_cast<uint32_t>(rng());  // any bit pattern, NaNs included
  if (rng() % 4 == 0) bits = FloatBits(static_cast<float>(rng() % 1000) / 7.0f);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

tensorflow::Example RandomProtoExample(std::mt19937_64& rng) {
  tensorflow::Example ex;
  if (rng() % 10 == 0) return ex;  // no features at all
  auto* map = ex.mutable_features()->mutable_feature();
  for (int n = static_cast<int>(rng() % 8); n > 0; --n) {
    tensorflow::Feature& f = (*map)[RandomKey(rng)];
    f.Clear();
    size_t count = RandomCount(rng);
    switch (rng() % 4) {
      case 0:
        break;  // kind not set
      case 1: {
        auto* list = f.mutable_bytes_list();
        for (size_t i = 0; i < std::min<size_t>(count, 50); ++i) {
          std::string v(rng() % 40, '\0');
          for (char& c : v) c = static_cast<char>(rng());
          list->add_value(v);
        }
        break;
      }
      case 2: {
        auto* list = f.mutable_float_list();
        for (size_t i = 0; i < count; ++i) list->add_value(RandomFloat(rng));
        break;
      }
      case 3: {
        auto* list = f.mutable_int64_list();
        for (size_t i = 0; i < count; ++i) list->add_value(RandomInt64(rng));
        break;
      }
    }
  }
  return ex;
}

TEST(ExampleViewRandomTest, ProtobufSerializedExamples) {
  std::mt19937_64 rng(2024);
  for (int i = 0; i < 300; ++i) {
    SCOPED_TRACE("example " + std::to_string(i));
    std::string bytes = RandomProtoExample(rng).SerializeAsString();
    ExpectViewMatchesProto(bytes);
  }
}

// A feature as the builder was asked to write it.
struct ModelFeature {
  FeatureKind kind;
  std::vector<std::string> bytes;
  std::vector<int64_t> ints;
  std::vector<float> floats;
};

// The key contract of example_builder.h: protobuf (and so TensorFlow) refuses
// a key that is not UTF-8; IsValidFeatureKey says which keys are safe.
TEST(ExampleBuilderTest, KeysMustBeUtf8ForProtobuf) {
  EXPECT_TRUE(IsValidFeatureKey("image/encoded"));
  EXPECT_TRUE(IsValidFeatureKey(""));
  EXPECT_TRUE(IsValidFeatureKey("\xc3\xa9tiquette"));
  EXPECT_FALSE(IsValidFeatureKey("bad\xff"));
  EXPECT_FALSE(IsValidFeatureKey("\xc3"));
  for (const std::string& key : {std::string("label\xc3\xa9"), std::string("label\xff")}) {
    ExampleBuilder b;
    b.AddInt64(key, 1);
    const std::string bytes = b.Serialize();
    tensorflow::Example proto;
    EXPECT_EQ(proto.ParseFromString(bytes), IsValidFeatureKey(key)) << key;
    // ExampleView gives the same verdict as protobuf.
    EXPECT_EQ(ExampleView::Parse(bytes).ok(), IsValidFeatureKey(key)) << key;
  }
}

TEST(ExampleBuilderTest, RandomBuilderOutputParsesWithProtobuf) {
  std::mt19937_64 rng(99);
  ExampleBuilder builder;
  for (int i = 0; i < 300; ++i) {
    SCOPED_TRACE("example " + std::to_string(i));
    builder.Clear();
    std::map<std::string, ModelFeature> model;  // last write of a key wins
    std::vector<std::string> keys;
    for (int n = static_cast<int>(rng() % 8); n > 0; --n) {
      std::string key = (!keys.empty() && rng() % 5 == 0) ? keys[rng() % keys.size()] : RandomKey(rng);
      keys.push_back(key);
      ModelFeature m;
      size_t count = RandomCount(rng);
      switch (rng() % 3) {
        case 0: {
          m.kind = FeatureKind::kBytes;
          for (size_t j = 0; j < std::min<size_t>(count, 50); ++j) {
            std::string v(rng() % 40, '\0');
            for (char& c : v) c = static_cast<char>(rng());
            m.bytes.push_back(v);
          }
          if (m.bytes.size() == 1 && rng() % 2) {
            builder.AddBytes(key, m.bytes[0]);
          } else {
            builder.AddBytesList(key, std::vector<std::string_view>(m.bytes.begin(), m.bytes.end()));
          }
          break;
        }
        case 1:
          m.kind = FeatureKind::kInt64;
          for (size_t j = 0; j < count; ++j) m.ints.push_back(RandomInt64(rng));
          builder.AddInt64List(key, m.ints.data(), m.ints.size());
          break;
        case 2:
          m.kind = FeatureKind::kFloat;
          for (size_t j = 0; j < count; ++j) m.floats.push_back(RandomFloat(rng));
          builder.AddFloatList(key, m.floats.data(), m.floats.size());
          break;
      }
      model[key] = m;
    }
    std::string bytes = builder.Serialize();
    EXPECT_EQ(builder.Serialize(), bytes);  // deterministic
    std::string appended = "prefix";
    builder.SerializeTo(&appended);
    EXPECT_EQ(appended, "prefix" + bytes);

    tensorflow::Example proto;
    ASSERT_TRUE(proto.ParseFromString(bytes));
    EXPECT_TRUE(proto.has_features());
    const auto& map = proto.features().feature();
    ASSERT_EQ(map.size(), model.size());
    for (const auto& [key, m] : model) {
      SCOPED_TRACE("key \"" + key + "\"");
      auto it = map.find(key);
      ASSERT_NE(it, map.end());
      const tensorflow::Feature& f = it->second;
      ASSERT_EQ(ProtoKind(f), m.kind);
      if (m.kind == FeatureKind::kBytes) {
        ASSERT_EQ(f.bytes_list().value_size(), static_cast<int>(m.bytes.size()));
        for (size_t j = 0; j < m.bytes.size(); ++j) EXPECT_EQ(f.bytes_list().value(j), m.bytes[j]);
      } else if (m.kind == FeatureKind::kInt64) {
        ASSERT_EQ(f.int64_list().value_size(), static_cast<int>(m.ints.size()));
        for (size_t j = 0; j < m.ints.size(); ++j) EXPECT_EQ(f.int64_list().value(j), m.ints[j]);
      } else {
        ASSERT_EQ(f.float_list().value_size(), static_cast<int>(m.floats.size()));
        for (size_t j = 0; j < m.floats.size(); ++j) {
          EXPECT_EQ(FloatBits(f.float_list().value(j)), FloatBits(m.floats[j]));
        }
      }
    }
    ExpectViewMatchesProto(bytes);
    auto view = ExampleView::Parse(bytes);
    ASSERT_TRUE(view.ok());
    EXPECT_EQ(view->entry_count(), keys.size());
  }
}

TEST(ExampleBuilderTest, EmptyExampleHasEmptyFeatures) {
  ExampleBuilder b;
  std::string bytes = b.Serialize();
  tensorflow::Example proto;
  ASSERT_TRUE(proto.ParseFromString(bytes));
  EXPECT_TRUE(proto.has_features());
  EXPECT_EQ(proto.features().feature_size(), 0);
  // What protobuf writes for the same message.
  tensorflow::Example same;
  same.mutable_features();
  EXPECT_EQ(bytes, same.SerializeAsString());
  auto view = ExampleView::Parse(bytes);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->entry_count(), 0u);
}

TEST(ExampleBuilderTest, SingleFeatureMatchesProtobufBytes) {
  // With one key protobuf's map order cannot differ, so the bytes must match.
  const int64_t ints[] = {3, -1, 1LL << 40};
  const float floats[] = {0.5f, -0.0f};
  struct Case {
    std::function<void(ExampleBuilder&)> build;
    std::function<void(tensorflow::Feature&)> proto;
  };
  const Case cases[] = {
      {[](ExampleBuilder& b) { b.AddBytes("image/encoded", std::string("\x00\xff", 2)); },
       [](tensorflow::Feature& f) { f.mutable_bytes_list()->add_value(std::string("\x00\xff", 2)); }},
      {[&](ExampleBuilder& b) { b.AddInt64List("k", ints, 3); },
       [&](tensorflow::Feature& f) {
         for (int64_t v : ints) f.mutable_int64_list()->add_value(v);
       }},
      {[&](ExampleBuilder& b) { b.AddFloatList("\xc3\xa9", floats, 2); },
       [&](tensorflow::Feature& f) {
         for (float v : floats) f.mutable_float_list()->add_value(v);
       }},
      {[&](ExampleBuilder& b) { b.AddFloatList("empty", floats, 0); },
       [&](tensorflow::Feature& f) { f.mutable_float_list(); }},
      {[&](ExampleBuilder& b) { b.AddBytesList("none", {}); }, [&](tensorflow::Feature& f) { f.mutable_bytes_list(); }},
  };
  for (const Case& c : cases) {
    ExampleBuilder b;
    c.build(b);
    std::string bytes = b.Serialize();
    tensorflow::Example parsed;
    ASSERT_TRUE(parsed.ParseFromString(bytes));
    ASSERT_EQ(parsed.features().feature_size(), 1);
    const std::string key = parsed.features().feature().begin()->first;
    tensorflow::Example want;
    c.proto((*want.mutable_features()->mutable_feature())[key]);
    EXPECT_EQ(bytes, want.SerializeAsString()) << key;
  }
}

// ---------------------------------------------------------------- hand-written wire bytes

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string Tag(uint32_t field, uint32_t type) { return Varint((uint64_t{field} << 3) | type); }
std::string Len(uint32_t field, std::string_view payload) {
  return Tag(field, 2) + Varint(payload.size()) + std::string(payload);
}
std::string Fixed32(uint32_t v) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(v >> (8 * i));
  return out;
}
std::string Fixed64(uint64_t v) { return Fixed32(static_cast<uint32_t>(v)) + Fixed32(static_cast<uint32_t>(v >> 32)); }

// Unknown fields of every wire type, with field numbers the messages do not use.
std::string Unknowns() {
  return Tag(9, 0) + Varint(150) + Tag(10, 1) + Fixed64(0x0102030405060708ull) + Tag(11, 5) + Fixed32(7) +
         Len(12, "unknown payload") + Tag(13, 3) + Tag(1, 0) + Varint(1) + Tag(14, 3) + Len(2, "nested") + Tag(14, 4) +
         Tag(13, 4);
}

std::string Entry(std::string_view key, std::string_view feature) { return Len(1, key) + Len(2, feature); }
std::string ExampleOf(const std::vector<std::string>& entries) {
  std::string features;
  for (const auto& e : entries) features += Len(1, e);
  return Len(1, features);
}
std::string Packed(const std::vector<int64_t>& vs) {
  std::string p;
  for (int64_t v : vs) p += Varint(static_cast<uint64_t>(v));
  return Len(1, p);
}
std::string PackedFloats(const std::vector<float>& vs) {
  std::string p;
  for (float v : vs) p += Fixed32(FloatBits(v));
  return Len(1, p);
}

// Parses `record` with both parsers and returns the view of `key`.
FeatureView ParseAndFind(const std::string& record, std::string_view key) {
  ExpectViewMatchesProto(record);
  FeatureView f;
  auto view = ExampleView::Parse(record);
  EXPECT_TRUE(view.ok()) << view.status();
  if (view.ok()) {
    EXPECT_TRUE(view->Find(key, &f)) << key;
  }
  return f;
}

std::vector<int64_t> Int64s(const FeatureView& f) {
  std::vector<int64_t> v(f.size());
  f.CopyInt64s(v.data(), v.size());
  return v;
}
std::vector<float> Floats(const FeatureView& f) {
  std::vector<float> v(f.size());
  f.CopyFloats(v.data(), v.size());
  return v;
}
std::vector<std::string> BytesValues(const FeatureView& f) {
  std::vector<std::string> v;
  f.ForEachBytes([&](std::string_view b) { v.emplace_back(b); });
  return v;
}

TEST(ExampleViewWireTest, UnpackedInt64AndFloatLists) {
  std::string ints = Tag(1, 0) + Varint(1) + Tag(1, 0) + Varint(static_cast<uint64_t>(-5)) + Tag(1, 0) + Varint(300);
  std::string floats = Tag(1, 5) + Fixed32(FloatBits(1.5f)) + Tag(1, 5) + Fixed32(FloatBits(-2.0f));
  std::string record = ExampleOf({Entry("i", Len(3, ints)), Entry("f", Len(2, floats))});
  EXPECT_EQ(Int64s(ParseAndFind(record, "i")), (std::vector<int64_t>{1, -5, 300}));
  EXPECT_EQ(Floats(ParseAndFind(record, "f")), (std::vector<float>{1.5f, -2.0f}));
}

TEST(ExampleViewWireTest, PackedAndUnpackedMixed) {
  std::string ints = Packed({1, 2}) + Tag(1, 0) + Varint(3) + Packed({4});
  std::string floats = PackedFloats({1.0f}) + Tag(1, 5) + Fixed32(FloatBits(2.0f)) + PackedFloats({3.0f, 4.0f});
  std::string record = ExampleOf({Entry("i", Len(3, ints)), Entry("f", Len(2, floats))});
  FeatureView i = ParseAndFind(record, "i");
  EXPECT_EQ(Int64s(i), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(i.int64(3), 4);
  FeatureView f = ParseAndFind(record, "f");
  EXPECT_EQ(Floats(f), (std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f}));
  EXPECT_EQ(f.float_value(2), 3.0f);
}

TEST(ExampleViewWireTest, FieldsInReverseOrder) {
  // Map entry with the value before the key; lists with the kind last.
  std::string entry = Len(2, Len(1, Len(1, "v1") + Len(1, "v2"))) + Len(1, "key");
  std::string record = ExampleOf({entry, Len(2, Len(3, Packed({9}))) + Len(1, "n")});
  EXPECT_EQ(BytesValues(ParseAndFind(record, "key")), (std::vector<std::string>{"v1", "v2"}));
  EXPECT_EQ(Int64s(ParseAndFind(record, "n")), (std::vector<int64_t>{9}));
}

TEST(ExampleViewWireTest, UnknownFieldsAtEveryLevel) {
  const std::string u = Unknowns();
  std::string list = u + Len(1, "x") + u + Len(1, "y") + u;
  std::string feature = u + Len(1, list) + u;
  std::string entry = u + Len(1, "k") + u + Len(2, feature) + u;
  std::string features = u + Len(1, entry) + u;
  std::string record = u + Len(1, features) + u;
  EXPECT_EQ(BytesValues(ParseAndFind(record, "k")), (std::vector<std::string>{"x", "y"}));
  // A known field number with the wrong wire type is an unknown field too.
  std::string odd = Tag(1, 0) + Varint(5) + Tag(2, 5) + Fixed32(1);  // "int64" field 1 as varint etc.
  std::string ints = Packed({7}) + Tag(1, 5) + Fixed32(3) + Tag(1, 1) + Fixed64(4);
  std::string rec2 = Tag(1, 0) + Varint(3) +
                     ExampleOf({Tag(1, 0) + Varint(4) + Entry("i", odd + Len(3, ints) + Tag(3, 0) + Varint(8))});
  FeatureView i = ParseAndFind(rec2, "i");
  EXPECT_EQ(i.kind(), FeatureKind::kInt64);
  EXPECT_EQ(Int64s(i), (std::vector<int64_t>{7}));
}

// protobuf's C++ parser reads a tag as at most 5 bytes and keeps the low 32
// bits, so a 5-byte tag whose last byte overflows is still a valid
// (unknown) field; the view must accept it too.
TEST(ExampleViewWireTest, FiveByteTagKeepsLow32Bits) {
  // 0xf0 0x9f 0x98 0x80 0x61: bits above 32 dropped -> an unknown varint field.
  std::string odd_tag("\xf0\x9f\x98\x80\x61", 5);
  std::string record = ExampleOf({odd_tag + Varint(48) + Entry("k", Len(3, Packed({1})))});
  EXPECT_EQ(Int64s(ParseAndFind(record, "k")), (std::vector<int64_t>{1}));
}

TEST(ExampleViewWireTest, DuplicatedKeyLastWins) {
  std::string record = ExampleOf(
      {Entry("k", Len(1, Len(1, "first"))), Entry("other", Len(3, Packed({1}))), Entry("k", Len(3, Packed({2, 3})))});
  FeatureView k = ParseAndFind(record, "k");
  EXPECT_EQ(k.kind(), FeatureKind::kInt64);
  EXPECT_EQ(Int64s(k), (std::vector<int64_t>{2, 3}));
  auto view = ExampleView::Parse(record);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->entry_count(), 3u);
  std::vector<std::string> visited;
  view->ForEachFeature([&](std::string_view key, const FeatureView&) { visited.emplace_back(key); });
  EXPECT_EQ(visited, (std::vector<std::string>{"k", "other", "k"}));
}

TEST(ExampleViewWireTest, TwoFeaturesMessagesMerge) {
  std::string record = ExampleOf({Entry("a", Len(3, Packed({1})))}) +
                       ExampleOf({Entry("b", Len(3, Packed({2}))), Entry("a", Len(3, Packed({3})))});
  EXPECT_EQ(Int64s(ParseAndFind(record, "a")), (std::vector<int64_t>{3}));
  EXPECT_EQ(Int64s(ParseAndFind(record, "b")), (std::vector<int64_t>{2}));
}

TEST(ExampleViewWireTest, RepeatedListsOfOneKindConcatenate) {
  // Two bytes_list fields in one Feature.
  std::string one = ExampleOf({Entry("k", Len(1, Len(1, "a")) + Len(1, Len(1, "b") + Len(1, "c")))});
  EXPECT_EQ(BytesValues(ParseAndFind(one, "k")), (std::vector<std::string>{"a", "b", "c"}));
  // Two Feature payloads (map entry values) in one entry.
  std::string two = ExampleOf({Len(1, "k") + Len(2, Len(3, Packed({1, 2}))) + Len(2, Len(3, Packed({3})))});
  EXPECT_EQ(Int64s(ParseAndFind(two, "k")), (std::vector<int64_t>{1, 2, 3}));
  std::string floats = ExampleOf({Entry("k", Len(2, PackedFloats({1.0f})) + Len(2, PackedFloats({2.0f})))});
  EXPECT_EQ(Floats(ParseAndFind(floats, "k")), (std::vector<float>{1.0f, 2.0f}));
}

TEST(ExampleViewWireTest, KindChangeLastKindWins) {
  std::string record = ExampleOf({Entry("k", Len(1, Len(1, "gone")) + Len(3, Packed({5, 6})))});
  FeatureView k = ParseAndFind(record, "k");
  EXPECT_EQ(k.kind(), FeatureKind::kInt64);
  EXPECT_EQ(Int64s(k), (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(k.bytes(0), "");
  // bytes, float, bytes: only the last bytes_list survives (the oneof was reset).
  std::string back = ExampleOf({Entry(
      "k", Len(1, Len(1, "old")) + Len(2, PackedFloats({1.0f})) + Len(1, Len(1, "new")) + Len(1, Len(1, "n2")))});
  EXPECT_EQ(BytesValues(ParseAndFind(back, "k")), (std::vector<std::string>{"new", "n2"}));
  // The kind changes in a second Feature payload of the same entry.
  std::string across = ExampleOf({Len(1, "k") + Len(2, Len(3, Packed({1}))) + Len(2, Len(2, PackedFloats({2.0f}))) +
                                  Len(2, Len(2, PackedFloats({3.0f})))});
  FeatureView a = ParseAndFind(across, "k");
  EXPECT_EQ(a.kind(), FeatureKind::kFloat);
  EXPECT_EQ(Floats(a), (std::vector<float>{2.0f, 3.0f}));
}

TEST(ExampleViewWireTest, EmptyFeatureAndMissingParts) {
  // A Feature with no kind, an entry with no value, an entry with no key.
  std::string record = ExampleOf({Entry("none", ""), Len(1, "novalue"), Len(2, Len(3, Packed({4})))});
  EXPECT_EQ(ParseAndFind(record, "none").kind(), FeatureKind::kNone);
  EXPECT_EQ(ParseAndFind(record, "novalue").kind(), FeatureKind::kNone);
  EXPECT_EQ(Int64s(ParseAndFind(record, "")), (std::vector<int64_t>{4}));
  // Entirely empty record: an Example with nothing set.
  ExpectViewMatchesProto("");
}

TEST(ExampleViewWireTest, Utf8Keys) {
  const std::string valid[] = {"\xc3\xa9",     "\xe2\x82\xac",     "\xf0\x9f\x98\x80",
                               "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf", std::string("nul\0key", 7)};
  for (const auto& key : valid) {
    SCOPED_TRACE(key);
    EXPECT_EQ(Int64s(ParseAndFind(ExampleOf({Entry(key, Len(3, Packed({1})))}), key)), (std::vector<int64_t>{1}));
  }
  const std::string invalid[] = {"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "a\x80"};
  for (const auto& key : invalid) {
    std::string record = ExampleOf({Entry(key, Len(3, Packed({1})))});
    tensorflow::Example proto;
    EXPECT_FALSE(proto.ParseFromString(record)) << "protobuf accepted key " << ::testing::PrintToString(key);
    auto view = ExampleView::Parse(record);
    ASSERT_FALSE(view.ok()) << ::testing::PrintToString(key);
    EXPECT_EQ(view.status().code(), StatusCode::kDataLoss);
    // The key's bytes start after 0a L 0a L 0a L.
    EXPECT_TRUE(HasSubstr(view.status().message(), "at byte 6 of the record: feature key is not valid UTF-8"));
  }
}

// ---------------------------------------------------------------- malformed records

struct Malformed {
  const char* name;
  std::string record;
  size_t offset;     // the byte the message must name
  const char* what;  // and the problem
};

TEST(ExampleViewMalformedTest, DataLossNamingTheOffset) {
  const std::string good_entry = Entry("ok", Len(3, Packed({1})));
  const std::string good = ExampleOf({good_entry});  // a valid record to put damage after
  const std::vector<Malformed> cases = {
      {"truncated tag", "\x8a", 0, "truncated field tag"},
      {"truncated length", "\x0a", 0, "truncated length"},
      {"truncated varint at top level", Tag(5, 0) + "\xff\xff", 0, "truncated varint"},
      {"length past end", Tag(1, 2) + Varint(10) + "abc", 0, "runs past"},
      {"length past end of nested message", Len(1, Len(1, good_entry) + Tag(1, 2) + Varint(50) + "x"),
       2 + Len(1, good_entry).size(), "runs past"},
      {"truncated varint in packed int64", ExampleOf({Entry("n", Len(3, Len(1, Varint(5) + "\x80\x80")))}),
       // 0a L 0a L 0a 01 'n' 12 L 1a L 0a L 05 -> the bad varint starts at 14
       14, "truncated varint in packed int64_list"},
      {"packed float of 5 bytes", ExampleOf({Entry("f", Len(2, Len(1, "12345")))}), 13, "not a multiple of 4"},
      {"wire type 7 at top level", Tag(3, 7) + "rest", 0, "invalid wire type"},
      {"wire type 7 in a list", ExampleOf({Entry("w", Len(1, Tag(1, 7)))}), 11, "invalid wire type"},
      {"wire type 6 in an entry", ExampleOf({Len(1, "k") + Tag(4, 6)}), 7, "invalid wire type"},
      {"field number 0", Tag(0, 0) + Varint(1), 0, "invalid field number"},
      {"unterminated group", ExampleOf({Entry("g", Tag(7, 3) + Tag(1, 0) + Varint(1))}), 9, "unterminated group"},
      {"mismatched end group", Tag(7, 3) + Tag(8, 4), 0, "mismatched end-group"},
      {"lone end group", good + Tag(7, 4), good.size(), "invalid wire type"},
      {"truncated fixed32", Tag(2, 5) + "abc", 0, "truncated fixed32"},
      {"field number 0 inside a group", Tag(7, 3) + Tag(0, 0) + Varint(1) + Tag(7, 4), 0, "invalid field number"},
      {"tag longer than 5 bytes", std::string("\x80\x80\x80\x80\x80\x01", 6) + Varint(1), 0, "truncated field tag"},
      {"truncated fixed64", good + Tag(2, 1) + "abcdefg", good.size(), "truncated fixed64"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    tensorflow::Example proto;
    EXPECT_FALSE(proto.ParseFromString(c.record)) << "protobuf accepted it";
    auto view = ExampleView::Parse(c.record);
    ASSERT_FALSE(view.ok());
    EXPECT_EQ(view.status().code(), StatusCode::kDataLoss);
    EXPECT_TRUE(HasSubstr(view.status().message(), "malformed Example at byte " + std::to_string(c.offset) + " "));
    EXPECT_TRUE(HasSubstr(view.status().message(), c.what));
  }
}

// Unknown groups nest as deep as protobuf's recursion limit allows, no deeper.
TEST(ExampleViewMalformedTest, NestedGroupsFollowProtobufsLimit) {
  auto nested = [](int depth) {
    std::string open, close;
    for (int i = 0; i < depth; ++i) {
      open += Tag(7, 3);
      close += Tag(7, 4);
    }
    return open + close;
  };
  tensorflow::Example proto;
  EXPECT_TRUE(proto.ParseFromString(nested(40)));
  EXPECT_TRUE(ExampleView::Parse(nested(40)).ok());
  EXPECT_FALSE(proto.ParseFromString(nested(150)));
  auto deep = ExampleView::Parse(nested(150));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(HasSubstr(deep.status().message(), "malformed Example at byte 0 "));
  EXPECT_TRUE(HasSubstr(deep.status().message(), "groups nested too deeply"));
}

// Every strict prefix of a valid record either parses identically with both
// parsers or is rejected by both.
TEST(ExampleViewMalformedTest, EveryTruncationAgreesWithProtobuf) {
  ExampleBuilder b;
  const int64_t ints[] = {1, -1, 300};
  const float floats[] = {1.0f, 2.0f};
  b.AddBytes("image/encoded", "some bytes");
  b.AddInt64List("label", ints, 3);
  b.AddFloatList("\xe6\x97\xa5", floats, 2);
  std::string record = b.Serialize();
  for (size_t n = 0; n < record.size(); ++n) {
    SCOPED_TRACE("prefix of " + std::to_string(n) + " bytes");
    std::string prefix = record.substr(0, n);
    tensorflow::Example proto;
    bool proto_ok = proto.ParseFromString(prefix);
    auto view = ExampleView::Parse(prefix);
    ASSERT_EQ(view.ok(), proto_ok) << view.status();
    if (proto_ok)
      ExpectViewMatchesProto(prefix);
    else
      EXPECT_EQ(view.status().code(), StatusCode::kDataLoss);
  }
}

// Random byte mutations of valid records: both parsers accept the same
// inputs and, when they do, agree on every value.
TEST(ExampleViewMalformedTest, RandomMutationsAgreeWithProtobuf) {
  std::mt19937_64 rng(5);
  int accepted = 0, rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string record = RandomProtoExample(rng).SerializeAsString();
    if (record.size() > 400) continue;
    if (record.empty()) continue;
    for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips) {
      size_t at = rng() % record.size();
      record[at] = rng() % 2 ? static_cast<char>(rng()) : static_cast<char>(record[at] ^ (1 << (rng() % 8)));
    }
    SCOPED_TRACE("mutation " + std::to_string(i) + ": " + ::testing::PrintToString(record));
    tensorflow::Example proto;
    bool proto_ok = proto.ParseFromString(record);
    auto view = ExampleView::Parse(record);
    ASSERT_EQ(view.ok(), proto_ok) << view.status();
    if (proto_ok) {
      ++accepted;
      ExpectViewMatchesProto(record);
    } else {
      ++rejected;
      EXPECT_EQ(view.status().code(), StatusCode::kDataLoss);
    }
  }
  // Both outcomes were exercised.
  EXPECT_GT(accepted, 100);
  EXPECT_GT(rejected, 100);
}

TEST(ExampleViewTest, KindNames) {
  EXPECT_STREQ(FeatureKindName(FeatureKind::kBytes), "bytes_list");
  EXPECT_STREQ(FeatureKindName(FeatureKind::kFloat), "float_list");
  EXPECT_STREQ(FeatureKindName(FeatureKind::kInt64), "int64_list");
  EXPECT_STREQ(FeatureKindName(FeatureKind::kNone), "none");
}

// The manifest schema's words: what convert writes, verify parses back.
TEST(SchemaKindTest, NamesRoundTrip) {
  EXPECT_STREQ(SchemaKindName(FeatureKind::kBytes), "bytes");
  EXPECT_STREQ(SchemaKindName(FeatureKind::kInt64), "int64");
  EXPECT_STREQ(SchemaKindName(FeatureKind::kFloat), "float");
  for (FeatureKind k : {FeatureKind::kBytes, FeatureKind::kInt64, FeatureKind::kFloat}) {
    FeatureKind parsed = FeatureKind::kNone;
    EXPECT_TRUE(ParseSchemaKind(SchemaKindName(k), &parsed));
    EXPECT_EQ(parsed, k);
  }
  FeatureKind untouched = FeatureKind::kBytes;
  for (const char* bad : {"none", "int64_list", "Int64", "string", ""}) {
    EXPECT_FALSE(ParseSchemaKind(bad, &untouched)) << bad;
  }
  EXPECT_EQ(untouched, FeatureKind::kBytes);
}

}  // namespace
}  // namespace libshard::example
