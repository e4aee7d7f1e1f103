// `shard report OUT [-o report.html]`: one self-contained HTML page about a
// converted dataset. The work is remote::WriteDatasetReport
// (libshard/remote/remote_report.h: an s3:// / https:// dataset staged
// first) over libshard/report/report.h.
#include <iostream>
#include <memory>
#include <string>

#include "cli_checks.h"
#include "commands.h"
#include "libshard/remote/remote_report.h"
#include "libshard/store/object_store.h"

namespace shard_tool {
namespace {

struct ReportFlags {
  std::string source, output;
  libshard::report::ReportOptions o;
  bool quiet = false;
};

int Run(const ReportFlags& f, std::ostream& err) {
  const bool remote = libshard::store::IsObjectUrl(f.source);
  if (remote && f.output.empty()) {
    err << "shard report: " << f.source << ": give -o FILE for the page of an object-storage dataset\n";
    return kExitUsage;
  }
  libshard::StatusOr<std::string> path = libshard::remote::WriteDatasetReport(f.source, f.output, f.o);
  if (!path.ok()) {
    err << "shard report: " << path.status().message() << "\n";
    if (remote) return StagingExitCode(path.status());
    const libshard::StatusCode c = path.status().code();
    return c == libshard::StatusCode::kInvalidArgument || c == libshard::StatusCode::kNotFound ? kExitUsage
                                                                                               : kExitFailure;
  }
  if (!f.quiet) err << "shard report: wrote " << *path << "\n";
  return kExitOk;
}

}  // namespace

void RegisterReport(CLI::App& app, int* exit_code, std::ostream& err) {
  auto flags = std::make_shared<ReportFlags>();
  ReportFlags& f = *flags;
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write one self-contained HTML page about a converted dataset (offline: no script, no URL): per split the "
      "totals, class balance, source size and aspect histograms, per-channel mean/std, thumbnails per class "
      "(masks overlaid in class colours, with a legend and pixel counts); the rejects grouped by reason; the "
      "conversion options; with --verify the result of shard verify. docs/report.md describes the page.\n"
      "Exit codes: 0 written (damaged shards and verification faults are shown on the page), 1 the page could "
      "not be written, 2 usage error or no readable manifest.");
  cmd->add_option("dataset", f.source,
                  "output folder of shard convert, or its manifest.json, or s3://BUCKET/PREFIX / https://... "
                  "(downloaded once into a temporary folder; -o required), or a mixture.json (its sources and the "
                  "realised proportions of one epoch)")
      ->required();
  cmd->add_option("-o,--output", f.output, "where to write the page (default: report.html beside manifest.json)");
  cmd->add_option("--thumbnails", f.o.thumbnails_per_class, "thumbnails per class, 0..64")
      ->check(IntegerIn(0, 64))
      ->capture_default_str();
  cmd->add_option("--max-classes", f.o.max_classes,
                  "classes listed in charts and given thumbnails (largest first, then \"and N more\"), 1..1000")
      ->check(IntegerIn(1, 1000))
      ->capture_default_str();
  cmd->add_option("--thumbnail-size", f.o.thumbnail_size, "longest thumbnail side in pixels, 16..512")
      ->check(IntegerIn(16, 512))
      ->capture_default_str();
  cmd->add_option("--seed", f.o.seed, "seed of the thumbnail choice, 0..2^64-1")
      ->check(Uint64Any())
      ->capture_default_str();
  CLI::Option* verify = cmd->add_flag("--verify", f.o.verify, "run shard verify's checks and show the result");
  cmd->add_flag("--decode", f.o.verify_decode, "with --verify: decode every image and mask too")->needs(verify);
  cmd->add_option("--threads", f.o.threads, "verify threads, 0..256 (0 = one per core)")
      ->check(IntegerIn(0, kMaxThreads));
  cmd->add_flag("-q,--quiet", f.quiet, "no summary line");
  cmd->callback([flags, exit_code, &err] { *exit_code = Run(*flags, err); });
}

}  // namespace shard_tool
