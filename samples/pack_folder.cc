// pack_folder: a minimal example of the libshard write API. It packs a
// class-per-folder image tree (ROOT/<split>/<class>/<file>) into one TFRecord
// shard per split, the image bytes passed through unchanged, with a DALI
// index beside each shard, and the converter's Example keys
// (example/image_keys.h; channels/colorspace describe the stored image).
// `shard convert` (decode, resize, re-encode, parallel, resumable) is the
// real tool; this shows the library underneath.
//
//   pack_folder samples/images out/
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "libshard/example/example_builder.h"
#include "libshard/example/image_keys.h"
#include "libshard/image/probe.h"
#include "libshard/io/open_file.h"
#include "libshard/record/record_writer.h"

namespace fs = std::filesystem;

namespace {

std::vector<std::string> SortedSubdirs(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && e.path().filename().string()[0] != '.') names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

libshard::Status PackSplit(const fs::path& root, const std::string& split, const fs::path& out_dir) {
  const fs::path split_dir = root / split;
  const std::vector<std::string> classes = SortedSubdirs(split_dir);
  const std::string shard = (out_dir / (root.filename().string() + "-" + split + "-00000-of-00001.tfrecord")).string();
  LIBSHARD_ASSIGN_OR_RETURN(auto writer, libshard::record::RecordWriter::Create(shard, {.write_index = true}));
  libshard::example::ExampleBuilder example;
  std::string record;
  for (size_t label = 0; label < classes.size(); ++label) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(split_dir / classes[label])) {
      if (e.is_regular_file()) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      LIBSHARD_ASSIGN_OR_RETURN(std::string bytes, libshard::io::ReadFileToString(file.string()));
      // The converter's keys (example/image_keys.h), so the reader's loader
      // and TF/DALI pipelines find sizes and labels where they expect them.
      LIBSHARD_ASSIGN_OR_RETURN(libshard::image::ImageInfo info, libshard::image::ProbeImage(bytes));
      const bool gray = info.channels <= 2 && !info.palette;
      namespace keys = libshard::keys;
      example.Clear();
      example.AddBytes(keys::kEncoded, bytes);
      example.AddBytes(keys::kFormat, info.format == libshard::image::ImageFormat::kPng ? "png" : "jpeg");
      example.AddInt64(keys::kHeight, info.oriented_height());
      example.AddInt64(keys::kWidth, info.oriented_width());
      example.AddInt64(keys::kChannels, gray ? 1 : 3);
      example.AddBytes(keys::kColorspace, gray ? "Grayscale" : "RGB");
      example.AddInt64(keys::kLabel, static_cast<int64_t>(label));
      example.AddBytes(keys::kText, classes[label]);
      example.AddBytes(keys::kFilename, fs::relative(file, root).string());
      record.clear();
      example.SerializeTo(&record);
      LIBSHARD_RETURN_IF_ERROR(writer->Write(record));
    }
  }
  const uint64_t n = writer->records_written();
  LIBSHARD_RETURN_IF_ERROR(writer->Close());
  std::cout << shard << ": " << n << " records\n";
  return libshard::Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: pack_folder ROOT OUT_DIR\n";
    return 2;
  }
  const fs::path root = fs::path(argv[1]).lexically_normal();
  const fs::path out_dir = argv[2];
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (!fs::is_directory(root)) {
    std::cerr << "pack_folder: " << root.string() << ": not a directory\n";
    return 1;
  }
  for (const std::string& split : SortedSubdirs(root)) {
    libshard::Status s = PackSplit(root, split, out_dir);
    if (!s.ok()) {
      std::cerr << "pack_folder: " << s << "\n";
      return 1;
    }
  }
  return 0;
}
