// Shard file names and command-line path expansion: the one rule for what a
// shard's name looks like and the one parser of `-NNNNN-of-MMMMM` numbering,
// used by `shard verify` (which files a folder holds, numbered-set checks),
// the reader's Dataset (folder and glob arguments) and convert (which files
// of an earlier plan are stale).
//
//   LIBSHARD_ASSIGN_OR_RETURN(std::vector<std::string> files,
//                             libshard::io::ExpandPaths({"out/", "more/*-of-*"}));
//
// Thread-safety: every function is safe to call from any thread; the folder
// walks see the file system as it is while they run.
#ifndef LIBSHARD_IO_SHARD_PATHS_H_
#define LIBSHARD_IO_SHARD_PATHS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/status.h"

namespace libshard::io {

// A name of the form HEAD-NNNNN-of-MMMMMTAIL (five or more digits each),
// split at its last such numbering: "train-00003-of-00010.tfrecord" is
// {head "train", index "00003", count "00010", tail ".tfrecord"}.
struct ShardNumbering {
  std::string_view head;
  std::string_view index;  // the digits as written
  std::string_view count;
  std::string_view tail;
};
// The views point into `name`. Nothing when `name` has no numbering.
std::optional<ShardNumbering> ParseShardNumbering(std::string_view name);

// True for file names that look like shards: `*.tfrecord`, `*.tfrecords`,
// `*.tfrecord.gz`, `*.tfrecords.gz`, or ending in `-NNNNN-of-NNNNN` (optionally
// followed by `.gz`), as TensorFlow's `train-00000-of-01024` and TFDS's
// `mnist-train.tfrecord-00000-of-00001`; never `*.idx` or another suffix
// (`manifest.task-00000-of-00003.json`).
bool LooksLikeShardName(std::string_view file_name);

// Every file under `dir` (recursively; hidden files and folders, such as the
// converter's .libshard/ state, skipped) whose name LooksLikeShardName,
// sorted by path. IOError when the folder cannot be listed.
StatusOr<std::vector<std::string>> FindShardFiles(const std::string& dir);

// Expands command-line arguments into files, in argument order, duplicates
// dropped: a file is taken as given (whatever its name); a folder gives every
// file under it (recursively, hidden files and folders skipped) whose name
// LooksLikeShardName, sorted by path; an argument with `*`, `?` or `[` is a
// glob(3) pattern whose matches are taken as files or folders (a file whose
// name holds those characters is taken literally). A missing file or folder,
// and a glob without matches, is NotFound naming it; a folder without shards
// and without a manifest.json is InvalidArgument naming it.
StatusOr<std::vector<std::string>> ExpandPaths(const std::vector<std::string>& args);

// An incomplete `-NNNNN-of-MMMMM` set (FindIncompleteNumberedSets).
struct NumberedSetGap {
  std::string path;     // the folder's HEAD-*-of-MMMMMTAIL, or the file numbered M or more
  std::string message;  // what is wrong, ending "; no manifest.json to say more"
};
// Without a manifest, the one set check the names allow: files among
// `paths` named HEAD-NNNNN-of-MMMMM[TAIL] (ParseShardNumbering) form a set
// per folder, HEAD, MMMMM and TAIL, which must hold every number 0..M-1.
// One gap per incomplete set (naming up to ten missing numbers), per file
// numbered M or more, and per HEAD/TAIL in one folder with two counts
// (shards of two plans). Sorted by path. `shard verify` and the reader's
// Dataset (folder and glob sources) both use it.
std::vector<NumberedSetGap> FindIncompleteNumberedSets(const std::vector<std::string>& paths);

}  // namespace libshard::io

#endif  // LIBSHARD_IO_SHARD_PATHS_H_
