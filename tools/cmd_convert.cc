// `shard convert INPUT -o OUT`: an image folder (or CSV manifest) to TFRecord
// shards, indices, manifest.json and rejects.tsv. The work is in
// libshard/convert/converter.h, the flags in libshard/remote/convert_flags.h
// (registered by convert_flags.cc); this file runs the call, draws the
// progress bar and prints the summary.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "convert_dry_run.h"
#include "convert_flags.h"
#include "leak_summary.h"
#include "libshard/convert/converter.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/remote/remote_convert.h"
#include "libshard/report/report.h"
#include "progress.h"

namespace shard_tool {

namespace convert = libshard::convert;
namespace image = libshard::image;
using libshard::Status;
using libshard::StatusOr;

namespace {

using Flags = libshard::remote::ConvertFlagValues;

// What the listing found (ConvertOptions::on_listed, before the long part):
// warnings, the layout, skipped files, an earlier plan's shards removed.
void PrintListed(const Flags& f, const convert::ConvertResult& result) {
  const convert::ConvertResult* r = &result;
  if (f.quiet) return;
  for (const std::string& w : r->warnings) std::fprintf(stderr, "shard convert: warning: %s\n", w.c_str());
  std::fprintf(stderr, "shard convert: %s\n", r->layout.c_str());
  if (const std::string skips = convert::SkipSummary(r->skipped); !skips.empty()) {
    std::fprintf(stderr, "shard convert: %s\n", skips.c_str());
  }
  if (!r->removed_stale.empty()) {
    const size_t n = r->removed_stale.size(), show = f.verbose ? n : std::min<size_t>(n, 5);
    std::string names;
    for (size_t i = 0; i < show; ++i) names += (i ? ", " : "") + r->removed_stale[i];
    if (show < n) names += ", ... (" + std::to_string(n - show) + " more; -v lists all)";
    std::fprintf(stderr,
                 "shard convert: removed %zu shard(s) of an earlier plan from %s (another shard count or "
                 "split), with their index and entry: %s\n",
                 n, f.request.convert.output.c_str(), names.c_str());
  }
  std::fflush(stderr);
}

// What a finished conversion says: redone shards, rejects, the summary line
// (naming `manifest`, the manifest's path or URL), --json, --report; the
// exit code.
int Summarize(Flags& f, convert::ConvertResult& result, const convert::Progress& last, const std::string& manifest) {
  convert::ConvertResult* r = &result;
  if (!f.quiet) {
    for (const std::string& d : r->redone_damaged) {
      std::fprintf(stderr, "shard convert: shard %s of an earlier run did not match its checksum: redone\n", d.c_str());
    }
    for (const std::string& d : r->redone_retried) {
      std::fprintf(stderr, "shard convert: shard %s of an earlier run: redone to retry them\n", d.c_str());
    }
  }
  const libshard::Manifest& m = r->manifest;
  const libshard::DatasetStats& st = m.stats();
  const libshard::RunInfo& run = m.run();
  if (!m.rejects().empty() && !f.quiet) {
    const int show = f.verbose ? m.rejects_size() : std::min(m.rejects_size(), 20);
    for (int i = 0; i < show; ++i) {
      std::fprintf(stderr, "shard convert: rejected %s: %s\n", m.rejects(i).path().c_str(),
                   m.rejects(i).reason().c_str());
    }
    if (show < m.rejects_size()) {
      // A task's rejects are in its own manifest; rejects.tsv is written by the merge.
      std::fprintf(stderr, "shard convert: ... %d more rejects in %s%s\n", m.rejects_size() - show,
                   f.request.convert.num_tasks > 1 ? r->manifest_path.c_str() : f.request.convert.output.c_str(),
                   f.request.convert.num_tasks > 1 ? " (rejects.tsv once shard merge has run)" : "/rejects.tsv");
    }
  }
  if (!f.quiet) {
    const double secs = run.seconds() > 0 ? run.seconds() : 1e-9;
    // `last` counts this run's own samples; the manifest's stats all of them.
    const uint64_t now = last.done - last.rejected;
    const uint64_t kept = st.converted() > now ? st.converted() - now : 0;
    std::string resumed;
    if (r->shards_reused > 0) {
      resumed = "; " + std::to_string(kept) + " kept from an earlier run in " + std::to_string(r->shards_reused) +
                " shard(s), " + std::to_string(st.converted()) + " in all";
    }
    std::fprintf(stderr,
                 "shard convert: %llu converted in this run (%u shards written)%s; %llu passed through, "
                 "%llu rejected; %s; %.1f s (this run: %.0f img/s, %.1f MB/s in) -> %s\n",
                 static_cast<unsigned long long>(now), r->shards_written, resumed.c_str(),
                 static_cast<unsigned long long>(st.passed_through()), static_cast<unsigned long long>(st.rejected()),
                 OutputDescription(f.request.convert).c_str(), run.seconds(), last.done / secs,
                 last.bytes_read / secs / 1e6, manifest.c_str());
  }
  if (r->gray_expanded > 0 && !f.quiet) {
    std::fprintf(stderr, "shard convert: %llu gray source(s) stored as RGB (--channels auto keeps them gray)\n",
                 static_cast<unsigned long long>(r->gray_expanded));
  }
  bool unmatched = false;
  if (m.has_annotations()) {
    uint64_t stored = 0, clipped = 0, dropped = 0;
    for (const libshard::BoxCount& b : m.stats().boxes()) {
      stored += b.stored();
      clipped += b.clipped();
      dropped += b.dropped();
    }
    const libshard::AnnotationCounts& a = m.annotations();
    if (!f.quiet) {
      std::fprintf(stderr,
                   "shard convert: boxes (%s, %d classes): %s: %llu stored (%llu clipped), %llu dropped by the crop; "
                   "%llu label file(s) without an image -> %s/label_map.pbtxt\n",
                   a.format().c_str(), m.object_labels_size(),
                   AnnotationCountsText(a.annotated_images(), a.unannotated_images(), a.missing_images(), a.boxes())
                       .c_str(),
                   static_cast<unsigned long long>(stored), static_cast<unsigned long long>(clipped),
                   static_cast<unsigned long long>(dropped), static_cast<unsigned long long>(a.unmatched_annotations()),
                   f.request.convert.output.c_str());
    }
    unmatched = a.annotated_images() == 0;
    if (unmatched && r->rejected == 0 && !f.quiet) {
      std::fprintf(stderr, "shard convert: no image matched an annotation: the images were stored without boxes\n");
    }
  }
  if (r->transient_rejects > 0 && !f.quiet) {
    std::fprintf(stderr,
                 "shard convert: %llu reject(s) were not caused by the file (out of memory, an I/O error): the "
                 "next run of this command retries them\n",
                 static_cast<unsigned long long>(r->transient_rejects));
  }
  if (f.json) std::cout << libshard::manifest::ToJson(m);
  const int leaks =
      ReportLeaks("shard convert", m, r->shards_without_hashes, f.request.convert.output + "/duplicates.tsv", f.quiet);
  if (st.converted() == 0 && r->rejected > 0) {
    std::fprintf(stderr, "shard convert: nothing converted: all %llu input(s) were rejected (%s names them)\n",
                 static_cast<unsigned long long>(r->rejected),
                 f.request.convert.num_tasks > 1 ? r->manifest_path.c_str()
                                                 : (f.request.convert.output + "/rejects.tsv").c_str());
    return kExitFailure;
  }
  if (f.report && f.request.convert.num_tasks == 1) {
    std::string page;
    if (Status rs = libshard::report::WriteReport(r->manifest_path, "", {}, &page); !rs.ok()) {
      std::cerr << "shard convert: --report: " << rs.message() << "\n";
      return kExitFailure;
    }
    if (!f.quiet) std::fprintf(stderr, "shard convert: report -> %s\n", page.c_str());
  }
  if (leaks != kExitOk) return leaks;
  return r->rejected > 0 || unmatched ? kExitRejected : kExitOk;
}

int Run(ConvertFlags& flags) {
  Status s = BuildConvertOptions(flags);
  if (!s.ok()) {
    std::cerr << "shard convert: " << s.message() << "\n";
    return kExitUsage;
  }
  Flags& f = flags.values;
  if (f.request.convert.num_tasks > 1 && !f.quiet) {
    std::fprintf(stderr, "shard convert: task %u of %u (0-based)%s%s\n", f.request.convert.task_index,
                 f.request.convert.num_tasks, f.task_source.empty() ? "" : ", from ", f.task_source.c_str());
  }
  if (f.dry_run) return RunDryRun(f.request.convert, f.json, f.verbose);
  ProgressBar bar(stderr, !f.quiet, "shard convert", f.progress_interval);
  const InterruptMessage interrupt("shard convert", !f.quiet && ::isatty(STDERR_FILENO));
  convert::Progress last;  // this run's own work (shards kept from an earlier run excluded)
  const bool to_rgb = f.request.convert.encode.decode.channels == image::ChannelMode::kRgb;
  auto progress = [&](const convert::Progress& p) {
    if (p.leak_check_images > 0) {  // the samples are done: the leak check's search starts
      bar.Finish();
      if (!f.quiet) {
        std::fprintf(stderr, "shard convert: leak check: searching %llu images' fingerprints for duplicates\n",
                     static_cast<unsigned long long>(p.leak_check_images));
      }
      return;
    }
    if (to_rgb && p.gray_sources > 0 && last.gray_sources == 0 && !f.quiet) {  // the first: said at once
      bar.Finish();
      std::fprintf(stderr,
                   "shard convert: gray sources are stored as RGB (--channels auto keeps them gray); the count "
                   "comes at the end\n");
    }
    last = p;
    bar.Update(p.done, p.total, p.bytes_read, p.rejected);
  };
  f.request.convert.on_listed = [&f](const convert::ConvertResult& listed) { PrintListed(f, listed); };
  // -o s3://BUCKET/PREFIX: converted into a local staging folder, each
  // finished shard sent up as it is written, manifest.json last
  // (libshard/remote/remote_convert.h).
  std::optional<libshard::remote::RemoteConvertResult> remote;
  StatusOr<convert::ConvertResult> r = libshard::InternalError("not run");
  if (libshard::remote::IsRemoteOutput(f.request.convert.output)) {
    StatusOr<libshard::remote::RemoteConvertResult> rr = libshard::remote::ConvertToObjectStore(f.request, progress);
    if (rr.ok()) {
      remote = std::move(*rr);
      f.request.convert.output = remote->staging;  // the messages below name the staging folder's files
      r = std::move(remote->converted);
    } else {
      r = rr.status();
    }
  } else {
    r = convert::Convert(f.request.convert, progress);
  }
  bar.Finish();
  if (!r.ok()) {
    std::cerr << "shard convert: " << r.status().message() << "\n";
    return ExitCodeFor(r.status());
  }
  // -o s3://: the manifest uploaded, not the staging folder's copy.
  std::string manifest = r->manifest_path;
  if (remote && remote->committed) {
    std::string url = remote->url;
    while (!url.empty() && url.back() == '/') url.pop_back();
    manifest = url + "/manifest.json";
  }
  const int code = Summarize(f, *r, last, manifest);
  if (remote && remote->committed && !f.quiet) {
    std::fprintf(stderr,
                 "shard convert: uploaded %llu objects to %s (%llu already there; staging folder %s), "
                 "manifest.json last -> %s\n",
                 static_cast<unsigned long long>(remote->uploaded), remote->url.c_str(),
                 static_cast<unsigned long long>(remote->skipped), remote->staging.c_str(), manifest.c_str());
  }
  return code;
}

}  // namespace

void RegisterConvert(CLI::App& app, int* exit_code) {
  std::shared_ptr<ConvertFlags> flags = AddConvertOptions(app);
  flags->command->callback([flags, exit_code] { *exit_code = Run(*flags); });
}

}  // namespace shard_tool
