// HttpObjectStore::GetResumable: the one resumable download, shared by the
// verified whole-object and parallel-part downloads.
#include "libshard/crc32c.h"
#include "store/http/http_object_store.h"
#include "store/http/http_text.h"

namespace libshard::store {

// Bytes [begin, end) of an object of `size` bytes into `sink`: the one
// resumable download. `whole`: the whole object (begin 0, end `size`),
// asked for without a Range first; else a ranged part. A try cut midway
// resumes where it stopped (Range from the first byte not yet delivered,
// If-Match the first answer's ETag, so that a replaced object is never
// spliced onto the old one's start), with a fresh retry budget when it
// moved forward. *crc: the CRC-32C of those bytes; *etag: the first
// answer's. DataLoss when the server says the object has another size
// (Content-Range, or a whole answer's length), or sends more than asked.
Status HttpObjectStore::GetResumable(const std::string& key, uint64_t size, uint64_t begin, uint64_t end, bool whole,
                                     const PositionalSink& sink, uint32_t* crc, std::string* etag) {
  const std::string url = UrlOf(key);
  uint64_t delivered = begin;
  *crc = 0;
  int attempt = 0;
  do {
    const uint64_t start = delivered;
    std::vector<std::string> headers;
    if (!whole || start > 0) {
      headers.push_back("Range: bytes=" + std::to_string(start) + "-" + (whole ? "" : std::to_string(end - 1)));
      if (!etag->empty()) headers.push_back("If-Match: \"" + *etag + "\"");
    }
    HttpResponse r;
    bool first = true, ranged = false;
    uint64_t skip = 0;  // a whole answer to a ranged request: bytes before `start`
    bool enough = false;
    auto build = [&](HttpRequest* q) {
      q->on_body = [&](std::string_view bytes) -> Status {
        if (first) {
          first = false;
          // "bytes START-END/TOTAL": the whole object must be the size the
          // manifest gives it.
          auto it = r.headers.find("content-range");
          ranged = it != r.headers.end();
          if (!ranged) {
            skip = start;  // the server ignored the range (or none was asked)
          } else {
            const size_t slash = it->second.rfind('/');
            const std::string total = slash == std::string::npos ? "*" : it->second.substr(slash + 1);
            if (total != "*" && total != std::to_string(size)) {
              return DataLossError("GET " + url + ": the object has " + total + " bytes, the manifest " +
                                   std::to_string(size));
            }
          }
        }
        if (skip > 0) {
          const size_t k = static_cast<size_t>(std::min<uint64_t>(skip, bytes.size()));
          skip -= k;
          bytes.remove_prefix(k);
        }
        if (delivered + bytes.size() > end) {
          if (ranged && !whole) {
            return DataLossError("GET " + url + ": the server sent more than range " + std::to_string(start) + "-" +
                                 std::to_string(end - 1));
          }
          if (end == size) {
            return DataLossError("GET " + url + ": the object is larger than the " + std::to_string(size) +
                                 " bytes the manifest gives it");
          }
          bytes = bytes.substr(0, static_cast<size_t>(end - delivered));
          enough = true;  // the rest of a whole-object answer is not needed
        }
        *crc = crc32c::Extend(*crc, bytes.data(), bytes.size());
        LIBSHARD_RETURN_IF_ERROR(sink(delivered, bytes));
        delivered += bytes.size();
        return enough ? FailedPreconditionError("enough") : Status::OK();
      };
    };
    Status s = CallOnce("GET", key, {}, headers, build, &r);
    if (etag->empty() && r.headers.count("etag")) *etag = Unquote(r.headers["etag"]);
    if (enough) break;
    if (!s.ok()) return s;  // the sink's error, or DataLoss
    const bool progressed = delivered > start;
    if (progressed) attempt = 0;  // a cut transfer that moved forward resumes with a fresh budget
    if (r.transport_error.empty() && r.status >= 200 && r.status < 300) {
      if (delivered == end) break;
      if (!ranged) {  // a whole answer: the object's own size
        return DataLossError("GET " + url + ": the object has " + std::to_string(delivered) + " bytes, the manifest " +
                             std::to_string(size));
      }
      // A ranged answer shorter than asked that the transport did not see as cut.
      if (++attempt >= retry_.max_attempts) {
        return IOError("GET " + url + ": range " + std::to_string(start) + "-" + std::to_string(end - 1) +
                       " came short (after " + std::to_string(attempt) + " attempts)");
      }
      WaitBeforeRetry(attempt);
      continue;
    }
    // Every byte asked for came, though the answer promised more (a
    // Content-Length past the end): the CRC decides.
    if (delivered == end && progressed) break;
    if (r.transport_error.empty() && r.status == 412) {
      return DataLossError("GET " + url + ": the object changed while it was being downloaded");
    }
    if (r.transport_error.empty() && r.status == 416 && start > begin) {  // resumed past the object's end
      return DataLossError("GET " + url + ": the object ends before byte " + std::to_string(start) +
                           ", the manifest gives it " + std::to_string(size) + " bytes");
    }
    if (Status e = RetryOrFail("GET", key, r, ++attempt); !e.ok()) return e;
  } while (delivered < end);
  return Status::OK();
}

}  // namespace libshard::store
