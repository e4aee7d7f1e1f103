// libshard.ShardReader and libshard.ShardWriter (docs/reader.md).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "libshard/example/example_builder.h"
#include "libshard/reader/shard_reader.h"
#include "libshard/record/record_writer.h"
#include "py_common.h"

namespace libshard_py {
namespace {

using namespace libshard;  // NOLINT: binding file

class PyShardReader {
 public:
  PyShardReader(const py::object& path, const std::string& io, bool verify_crc, bool use_index, bool direct_io) {
    reader::ShardReaderOptions o;
    o.io = TakeArg(reader::ParseIoMode(io), "io");
    o.verify_crc = verify_crc;
    o.use_index = use_index;
    o.direct_io = direct_io;
    reader_ = Take(reader::ShardReader::Open(FsPath(path, "path"), o));
  }
  size_t Len() const { return reader_->size(); }
  std::string_view Record(int64_t i) {
    const int64_t n = static_cast<int64_t>(reader_->size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) throw py::index_error("record index out of range");
    std::string_view v;
    Check(reader_->ReadCopy(static_cast<size_t>(i), &buf_, &v));
    return v;
  }
  py::bytes GetItem(int64_t i) {
    auto v = Record(i);
    return py::bytes(v.data(), v.size());
  }
  py::dict Example(int64_t i) { return ExampleDict(Record(i)); }
  py::object Path() const { return FsDecode(reader_->path()); }
  bool IndexUsed() const { return reader_->index_source() == reader::IndexSource::kIndexFile; }

 private:
  std::unique_ptr<reader::ShardReader> reader_;
  reader::RecordBuffer buf_;
};

// Writes to a hidden temporary name beside `path` and renames it into place
// at close(): a failed write (a full disk) or a close error removes what was
// written and raises, so no empty or partial shard is left under `path`.
class PyShardWriter {
 public:
  PyShardWriter(const py::object& path, bool index) : path_(FsPath(path, "path")), index_(index) {
    const std::filesystem::path p(path_);
    temp_ = (p.parent_path() / ("." + p.filename().string() + ".partial")).string();
    record::WriterOptions o;
    o.write_index = index;
    writer_ = Take(record::RecordWriter::Create(temp_, o));
  }
  ~PyShardWriter() {
    if (writer_ == nullptr) return;
    const Status s = Finish();
    const std::string text = s.ok() ? "libshard.ShardWriter(" + path_ + ") was not closed; closed at garbage collection"
                                    : "libshard.ShardWriter(" + path_ +
                                          ") was not closed, and closing it at garbage "
                                          "collection failed (nothing written): " +
                                          s.message();
    if (PyErr_WarnEx(s.ok() ? PyExc_ResourceWarning : PyExc_RuntimeWarning, text.c_str(), 1) != 0) {
      PyErr_WriteUnraisable(Py_None);
    }
  }
  void WriteRecord(py::bytes data) {
    std::string_view v = data;
    Check(Writer()->Write(v), true);
  }
  // features: {key: bytes | str | int | float | list of one kind}
  void Write(const py::dict& features) {
    example::ExampleBuilder b;
    for (const auto& item : features) {
      const std::string key = py::str(item.first);
      py::object value = py::reinterpret_borrow<py::object>(item.second);
      py::list values;
      if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
        values = py::list(value);
      } else {
        values.append(value);
      }
      if (values.size() == 0) throw py::value_error("feature " + key + ": empty list (kind unknown)");
      py::handle first = values[0];
      auto check = [&](size_t i, py::handle v, bool ok, const char* kind) {
        if (!ok) {
          throw py::type_error("feature \"" + key + "\" value " + std::to_string(i) + ": expected " + kind +
                               " like the first value, got " + TypeName(v));
        }
      };
      if (py::isinstance<py::bytes>(first) || py::isinstance<py::str>(first)) {
        std::vector<std::string> owned;
        for (size_t i = 0; i < values.size(); ++i) {
          py::handle v = values[i];
          check(i, v, py::isinstance<py::bytes>(v) || py::isinstance<py::str>(v), "bytes or str");
          owned.push_back(py::isinstance<py::str>(v) ? v.cast<std::string>() : std::string(v.cast<py::bytes>()));
        }
        std::vector<std::string_view> views(owned.begin(), owned.end());
        b.AddBytesList(key, views);
      } else if (py::isinstance<py::int_>(first)) {  // bool included
        std::vector<int64_t> ints;
        for (size_t i = 0; i < values.size(); ++i) {
          py::handle v = values[i];
          check(i, v, py::isinstance<py::int_>(v), "an int");
          const long long n = PyLong_AsLongLong(v.ptr());
          if (n == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            throw py::value_error("feature \"" + key + "\" value " + std::to_string(i) + ": " +
                                  std::string(py::repr(v)) + " does not fit in an int64");
          }
          ints.push_back(n);
        }
        b.AddInt64List(key, ints.data(), ints.size());
      } else if (py::isinstance<py::float_>(first)) {
        std::vector<float> fl;
        for (size_t i = 0; i < values.size(); ++i) {
          py::handle v = values[i];
          check(i, v, py::isinstance<py::float_>(v) || py::isinstance<py::int_>(v), "a float");
          fl.push_back(v.cast<float>());
        }
        b.AddFloatList(key, fl.data(), fl.size());
      } else {
        throw py::type_error("feature \"" + key + "\": values must be bytes, str, int or float, got " +
                             TypeName(first));
      }
    }
    Check(Writer()->Write(b.Serialize()), true);
  }
  void Close() {
    if (writer_ != nullptr) Check(Finish(), false);
  }
  // Leaves nothing behind (a `with` block that raised).
  void Abort() {
    if (writer_ == nullptr) return;
    writer_.reset();
    RemoveTemp();
  }
  void Exit(const py::object& exc_type) {
    if (exc_type.is_none()) {
      Close();
    } else {
      Abort();
    }
  }

 private:
  record::RecordWriter* Writer() {
    if (writer_ == nullptr) throw py::value_error("libshard.ShardWriter(" + path_ + ") is closed");
    return writer_.get();
  }
  void Check(const Status& s, bool abort_on_error) {
    if (s.ok()) return;
    if (abort_on_error) Abort();
    Raise(s);
  }
  // Closes and publishes, or removes the temporary files on error.
  Status Finish() {
    Status s = writer_->Close();
    writer_.reset();
    std::error_code ec;
    if (s.ok() && index_) {
      std::filesystem::rename(temp_ + ".idx", path_ + ".idx", ec);
      if (ec) s = IOError(path_ + ".idx: cannot rename into place: " + ec.message());
    }
    if (s.ok()) {
      std::filesystem::rename(temp_, path_, ec);
      if (ec) s = IOError(path_ + ": cannot rename into place: " + ec.message());
    }
    if (!s.ok()) RemoveTemp();
    return s;
  }
  void RemoveTemp() {
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
    std::filesystem::remove(temp_ + ".idx", ec);
  }

  std::string path_, temp_;
  bool index_ = true;
  std::unique_ptr<record::RecordWriter> writer_;
};

}  // namespace

void BindShardIo(py::module_& m) {
  py::class_<PyShardReader>(m, "ShardReader", "Random access to the records of one TFRecord shard")
      .def(py::init<const py::object&, const std::string&, bool, bool, bool>(), py::arg("path"), py::arg("io") = "mmap",
           py::arg("verify_crc") = true, py::arg("use_index") = true, py::arg("direct_io") = false,
           "path: str, bytes or os.PathLike (any bytes, as os.fsencode gives)")
      .def("__len__", &PyShardReader::Len)
      .def("__getitem__", &PyShardReader::GetItem, py::arg("index"), "The record's bytes")
      .def("example", &PyShardReader::Example, py::arg("index"),
           "The record as a dict: feature key -> list of bytes / int / float")
      .def_property_readonly("path", &PyShardReader::Path, "The file's path (str, as os.fsdecode gives)")
      .def_property_readonly("index_used", &PyShardReader::IndexUsed);

  py::class_<PyShardWriter>(m, "ShardWriter",
                            "Writes a TFRecord shard of tf.train.Examples (and its .idx). The records go to a hidden\n"
                            "temporary file that close() renames to `path`; an error removes it and raises. A writer\n"
                            "never closed is closed at garbage collection with a ResourceWarning.")
      .def(py::init<const py::object&, bool>(), py::arg("path"), py::arg("index") = true)
      .def("write", &PyShardWriter::Write, py::arg("features"),
           "Writes one Example from {key: bytes | str | int | float | list}")
      .def("write_record", &PyShardWriter::WriteRecord, py::arg("data"))
      .def("close", &PyShardWriter::Close, "Publishes the shard under its path; raises on an error")
      .def("__enter__", [](PyShardWriter& w) -> PyShardWriter& { return w; })
      .def(
          "__exit__", [](PyShardWriter& w, py::object type, py::object, py::object) { w.Exit(type); },
          "close(), or when the block raised, removes what was written");
}

}  // namespace libshard_py
