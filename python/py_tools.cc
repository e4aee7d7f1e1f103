// libshard.convert / verify / inspect / report (python/libshard/tools.py
// wraps these). verify is a typed call of the library (verify::Verify: the
// request built from the keyword arguments, the report's structs turned into
// Python objects). convert is a typed call too: the keyword arguments, as
// (flag name, text) pairs, are set through the library's table of `shard
// convert`'s flags (libshard/remote/convert_flags.h, which the program
// registers its CLI11 options from), so a keyword argument means what the
// flag of the same name means and is refused with the same message; then
// convert::Convert, or remote::ConvertToObjectStore for -o s3://. inspect
// and report are python/py_inspect_report.cc.
//
//   _convert_flags() -> [(name, takes_value, positional, repeatable)]   the options of `shard convert`
//   _convert(options, progress) -> dict           [(name, text)]: Convert() without the GIL
//   _verify(paths, ...) -> (dict, exit_code)      verify::Verify without the GIL
//
// _convert runs the conversion on a thread of its own while the calling
// thread, without the GIL, wakes every 100 ms (and at the first progress, and
// when the run ends) to check Python's signals (Ctrl-C) and to hand the latest
// progress to `progress`. A
// KeyboardInterrupt, or an exception from `progress`, cancels the run: the
// converter's progress callback throws at the next finished sample, Convert
// removes the shard being written (converter.h), and the exception reaches the
// caller once the thread has ended. The folder is then left as a killed
// `shard convert` leaves it: rerun to resume.
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "libshard/convert/converter.h"
#include "libshard/convert/manifest_io.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/record/stream_reader.h"
#include "libshard/remote/convert_flags.h"
#include "libshard/remote/remote_convert.h"
#include "libshard/remote/remote_verify.h"
#include "libshard/store/object_store.h"
#include "libshard/verify/verify_report.h"
#include "py_common.h"

namespace libshard_py {
namespace {

namespace convert = libshard::convert;
namespace verify = libshard::verify;

namespace remote = libshard::remote;

py::list ConvertFlagList() {
  py::list out;
  for (const remote::ConvertFlag& f : remote::ConvertFlagTable()) {
    out.append(py::make_tuple(f.name, f.arity != remote::FlagArity::kSwitch, f.arity == remote::FlagArity::kPositional,
                              f.arity == remote::FlagArity::kRepeated));
  }
  return out;
}

// The request of `options`, (flag name, text) pairs as libshard.tools
// builds them ("input", "output", "no-shuffle" with "true"). A value the
// flag's check refuses is a ValueError "shard: --quality: ...", as the
// program prints CLI11's refusal; the checks of the flags together give
// "shard convert: ...".
remote::ConvertFlagValues ConvertRequestOf(const std::vector<std::pair<std::string, std::string>>& options) {
  remote::ConvertFlagValues v;
  std::set<const remote::ConvertFlag*> given;
  for (const auto& [name, text] : options) {
    const remote::ConvertFlag* flag = remote::FindConvertFlag(name);
    if (flag == nullptr) throw TextValueError("shard: The following argument was not expected: --" + name);
    if (!given.insert(flag).second && flag->arity != remote::FlagArity::kRepeated) {
      throw TextValueError("shard: " + remote::ConvertFlagOptionName(*flag) + ": given more than once");
    }
    if (Status s = remote::SetConvertFlag(*flag, text, &v); !s.ok()) throw TextValueError("shard: " + s.message());
  }
  for (const remote::ConvertFlag& flag : remote::ConvertFlagTable()) {
    if (flag.required && given.count(&flag) == 0) {
      throw TextValueError("shard: " + remote::ConvertFlagOptionName(flag) + " is required");
    }
  }
  v.quiet = true;  // results are returned, not printed
  if (Status s = remote::FinishConvertFlags(&v); !s.ok()) throw TextValueError("shard convert: " + s.message());
  return v;
}

// What the progress callback and the waiting thread share.
struct ProgressState {
  std::mutex mu;
  std::condition_variable cv;
  convert::Progress last;
  uint64_t updates = 0;
  bool done = false;
  std::atomic<bool> cancel{false};
};

py::dict ProgressDict(const convert::Progress& p) {
  py::dict d;
  d["done"] = p.done;
  d["total"] = p.total;
  d["rejected"] = p.rejected;
  d["bytes_read"] = p.bytes_read;
  d["bytes_written"] = p.bytes_written;
  d["shards_done"] = p.shards_done;
  d["shards_total"] = p.shards_total;
  d["leak_check_images"] = p.leak_check_images;
  return d;
}

py::dict RunConvert(const std::vector<std::pair<std::string, std::string>>& flags, const py::object& progress) {
  const remote::ConvertFlagValues v = ConvertRequestOf(flags);
  const convert::ConvertOptions& options = v.request.convert;

  ProgressState state;
  std::optional<StatusOr<convert::ConvertResult>> result;
  auto on_progress = [&state](const convert::Progress& p) {
    if (state.cancel.load(std::memory_order_relaxed)) throw std::runtime_error("interrupted");
    std::lock_guard<std::mutex> lock(state.mu);
    state.last = p;
    ++state.updates;
    state.cv.notify_all();
  };
  // -o s3://...: the program's one code path (libshard/remote/remote_convert.h):
  // converted into the staging folder, each shard uploaded as it is
  // written, manifest.json last.
  const bool to_store = remote::IsRemoteOutput(options.output);
  std::string manifest_url;
  std::thread worker([&] {
    StatusOr<convert::ConvertResult> r = libshard::InternalError("not run");
    if (to_store) {
      StatusOr<remote::RemoteConvertResult> rr = remote::ConvertToObjectStore(v.request, on_progress);
      if (rr.ok()) {
        if (rr->committed) manifest_url = libshard::store::JoinKey(rr->url, libshard::manifest::kManifestName);
        r = std::move(rr->converted);
      } else {
        r = rr.status();
      }
    } else {
      r = convert::Convert(options, on_progress);
    }
    std::lock_guard<std::mutex> lock(state.mu);
    result.emplace(std::move(r));
    state.done = true;
    state.cv.notify_all();
  });
  // Joins the worker without the GIL whatever way this function is left.
  struct Joiner {
    std::thread& t;
    ProgressState& s;
    ~Joiner() {
      if (!t.joinable()) return;
      s.cancel = true;
      PyThreadState* ts = PyEval_SaveThread();
      t.join();
      PyEval_RestoreThread(ts);
    }
  } joiner{worker, state};

  uint64_t seen = 0;
  convert::Progress last;
  for (bool done = false; !done;) {
    uint64_t updates = 0;
    WithoutGil([&] {
      std::unique_lock<std::mutex> lock(state.mu);
      // The first update at once, then at most one every 100 ms, and the last when the run ends.
      state.cv.wait_for(lock, std::chrono::milliseconds(100),
                        [&] { return state.done || (seen == 0 && state.updates != 0); });
      done = state.done;
      updates = state.updates;
      last = state.last;
      return 0;
    });
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // Ctrl-C: the Joiner cancels
    if (updates != seen) {
      seen = updates;
      if (!progress.is_none()) progress(ProgressDict(last));
    }
  }
  WithoutGil([&] {
    worker.join();
    return 0;
  });
  StatusOr<convert::ConvertResult>& r = *result;
  if (!r.ok()) {
    const libshard::StatusCode c = r.status().code();
    if (c == libshard::StatusCode::kInvalidArgument || c == libshard::StatusCode::kNotFound) {
      throw TextValueError("shard convert: " + r.status().message());
    }
    Raise(r.status());
  }
  const libshard::Manifest& m = r->manifest;
  const uint64_t now = last.done - last.rejected;  // this run's own conversions, as the CLI counts them
  py::dict d;
  d["converted"] = now;
  d["kept"] = m.stats().converted() > now ? m.stats().converted() - now : 0;
  d["rejected"] = r->rejected;
  d["passed_through"] = m.stats().passed_through();
  d["shards_written"] = r->shards_written;
  d["shards_reused"] = r->shards_reused;
  // For s3://, the object (the staged copy is no longer there to read).
  d["manifest_path"] = manifest_url.empty() ? FsDecode(r->manifest_path) : py::object(py::str(manifest_url));
  d["manifest_json"] = libshard::manifest::ToJson(m);
  py::list rejects;
  for (const auto& x : m.rejects()) rejects.append(py::make_tuple(FsDecode(x.path()), x.reason()));
  d["rejects"] = rejects;
  py::list removed;
  for (const std::string& x : r->removed_stale) removed.append(FsDecode(x));
  d["removed_stale"] = removed;
  d["warnings"] = r->warnings;
  py::list splits;
  for (const convert::SplitLayout& l : r->layout_detail.splits) {
    splits.append(py::make_tuple(l.name, FsDecode(l.folder), l.samples, l.classes));
  }
  d["layout"] = py::make_tuple(r->layout_detail.kind, splits, r->layout);
  py::list redone;
  for (const std::string& x : r->redone_damaged) redone.append(FsDecode(x));
  d["redone_damaged"] = redone;
  d["output"] = FsDecode(options.output);
  return d;
}

// remote::VerifyLocation over `paths` (an s3:// or https:// location staged
// first, the report naming its objects): (the `shard verify --json`
// document's text, exit code as the program's). A usage error is a
// ValueError with the program's message.
py::tuple RunVerify(const std::vector<std::string>& paths, const std::string& manifest, bool no_manifest, bool decode,
                    bool records_only, bool no_index, bool allow_empty, const std::string& compression, int threads,
                    std::optional<uint64_t> max_pixels, std::optional<uint64_t> max_record_length) {
  auto usage = [](const std::string& message) { return TextValueError("shard verify: " + message); };
  verify::VerifyRequest request;
  request.paths = paths;
  request.manifest = manifest;
  request.no_manifest = no_manifest;
  verify::VerifyOptions& o = request.options;
  StatusOr<libshard::record::Compression> c = libshard::record::ParseCompression(compression);
  if (!c.ok()) throw usage("--compression: " + c.status().message());
  if (max_record_length == uint64_t{0}) throw usage("--max-record-length: must be at least 1");
  o.compression = *c;
  o.check_examples = !records_only;
  o.check_index = !no_index;
  o.allow_empty = allow_empty;
  o.threads = threads;
  o.decode_images = decode;
  if (max_pixels) o.max_pixels = *max_pixels;  // none: VerifyOptions's defaults
  if (max_record_length) o.max_record_length = *max_record_length;
  if (decode && records_only) throw usage("--records-only excludes --decode");
  StatusOr<libshard::remote::VerifyOutcome> v = WithoutGil([&] { return libshard::remote::VerifyLocation(request); });
  if (!v.ok()) throw usage(v.status().message());
  return py::make_tuple(py::bytes(verify::VerifyReportJson(v->report)), v->exit_code);
}

}  // namespace

void BindTools(py::module_& m) {
  m.def("_convert_flags", &ConvertFlagList,
        "The options of `shard convert`: (name, takes_value, positional, repeatable) for each");
  m.def("_convert", &RunConvert, py::arg("options"), py::arg("progress") = py::none(),
        "convert::Convert (or ConvertToObjectStore for s3://) of the (flag name, text) pairs, as `shard convert` "
        "with those flags (libshard.convert wraps it)");
  m.def("_verify", &RunVerify, py::arg("paths"), py::arg("manifest"), py::arg("no_manifest"), py::arg("decode"),
        py::arg("records_only"), py::arg("no_index"), py::arg("allow_empty"), py::arg("compression"),
        py::arg("threads"), py::arg("max_pixels"), py::arg("max_record_length"),
        "remote::VerifyLocation (libshard.verify wraps it): (the `shard verify --json` document as UTF-8 JSON, "
        "exit code)");
}

}  // namespace libshard_py
