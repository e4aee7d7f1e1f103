// `shard-bench read [SHARDS...]`: how fast the framing + CRC walk and the
// Example view go over whole shards, against `cat SHARDS > /dev/null` of the
// same files measured in the same run (page cache warm). Without files, a
// temporary shard of synthetic records is written first.
//
// With --decode it also measures the training path on synthetic 224x224
// JPEGs written in the same run: the reader's BatchLoader (uint8 NHWC batches,
// and NCHW float32 batches normalised with ImageNet's mean / std,
// --threads threads) against the bare libjpeg-turbo decode (tjDecompress2,
// one thread) and, when torch is installed, torchvision's ImageFolder +
// DataLoader with --threads workers over the same JPEGs as files
// (bench/bench_torchvision.py).
//
// With --crop, random-resized-crop from 512x496 (and --large 4032x3024) JPEG
// records: the loader's whole-image and crop decodes against the bare
// libjpeg-turbo decode of the same crop regions (bench_read_crop.cc).
#include <turbojpeg.h>
#include <unistd.h>

#include <cmath>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bench.h"
#include "bench_read_crop.h"
#include "bench_read_mixture.h"
#include "bench_read_raw.h"
#include "bench_util.h"
#include "cli_checks.h"
#include "libshard/example/example_builder.h"
#include "libshard/example/example_view.h"
#include "libshard/example/image_keys.h"
#include "libshard/image/encode.h"
#include "libshard/io/mapped_file.h"
#include "libshard/reader/batch_loader.h"
#include "libshard/reader/shard_reader.h"
#include "libshard/record/index.h"
#include "libshard/record/record_reader.h"
#include "libshard/record/record_writer.h"

namespace shard_tool {
namespace {

namespace record = libshard::record;
using libshard::Status;

struct BenchReadOptions {
  std::vector<std::string> files;
  size_t records = 4096;
  size_t record_bytes = 100 * 1024;
  double seconds = 0.5;
  bool decode = false;
  bool raw = false;
  bool crop = false;
  bool mixture = false;
  size_t large = 0;
  std::string photos = BenchDataDir() + "/photos";
  int threads = 2;
  size_t images = 512;
  size_t batch_size = 64;
  std::string torchvision_script = BenchDataDir() + "/bench_torchvision.py";
};

// Runs the torchvision baseline; returns images/s, or a negative value
// (with *why set) when it could not run.
double RunTorchvision(const std::string& script, const std::string& folder, int workers, size_t batch, std::string* why,
                      const std::string& libshard_shard = "", bool buffers = false) {
  std::string cmd = "/usr/bin/python3 " + script + " " + folder + " --workers " + std::to_string(workers) +
                    " --batch-size " + std::to_string(batch) + " 2>&1";
  if (!libshard_shard.empty()) {
    cmd = "PYTHONPATH=" + BenchDataDir() + "/../python " + cmd.substr(0, cmd.size() - 5) + " --libshard " +
          libshard_shard + (buffers ? " --buffers" : "") + " 2>&1";
  }
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) {
    *why = "cannot start python3";
    return -1;
  }
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  ::pclose(p);
  const size_t at = out.rfind("images/s ");
  if (at == std::string::npos) {
    *why = out.substr(0, 200);
    while (!why->empty() && why->back() == '\n') why->pop_back();
    return -1;
  }
  return std::atof(out.c_str() + at + 9);
}

int RunDecodeBench(const BenchReadOptions& opt, const std::string& dir) {
  namespace reader = libshard::reader;
  namespace fs = std::filesystem;
  // The JPEGs, once as a shard and once as an ImageFolder tree.
  const std::string shard = dir + "/jpeg.tfrecord";
  std::vector<std::string> jpegs;
  {
    auto w = record::RecordWriter::Create(shard, {true, false});
    if (!w.ok()) {
      std::cerr << "shard-bench read: " << w.status() << "\n";
      return kExitFailure;
    }
    libshard::image::JpegEncodeOptions jo;
    jo.quality = 90;
    for (size_t i = 0; i < opt.images; ++i) {
      auto j = libshard::image::EncodeJpeg(PhotoLike224(static_cast<int>(i)), jo);
      if (!j.ok()) return kExitFailure;
      const std::string cls = dir + "/folder/class" + std::to_string(i % 4);
      fs::create_directories(cls);
      std::FILE* f = std::fopen((cls + "/" + std::to_string(i) + ".jpg").c_str(), "wb");
      if (f == nullptr) return kExitFailure;
      std::fwrite(j->data(), 1, j->size(), f);
      std::fclose(f);
      libshard::example::ExampleBuilder b;
      b.AddBytes(libshard::keys::kEncoded, *j);
      b.AddBytes(libshard::keys::kFormat, "jpeg");
      b.AddInt64(libshard::keys::kLabel, static_cast<int64_t>(i % 4));
      if (!(*w)->Write(b.Serialize()).ok()) return kExitFailure;
      jpegs.push_back(std::move(*j));
    }
    if (!(*w)->Close().ok()) return kExitFailure;
  }
  size_t jpeg_bytes = 0;
  for (const auto& j : jpegs) jpeg_bytes += j.size();

  // Bare libjpeg-turbo, one thread.
  tjhandle tj = tjInitDecompress();
  std::vector<unsigned char> pixels(224 * 224 * 3);
  const double bare_s = BestSecondsPerCall(
      [&] {
        for (const auto& j : jpegs) {
          tjDecompress2(tj, reinterpret_cast<const unsigned char*>(j.data()), j.size(), pixels.data(), 224, 0, 224,
                        TJPF_RGB, 0);
        }
      },
      opt.seconds);
  tjDestroy(tj);
  const double bare_rate = jpegs.size() / bare_s;

  // The loader: one epoch of uint8 batches, best of the rounds.
  auto ds = reader::Dataset::Open({shard});
  if (!ds.ok()) {
    std::cerr << "shard-bench read: " << ds.status() << "\n";
    return kExitFailure;
  }
  std::shared_ptr<const reader::Dataset> dataset = std::move(*ds);
  reader::BatchLoaderOptions lo;
  lo.batch_size = opt.batch_size;
  lo.threads = opt.threads;
  auto loader = reader::BatchLoader::Create(dataset, lo);
  if (!loader.ok()) {
    std::cerr << "shard-bench read: " << loader.status() << "\n";
    return kExitFailure;
  }
  Status err;
  const double loader_s = BestSecondsPerCall(
      [&] {
        for (uint64_t b = 0; b < (*loader)->batches_per_epoch(); ++b) {
          reader::Batch batch;
          Status s = (*loader)->Next(&batch);
          if (!s.ok()) err = s;
        }
      },
      opt.seconds);
  if (!err.ok()) {
    std::cerr << "shard-bench read: " << err << "\n";
    return kExitFailure;
  }
  const double loader_rate = jpegs.size() / loader_s;
  // One epoch with other options, best of the rounds (-1 if they are refused).
  auto rate_of = [&](const reader::BatchLoaderOptions& ro) {
    auto l = reader::BatchLoader::Create(dataset, ro);
    if (!l.ok()) return -1.0;
    const double s = BestSecondsPerCall(
        [&] {
          for (uint64_t b = 0; b < (*l)->batches_per_epoch(); ++b) {
            reader::Batch batch;
            if (!(*l)->Next(&batch).ok()) return;
          }
        },
        opt.seconds);
    return jpegs.size() / s;
  };
  // Random-resized-crop to 224 (as in ImageNet training), with and without
  // decode-only-the-crop.
  auto rrc_rate = [&](bool crop_decode) {
    reader::BatchLoaderOptions ro = lo;
    ro.augment = reader::Augment::kRandomResizedCrop;
    ro.crop_decode = crop_decode;
    return rate_of(ro);
  };
  const double rrc_full = rrc_rate(false), rrc_crop = rrc_rate(true);
  // What torch models take: NCHW float32 with ImageNet's mean / std, made in
  // the decode threads.
  reader::BatchLoaderOptions norm = lo;
  norm.layout = reader::Layout::kNCHW;
  norm.dtype = reader::PixelType::kFloat32;
  norm.mean = {0.485, 0.456, 0.406};
  norm.std = {0.229, 0.224, 0.225};
  const double norm_rate = rate_of(norm);

  std::string why;
  const double tv_rate = RunTorchvision(opt.torchvision_script, dir + "/folder", opt.threads, opt.batch_size, &why);
  std::string py_why;
  const double py_rate =
      RunTorchvision(opt.torchvision_script, dir + "/folder", opt.threads, opt.batch_size, &py_why, shard);
  std::string pyb_why;
  const double pyb_rate =
      RunTorchvision(opt.torchvision_script, dir + "/folder", opt.threads, opt.batch_size, &pyb_why, shard, true);

  std::cout << "\n"
            << jpegs.size() << " JPEGs 224x224 q90, " << jpeg_bytes / jpegs.size()
            << " bytes on average, to uint8 batches of " << opt.batch_size << "\n";
  std::vector<std::vector<std::string>> rows;
  const std::string t = std::to_string(opt.threads);
  rows.push_back({"bare tjDecompress2, 1 thread", Fixed(bare_rate, 0), "1.00", "-"});
  if (tv_rate > 0) {
    rows.push_back({"torchvision ImageFolder + DataLoader, " + t + " workers", Fixed(tv_rate, 0),
                    Fixed(tv_rate / bare_rate), "1.00"});
  } else {
    rows.push_back({"torchvision baseline: " + why, "-", "-", "-"});
  }
  rows.push_back({"libshard BatchLoader, " + t + " threads", Fixed(loader_rate, 0), Fixed(loader_rate / bare_rate),
                  tv_rate > 0 ? Fixed(loader_rate / tv_rate) : "-"});
  rows.push_back({"libshard BatchLoader, " + t + " threads, NCHW float32 normalised (" +
                      Fixed(norm_rate / loader_rate) + "x uint8 NHWC)",
                  Fixed(norm_rate, 0), Fixed(norm_rate / bare_rate), tv_rate > 0 ? Fixed(norm_rate / tv_rate) : "-"});
  if (py_rate > 0) {
    rows.push_back({"libshard.Loader from Python, " + t + " threads (numpy copy per batch)", Fixed(py_rate, 0),
                    Fixed(py_rate / bare_rate), tv_rate > 0 ? Fixed(py_rate / tv_rate) : "-"});
  } else {
    rows.push_back({"libshard.Loader from Python: " + py_why, "-", "-", "-"});
  }
  if (pyb_rate > 0) {
    rows.push_back({"libshard.Loader from Python, " + t + " threads (caller buffers, no copy)", Fixed(pyb_rate, 0),
                    Fixed(pyb_rate / bare_rate), tv_rate > 0 ? Fixed(pyb_rate / tv_rate) : "-"});
  } else {
    rows.push_back({"libshard.Loader from Python, caller buffers: " + pyb_why, "-", "-", "-"});
  }
  rows.push_back({"libshard, random-resized-crop, full decode", Fixed(rrc_full, 0), Fixed(rrc_full / bare_rate), "-"});
  rows.push_back({"libshard, random-resized-crop, crop decode", Fixed(rrc_crop, 0), Fixed(rrc_crop / bare_rate), "-"});
  PrintTable({"what", "images/s", "x bare", "x torchvision"}, rows);
  std::cout << "loader vs bare x threads: " << Fixed(loader_rate / (bare_rate * opt.threads)) << "\n";
  return kExitOk;
}

int RunBenchRead(BenchReadOptions opt) {
  std::string temp_dir;
  if (opt.files.empty()) {
    temp_dir = (std::filesystem::temp_directory_path() / ("shard_bench_read_" + std::to_string(getpid()))).string();
    std::filesystem::create_directories(temp_dir);
    std::string path = temp_dir + "/synthetic.tfrecord";
    Status s = WriteSyntheticShard(path, opt.records, opt.record_bytes);
    if (s.ok()) {  // with its .idx, as the converter writes them
      auto bytes = libshard::io::ReadFileToString(path);
      auto index = bytes.ok() ? record::BuildIndex(*bytes) : bytes.status();
      if (!index.ok()) {
        s = index.status();
      } else if (std::FILE* f = std::fopen(record::IndexPathFor(path).c_str(), "w")) {
        const std::string text = record::FormatIndex(*index);
        std::fwrite(text.data(), 1, text.size(), f);
        std::fclose(f);
      }
    }
    if (!s.ok()) {
      std::cerr << "shard-bench read: " << s << "\n";
      return kExitFailure;
    }
    opt.files.push_back(path);
  }
  std::vector<std::unique_ptr<libshard::io::MappedFile>> maps;
  uint64_t total = 0;
  for (const auto& f : opt.files) {
    auto m = libshard::io::MappedFile::Open(f, libshard::io::AccessPattern::kNormal);
    if (!m.ok()) {
      std::cerr << "shard-bench read: " << m.status().message() << "\n";
      return kExitUsage;
    }
    total += (*m)->size();
    maps.push_back(std::move(*m));
  }
  // Warm the page cache and count records.
  uint64_t records = 0;
  for (const auto& m : maps) {
    record::RecordReader r(m->data());
    record::RecordView v;
    Status s;
    while ((s = r.Next(&v)).ok()) ++records;
    if (s.code() != libshard::StatusCode::kOutOfRange) {
      std::cerr << "shard-bench read: " << m->path() << ": " << s.message() << "\n";
      return kExitFailure;
    }
  }
  volatile uint64_t sink = 0;
  // Best of 5: cat's time includes starting the process, as a user's pipeline would.
  double cat_best = 1e300;
  for (int i = 0; i < 5; ++i) cat_best = std::min(cat_best, TimeCat(opt.files));
  auto walk = [&](bool parse) {
    for (const auto& m : maps) {
      record::RecordReader r(m->data());
      record::RecordView v;
      while (r.Next(&v).ok()) {
        if (parse) {
          auto ex = libshard::example::ExampleView::Parse(v.data);
          sink = sink + (ex.ok() ? ex->entry_count() : 0);
        } else {
          sink = sink + v.data.size();
        }
      }
    }
  };
  double frame_s = BestSecondsPerCall([&] { walk(false); }, opt.seconds);
  double parse_s = BestSecondsPerCall([&] { walk(true); }, opt.seconds);
  // The training reader: a fresh ShardReader per pass (so every record's CRC
  // is checked on first touch and the .idx or scan is paid), then every record
  // by number.
  auto reader_walk = [&](libshard::reader::IoMode io) {
    libshard::reader::ShardReaderOptions ro;
    ro.io = io;
    ro.access = libshard::io::AccessPattern::kSequential;
    libshard::reader::RecordBuffer buf;
    for (const auto& f : opt.files) {
      auto r = libshard::reader::ShardReader::Open(f, ro);
      if (!r.ok()) continue;
      std::string_view v;
      for (size_t i = 0; i < (*r)->size(); ++i) {
        if ((*r)->Read(i, &buf, &v).ok()) sink = sink + v.size();
      }
    }
  };
  double mmap_s = BestSecondsPerCall([&] { reader_walk(libshard::reader::IoMode::kMmap); }, opt.seconds);
  double pread_s = BestSecondsPerCall([&] { reader_walk(libshard::reader::IoMode::kPread); }, opt.seconds);
  // Later epochs: readers kept open, mappings warm, every CRC already checked
  // on first touch; each Read() still checks the file size and the header.
  std::vector<std::unique_ptr<libshard::reader::ShardReader>> open_readers;
  for (const auto& f : opt.files) {
    auto r = libshard::reader::ShardReader::Open(f, {});
    if (r.ok()) open_readers.push_back(std::move(*r));
  }
  auto warm_walk = [&] {
    std::string_view v;
    for (const auto& r : open_readers) {
      for (size_t i = 0; i < r->size(); ++i) {
        if (r->Read(i, nullptr, &v).ok()) sink = sink + v.size();
      }
    }
  };
  warm_walk();  // the first touch checks the CRCs
  size_t indexed = 0;
  for (const auto& r : open_readers) indexed += r->index_source() == libshard::reader::IndexSource::kIndexFile;
  double warm_s = BestSecondsPerCall(warm_walk, opt.seconds);
  std::vector<std::vector<std::string>> rows;
  auto row = [&](const std::string& what, double s) {
    rows.push_back({what, Fixed(records / s / 1e3, 1), Fixed(total / s / 1e9), Fixed(cat_best / s)});
  };
  if (cat_best > 0) row("cat > /dev/null (baseline)", cat_best);
  row("framing + CRC32C, 1 thread", frame_s);
  row("framing + CRC32C + Example view, 1 thread", parse_s);
  row("ShardReader mmap (open + index + CRC on first touch), 1 thread", mmap_s);
  row("ShardReader pread (open + index + CRC), 1 thread", pread_s);
  row("ShardReader mmap, later epochs (CRCs checked before), 1 thread", warm_s);
  std::cout << opt.files.size() << " file(s), " << records << " records, " << total << " bytes, page cache warm; "
            << indexed << " with a usable .idx (the others are scanned at open)\n";
  PrintTable({"what", "krecords/s", "GB/s", "x cat"}, rows);
  int rc = kExitOk;
  if (opt.decode || opt.raw || opt.crop || opt.mixture) {
    const std::string dir =
        temp_dir.empty()
            ? (std::filesystem::temp_directory_path() / ("shard_bench_decode_" + std::to_string(getpid()))).string()
            : temp_dir;
    std::filesystem::create_directories(dir);
    if (opt.decode) rc = RunDecodeBench(opt, dir);
    RawBenchOptions ro;  // --raw's and --mixture's
    ro.photos = opt.photos;
    ro.images = opt.images;
    ro.batch_size = opt.batch_size;
    ro.threads = opt.threads;
    ro.seconds = opt.seconds;
    if (rc == kExitOk && opt.raw) rc = RunRawBench(ro, dir);
    if (rc == kExitOk && opt.crop) {
      CropBenchOptions co;
      co.photos = opt.photos;
      co.images = opt.images;
      co.large = opt.large;
      co.batch_size = opt.batch_size;
      co.threads = opt.threads;
      co.seconds = opt.seconds;
      rc = RunCropBench(co, dir);
    }
    if (rc == kExitOk && opt.mixture) rc = RunMixtureBench(ro, dir);
    if (temp_dir.empty()) std::filesystem::remove_all(dir);
  }
  if (!temp_dir.empty()) std::filesystem::remove_all(temp_dir);
  return rc;
}

}  // namespace

void RegisterBenchRead(CLI::App& bench, int* exit_code) {
  auto opt = std::make_shared<BenchReadOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "read", "Record iteration (framing + CRC, Example view) vs `cat FILES > /dev/null`, page cache warm");
  cmd->add_option("files", opt->files, "TFRecord shards (default: a synthetic temporary shard)");
  cmd->add_option("--records", opt->records, "Records in the synthetic shard, 1..10000000")
      ->check(IntegerIn(1, 10'000'000))
      ->capture_default_str();
  AddRecordBytesOption(cmd, &opt->record_bytes);
  AddSecondsOption(cmd, &opt->seconds);
  cmd->add_flag("--decode", opt->decode,
                "Also time JPEG -> uint8 and normalised float32 batches (BatchLoader) vs bare libjpeg-turbo and "
                "torchvision");
  cmd->add_flag(
      "--raw", opt->raw,
      "Also compare raw arrays (stored, the default, raw.zst level 3, raw.up.zst level 1) with JPEG q90 on the same "
      "224x224 photos: size, encode, bare decode and BatchLoader rates");
  cmd->add_flag("--crop", opt->crop,
                "Also time random-resized-crop to 224x224 from 512x496 JPEG records: the loader's whole-image and "
                "crop decodes (with and without DCT scaling) vs the bare libjpeg-turbo decode of the same crop "
                "regions, same threads");
  cmd->add_flag("--mixture", opt->mixture,
                "Also time a weighted mixture of three JPEG datasets (weights 0.6 / 0.3 / 0.1) against one "
                "concatenated dataset of the same records, shuffled, same threads, in the same run");
  cmd->add_option("--large", opt->large, "--crop: also on this many 4032x3024 JPEG records, 0..1000 (0: none)")
      ->check(IntegerIn(0, 1000))
      ->capture_default_str();
  cmd->add_option("--photos", opt->photos, "--raw, --crop, --mixture: folder of photos the images are cut from")
      ->capture_default_str();
  cmd->add_option("--threads", opt->threads,
                  "--decode, --raw, --crop, --mixture: loader threads and torchvision workers, 1..256")
      ->check(IntegerIn(1, kMaxThreads))
      ->capture_default_str();
  cmd->add_option("--images", opt->images,
                  "--decode, --raw, --crop, --mixture: images (224x224; --crop: 512x496), 1..1000000")
      ->check(IntegerIn(1, 1'000'000))
      ->capture_default_str();
  cmd->add_option("--batch-size", opt->batch_size, "--decode, --raw, --crop, --mixture: batch size, 1..65536")
      ->check(IntegerIn(1, 65536))
      ->capture_default_str();
  cmd->add_option("--torchvision-script", opt->torchvision_script, "--decode: the baseline script")
      ->capture_default_str();
  cmd->callback([opt, exit_code] { *exit_code = RunBenchRead(*opt); });
}

}  // namespace shard_tool
