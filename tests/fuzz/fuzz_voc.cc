// Fuzzes the Pascal VOC reader (convert/annotations_voc.cc): Annotations/
// *.xml are bytes from outside. The input is a.jpg's XML; AttachAnnotations
// must never crash or hang, and what it attaches must pass
// fuzz_annotations.h's checks. tests/fuzz/seeds/fuzz_voc/ starts it from a
// nesting past the depth limit and a DOCTYPE with nested entities (both
// stopped where they begin) beside a good file.
#include <filesystem>

#include <cstddef>
#include <cstdint>

#include "fuzz_annotations.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fuzz = libshard::fuzz;
  const std::string dir = fuzz::Dir() + "/Annotations";
  static const bool made = std::filesystem::create_directories(dir);
  (void)made;
  fuzz::Write(dir + "/a.xml", std::string_view(reinterpret_cast<const char*>(data), size));
  libshard::convert::AnnotationOptions o;
  o.format = libshard::convert::AnnotationFormat::kVoc;
  o.source = dir;
  fuzz::AttachAndCheck(o);
  return 0;
}
