#include "libshard/status.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace libshard {
namespace {

TEST(StatusTest, OkByDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_EQ(s.message(), "");
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s = DataLossError("corrupted record at byte 12");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.ToString(), "DATA_LOSS: corrupted record at byte 12");
  EXPECT_EQ(s.WithContext("a.tfrecord").message(), "a.tfrecord: corrupted record at byte 12");
  EXPECT_TRUE(Status().WithContext("x").ok());
  EXPECT_EQ(PermissionDeniedError("GET s3://b/k: HTTP 403").ToString(), "PERMISSION_DENIED: GET s3://b/k: HTTP 403");
}

TEST(StatusTest, ErrnoErrorMapsNotFound) {
  EXPECT_EQ(ErrnoError("open x", ENOENT).code(), StatusCode::kNotFound);
  EXPECT_EQ(ErrnoError("write x", ENOSPC).code(), StatusCode::kIOError);
  EXPECT_NE(ErrnoError("write x", ENOSPC).message().find("No space left"), std::string::npos);
}

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError("odd");
  return x / 2;
}

Status Quarter(int x, int* out) {
  LIBSHARD_ASSIGN_OR_RETURN(int h, Half(x));
  LIBSHARD_ASSIGN_OR_RETURN(*out, Half(h));
  return Status::OK();
}

TEST(StatusOrTest, ValueOrError) {
  EXPECT_EQ(*Half(8), 4);
  EXPECT_EQ(Half(3).status().code(), StatusCode::kInvalidArgument);
  int q = 0;
  EXPECT_TRUE(Quarter(8, &q).ok());
  EXPECT_EQ(q, 2);
  EXPECT_EQ(Quarter(6, &q).message(), "odd");
}

TEST(StatusOrTest, OkStatusBecomesInternalError) {
  StatusOr<int> s(Status::OK());
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace libshard
