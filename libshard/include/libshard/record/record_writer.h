// Writing TFRecord files (framing in libshard/record/format.h), optionally
// with a DALI-compatible index written as records land.
//
//   LIBSHARD_ASSIGN_OR_RETURN(auto writer,
//       libshard::record::RecordWriter::Create("a.tfrecord", {.write_index = true}));
//   LIBSHARD_RETURN_IF_ERROR(writer->Write(example_bytes));
//   LIBSHARD_RETURN_IF_ERROR(writer->Close());   // a.tfrecord and a.tfrecord.idx
//
// Errors (a full disk) come back from Write()/Close() and name the file; a
// writer whose Write() failed refuses further writes. Publishing a file only
// when complete (temp name + rename) is the caller's job (see the converter).
//
// Thread-safety: not thread-safe; one writer per thread.
#ifndef LIBSHARD_RECORD_RECORD_WRITER_H_
#define LIBSHARD_RECORD_RECORD_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "libshard/io/writable_file.h"
#include "libshard/status.h"

namespace libshard::record {

struct WriterOptions {
  // Also write `<path>.idx` (one "offset size" line per record). Default: false.
  bool write_index = false;
  // fsync the files in Close(). Default: false.
  bool sync_on_close = false;
};

// Appends `record` to `file` as one framed TFRecord record (header, data,
// footer): what RecordWriter::Write writes, for a file the caller owns (a
// sample pack's io::FileBeneath). Errors are the file's.
Status AppendFramedRecord(io::WritableFile& file, std::string_view record);

class RecordWriter {
 public:
  // Creates `path` (and `path + ".idx"` if options.write_index).
  static StatusOr<std::unique_ptr<RecordWriter>> Create(const std::string& path, WriterOptions options = {});
  // Writes to `data` and, when non-null, the index to `index`. Takes ownership.
  RecordWriter(std::unique_ptr<io::WritableFile> data, std::unique_ptr<io::WritableFile> index,
               WriterOptions options = {});
  // Closes the files if Close() was not called, ignoring its error: a writer
  // that must know whether its data reached the disk calls Close() itself.
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Appends one framed record.
  Status Write(std::string_view record);
  Status Flush();
  // Flushes (and syncs if asked) and closes the data and index files.
  Status Close();

  // Bytes written so far, i.e. the offset of the next record.
  uint64_t offset() const { return offset_; }
  uint64_t records_written() const { return records_; }

 private:
  std::unique_ptr<io::WritableFile> data_;
  std::unique_ptr<io::WritableFile> index_;
  WriterOptions options_;
  uint64_t offset_ = 0;
  uint64_t records_ = 0;
  Status error_;  // sticky: the first write error
  bool closed_ = false;
};

}  // namespace libshard::record

#endif  // LIBSHARD_RECORD_RECORD_WRITER_H_
