// libshard._SamplePartWriter (convert/sample_pack.h), the PNG bytes of a
// numpy array for it, and _merge (remote/remote_merge.h): what
// libshard.write_samples / convert_samples / merge (python/libshard/_samples.py)
// are built on.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "libshard/convert/sample_pack.h"
#include "libshard/image/encode.h"
#include "libshard/image/image.h"
#include "libshard/remote/remote_merge.h"
#include "py_common.h"

namespace libshard_py {
namespace {

namespace convert = libshard::convert;

// A contiguous buffer of bytes (bytes, bytearray, memoryview) as a view.
std::string_view BytesOf(const py::buffer_info& info, const char* what) {
  if (info.itemsize != 1 || info.ndim != 1 || info.strides[0] != 1) {
    Raise(libshard::InvalidArgumentError(std::string(what) + ": a contiguous buffer of bytes"));
  }
  return {static_cast<const char*>(info.ptr), static_cast<size_t>(info.size)};
}

class PartWriter {
 public:
  PartWriter(const py::object& folder, const std::string& name, uint32_t part, uint32_t parts, bool sync) {
    const std::string path = FsPath(folder, "folder");
    writer_ = Take(WithoutGil([&] { return convert::SamplePartWriter::Create(path, name, part, parts, sync); }));
  }
  void Add(const std::string& key, const py::buffer& image, const std::string& split, int64_t label,
           const std::string& class_name, const py::object& mask) {
    if (writer_ == nullptr) Raise(libshard::FailedPreconditionError("the partition is committed"));
    py::buffer_info info = image.request();
    const std::string_view bytes = BytesOf(info, "image");
    py::buffer_info mask_info;
    std::string_view mask_bytes;
    if (!mask.is_none()) {
      mask_info = py::reinterpret_borrow<py::buffer>(mask).request();
      mask_bytes = BytesOf(mask_info, "mask");
    }
    const convert::PackedSample s{key, split, label, class_name};
    Check(WithoutGil([&] { return writer_->Add(s, bytes, mask_bytes); }));
  }
  void Commit() {
    if (writer_ == nullptr) Raise(libshard::FailedPreconditionError("the partition is committed"));
    Status st = WithoutGil([&] { return writer_->Commit(); });
    writer_.reset();
    Check(st);
  }
  // Drops the partition unwritten (its temporary files go).
  void Abandon() { writer_.reset(); }
  uint64_t samples() const { return writer_ == nullptr ? 0 : writer_->samples(); }

 private:
  std::unique_ptr<convert::SamplePartWriter> writer_;
};

// Lossless PNG bytes of an (H, W) or (H, W, C) uint8 array, C 1..4.
py::bytes PngOfArray(const py::array& a) {
  if (!py::isinstance<py::array_t<uint8_t>>(a) || (a.ndim() != 2 && a.ndim() != 3)) {
    Raise(libshard::InvalidArgumentError("image: a uint8 array of shape (H, W) or (H, W, C), not " +
                                         std::string(py::str(a.dtype())) + " with " + std::to_string(a.ndim()) +
                                         " dimensions"));
  }
  const int c = a.ndim() == 3 ? static_cast<int>(a.shape(2)) : 1;
  if (c < 1 || c > 4 || a.shape(0) < 1 || a.shape(1) < 1 || a.shape(0) > (1 << 20) || a.shape(1) > (1 << 20)) {
    Raise(libshard::InvalidArgumentError("image: shape (H, W, C) with C 1..4 and H, W 1..2^20"));
  }
  py::array_t<uint8_t, py::array::c_style | py::array::forcecast> dense(a);
  libshard::image::Image img(static_cast<int>(a.shape(1)), static_cast<int>(a.shape(0)), c);
  std::memcpy(img.data(), dense.data(), img.byte_size());
  std::string png = Take(WithoutGil([&] { return libshard::image::EncodePng(img); }));
  return py::bytes(png);
}

// `shard merge LOCATION`: (problems, manifest path or URL, tasks, shards).
py::tuple Merge(const py::object& location) {
  const std::string where = FsPath(location, "output");
  StatusOr<convert::MergeResult> r = WithoutGil([&]() -> StatusOr<convert::MergeResult> {
    LIBSHARD_ASSIGN_OR_RETURN(auto target, libshard::remote::MergeTarget::Open(where));
    return target->Merge();
  });
  convert::MergeResult m = Take(std::move(r));
  py::list problems;
  for (const std::string& p : m.problems) problems.append(TextOf(p));
  return py::make_tuple(problems, TextOf(m.manifest_path), m.tasks, m.shards);
}

}  // namespace

void BindSamplePack(py::module_& m) {
  py::class_<PartWriter>(m, "_SamplePartWriter",
                         "convert::SamplePartWriter: one partition of a sample pack (libshard.write_samples)")
      .def(py::init<const py::object&, const std::string&, uint32_t, uint32_t, bool>(), py::arg("folder"),
           py::arg("name"), py::arg("part"), py::arg("parts"), py::arg("sync") = true)
      .def("add", &PartWriter::Add, py::arg("key"), py::arg("image"), py::arg("split") = "", py::arg("label") = -1,
           py::arg("class_name") = "", py::arg("mask") = py::none())
      .def("commit", &PartWriter::Commit)
      .def("abandon", &PartWriter::Abandon)
      .def_property_readonly("samples", &PartWriter::samples);
  m.def("_png_of_array", &PngOfArray, py::arg("array"), "Lossless PNG bytes of a uint8 (H, W[, C]) array");
  m.def("_merge", &Merge, py::arg("output"),
        "remote::MergeTarget of a folder or s3:// prefix: (problems, manifest, tasks, shards)");
}

}  // namespace libshard_py
