// libshard.Loader's keywords: one table that gives the constructor's
// signature line and turns the keywords Python passed into the library's
// options (reader::DatasetOptions, reader::BatchLoaderOptions).
//
// Adding a keyword: a field in LoaderArgs, a line in the table
// (py_loader_options.cc), its use in ParseLoaderArgs, and its entry in
// libshard/_libshard.pyi (test_package.py compares the two).
#ifndef LIBSHARD_PYTHON_PY_LOADER_OPTIONS_H_
#define LIBSHARD_PYTHON_PY_LOADER_OPTIONS_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "libshard/reader/batch_loader.h"
#include "libshard/reader/dataset.h"
#include "py_common.h"

namespace libshard_py {

// The keywords of libshard.Loader() after sources and batch_size, as Python
// gave them (the defaults are the documented ones). Values are checked by
// ParseLoaderArgs, not here.
struct LoaderArgs {
  py::object image_size = py::none();
  bool shuffle = false;
  py::object seed = py::int_(0);
  py::object rank = py::int_(0);
  py::object world_size = py::int_(1);
  py::object threads = py::int_(2);
  std::string augment = "none";
  bool drop_last = false;
  py::object channels = py::none();
  std::string order;
  py::object prefetch = py::int_(2);
  std::string io = "mmap";
  bool verify_crc = true;
  std::string split;
  std::map<std::string, std::string> keys;
  std::string resize = "center-crop";
  bool masks = false;
  py::object worker = py::int_(0);
  py::object num_workers = py::int_(1);
  py::object buffers = py::none();
  std::string layout = "NHWC";
  py::object dtype = py::str("uint8");
  py::object mean = py::none();
  py::object std = py::none();
  py::object slots = py::none();
  py::object cache_dir = py::none();
  py::object cache_limit = py::int_(0);
  std::string on_error = "raise";
  py::object extras = py::none();
  py::object block_size = py::int_(256);
  py::object window_blocks = py::int_(4);
  bool dct_scale = true;
};

// Python's keyword arguments -> LoaderArgs. TypeError for an unknown keyword
// (with the nearest known name) or a value of the wrong type, naming it.
LoaderArgs LoaderArgsFrom(const py::kwargs& kwargs);

// "__init__(self, sources, batch_size, *, image_size=None, ...) -> None":
// the first line of the constructor's docstring, from the table.
std::string LoaderSignature();

// What the keywords become. The dataset is not opened here: mean="dataset"
// and std="dataset" are left to ResolveDatasetStatistics once it is.
struct LoaderConfig {
  libshard::reader::DatasetOptions dataset;
  libshard::reader::BatchLoaderOptions loader;
  std::vector<std::string> extras;  // extras=: feature keys returned per batch
  bool dataset_mean = false, dataset_std = false;
};

// Checks every value (ValueError / TypeError naming the keyword) and fills
// the options; batch_size is the constructor's second argument.
LoaderConfig ParseLoaderArgs(const py::object& batch_size, const LoaderArgs& a);

// mean / std from the manifests' per-channel statistics (0..255 there, 0..1
// here), for the channels the loader gives; ValueError when the dataset has
// none or another channel count.
void ResolveDatasetStatistics(const libshard::reader::Dataset& ds, const LoaderConfig& c,
                              libshard::reader::BatchLoaderOptions* o);

// An integer argument (an int, or anything with __index__ such as a numpy
// integer; not a bool): ValueError naming it when outside lo..hi, TypeError
// naming it for another type.
uint64_t IntArg(const py::object& v, const char* name, uint64_t lo, uint64_t hi);

}  // namespace libshard_py

#endif  // LIBSHARD_PYTHON_PY_LOADER_OPTIONS_H_
