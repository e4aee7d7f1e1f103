// `shard report OUT [-o report.html]`: one self-contained HTML page about a
// converted dataset. The work is in libshard/report/report.h.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cli_checks.h"
#include "commands.h"
#include "libshard/io/open_file.h"
#include "libshard/io/writable_file.h"
#include "libshard/remote/staging.h"
#include "libshard/report/report.h"
#include "libshard/store/object_store.h"

namespace shard_tool {
namespace {

struct ReportFlags {
  std::string source, output;
  libshard::report::ReportOptions o;
  bool quiet = false;
};

int Run(ReportFlags& f, std::ostream& err) {
  // s3:// and https://: the dataset is downloaded once into a temporary
  // folder (each listed shard checked as it streams in) and reported from
  // there; the page goes to -o, which such a source needs.
  std::unique_ptr<libshard::remote::StagedObjects> staged;
  std::string source = f.source;
  if (libshard::store::IsObjectUrl(source)) {
    if (f.output.empty()) {
      err << "shard report: " << source << ": give -o FILE for the page of an object-storage dataset\n";
      return kExitUsage;
    }
    auto st = libshard::remote::StagedObjects::Stage(source);
    if (!st.ok()) {
      err << "shard report: " << st.status().message() << "\n";
      return StagingExitCode(st.status());
    }
    staged = std::move(*st);
    source = staged->local();
  }
  std::string path;
  const libshard::Status s = libshard::report::WriteReport(source, f.output, f.o, &path);
  if (!s.ok()) {
    err << "shard report: " << (staged ? staged->ToUrl(s.message()) : s.message()) << "\n";
    const libshard::StatusCode c = s.code();
    return c == libshard::StatusCode::kInvalidArgument || c == libshard::StatusCode::kNotFound ? kExitUsage
                                                                                               : kExitFailure;
  }
  if (staged) {
    // The page names the objects, not the temporary folder they were read from.
    auto text = libshard::io::ReadFileToString(path, uint64_t{1} << 30);
    if (text.ok()) {
      const libshard::Status w = libshard::io::WriteFileAtomically(path, staged->ToUrl(*text));
      if (!w.ok()) {
        err << "shard report: " << w.message() << "\n";
        return kExitFailure;
      }
    }
  }
  if (!f.quiet) err << "shard report: wrote " << path << "\n";
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
