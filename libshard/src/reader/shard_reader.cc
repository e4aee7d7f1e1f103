#include "libshard/reader/shard_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "libshard/io/fault_guard.h"
#include "libshard/io/mapped_file.h"
#include "libshard/io/open_file.h"
#include "libshard/record/record_reader.h"

namespace libshard::reader {
namespace {

constexpr size_t kDirectAlign = 4096;
constexpr size_t kScanBlock = 256 * 1024;  // pread scan: headers per read

std::string At(const std::string& path, uint64_t offset) { return path + ": record at byte " + std::to_string(offset); }

}  // namespace

const char* IoModeName(IoMode mode) { return mode == IoMode::kPread ? "pread" : "mmap"; }

StatusOr<IoMode> ParseIoMode(std::string_view name) {
  if (name == "mmap") return IoMode::kMmap;
  if (name == "pread") return IoMode::kPread;
  return InvalidArgumentError("unknown I/O mode \"" + std::string(name) + "\" (expected mmap or pread)");
}

RecordBuffer::~RecordBuffer() { std::free(data_); }

char* RecordBuffer::Reserve(size_t n) {
  owner_ = 0;  // the contents are about to change
  len_ = 0;
  if (n > cap_) {
    std::free(data_);
    size_t cap = (n + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
    data_ = static_cast<char*>(std::aligned_alloc(kDirectAlign, cap));
    cap_ = data_ ? cap : 0;
  }
  return data_;
}

StatusOr<std::unique_ptr<ShardReader>> ShardReader::Open(const std::string& path, const ShardReaderOptions& options) {
  LIBSHARD_ASSIGN_OR_RETURN(std::unique_ptr<ShardReader> r, OpenFile(path, options));
  LIBSHARD_RETURN_IF_ERROR(r->EnsureTable());
  r->records_ = r->table_.size();  // before anyone else sees the reader
  return r;
}

StatusOr<std::unique_ptr<ShardReader>> ShardReader::OpenWithCount(const std::string& path, uint64_t records,
                                                                  const ShardReaderOptions& options) {
  LIBSHARD_ASSIGN_OR_RETURN(std::unique_ptr<ShardReader> r, OpenFile(path, options));
  r->records_ = records;
  r->count_given_ = true;
  return r;
}

Status ShardReader::EnsureTable() const {
  std::call_once(table_once_, [this] { table_status_ = BuildTableOnce(); });
  return table_status_;
}

Status ShardReader::BuildTableOnce() const {
  LIBSHARD_RETURN_IF_ERROR(BuildTable());
  if (count_given_ && table_.size() != records_) {
    const std::string n = std::to_string(table_.size());
    table_ = {};
    return DataLossError(path_ + ": " + n + " records, the manifest says " + std::to_string(records_));
  }
  if (map_ != nullptr && options_.verify_crc) {
    const size_t words = (table_.size() + 63) / 64;
    checked_.reset(new std::atomic<uint64_t>[words]);
    for (size_t w = 0; w < words; ++w) checked_[w].store(0, std::memory_order_relaxed);
  }
  return Status::OK();
}

StatusOr<std::unique_ptr<ShardReader>> ShardReader::OpenFile(const std::string& path,
                                                             const ShardReaderOptions& options) {
  if (options.max_record_length == 0) return InvalidArgumentError("max_record_length must be > 0");
  static std::atomic<uint64_t> next_id{1};
  std::unique_ptr<ShardReader> r(new ShardReader());
  r->id_ = next_id.fetch_add(1, std::memory_order_relaxed);
  r->path_ = path;
  r->options_ = options;
  if (options.io == IoMode::kMmap) {
    // The mapping needs no descriptor: MappedFile closes it, so a dataset of
    // many shards holds no open files in this mode.
    LIBSHARD_ASSIGN_OR_RETURN(r->file_, io::MappedFile::Open(path, options.access));
    r->file_size_ = r->file_->size();
    r->map_ = r->file_size_ > 0 ? r->file_->data().data() : nullptr;
  } else {
    io::FileIdentity id;
    auto fd = io::OpenForRead(path, &id, options.direct_io ? O_DIRECT : 0);
    if (!fd.ok() && options.direct_io) {
      // A file system without O_DIRECT (EINVAL): buffered reads.
      auto buffered = io::OpenForRead(path, &id);
      if (buffered.ok()) {
        r->options_.direct_io = false;
        fd = std::move(buffered);
      }
    }
    if (!fd.ok()) return fd.status();
    r->fd_ = std::move(*fd);
    r->file_size_ = id.size;
    r->identity_ = id;
    r->open_flags_ = r->options_.direct_io ? O_DIRECT : 0;
    int advice = options.access == io::AccessPattern::kSequential ? POSIX_FADV_SEQUENTIAL
                 : options.access == io::AccessPattern::kRandom   ? POSIX_FADV_RANDOM
                                                                  : POSIX_FADV_NORMAL;
    ::posix_fadvise(r->fd_.get(), 0, 0, advice);
  }
  if (r->fd_.valid() && options.open_files != nullptr) options.open_files->Put(r->id_, std::move(r->fd_));
  return r;
}

ShardReader::~ShardReader() {
  if (options_.open_files != nullptr) options_.open_files->Erase(id_);
}

StatusOr<ShardReader::Fd> ShardReader::Descriptor() const {
  if (fd_.valid()) return Fd{fd_.get(), nullptr};
  if (options_.open_files == nullptr) return FailedPreconditionError(path_ + ": no open descriptor");
  LIBSHARD_ASSIGN_OR_RETURN(auto held, options_.open_files->Get(id_, path_, identity_, open_flags_));
  const int fd = held->get();
  return Fd{fd, std::move(held)};
}

// Reads and checks the 12-byte header at `offset`: length CRC, length limit,
// and that the whole record fits in the file as opened.
Status ShardReader::ReadHeaderAt(uint64_t offset, uint64_t* length, RecordBuffer* block) const {
  const char* h = nullptr;
  const uint64_t remaining = file_size_ - offset;
  if (remaining < record::kHeaderSize) {
    return record::FramingStatus(record::DecodeHeader(nullptr, offset, remaining, options_.max_record_length, length),
                                 path_);
  }
  char header[record::kHeaderSize];
  if (map_ != nullptr) {
    LIBSHARD_RETURN_IF_ERROR(io::GuardedCopy(*file_, offset, record::kHeaderSize, header));
    h = header;
  } else {
    // Headers come out of a block read into `block` (a scan walks it without
    // a syscall per record), aligned for O_DIRECT.
    if (!(block->owner_ == id_ && offset >= block->start_ &&
          offset + record::kHeaderSize <= block->start_ + block->len_)) {
      const uint64_t start = options_.direct_io ? offset / kDirectAlign * kDirectAlign : offset;
      const uint64_t want = kScanBlock;
      char* b = block->Reserve(want);
      if (b == nullptr) return ResourceExhaustedError(path_ + ": cannot allocate a scan buffer");
      LIBSHARD_ASSIGN_OR_RETURN(Fd fd, Descriptor());
      const int64_t n = io::PreadFull(fd.fd, b, want, start);
      if (n < 0) return ErrnoError("read " + path_, static_cast<int>(-n));
      if (static_cast<uint64_t>(n) < offset - start + record::kHeaderSize) {
        return DataLossError(At(path_, offset) + ": truncated record: the file shrank while open");
      }
      block->owner_ = id_;
      block->start_ = start;
      block->len_ = static_cast<uint64_t>(n);
    }
    h = block->data_ + (offset - block->start_);
  }
  const record::FramingError error = record::DecodeHeader(h, offset, remaining, options_.max_record_length, length);
  return record::FramingStatus(error, path_);
}

Status ShardReader::BuildTable() const {
  if (options_.use_index) {
    const std::string idx_path = record::IndexPathFor(path_);
    struct stat st;
    if (::stat(idx_path.c_str(), &st) == 0) {
      std::string why;
      auto text = io::ReadFileToString(idx_path, uint64_t{1} << 32);
      if (!text.ok()) {
        why = text.status().message();  // names the index already (io/open_file.h)
      } else {
        auto parsed = record::ParseIndex(*text);
        if (!parsed.ok()) {
          why = parsed.status().message();
        } else {
          // Cheap consistency checks: contiguous from 0 to the file's end,
          // plausible sizes, and the first and last headers agree. Every other
          // header is checked against its entry when the record is first read.
          if (Status c = record::CheckIndexCoversFile(*parsed, file_size_, options_.max_record_length); !c.ok()) {
            why = c.message();
          }
          RecordBuffer block;
          for (size_t k : {size_t{0}, parsed->size() - 1}) {
            if (!why.empty() || parsed->empty()) break;
            const auto& e = (*parsed)[k];
            uint64_t len = 0;
            Status s = ReadHeaderAt(e.offset, &len, &block);
            if (!s.ok()) {
              why = s.message();
            } else if (len + record::kFramingOverhead != e.size) {
              why = "entry at byte " + std::to_string(e.offset) + " disagrees with the record's header";
            }
          }
          if (why.empty()) {
            StatusOr<record::RecordOffsets> table = record::RecordOffsets::FromEntries(*parsed, file_size_);
            if (table.ok()) {
              table_ = std::move(*table);
              index_source_ = IndexSource::kIndexFile;
              return Status::OK();
            }
            why = table.status().message();
          }
        }
      }
      index_rejected_ = text.ok() ? idx_path + ": " + why : why;
    }
  }
  index_source_ = IndexSource::kScan;
  std::vector<record::IndexEntry> entries;  // this shard's, while building the table
  uint64_t offset = 0;
  RecordBuffer block;
  while (offset < file_size_) {
    uint64_t len = 0;
    LIBSHARD_RETURN_IF_ERROR(ReadHeaderAt(offset, &len, &block));
    entries.push_back({offset, len + record::kFramingOverhead});
    offset += len + record::kFramingOverhead;
  }
  LIBSHARD_ASSIGN_OR_RETURN(table_, record::RecordOffsets::FromEntries(entries, file_size_));
  return Status::OK();
}

// mmap mode: pages past a shrunk file's end fault (the guard catches that),
// but the rest of the last page reads as zeros, so the size is checked too.
// A path that no longer names the mapped file (unlinked or replaced) cannot
// tell: the mapping keeps the old file alive.
Status ShardReader::CheckFileSize(uint64_t end, uint64_t offset) const {
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0) return Status::OK();
  if (static_cast<uint64_t>(st.st_dev) != file_->identity().device ||
      static_cast<uint64_t>(st.st_ino) != file_->identity().inode) {
    return Status::OK();
  }
  if (static_cast<uint64_t>(st.st_size) < end) {
    return DataLossError(At(path_, offset) + ": truncated record: the file shrank to " + std::to_string(st.st_size) +
                         " bytes while open (the record ends at byte " + std::to_string(end) + ")");
  }
  return Status::OK();
}

Status ShardReader::Read(size_t i, RecordBuffer* buf, std::string_view* out) const {
  LIBSHARD_RETURN_IF_ERROR(EnsureTable());
  if (i >= table_.size()) {
    return OutOfRangeError(path_ + ": record " + std::to_string(i) + " of " + std::to_string(table_.size()));
  }
  const record::IndexEntry e = table_.entry(i);
  if (map_ != nullptr) {
    LIBSHARD_RETURN_IF_ERROR(CheckFileSize(e.offset + e.size, e.offset));
    const bool check = !Checked(i);
    record::ReaderOptions ro;
    ro.max_record_length = options_.max_record_length;
    ro.verify_data_crc = check;
    const std::string_view all(map_, file_size_);
    record::RecordView view;
    record::FramingError error;
    // The header and (on first touch) the CRC read the mapping: guarded.
    LIBSHARD_RETURN_IF_ERROR(
        io::WithFaultGuard(*file_, [&] { record::DecodeRecordAt(all, e.offset, ro, &view, &error); }));
    if (!error.ok()) return record::FramingStatus(error, path_);
    if (view.framed_size() != e.size) {
      return DataLossError(At(path_, e.offset) + ": the index says " + std::to_string(e.size) + " bytes, the header " +
                           std::to_string(view.framed_size()) + " (stale index?)");
    }
    if (check) MarkChecked(i);
    *out = view.data;
    return Status::OK();
  }
  if (buf == nullptr) return InvalidArgumentError("ShardReader::Read: pread mode needs a RecordBuffer");
  const char* p = nullptr;
  uint64_t skip = 0;
  if (buf->owner_ == id_ && e.offset >= buf->start_ && e.offset + e.size <= buf->start_ + buf->len_) {
    p = buf->data_;  // read ahead by an earlier call
    skip = e.offset - buf->start_;
  } else {
    uint64_t start = e.offset, want = e.size;
    if (options_.access == io::AccessPattern::kSequential && want < options_.readahead_bytes) {
      want = std::min<uint64_t>(options_.readahead_bytes, file_size_ - e.offset);
      want = std::max<uint64_t>(want, e.size);
    }
    if (options_.direct_io) {
      start = e.offset / kDirectAlign * kDirectAlign;
      want = (e.offset - start + want + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
    }
    skip = e.offset - start;
    char* dst = buf->Reserve(want);
    if (dst == nullptr) return ResourceExhaustedError(path_ + ": cannot allocate " + std::to_string(want) + " bytes");
    LIBSHARD_ASSIGN_OR_RETURN(Fd fd, Descriptor());
    const int64_t n = io::PreadFull(fd.fd, dst, want, start);
    if (n < 0) return ErrnoError("read " + path_, static_cast<int>(-n));
    if (static_cast<uint64_t>(n) < skip + e.size) {
      return DataLossError(At(path_, e.offset) + ": truncated record: the file ends at byte " +
                           std::to_string(start + n) + ", the record at byte " + std::to_string(e.offset + e.size) +
                           " (shrank while open?)");
    }
    buf->owner_ = id_;
    buf->start_ = start;
    buf->len_ = static_cast<uint64_t>(n);
    p = dst;
  }
  return DecodeCopied(e, p + skip, options_.verify_crc, out);
}

Status ShardReader::ReadCopy(size_t i, RecordBuffer* buf, std::string_view* out) const {
  LIBSHARD_RETURN_IF_ERROR(EnsureTable());
  if (map_ == nullptr || i >= table_.size()) return Read(i, buf, out);  // pread copies anyway
  if (buf == nullptr) return InvalidArgumentError("ShardReader::ReadCopy needs a RecordBuffer");
  const record::IndexEntry e = table_.entry(i);
  char* dst = buf->Reserve(e.size);
  if (dst == nullptr) return ResourceExhaustedError(path_ + ": cannot allocate " + std::to_string(e.size) + " bytes");
  LIBSHARD_RETURN_IF_ERROR(io::GuardedCopy(*file_, e.offset, e.size, dst));
  // After the copy: a shrink that happened before or during it shows here.
  LIBSHARD_RETURN_IF_ERROR(CheckFileSize(e.offset + e.size, e.offset));
  const bool check = !Checked(i);
  LIBSHARD_RETURN_IF_ERROR(DecodeCopied(e, dst, check, out));
  if (check) MarkChecked(i);
  return Status::OK();
}

// Checks the framed record copied to `rec` (e.size bytes) against its entry.
Status ShardReader::DecodeCopied(const record::IndexEntry& e, const char* p, bool verify_crc,
                                 std::string_view* out) const {
  record::ReaderOptions ro;
  ro.max_record_length = options_.max_record_length;
  ro.verify_data_crc = verify_crc;
  record::RecordView view;
  const std::string_view rec(p, e.size);
  record::FramingError error;
  const record::RecordFault f = record::DecodeRecordAt(rec, 0, ro, &view, &error);
  if (f == record::RecordFault::kTruncatedData || f == record::RecordFault::kNone) {
    if (f != record::RecordFault::kNone || view.framed_size() != e.size) {
      return DataLossError(At(path_, e.offset) + ": the index says " + std::to_string(e.size) +
                           " bytes, the header disagrees (stale index?)");
    }
  } else {
    error.offset = e.offset;  // decoded from the copy: say where it is in the file
    return record::FramingStatus(error, path_);
  }
  *out = view.data;
  return Status::OK();
}

}  // namespace libshard::reader
