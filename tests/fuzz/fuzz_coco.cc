// Fuzzes the COCO reader (convert/annotations_coco.cc): instances.json is
// bytes from outside. AttachAnnotations must never crash or hang, and what
// it attaches must pass fuzz_annotations.h's checks.
#include <cstddef>
#include <cstdint>

#include "fuzz_annotations.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fuzz = libshard::fuzz;
  const std::string path = fuzz::Dir() + "/instances.json";
  fuzz::Write(path, std::string_view(reinterpret_cast<const char*>(data), size));
  libshard::convert::AnnotationOptions o;
  o.format = libshard::convert::AnnotationFormat::kCoco;
  o.source = path;
  fuzz::AttachAndCheck(o);
  return 0;
}
