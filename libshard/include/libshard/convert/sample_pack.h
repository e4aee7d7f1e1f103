// Sample packs: the samples a program hands to a conversion (Python's
// libshard.SampleWriter, a Spark, Ray or Beam task), stored as they come so
// that `shard convert PACK -o OUT` converts them exactly as it converts a
// folder: the same canonical order, plan, shards and manifest as a local
// folder or CSV whose files have the samples' keys as paths and the same
// bytes (docs/convert.md, "Inputs from programs"; byte layout in
// docs/formats.md).
//
// A pack is a folder:
//   PACK/libshard-samples.json                       {"format": "libshard.samples/1", "name": NAME}
//   PACK/part-PPPPP-of-NNNNN.tfrecord                 one TFRecord record per sample: its image's bytes
//                                                     (and one more for its mask, when it has one)
//   PACK/part-PPPPP-of-NNNNN.samples.tfrecord         one tf.train.Example per sample (key, split,
//                                                     label or class, offset and size of its image
//                                                     record, and of its mask's)
// Each partition is one pair, written by one SamplePartWriter under
// temporary names and renamed into place by Commit() (data file first, the
// .samples file last: a part is there once its .samples file is), so a
// writer killed mid-way leaves nothing that looks complete, and a retried
// or speculative second attempt of the same partition replaces the pair
// with its own complete one (the same bytes for the same samples).
//
//   LIBSHARD_ASSIGN_OR_RETURN(auto w, SamplePartWriter::Create("pack", "images", 0, 1));
//   LIBSHARD_RETURN_IF_ERROR(w->Add({.key = "cat/1.jpg", .class_name = "cat"}, jpeg_bytes));
//   LIBSHARD_RETURN_IF_ERROR(w->Commit());
//   StatusOr<Listing> l = ListSamplePack("pack", ListOptions{});  // Listing::source reads the bytes
//
// Errors: a key that is not a relative path of plain parts
// (io::CheckRelativeName), a split that is not a name part, a label below 0,
// both a label and a class, or an image over kMaxPackSampleBytes is
// kInvalidArgument from Add, naming the key (the part is then not written);
// I/O errors name the file. ListSamplePack: kInvalidArgument naming the file
// (and record) for a damaged or foreign part, a partition missing from
// 0..N-1 ("PACK: partition 2 of 3 is missing"), parts of two partition
// counts, a key two samples share (naming both partitions), labels mixing
// integers and class names.
// Thread-safety: a SamplePartWriter is used by one thread at a time;
// writers of different partitions of one pack may run at once (processes or
// threads). A listing's source is thread-safe.
#ifndef LIBSHARD_CONVERT_SAMPLE_PACK_H_
#define LIBSHARD_CONVERT_SAMPLE_PACK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "libshard/convert/source_listing.h"
#include "libshard/status.h"

namespace libshard::convert {

// The marker file that makes a folder a pack (ListInput takes such a folder
// as one), and its format.
constexpr char kSamplePackMarker[] = "libshard-samples.json";
constexpr char kSamplePackFormat[] = "libshard.samples/1";
// Largest image a pack stores (as for a file: converter's kMaxSourceBytes).
constexpr uint64_t kMaxPackSampleBytes = uint64_t{1} << 30;

// True when `folder` holds a kSamplePackMarker file.
bool IsSamplePack(const std::string& folder);

// One sample as handed in.
struct PackedSample {
  // Its path in the dataset ("cat/001.jpg"): the record's image/filename,
  // what orders it, what the plan hashes. Required.
  std::string key;
  // Default: "" (ListOptions::default_split, "train").
  std::string split;
  // An integer label, 0..2^63-1, or -1 for none. Default: -1.
  int64_t label = -1;
  // A class name instead (numbered in sorted order, as class folders are).
  // Default: "" (none).
  std::string class_name;
};

class SamplePartWriter {
 public:
  // Writes partition `part` of `parts` (0 <= part < parts <= 100000) of the
  // pack in `folder` (made if missing; its marker written, or checked to
  // name the same `name`, a valid shard prefix: the default prefix of its
  // conversion). `sync`: fsync the files before they are renamed. The
  // temporaries an earlier attempt of this partition left (killed) are
  // removed.
  static StatusOr<std::unique_ptr<SamplePartWriter>> Create(const std::string& folder, const std::string& name,
                                                            uint32_t part, uint32_t parts, bool sync = true);
  ~SamplePartWriter();  // without Commit(): the temporary files are removed
  SamplePartWriter(const SamplePartWriter&) = delete;
  SamplePartWriter& operator=(const SamplePartWriter&) = delete;

  // Appends a sample and its image's bytes (any content: a file that is not
  // an image is rejected by the conversion, as a file would be), and its
  // segmentation mask's (a PNG of class indices, as a mask file; empty: no
  // mask).
  Status Add(const PackedSample& sample, std::string_view image, std::string_view mask = {});
  // Closes both files and renames them into place, the .samples file last.
  Status Commit();

  uint64_t samples() const { return samples_; }
  // "PACK/part-PPPPP-of-NNNNN.samples.tfrecord", for messages.
  const std::string& samples_path() const { return samples_path_; }

 private:
  struct Files;
  SamplePartWriter() = default;
  std::unique_ptr<Files> files_;
  std::string samples_path_;
  uint64_t samples_ = 0;
  bool labels_named_ = false, labels_numbered_ = false;
};

// The listing of a pack (source_listing.h's rules for a CSV's rows: class
// names numbered 0..K-1 in sorted order or by options.labels_file, integers
// kept, a split per sample or options.default_split; canonical order), with
// Listing::source reading each sample's bytes from its part (CRC-checked).
// Listing::root is the folder; Listing::layout "pack". A sample with a mask
// has mask_path "KEY (mask)" (for messages; its bytes come from the pack).
// ListOptions::masks, annotations and CSV features are refused
// (kInvalidArgument): a pack carries its own masks, and no boxes or features.
StatusOr<Listing> ListSamplePack(const std::string& folder, const ListOptions& options);

// The pack's name (its marker's), for the default shard prefix.
StatusOr<std::string> SamplePackName(const std::string& folder);

}  // namespace libshard::convert

#endif  // LIBSHARD_CONVERT_SAMPLE_PACK_H_
