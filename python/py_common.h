// Shared pieces of the `libshard._libshard` binding (libshard_py.cc,
// py_shard_io.cc, py_loader.cc): Status -> Python exceptions, path
// arguments, Example -> dict, running without the GIL.
#ifndef LIBSHARD_PYTHON_PY_COMMON_H_
#define LIBSHARD_PYTHON_PY_COMMON_H_

#include <pybind11/pybind11.h>

#include <Python.h>

#include <string>
#include <string_view>
#include <vector>

#include "libshard/reader/batch_pool.h"
#include "libshard/status.h"

namespace libshard_py {

namespace py = pybind11;
using libshard::Status;
using libshard::StatusOr;

// libshard.DataLossError, created when the module is imported.
extern PyObject* g_data_loss_error;

// Raises the Python exception for `s`: InvalidArgument -> ValueError,
// NotFound -> FileNotFoundError, OutOfRange -> IndexError, ResourceExhausted
// -> MemoryError, DataLoss -> DataLossError, IOError -> OSError, others ->
// RuntimeError.
[[noreturn]] void Raise(const Status& s);
void Check(const Status& s);
template <typename T>
T Take(StatusOr<T> v) {
  if (!v.ok()) Raise(v.status());
  return std::move(*v);
}
// Take() for a parsed argument: a bad value is a ValueError whose message
// starts with the argument's name.
template <typename T>
T TakeArg(StatusOr<T> v, const char* arg) {
  if (!v.ok()) Raise(libshard::InvalidArgumentError(std::string(arg) + ": " + v.status().message()));
  return std::move(*v);
}

// ValueError whose message may quote a path that is not UTF-8 (py::value_error
// would fail to decode it, raising an empty or a Unicode error instead): the
// bytes that are not UTF-8 appear backslash-escaped, as Raise() shows them.
class TextValueError : public py::builtin_exception {
 public:
  using py::builtin_exception::builtin_exception;
  void set_error() const override;
};

std::string TypeName(py::handle obj);
bool IsPath(py::handle obj);
// A path argument as the file system's bytes: os.fsencode (str through the
// file system encoding with surrogateescape, bytes as they are, os.PathLike).
std::string FsPath(py::handle obj, const std::string& what);
// A path for Python: os.fsdecode, so any bytes round-trip.
py::object FsDecode(const std::string& path);
// Text that may quote a path (a reason, a message) as a str: UTF-8 with
// surrogateescape, so bytes that are not UTF-8 survive and encode back.
py::str TextOf(const std::string& text);
// A path or an iterable of paths.
std::vector<std::string> Sources(const py::object& files);
// An Example record as {key: [values]}.
py::dict ExampleDict(std::string_view record);

// Runs f() (C++ only, not throwing) with the GIL released, and takes the GIL
// back outside any destructor: at interpreter exit a daemon thread that takes
// the GIL is ended by pthread_exit, whose unwinding must not cross a noexcept
// function such as ~gil_scoped_release (std::terminate).
template <typename F>
auto WithoutGil(const F& f) -> decltype(f()) {
  PyThreadState* state = PyEval_SaveThread();
  auto result = f();
  PyEval_RestoreThread(state);
  return result;
}

void BindShardIo(py::module_& m);
void BindLoader(py::module_& m);
void BindDataset(py::module_& m);  // py_dataset.cc: libshard.Dataset
void BindOrder(py::module_& m);    // py_order.cc: libshard.Order
// py_batch_types.cc: libshard.Batch and its kin (images, labels[, masks][, boxes, box_labels, box_counts][,
// keys]), bound once; MakeBatch picks the type by which of masks, boxes (a tuple of three arrays) and keys are
// not None.
void BindBatchTypes(py::module_& m);
py::tuple MakeBatch(const py::object& images, const py::object& labels, const py::object& masks,
                    const py::object& boxes, const py::object& keys);
void BindBatchMemory(py::module_& m);
void BindTools(py::module_& m);  // py_tools.cc: convert / verify / inspect
void BindInspectReport(py::module_& m);  // py_inspect_report.cc: inspect / report
void BindSamplePack(py::module_& m);     // py_sample_pack.cc: sample packs, merge

// py_batch_memory.cc: the base object of a batch's arrays, holding its block
// (and `keep_alive`, the _SlotSet the block's memory may belong to); a
// BatchPool over a _SlotSet's slots.
py::object WrapBatchOwner(std::shared_ptr<libshard::reader::BatchBlock> block, py::object keep_alive);
std::shared_ptr<libshard::reader::BatchPool> SlotPool(const py::object& slot_set, size_t keep);

}  // namespace libshard_py

#endif  // LIBSHARD_PYTHON_PY_COMMON_H_
