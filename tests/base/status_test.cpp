#include "runtime/base/status.h"

#include <gtest/gtest.h>

namespace ft {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0) return FT_ERROR(ErrorCode::kInvalidArgument, "expected a positive number, got {}", v);
  return v;
}

Result<int> doubled(int v) {
  FT_ASSIGN_OR_RETURN(int x, parse_positive(v));
  return 2 * x;
}

TEST(Status, ErrorCarriesCodeMessageAndLocation) {
  Result<int> r = doubled(-3);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("got -3"), std::string::npos);
  EXPECT_NE(r.status().message().find("tests/base/status_test.cpp:"), std::string::npos);
  EXPECT_EQ(r.status().to_string().rfind("invalid_argument: ", 0), 0u);
}

TEST(Status, ValuePassesThrough) {
  Result<int> r = doubled(21);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 42);
  EXPECT_TRUE(r.status().ok());
}

TEST(Status, ContextIsPrepended) {
  Status s = FT_ERROR(ErrorCode::kIo, "disk full");
  s.with_context("while writing cache");
  EXPECT_EQ(s.message().rfind("while writing cache: disk full", 0), 0u);
  Status ok;
  ok.with_context("ignored");
  EXPECT_TRUE(ok.ok());
  EXPECT_TRUE(ok.message().empty());
}

}  // namespace
}  // namespace ft
