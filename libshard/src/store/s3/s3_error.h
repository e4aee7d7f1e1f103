// An S3 error document (<Error><Code>SlowDown</Code><Message>...</Message>),
// read from a failed answer's body: the error code the retry decision reads
// and the words the message carries. Web servers in front of a bucket
// (https://BUCKET.s3.amazonaws.com/...) send the same documents.
//
// Thread-safety: pure.
#ifndef LIBSHARD_SRC_STORE_S3_S3_ERROR_H_
#define LIBSHARD_SRC_STORE_S3_S3_ERROR_H_

#include <string>

#include "libshard/store/http_transport.h"

namespace libshard::store {

// Error/Code of the body, else the reason phrase of the status ("NotFound").
std::string S3ErrorCode(const HttpResponse& r);

// Error/Message of the body ("" when there is none).
std::string S3ErrorMessage(const HttpResponse& r);

// A 2xx answer to a POST whose body is an error document all the same
// (CompleteMultipartUpload may answer 200 with one).
bool S3ErrorIn2xx(const std::string& method, const HttpResponse& r);

}  // namespace libshard::store

#endif  // LIBSHARD_SRC_STORE_S3_S3_ERROR_H_
