// What the annotation fuzzers share (fuzz_coco.cc, fuzz_yolo.cc,
// fuzz_voc.cc): a folder of their own for the process, files written into
// it, and the checks every reader's answer must pass.
#ifndef LIBSHARD_TESTS_FUZZ_FUZZ_ANNOTATIONS_H_
#define LIBSHARD_TESTS_FUZZ_FUZZ_ANNOTATIONS_H_

#include <stdlib.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "libshard/convert/annotations.h"
#include "libshard/convert/source_listing.h"

namespace libshard::fuzz {

// The process's folder (made once in $TMPDIR, removed when the fuzzer exits:
// libFuzzer ends a timed run with exit(), which runs static destructors).
inline const std::string& Dir() {
  struct Folder {
    std::string path;
    Folder() {
      const char* tmp = std::getenv("TMPDIR");
      path = std::string(tmp && *tmp ? tmp : "/tmp") + "/libshard-fuzz-annotations-XXXXXX";
      if (mkdtemp(path.data()) == nullptr) std::abort();
    }
    ~Folder() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Folder folder;
  return folder.path;
}

inline void Write(const std::string& path, std::string_view bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) std::abort();
  std::fclose(f);
}

// A listing of the images a.jpg, b.png and sub/c.jpg under Dir()/images
// (never opened: the readers match names).
inline convert::Listing ThreeImages() {
  convert::Listing l;
  l.root = Dir() + "/images";
  for (const char* p : {"a.jpg", "b.png", "sub/c.jpg"}) {
    convert::SourceSample s;
    s.path = p;
    s.split = "train";
    l.samples.push_back(s);
  }
  l.splits = {"train"};
  l.layout = "flat";
  return l;
}

// Runs AttachAnnotations and checks its contract: an error is
// InvalidArgument or NotFound; on success every kept sample has an object
// list with labels (>= 1) of the label map and finite coordinates,
// min <= max.
inline void AttachAndCheck(const convert::AnnotationOptions& o) {
  convert::Listing l = ThreeImages();
  StatusOr<convert::AnnotationSummary> s = convert::AttachAnnotations(o, &l);
  if (!s.ok()) {
    if (s.status().code() != StatusCode::kInvalidArgument && s.status().code() != StatusCode::kNotFound) std::abort();
    return;
  }
  for (const convert::SourceSample& sample : l.samples) {
    if (sample.objects == nullptr) std::abort();
    for (const convert::ObjectBox& b : sample.objects->objects) {
      bool known = false;
      for (const convert::ObjectClass& c : s->classes) known = known || c.label == b.label;
      if (b.label < 1 || !known) std::abort();
      if (!std::isfinite(b.xmin) || !std::isfinite(b.xmax) || !std::isfinite(b.ymin) || !std::isfinite(b.ymax)) {
        std::abort();
      }
      if (b.xmin > b.xmax || b.ymin > b.ymax) std::abort();
    }
  }
  if (l.samples.size() + s->missing_images < s->annotated_images) std::abort();
}

}  // namespace libshard::fuzz

#endif  // LIBSHARD_TESTS_FUZZ_FUZZ_ANNOTATIONS_H_
