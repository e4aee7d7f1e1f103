// ShardReader: random access to the records of one plain TFRecord shard, for
// training. Records are found through the shard's DALI `.idx` when it is
// present and consistent with the file (else the framing is scanned once at
// open), and are read either from a read-only memory mapping (zero-copy) or
// with pread(2) into a caller's reusable buffer (optionally O_DIRECT).
//
//   ShardReaderOptions opts;                 // mmap, CRC checked on first touch
//   LIBSHARD_ASSIGN_OR_RETURN(auto shard, ShardReader::Open("a.tfrecord", opts));
//   RecordBuffer buf;                        // one per thread; unused with mmap
//   std::string_view rec;
//   for (size_t i = 0; i < shard->size(); ++i) {
//     LIBSHARD_RETURN_IF_ERROR(shard->Read(i, &buf, &rec));
//     Use(rec);
//   }
//
// Which I/O mode (docs/reader.md says more):
//   kMmap   the default. Views point into the mapping: no copy, no allocation.
//           Best when the shards fit in the page cache or are read many times.
//   kPread  copies each record into a RecordBuffer. Pick it for datasets much
//           larger than memory (the mapping's pages then churn the page cache
//           and the process's page tables), for network file systems, and for
//           files that other processes may shrink. With `direct_io` the reads
//           bypass the page cache (O_DIRECT), so one pass over a huge dataset
//           does not evict everything else; records are then read in 4 KiB
//           aligned blocks.
//
// Damage: every error is DataLoss (or IOError) naming the file and the byte
// offset of the record, never a crash. A file that shrinks while open is
// DataLoss for the reads that reach past its new end, in both modes: in mmap
// mode every access of the reader itself to the mapping (headers, CRCs,
// ReadCopy's copy) runs under the fault guard (io/fault_guard.h), and the
// file's size is re-checked. A view from Read() in mmap mode points into the
// mapping, so touching it after the file shrank is the caller's risk (SIGBUS);
// ReadCopy() copies the record under the guard and is always safe.
//
// Files: only regular files are opened (a FIFO or device is refused, never
// waited on). mmap mode holds no open descriptor after Open(); pread mode
// holds one per reader, or shares a capped set (options.open_files).
//
// CRCs: the length CRC is checked whenever a header is decoded. With
// `verify_crc` the data CRC is checked the first time each record is read in
// mmap mode (later reads of the same record skip it), and on every read in
// pread mode (the bytes are fresh each time).
//
// Lifetime: a view from Read() is valid while the reader lives (mmap) or until
// the buffer is used for another Read() or destroyed (pread).
// Opening with the record count known (a manifest's) defers the record table
// to the first call that needs it (Read, ReadCopy, entry, index_source):
// opening a set of 10^4 shards then reads no `.idx` at all, and a process
// reads the tables only of the shards it touches (issue 44). A table whose
// count is not the one given is DataLoss on every read, naming both counts.
//
// Thread-safety: Open() results are immutable apart from the deferred table
// (built once, under std::call_once) and the first-touch CRC flags
// (atomics): Read() may be called from many threads at once, each with its
// own RecordBuffer.
#ifndef LIBSHARD_READER_SHARD_READER_H_
#define LIBSHARD_READER_SHARD_READER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/io/mapped_file.h"
#include "libshard/io/open_file.h"
#include "libshard/io/open_file_cache.h"
#include "libshard/record/format.h"
#include "libshard/record/index.h"
#include "libshard/record/record_offsets.h"
#include "libshard/status.h"

namespace libshard::reader {

enum class IoMode { kMmap, kPread };
// "mmap" / "pread".
const char* IoModeName(IoMode mode);
StatusOr<IoMode> ParseIoMode(std::string_view name);

struct ShardReaderOptions {
  // Where record bytes come from. Default: kMmap.
  IoMode io = IoMode::kMmap;
  // kPread only: open with O_DIRECT (bypass the page cache). Falls back to
  // buffered reads when the file system refuses O_DIRECT. Default: false.
  bool direct_io = false;
  // Check each record's data CRC (see the file comment for when). Default: true.
  bool verify_crc = true;
  // Use `<shard>.idx` when present and consistent. Default: true.
  bool use_index = true;
  // How records will be visited (io/mapped_file.h's one access vocabulary),
  // passed to madvise (mmap) or posix_fadvise (pread). Default: kNormal.
  io::AccessPattern access = io::AccessPattern::kNormal;
  // Records claiming more bytes are corrupt. Default: kDefaultMaxRecordLength (1 GiB).
  uint64_t max_record_length = record::kDefaultMaxRecordLength;
  // kPread with access = kSequential: read at least this many bytes per call,
  // so the records that follow come along and later Read()s of them are
  // served from the RecordBuffer without a syscall (bytes read ahead are
  // served as they were when read). Ignored for other access hints (a random
  // read would waste the rest). Default: 256 KiB (stays in L2 for the CRC).
  size_t readahead_bytes = size_t{256} << 10;
  // kPread: keep the descriptor in this shared cache instead of holding it,
  // so many readers together hold at most its capacity open (an evicted
  // file is reopened on its next read, and must still be the same file).
  // Dataset sets one up (DatasetOptions::max_open_files). Null: the reader
  // keeps its own descriptor open. Default: null.
  std::shared_ptr<io::OpenFileCache> open_files;
};

// A reusable buffer for kPread reads (aligned for O_DIRECT). Not shared
// between threads. Empty and unused in kMmap mode.
class RecordBuffer {
 public:
  RecordBuffer() = default;
  ~RecordBuffer();
  RecordBuffer(const RecordBuffer&) = delete;
  RecordBuffer& operator=(const RecordBuffer&) = delete;
  // Makes room for `n` bytes (contents not kept); returns the storage.
  char* Reserve(size_t n);
  size_t capacity() const { return cap_; }

 private:
  friend class ShardReader;
  char* data_ = nullptr;
  size_t cap_ = 0;
  // Which bytes of which reader's file the buffer holds (readahead); 0: none.
  uint64_t owner_ = 0;
  uint64_t start_ = 0;
  uint64_t len_ = 0;
};

// How the record table was obtained.
enum class IndexSource { kIndexFile, kScan };

class ShardReader {
 public:
  // Opens `path` and builds the record table. Errors: NotFound/IOError for the
  // file, DataLoss (file and offset) when a scan meets a truncated or corrupt
  // record, InvalidArgument for bad options or a compressed shard.
  static StatusOr<std::unique_ptr<ShardReader>> Open(const std::string& path, const ShardReaderOptions& options = {});
  // Opens `path` whose record count is known to be `records`: the file is
  // opened (or mapped) now, the table built on first need (see above). The
  // errors of building it come from the calls that need it.
  static StatusOr<std::unique_ptr<ShardReader>> OpenWithCount(const std::string& path, uint64_t records,
                                                              const ShardReaderOptions& options = {});
  ~ShardReader();
  ShardReader(const ShardReader&) = delete;
  ShardReader& operator=(const ShardReader&) = delete;

  // Number of records (the count given to OpenWithCount, before the table).
  size_t size() const { return records_; }
  const std::string& path() const { return path_; }
  // The file's size when opened.
  uint64_t file_size() const { return file_size_; }
  // The table, built now if deferred: OK, or why it could not be.
  Status EnsureTable() const;
  IndexSource index_source() const {
    EnsureTable().IgnoreError();
    return index_source_;
  }
  // Why an existing .idx was not used ("" when it was, or there was none).
  const std::string& index_rejected_reason() const {
    EnsureTable().IgnoreError();
    return index_rejected_;
  }
  // Record i (< size()): its offset and framed size ({0, 0} when the table
  // could not be built: EnsureTable() says why).
  record::IndexEntry entry(size_t i) const {
    return EnsureTable().ok() && i < table_.size() ? table_.entry(i) : record::IndexEntry{};
  }
  const ShardReaderOptions& options() const { return options_; }

  // Record `i`'s payload into *out (see Lifetime above). `buf` may be null in
  // kMmap mode. Errors: OutOfRange for i >= size(); DataLoss naming the file
  // and offset (truncated file, bad CRC, index disagreeing with the framing);
  // IOError for a failed read.
  Status Read(size_t i, RecordBuffer* buf, std::string_view* out) const;

  // Like Read(), but in mmap mode the record is copied into `buf` under the
  // fault guard, so the view stays valid (until `buf` is reused) even if the
  // file shrinks: a shrunk file is DataLoss for this read, never SIGBUS.
  // `buf` is required in both modes. pread mode: same as Read().
  Status ReadCopy(size_t i, RecordBuffer* buf, std::string_view* out) const;

 private:
  ShardReader() = default;
  static StatusOr<std::unique_ptr<ShardReader>> OpenFile(const std::string& path, const ShardReaderOptions& options);
  // Builds table_ (and checked_); then checks its size against records_
  // when the count was given.
  Status BuildTable() const;
  Status BuildTableOnce() const;
  // Checks the header at `offset`; in pread mode reads through `block`.
  Status ReadHeaderAt(uint64_t offset, uint64_t* length, RecordBuffer* block) const;
  Status CheckFileSize(uint64_t end, uint64_t offset) const;
  // kPread: the descriptor to read from, held open while `held` lives.
  struct Fd {
    int fd;
    std::shared_ptr<const io::ScopedFd> held;
  };
  StatusOr<Fd> Descriptor() const;
  Status DecodeCopied(const record::IndexEntry& e, const char* rec, bool verify_crc, std::string_view* out) const;

  std::string path_;
  ShardReaderOptions options_;
  uint64_t id_ = 0;                       // unique per reader, names a RecordBuffer's contents
  io::ScopedFd fd_;                       // kPread without open_files
  io::FileIdentity identity_;             // the file as opened
  int open_flags_ = 0;                    // extra flags for reopening (O_DIRECT)
  std::unique_ptr<io::MappedFile> file_;  // kMmap
  const char* map_ = nullptr;             // file_'s bytes; null when empty or kPread
  uint64_t file_size_ = 0;
  uint64_t records_ = 0;  // given, or the table's size once built
  bool count_given_ = false;
  // The table and what is known of its making: written once, inside
  // table_once_ (Open builds it before anyone else can see the reader).
  mutable std::once_flag table_once_;
  mutable Status table_status_;
  mutable IndexSource index_source_ = IndexSource::kScan;
  mutable std::string index_rejected_;
  // Where each record starts: 4 bytes a record (record/record_offsets.h),
  // the one thing a reader holds per record.
  mutable record::RecordOffsets table_;
  // Bit i set once record i's data CRC has been checked (kMmap + verify_crc):
  // 1/8 byte a record.
  mutable std::unique_ptr<std::atomic<uint64_t>[]> checked_;
  bool Checked(size_t i) const {
    return checked_ == nullptr || (checked_[i / 64].load(std::memory_order_relaxed) >> (i % 64) & 1) != 0;
  }
  void MarkChecked(size_t i) const { checked_[i / 64].fetch_or(uint64_t{1} << (i % 64), std::memory_order_relaxed); }
};

}  // namespace libshard::reader

#endif  // LIBSHARD_READER_SHARD_READER_H_
