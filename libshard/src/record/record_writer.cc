#include "libshard/record/record_writer.h"

#include "libshard/record/format.h"
#include "libshard/record/index.h"

namespace libshard::record {

StatusOr<std::unique_ptr<RecordWriter>> RecordWriter::Create(const std::string& path, WriterOptions options) {
  LIBSHARD_ASSIGN_OR_RETURN(auto data, io::NewPosixWritableFile(path));
  std::unique_ptr<io::WritableFile> index;
  if (options.write_index) {
    LIBSHARD_ASSIGN_OR_RETURN(index, io::NewPosixWritableFile(IndexPathFor(path)));
  }
  return std::make_unique<RecordWriter>(std::move(data), std::move(index), options);
}

RecordWriter::RecordWriter(std::unique_ptr<io::WritableFile> data, std::unique_ptr<io::WritableFile> index,
                           WriterOptions options)
    : data_(std::move(data)), index_(std::move(index)), options_(options) {}

RecordWriter::~RecordWriter() {
  if (!closed_) Close().IgnoreError();
}

Status AppendFramedRecord(io::WritableFile& file, std::string_view record) {
  char header[kHeaderSize];
  char footer[kFooterSize];
  EncodeHeader(record.size(), header);
  EncodeFooter(record, footer);
  LIBSHARD_RETURN_IF_ERROR(file.Append(std::string_view(header, kHeaderSize)));
  LIBSHARD_RETURN_IF_ERROR(file.Append(record));
  return file.Append(std::string_view(footer, kFooterSize));
}

Status RecordWriter::Write(std::string_view record) {
  if (closed_) return FailedPreconditionError(data_->name() + ": write after close");
  if (!error_.ok()) return error_;
  Status s = AppendFramedRecord(*data_, record);
  const uint64_t framed = record.size() + kFramingOverhead;
  if (s.ok() && index_) s = index_->Append(FormatIndexLine({offset_, framed}));
  if (!s.ok()) {
    error_ = s;
    return s;
  }
  offset_ += framed;
  ++records_;
  return Status::OK();
}

Status RecordWriter::Flush() {
  if (!error_.ok()) return error_;
  Status s = data_->Flush();
  if (s.ok() && index_) s = index_->Flush();
  // Sticky like a Write() error: the failed bytes are gone, so a later
  // Close() must not report success.
  if (!s.ok()) error_ = s;
  return s;
}

Status RecordWriter::Close() {
  if (closed_) return FailedPreconditionError(data_->name() + ": already closed");
  closed_ = true;
  Status s = error_;
  if (s.ok() && options_.sync_on_close) s = data_->Sync();
  Status c = data_->Close();
  if (s.ok()) s = c;
  if (index_) {
    if (s.ok() && options_.sync_on_close) s = index_->Sync();
    Status ci = index_->Close();
    if (s.ok()) s = ci;
  }
  return s;
}

}  // namespace libshard::record
