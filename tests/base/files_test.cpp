#include "runtime/base/files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace ft {
namespace {

TEST(Files, AtomicWriteThenRead) {
  auto dir = make_temp_dir("ft-files-test-");
  ASSERT_TRUE(dir.ok()) << dir.status().to_string();
  std::string path = *dir + "/a/b/data.bin";
  ASSERT_TRUE(make_dirs(*dir + "/a/b").ok());
  std::string payload("abc\0def", 7);
  ASSERT_TRUE(write_file_atomic(path, payload.data(), payload.size()).ok());
  auto back = read_file(path);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, payload);
  EXPECT_TRUE(remove_tree(*dir).ok());
}

TEST(Files, MissingFileIsIoError) {
  auto r = read_file("/nonexistent/ft/file");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kIo);
  EXPECT_NE(r.status().message().find("/nonexistent/ft/file"), std::string::npos);
}

TEST(Files, UnwritableDirectoryIsAnError) {
  if (::geteuid() == 0) {
    // root ignores permission bits; a path under a regular file fails for everyone.
    auto dir = make_temp_dir("ft-files-test-");
    ASSERT_TRUE(dir.ok());
    std::string file = *dir + "/plain";
    ASSERT_TRUE(write_file_atomic(file, "x", 1).ok());
    EXPECT_FALSE(write_file_atomic(file + "/child", "x", 1).ok());
    EXPECT_FALSE(make_dirs(file + "/sub").ok());
    EXPECT_TRUE(remove_tree(*dir).ok());
    return;
  }
  auto dir = make_temp_dir("ft-files-test-");
  ASSERT_TRUE(dir.ok());
  ::chmod(dir->c_str(), 0500);
  EXPECT_FALSE(write_file_atomic(*dir + "/x", "x", 1).ok());
  ::chmod(dir->c_str(), 0700);
  EXPECT_TRUE(remove_tree(*dir).ok());
}

}  // namespace
}  // namespace ft
