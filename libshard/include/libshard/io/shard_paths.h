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

}  // namespace libshard::io

#endif  // LIBSHARD_IO_SHARD_PATHS_H_
