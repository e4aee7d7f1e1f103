// Fuzzes the YOLO reader (convert/annotations_yolo.cc): data.yaml's names
// and the label files are bytes from outside. The input is cut at its first
// NUL: data.yaml before it, then the label files of a.jpg and sub/c.jpg
// (cut at the next NUL). AttachAnnotations must never crash or hang, and
// what it attaches must pass fuzz_annotations.h's checks.
#include <filesystem>

#include <cstddef>
#include <cstdint>

#include "fuzz_annotations.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fuzz = libshard::fuzz;
  static const bool made = std::filesystem::create_directories(fuzz::Dir() + "/labels/sub");
  (void)made;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto next = [&in] {
    const size_t nul = in.find('\0');
    const std::string_view part = in.substr(0, nul);
    in = nul == std::string_view::npos ? std::string_view() : in.substr(nul + 1);
    return part;
  };
  const std::string yaml = fuzz::Dir() + "/data.yaml";
  fuzz::Write(yaml, next());
  fuzz::Write(fuzz::Dir() + "/labels/a.txt", next());
  fuzz::Write(fuzz::Dir() + "/labels/sub/c.txt", next());
  libshard::convert::AnnotationOptions o;
  o.format = libshard::convert::AnnotationFormat::kYolo;
  o.source = yaml;
  fuzz::AttachAndCheck(o);
  return 0;
}
