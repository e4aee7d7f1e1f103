#include "py_common.h"

#include <pybind11/stl.h>

#include "libshard/example/example_view.h"

namespace libshard_py {

using namespace libshard;  // NOLINT: binding file

PyObject* g_data_loss_error = nullptr;

namespace {

// Sets the Python error `type` with `text` as its message, bytes that are
// not UTF-8 backslash-escaped (paths may hold any bytes); where even that
// fails, the decoder's own error stands.
void SetErrorText(PyObject* type, std::string_view text) {
  PyObject* message = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace");
  if (message == nullptr) return;
  PyErr_SetObject(type, message);
  Py_DECREF(message);
}

}  // namespace

void Raise(const Status& s) {
  PyObject* type = PyExc_RuntimeError;
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      type = PyExc_ValueError;
      break;
    case StatusCode::kNotFound:
      type = PyExc_FileNotFoundError;
      break;
    case StatusCode::kOutOfRange:
      type = PyExc_IndexError;
      break;
    case StatusCode::kResourceExhausted:
      type = PyExc_MemoryError;
      break;
    case StatusCode::kDataLoss:
      type = g_data_loss_error;
      break;
    case StatusCode::kIOError:
      type = PyExc_OSError;
      break;
    case StatusCode::kPermissionDenied:
      type = PyExc_PermissionError;
      break;
    default:
      break;
  }
  // The plain message, as docs/reader.md says: the exception type carries
  // the code (no "INVALID_ARGUMENT: " prefix).
  SetErrorText(type, s.message());
  throw py::error_already_set();
}

void Check(const Status& s) {
  if (!s.ok()) Raise(s);
}

void TextValueError::set_error() const { SetErrorText(PyExc_ValueError, what()); }

std::string TypeName(py::handle obj) { return py::str(py::type::of(obj).attr("__name__")); }

bool IsPath(py::handle obj) {
  return py::isinstance<py::str>(obj) || py::isinstance<py::bytes>(obj) || py::hasattr(obj, "__fspath__");
}

// A path argument as the file system's bytes: os.fsencode (str through the
// file system encoding with surrogateescape, bytes as they are, os.PathLike).
std::string FsPath(py::handle obj, const std::string& what) {
  if (!IsPath(obj)) throw py::type_error(what + ": expected str, bytes or os.PathLike, got " + TypeName(obj));
  return py::module_::import("os").attr("fsencode")(obj).cast<std::string>();
}

// A path for Python: os.fsdecode, so any bytes round-trip.
py::object FsDecode(const std::string& path) { return py::module_::import("os").attr("fsdecode")(py::bytes(path)); }

py::str TextOf(const std::string& text) {
  PyObject* s = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "surrogateescape");
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

std::vector<std::string> Sources(const py::object& files) {
  if (IsPath(files)) return {FsPath(files, "files")};
  if (!py::isinstance<py::iterable>(files)) {
    throw py::type_error("files: expected a path or a list of paths, got " + TypeName(files));
  }
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(FsPath(f, "files[" + std::to_string(out.size()) + "]"));
  return out;
}

py::dict ExampleDict(std::string_view record) {
  auto ex = Take(example::ExampleView::Parse(record));
  py::dict d;
  ex.ForEachFeature([&](std::string_view key, const example::FeatureView& f) {
    py::list values;
    switch (f.kind()) {
      case example::FeatureKind::kBytes:
        f.ForEachBytes([&](std::string_view v) { values.append(py::bytes(v.data(), v.size())); });
        break;
      case example::FeatureKind::kInt64:
        for (size_t i = 0; i < f.size(); ++i) values.append(f.int64(i));
        break;
      case example::FeatureKind::kFloat:
        for (size_t i = 0; i < f.size(); ++i) values.append(f.float_value(i));
        break;
      case example::FeatureKind::kNone:
        break;
    }
    d[py::str(key.data(), key.size())] = values;  // a duplicated key: the last wins
  });
  return d;
}

}  // namespace libshard_py
