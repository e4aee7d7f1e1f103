// `shard index FILE...`: writes a DALI-compatible FILE.idx for each TFRecord
// file, after checking every record's framing and CRCs. A truncated or
// corrupt file is refused, not indexed. With --check, compares existing
// index files instead of writing them.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "libshard/io/open_file.h"
#include "libshard/io/writable_file.h"
#include "libshard/record/index.h"

namespace shard_tool {
namespace {

using libshard::Status;
namespace io = libshard::io;
namespace record = libshard::record;

struct IndexOptions {
  std::vector<std::string> files;
  bool check = false;
  bool quiet = false;
};

Status WriteIndexAtomically(const std::string& path, const std::vector<record::IndexEntry>& entries) {
  const std::string tmp = path + ".tmp";
  LIBSHARD_ASSIGN_OR_RETURN(auto out, io::NewPosixWritableFile(tmp));
  Status s = out->Append(record::FormatIndex(entries));
  if (s.ok()) s = out->Sync();
  Status c = out->Close();
  if (s.ok()) s = c;
  if (s.ok()) s = io::RenameFile(tmp, path);
  if (!s.ok()) std::remove(tmp.c_str());
  return s;
}

// *unreadable: FILE itself could not be opened (a usage error, as in inspect).
Status IndexOne(const std::string& file, const IndexOptions& opt, uint64_t* records, bool* unreadable) {
  if (auto opened = io::OpenForRead(file); !opened.ok()) {
    *unreadable = true;
    return opened.status();
  }
  // Read as a stream, not mapped: a file shrinking meanwhile is an error.
  LIBSHARD_ASSIGN_OR_RETURN(auto entries, record::BuildIndexOfFile(file));
  *records = entries.size();
  const std::string idx = record::IndexPathFor(file);
  if (opt.check) {
    LIBSHARD_ASSIGN_OR_RETURN(std::string text, io::ReadFileToString(idx));
    LIBSHARD_ASSIGN_OR_RETURN(auto existing, record::ParseIndex(text));
    Status s = record::CheckIndexAgainst(entries, existing);
    return s.WithContext(idx);
  }
  return WriteIndexAtomically(idx, entries);
}

int RunIndex(const IndexOptions& opt) {
  int failures = 0;
  bool unreadable = false;
  for (const std::string& file : opt.files) {
    uint64_t records = 0;
    Status s = IndexOne(file, opt, &records, &unreadable);
    if (!s.ok()) {
      ++failures;
      // Messages from the library name the file when they come from opening it.
      std::string msg = s.message();
      if (msg.find(file) == std::string::npos) msg = file + ": " + msg;
      std::cerr << "shard index: " << msg << "\n";
      continue;
    }
    if (!opt.quiet) {
      std::cout << file << ": " << records << " records, " << (opt.check ? "index matches" : "wrote ")
                << (opt.check ? "" : record::IndexPathFor(file)) << "\n";
    }
  }
  if (unreadable) return kExitUsage;
  return failures == 0 ? kExitOk : kExitFailure;
}

}  // namespace

void RegisterIndex(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<IndexOptions>();
  CLI::App* cmd = app.add_subcommand(
      "index",
      "Write a DALI-compatible index FILE.idx (\"offset size\" per record) for each TFRecord file.\n"
      "Every record's framing and CRCs are checked first; a truncated or corrupt file is refused.\n"
      "Exit codes: 0 all indexed (or all matched with --check), 1 some file refused (damaged or\n"
      "compressed), 2 usage error or a FILE that cannot be opened (every other file is still indexed).");
  cmd->add_option("files", opt->files, "Uncompressed TFRecord files")->required();
  cmd->add_flag("--check", opt->check, "Compare existing FILE.idx with the file instead of writing it");
  cmd->add_flag("-q,--quiet", opt->quiet, "Print only errors");
  cmd->callback([opt, exit_code] { *exit_code = RunIndex(*opt); });
}

}  // namespace shard_tool
