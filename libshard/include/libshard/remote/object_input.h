// `shard convert s3://BUCKET/PREFIX/ -o OUT`: an input in a bucket, listed
// by LIST (every key under the prefix through io::CheckRelativeName: a key
// that is not a relative path of plain parts below it -- "..", "//", a
// control byte -- is a reject naming the key, never a path), read by GET
// with the store's retries and deadlines (store/store_config.h), at most
// one GET per conversion thread at a time, each bounded by the converter's
// source limit and checked against the size the LIST gave. The folder
// layouts (class folders, split folders, flat) are ListFolder's rules over
// the keys (convert::ListObjectKeys), so the shards are those of a local
// copy of the objects, byte for byte; a rerun resumes like any conversion.
// An input whose key ends in .csv or .tsv is a CSV manifest in the bucket
// (convert::ReadCsvOfKeys): its rows name keys beside it, each checked to
// be a plain relative key and to exist in the LIST of the CSV's folder;
// masks, --image-root, --layout and globs need a local input.
//
//   convert::ConvertOptions o;
//   o.input = "s3://bkt/raw/";
//   LIBSHARD_RETURN_IF_ERROR(remote::UseObjectInput(&o));  // o.list_input set
//   convert::Convert(o);
//
// Errors: a URL that is not s3:// (a web server cannot be listed) is
// InvalidArgument; the LIST's errors are the store's (IOError naming the
// URL), and so is a prefix with no object (NotFound). A GET that fails, or
// answers with another size than the LIST's, rejects that sample naming its
// URL (not caused by the file: the next run retries it).
// Thread-safety: the listing's source is called from the conversion's
// threads (the store is thread-safe).
#ifndef LIBSHARD_REMOTE_OBJECT_INPUT_H_
#define LIBSHARD_REMOTE_OBJECT_INPUT_H_

#include <string>

#include "libshard/convert/converter.h"
#include "libshard/status.h"

namespace libshard::remote {

// True for an input that names objects in a store ("scheme://", e.g. s3://).
bool IsRemoteInput(const std::string& input);

// Sets options->list_input to list options->input (s3://BUCKET/PREFIX) and
// read its objects. InvalidArgument for a URL it cannot list.
Status UseObjectInput(convert::ConvertOptions* options);

}  // namespace libshard::remote

#endif  // LIBSHARD_REMOTE_OBJECT_INPUT_H_
