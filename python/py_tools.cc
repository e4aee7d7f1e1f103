// libshard.convert / verify / inspect (python/libshard/tools.py wraps these):
// the `shard` subcommands run in-process, parsing the same argument vector as
// the program (tools/convert_flags.h, tools/commands.h), so a keyword argument
// means what the flag of the same name means and is refused with the same
// message.
//
//   _convert_flags() -> [(name, takes_value)]     the options of `shard convert`
//   _convert(args, progress) -> dict              Convert() without the GIL
//   _run_command(args) -> (exit_code, stdout, stderr)   `shard verify|inspect ...`
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
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "convert_flags.h"
#include "libshard/convert/converter.h"
#include "libshard/convert/manifest_io.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/remote/remote_convert.h"
#include "libshard/store/object_store.h"
#include "py_common.h"

namespace libshard_py {
namespace {

namespace convert = libshard::convert;

// Parses `args` (the subcommand's name first) with `app`; a CLI11 parse error
// is a ValueError with CLI11's message, as the program prints it.
void Parse(CLI::App& app, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    throw py::value_error(app.get_name() + ": --help is not an option here");
  } catch (const CLI::CallForAllHelp&) {
    throw py::value_error(app.get_name() + ": --help-all is not an option here");
  } catch (const CLI::ParseError& e) {
    throw py::value_error(app.get_name() + ": " + e.what());
  }
}

py::list ConvertFlagList() {
  CLI::App app{"shard"};
  app.name("shard");
  std::shared_ptr<shard_tool::ConvertFlags> flags = shard_tool::AddConvertOptions(app);
  py::list out;
  for (const CLI::Option* o : app.get_subcommand("convert")->get_options()) {
    const std::string name = o->get_single_name();
    if (name.empty() || name == "help") continue;
    const bool positional = o->get_lnames().empty() && o->get_snames().empty();
    out.append(py::make_tuple(name, o->get_expected_max() != 0, positional));
  }
  return out;
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
  return d;
}

py::dict RunConvert(const std::vector<std::string>& args, const py::object& progress) {
  CLI::App app{"shard"};
  app.name("shard");
  app.require_subcommand(1, 1);
  std::shared_ptr<shard_tool::ConvertFlags> flags = shard_tool::AddConvertOptions(app);
  std::vector<std::string> full{"convert"};
  full.insert(full.end(), args.begin(), args.end());
  full.push_back("--quiet");  // no task line on stderr; results are returned
  Parse(app, full);
  if (Status s = shard_tool::BuildConvertOptions(*flags); !s.ok()) {
    throw py::value_error("shard convert: " + s.message());
  }
  const convert::ConvertOptions& options = shard_tool::ConvertOptionsOf(*flags);

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
  const bool remote = libshard::remote::IsRemoteOutput(options.output);
  std::string manifest_url;
  std::thread worker([&] {
    StatusOr<convert::ConvertResult> r = libshard::InternalError("not run");
    if (remote) {
      libshard::remote::RemoteConvertOptions ro;
      ro.convert = options;
      ro.staging = shard_tool::StagingOf(*flags);
      ro.recheck = shard_tool::RecheckOf(*flags);
      StatusOr<libshard::remote::RemoteConvertResult> rr = libshard::remote::ConvertToObjectStore(ro, on_progress);
      if (rr.ok()) {
        if (rr->committed) manifest_url = libshard::store::JoinKey(rr->url, "manifest.json");
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
      throw py::value_error("shard convert: " + r.status().message());
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
  d["output"] = FsDecode(options.output);
  return d;
}

// `shard inspect|verify|report ARGS...` with stdout and stderr captured.
py::tuple RunCommand(const std::vector<std::string>& args) {
  CLI::App app{"shard"};
  app.name("shard");
  app.require_subcommand(1, 1);
  int exit_code = shard_tool::kExitOk;
  std::ostringstream out, err;
  shard_tool::RegisterInspect(app, &exit_code, out, err);
  shard_tool::RegisterVerify(app, &exit_code, out, err);
  shard_tool::RegisterReport(app, &exit_code, err);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  std::string parse_error;
  WithoutGil([&] {
    try {
      app.parse(reversed);  // runs the subcommand's callback
    } catch (const CLI::ParseError& e) {
      parse_error = std::string("shard: ") + e.what();
    } catch (const std::bad_alloc&) {
      parse_error = "shard: out of memory";
    } catch (const std::exception& e) {
      parse_error = std::string("shard: ") + e.what();
    }
    return 0;
  });
  if (!parse_error.empty()) throw py::value_error(parse_error);
  return py::make_tuple(exit_code, py::bytes(out.str()), py::bytes(err.str()));
}

}  // namespace

void BindTools(py::module_& m) {
  m.def("_convert_flags", &ConvertFlagList, "The options of `shard convert`: (name, takes_value, positional) for each");
  m.def("_convert", &RunConvert, py::arg("args"), py::arg("progress") = py::none(),
        "`shard convert ARGS` in-process (libshard.convert wraps it)");
  m.def("_run_command", &RunCommand, py::arg("args"),
        "`shard inspect|verify|report ARGS` in-process: (exit_code, stdout, stderr)");
}

}  // namespace libshard_py
