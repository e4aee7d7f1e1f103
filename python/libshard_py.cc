// `libshard._libshard`: the compiled core of the `libshard` Python package
// (python/libshard/ re-exports it; _libshard.pyi documents it).
//
//   import libshard
//   loader = libshard.Loader(["out/train-*.tfrecord"], 64, image_size=(224, 224),
//                            shuffle=True, seed=0, threads=2, augment="random-resized-crop")
//   for images, labels in loader:      # one epoch: numpy uint8 [B,H,W,C], int64 [B]
//       ...
//   saved = loader.state_dict(); ...; loader.load_state_dict(saved)
//
// Errors from the library (Status) become Python exceptions: InvalidArgument
// -> ValueError, NotFound -> FileNotFoundError, OutOfRange -> IndexError,
// ResourceExhausted -> MemoryError, DataLoss -> libshard.DataLossError (a
// subclass of OSError), IOError -> OSError, others -> RuntimeError.
// docs/reader.md has the whole API.
#include <pybind11/pybind11.h>

#include "py_common.h"

namespace py = pybind11;

PYBIND11_MODULE(_libshard, m) {
  m.doc() = "libshard's compiled core: TFRecord shards to training batches (docs/reader.md)";
  m.attr("__version__") = LIBSHARD_VERSION;
  // The pybind11 this module was built with: before 2.12 it reads numpy 2's array descriptors with numpy 1's
  // layout (wrong pixels, silently), so libshard/__init__.py refuses that pairing (issue 29).
  m.attr("_pybind11_version") = PYBIND11_TOSTRING(PYBIND11_VERSION_MAJOR) "." PYBIND11_TOSTRING(
      PYBIND11_VERSION_MINOR) "." PYBIND11_TOSTRING(PYBIND11_VERSION_PATCH);
  libshard_py::g_data_loss_error = PyErr_NewExceptionWithDoc(
      "libshard.DataLossError",
      "Corrupt or truncated data (a bad CRC, a cut record, an undecodable image); the message names the file and "
      "the byte offset. A subclass of OSError; plain OSError is left for I/O failures.",
      PyExc_OSError, nullptr);
  if (libshard_py::g_data_loss_error == nullptr) throw py::error_already_set();
  m.attr("DataLossError") = py::handle(libshard_py::g_data_loss_error);

  libshard_py::BindShardIo(m);
  libshard_py::BindBatchMemory(m);
  libshard_py::BindDataset(m);
  libshard_py::BindOrder(m);
  libshard_py::BindLoader(m);
  libshard_py::BindTools(m);
  libshard_py::BindInspectReport(m);
  libshard_py::BindSamplePack(m);
}
