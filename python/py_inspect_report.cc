// libshard.inspect and libshard.report (python/libshard/tools.py wraps
// these): typed calls of the library, as `shard inspect` and `shard report`
// make them (tools/cmd_inspect.cc, tools/cmd_report.cc).
//
//   _inspect(file, show, compression) -> bytes  remote::InspectObject without the GIL (an s3:// or https://
//                                                object staged first): the document `shard inspect --json`
//                                                prints (reader::InspectionJson), which tools.py parses
//   _report(dataset, output, ...) -> str         remote::WriteDatasetReport without the GIL: the page's path
//   _is_mixture_file(path) -> bool               manifest::IsMixtureFile (libshard.verify refuses one,
//                                                as `shard verify --json` does)
//
// Every error is a ValueError carrying the program's message ("shard
// inspect: ..." / "shard report: ..."), as the program prints it.
#include <pybind11/stl.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "libshard/manifest/mixture_json.h"
#include "libshard/reader/inspect.h"
#include "libshard/record/stream_reader.h"
#include "libshard/remote/remote_inspect.h"
#include "libshard/remote/remote_report.h"
#include "py_common.h"

namespace libshard_py {
namespace {

namespace reader = libshard::reader;

py::bytes RunInspect(const std::string& file, int64_t show, const std::string& compression) {
  auto usage = [](const std::string& message) { return TextValueError("shard inspect: " + message); };
  reader::InspectOptions options;
  if (show < 0 || static_cast<uint64_t>(show) > reader::kMaxInspectShow) {
    throw usage("-n: " + std::to_string(show) + " is not in 0.." + std::to_string(reader::kMaxInspectShow));
  }
  options.show = static_cast<size_t>(show);
  StatusOr<libshard::record::Compression> c = libshard::record::ParseCompression(compression);
  if (!c.ok()) throw usage(c.status().message());
  options.compression = *c;
  StatusOr<reader::Inspection> in = WithoutGil([&] { return libshard::remote::InspectObject(file, options); });
  if (!in.ok()) throw usage(in.status().message());
  return py::bytes(reader::InspectionJson(*in));
}

// An int option of ReportOptions: out of int's range it is clamped, so the
// library's range check names it.
void SetInt(const std::optional<int64_t>& v, int* field) {
  if (!v) return;
  constexpr int64_t lo = std::numeric_limits<int>::min(), hi = std::numeric_limits<int>::max();
  *field = static_cast<int>(*v < lo ? lo : *v > hi ? hi : *v);
}

py::object RunReport(const std::string& dataset, const std::string& output, std::optional<int64_t> thumbnails,
                      std::optional<int64_t> max_classes, std::optional<int64_t> thumbnail_size, const py::object& seed,
                      bool verify, bool decode, int64_t threads) {
  auto usage = [](const std::string& message) { return TextValueError("shard report: " + message); };
  libshard::report::ReportOptions o;
  SetInt(thumbnails, &o.thumbnails_per_class);
  SetInt(max_classes, &o.max_classes);
  SetInt(thumbnail_size, &o.thumbnail_size);
  if (!seed.is_none()) {
    try {
      o.seed = seed.cast<uint64_t>();
    } catch (const py::cast_error&) {
      throw usage("seed: must be an integer in 0..2^64-1, not " + py::repr(seed).cast<std::string>());
    }
  }
  o.verify = verify;
  if (verify) SetInt(threads, &o.threads);  // as `--threads`, which only verify reads
  o.verify_decode = decode;
  StatusOr<std::string> page = WithoutGil([&] { return libshard::remote::WriteDatasetReport(dataset, output, o); });
  if (!page.ok()) throw usage(page.status().message());
  return FsDecode(*page);
}

// Whether `path` is a mixture file; a file that cannot be read or parsed is
// not one (its own checks say what is wrong), as for the program.
bool IsMixtureFile(const std::string& path) {
  StatusOr<bool> is = libshard::manifest::IsMixtureFile(path);
  return is.ok() && *is;
}

}  // namespace

void BindInspectReport(py::module_& m) {
  m.def("_inspect", &RunInspect, py::arg("file"), py::arg("show"), py::arg("compression"),
        "remote::InspectObject (libshard.inspect wraps it): the `shard inspect --json` document, as UTF-8 JSON");
  m.def("_report", &RunReport, py::arg("dataset"), py::arg("output"), py::arg("thumbnails"), py::arg("max_classes"),
        py::arg("thumbnail_size"), py::arg("seed"), py::arg("verify"), py::arg("decode"), py::arg("threads"),
        "remote::WriteDatasetReport (libshard.report wraps it): the page's path");
  m.def("_is_mixture_file", &IsMixtureFile, py::arg("path"),
        "manifest::IsMixtureFile: whether the JSON file `path` is a mixture (libshard.verify refuses one)");
}

}  // namespace libshard_py
