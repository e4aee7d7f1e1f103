#include "fixtures.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "libshard/convert/manifest_io.h"
#include "libshard/example/example_view.h"
#include "libshard/example/image_keys.h"
#include "libshard/image/decode.h"
#include "libshard/image/encode.h"
#include "libshard/image/mask_colors.h"
#include "libshard/io/shard_paths.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/reader/batch_loader.h"
#include "libshard/record/record_reader.h"
#include "libshard/verify/verifier.h"
#include "testutil.h"

namespace libshard::testing {

namespace fs = std::filesystem;

image::Image RandomImage(int width, int height, int channels, int bit_depth, uint32_t seed) {
  image::Image img(width, height, channels, bit_depth);
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
  const size_t n = static_cast<size_t>(width) * height * channels;
  for (size_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const uint32_t v = static_cast<uint32_t>(state >> 33);
    if (bit_depth == 16) {
      img.samples16()[i] = static_cast<uint16_t>(v);
    } else {
      img.data()[i] = static_cast<uint8_t>(v);
    }
  }
  return img;
}

std::string PngBytes(int width, int height, int channels, uint32_t seed, int bit_depth) {
  StatusOr<std::string> png = image::EncodePng(RandomImage(width, height, channels, bit_depth, seed));
  EXPECT_TRUE(png.ok()) << png.status();
  return png.ok() ? *png : "";
}

std::string JpegBytes(int width, int height, int channels, uint32_t seed, bool progressive) {
  // Smooth content, so that JPEG sizes stay small and realistic.
  image::Image img(width, height, channels);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < channels; ++c) {
        img.row(y)[x * channels + c] = static_cast<uint8_t>((x * 3 + y * 5 + c * 60 + seed * 37) & 255);
      }
    }
  }
  image::JpegEncodeOptions o;
  o.progressive = progressive;
  StatusOr<std::string> jpeg = image::EncodeJpeg(img, o);
  EXPECT_TRUE(jpeg.ok()) << jpeg.status();
  return jpeg.ok() ? *jpeg : "";
}

std::string WithExifOrientation(const std::string& jpeg, int orientation) {
  std::string tiff("MM\0\x2a\0\0\0\x08", 8);           // big-endian, IFD0 at offset 8
  tiff += std::string("\0\x01", 2);                    // one entry
  tiff += std::string("\x01\x12\0\x03\0\0\0\x01", 8);  // Orientation, SHORT, count 1
  tiff += static_cast<char>(0);
  tiff += static_cast<char>(orientation);
  tiff += std::string(2, '\0');  // value padding
  tiff += std::string(4, '\0');  // no next IFD
  const std::string payload = std::string("Exif\0\0", 6) + tiff;
  const size_t len = payload.size() + 2;
  std::string seg = "\xFF\xE1";
  seg += static_cast<char>(len >> 8);
  seg += static_cast<char>(len & 255);
  seg += payload;
  return jpeg.substr(0, 2) + seg + jpeg.substr(2);
}

void WriteTreeFile(const std::string& root, const std::string& rel, const std::string& contents) {
  const fs::path p = fs::path(root) / rel;
  fs::create_directories(p.parent_path());
  WriteFileOrDie(p.string(), contents);
}

void WriteSplitClassTree(const std::string& root) {
  for (int k = 0; k < 23; ++k) {
    const std::string cls = k % 3 == 0 ? "a" : k % 3 == 1 ? "b" : "c";
    const std::string split = k % 4 == 0 ? "val" : "train";
    const std::string rel = split + "/" + cls + "/img" + std::to_string(k);
    if (k % 2) {
      WriteTreeFile(root, rel + ".png", PngBytes(10 + k, 8 + k % 5, 3, k));
    } else {
      WriteTreeFile(root, rel + ".jpg", JpegBytes(12 + k % 7, 9 + k, 3, k));
    }
  }
  WriteTreeFile(root, "train/b/readme.png", "not an image\n");  // rejected
}

std::vector<std::string> ReadRecords(const std::string& path) {
  const std::string data = ReadFileOrDie(path);
  record::RecordReader reader(data);
  record::RecordView rec;
  std::vector<std::string> out;
  Status s;
  while ((s = reader.Next(&rec)).ok()) out.emplace_back(rec.data);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << path << ": " << s;
  return out;
}

std::vector<std::string> ListFilesRecursive(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), dir).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::map<std::string, std::string> SnapshotDir(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const std::string& rel : ListFilesRecursive(dir)) {
    std::string bytes = ReadFileOrDie(dir + "/" + rel);
    if (rel.rfind("manifest", 0) == 0) {
      StatusOr<Manifest> m = manifest::ReadManifest(dir + "/" + rel);
      EXPECT_TRUE(m.ok()) << m.status();
      if (m.ok()) {
        m->clear_run();
        bytes = manifest::ToJson(*m);
      }
    }
    out[rel] = std::move(bytes);
  }
  return out;
}

int CountDifferences(const std::map<std::string, std::string>& want, const std::map<std::string, std::string>& got) {
  int diffs = 0;
  for (const auto& [k, v] : want) {
    auto it = got.find(k);
    if (it == got.end() || it->second != v) {
      ADD_FAILURE() << k << (it == got.end() ? " missing" : " differs");
      ++diffs;
    }
  }
  for (const auto& [k, v] : got) {
    if (want.count(k) == 0) {
      ADD_FAILURE() << k << " is extra";
      ++diffs;
    }
  }
  return diffs;
}

std::vector<std::string> FolderReadBack::duplicates() const {
  std::vector<std::string> out;
  for (const auto& [name, n] : filenames) {
    if (n > 1) out.push_back(name);
  }
  return out;
}

FolderReadBack ReadBackFolder(const std::string& dir) {
  FolderReadBack out;
  StatusOr<std::vector<std::string>> paths = io::ExpandPaths({dir});
  if (!paths.ok()) {
    out.verify_faults.push_back(paths.status().message());
  } else {
    const std::vector<std::string> manifests = verify::FindManifests({dir});
    out.manifests = manifests.size();
    verify::SetResult set = verify::VerifySet(*paths, manifests, verify::VerifyOptions());
    for (const verify::FileResult& f : set.files) {
      for (const verify::Fault& fault : f.faults) out.verify_faults.push_back(f.path + ": " + fault.message);
    }
    for (const verify::ManifestResult& m : set.manifests) {
      for (const verify::SetFault& fault : m.faults) out.verify_faults.push_back(fault.path + ": " + fault.message);
    }
  }
  reader::DatasetOptions all_splits;
  all_splits.split = "*";  // every split of the folder's manifest.json
  StatusOr<std::unique_ptr<reader::Dataset>> ds = reader::Dataset::Open({dir}, all_splits);
  if (!ds.ok()) {
    out.open_error = ds.status().message();
    return out;
  }
  std::shared_ptr<const reader::Dataset> dataset(std::move(*ds));
  reader::RecordBuffer buf;
  for (uint64_t i = 0; i < dataset->size(); ++i) {
    std::string_view rec;
    Status st = dataset->ReadRecord(i, &buf, &rec);
    EXPECT_TRUE(st.ok()) << st;
    if (!st.ok()) continue;
    StatusOr<example::ExampleView> ex = example::ExampleView::Parse(rec);
    example::FeatureView name;
    EXPECT_TRUE(ex.ok() && ex->Find(keys::kFilename, &name) && name.size() == 1) << "record " << i;
    if (ex.ok() && name.size() == 1) ++out.filenames[std::string(name.bytes(0))];
  }
  reader::BatchLoaderOptions lo;
  lo.batch_size = 4;
  lo.height = lo.width = 8;
  lo.threads = 1;
  StatusOr<std::unique_ptr<reader::BatchLoader>> loader = reader::BatchLoader::Create(dataset, lo);
  if (!loader.ok()) {
    out.open_error = loader.status().message();
    return out;
  }
  for (uint64_t b = 0; b < (*loader)->batches_per_epoch(); ++b) {
    reader::Batch batch;
    Status st = (*loader)->Next(&batch);
    if (!st.ok()) {
      out.open_error = st.message();
      break;
    }
    out.loader_samples += batch.size;
  }
  return out;
}

void MakeColourMaskSet(const std::string& root, int n, int w, int h) {
  std::string csv = "name,r,g,b\n";
  for (const MaskClassColour& c : kMaskClasses) {
    csv +=
        std::string(c.name) + "," + std::to_string(c.r) + "," + std::to_string(c.g) + "," + std::to_string(c.b) + "\n";
  }
  WriteTreeFile(root, "class_dict.csv", csv);
  for (int k = 0; k < n; ++k) {
    const std::string name = "img" + std::to_string(k) + ".png";
    WriteTreeFile(root + "/in", name, PngBytes(w, h, 3, 100 + k));
    image::Image mask(w, h, 3);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const MaskClassColour& c = kMaskClasses[(x + 2 * y + k) % 3];
        uint8_t* p = mask.row(y) + 3 * x;
        p[0] = c.r;
        p[1] = c.g;
        p[2] = c.b;
      }
    }
    WriteTreeFile(root + "/masks", name, *image::EncodePng(mask));
  }
}

std::map<int64_t, uint64_t> CountOutputMaskPixels(const std::string& dir) {
  std::map<int64_t, uint64_t> counts;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".tfrecord") continue;
    for (const std::string& rec : ReadRecords(entry.path().string())) {
      StatusOr<example::ExampleView> ex = example::ExampleView::Parse(rec);
      example::FeatureView png;
      EXPECT_TRUE(ex.ok() && ex->Find(keys::kMaskEncoded, &png) && png.size() == 1) << entry.path();
      if (!ex.ok() || png.size() != 1) continue;
      StatusOr<image::Image> mask = image::DecodeIndexMask(png.bytes(0), 1u << 30);
      EXPECT_TRUE(mask.ok()) << mask.status();
      if (!mask.ok()) continue;
      for (int y = 0; y < mask->height(); ++y) {
        for (int x = 0; x < mask->width(); ++x) ++counts[mask->row(y)[x]];
      }
    }
  }
  return counts;
}

}  // namespace libshard::testing
