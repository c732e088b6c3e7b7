// remove_tree (our replacement for std::filesystem::remove_all, which PyTorch's pip wheels
// break) and the atomic write, including its failures (a full disk, a rename that fails).
#include "zoobench/util/files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "testing/testing.h"

namespace zoobench {
namespace {

namespace fs = std::filesystem;

std::string read_error(const std::string& path, std::uintmax_t limit = kReadLimitBytes) {
  try {
    read_text_file(path, limit);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// A FIFO in a manifest's place blocked a run forever, /dev/zero behind a link read gigabytes:
// every whole-file read refuses what is not a regular file, at once, and what is too large.
TEST(ReadTextFile, OnlyRegularFilesWithinTheLimit) {
  testing::ScratchDir dir;
  std::ofstream(dir.file("small.json")) << "{}";
  EXPECT_EQ(read_text_file(dir.file("small.json")), "{}");
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  EXPECT_THAT(read_error(dir.file("fifo")), ::testing::HasSubstr("not a regular file"));
  fs::create_symlink("/dev/zero", dir.file("zero"));
  EXPECT_THAT(read_error(dir.file("zero")), ::testing::HasSubstr("not a regular file"));
  EXPECT_THAT(read_error(dir.path()), ::testing::HasSubstr("not a regular file"));
  std::ofstream(dir.file("big.json")) << std::string(1000, ' ');
  EXPECT_THAT(read_error(dir.file("big.json"), 999), ::testing::HasSubstr("1000 bytes, more than the 999"));
  EXPECT_EQ(read_text_file(dir.file("big.json"), 1000).size(), 1000u);
  EXPECT_THAT(read_error(dir.file("missing")), ::testing::HasSubstr("No such file"));
}

TEST(RemoveTree, RemovesNestedFilesAndFoldersButNotWhatSymlinksPointTo) {
  testing::ScratchDir dir;
  const fs::path root = fs::path(dir.path()) / "tree";
  const fs::path outside = fs::path(dir.path()) / "outside";
  fs::create_directories(root / "a" / "b" / "c");
  fs::create_directories(outside);
  std::ofstream(root / "top.txt") << "1";
  std::ofstream(root / "a" / "b" / "c" / "deep.txt") << "2";
  std::ofstream(outside / "kept.txt") << "3";
  fs::create_directory_symlink(outside, root / "a" / "link");

  std::string error;
  EXPECT_TRUE(remove_tree(root.string(), &error)) << error;
  EXPECT_FALSE(fs::exists(fs::symlink_status(root)));
  EXPECT_TRUE(fs::exists(outside / "kept.txt")) << "followed a symlink out of the tree";
}

TEST(RemoveTree, MissingPathIsFineAndAFileIsRemoved) {
  testing::ScratchDir dir;
  EXPECT_TRUE(remove_tree(dir.file("never-created")));
  std::ofstream(dir.file("single")) << "x";
  EXPECT_TRUE(remove_tree(dir.file("single")));
  EXPECT_FALSE(fs::exists(dir.file("single")));
}

TEST(RemoveTree, FailureSaysWhatStayed) {
  // /proc refuses unlink even to root.
  std::string error;
  EXPECT_FALSE(remove_tree("/proc/version", &error));
  EXPECT_NE(error.find("cannot remove /proc/version"), std::string::npos) << error;
  EXPECT_TRUE(fs::exists("/proc/version"));
}

TEST(WriteFileAtomically, CreatesParentsAndReplacesWholeFiles) {
  testing::ScratchDir dir;
  const std::string path = dir.file("sub/folder/out.txt");
  write_file_atomically(path, "first version, longer");
  write_file_atomically(path, "second");
  EXPECT_EQ(read_text_file(path), "second");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.file("sub/folder")), fs::directory_iterator{}), 1)
      << "a temporary file was left behind";
}

// The message of the std::runtime_error that writing `contents` to `path` throws; fails the
// test when none is thrown.
std::string write_error(const std::string& path, const std::string& contents) {
  try {
    write_file_atomically(path, contents);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "writing " << path << " did not throw";
  return "";
}

// A full disk (simulated by a file size limit, so no root or tmpfs is needed: a write beyond it
// fails with EFBIG as one on a full disk fails with ENOSPC) used to leave the part written in a
// `.tmp<pid>` file that nothing removes; the file being replaced must stay as it was.
TEST(WriteFileAtomically, AFailedWriteRemovesItsTemporaryFileAndKeepsTheOldOne) {
  testing::ScratchDir dir;
  const std::string path = dir.file("out.txt");
  write_file_atomically(path, "old");
  std::string message;
  {
    testing::FileSizeLimit limit(4096);
    message = write_error(path, std::string(1 << 20, 'x'));
  }
  EXPECT_NE(message.find("cannot write " + path + ": File too large"), std::string::npos)
      << message;
  EXPECT_EQ(testing::temporary_files(dir.path()), std::vector<std::string>{});
  EXPECT_EQ(read_text_file(path), "old");
}

// The rename fails when a folder stands where the file should go: the written temporary file
// used to stay beside it.
TEST(WriteFileAtomically, AFailedRenameRemovesItsTemporaryFile) {
  testing::ScratchDir dir;
  const std::string path = dir.file("out.txt");
  fs::create_directories(fs::path(path) / "inside");
  const std::string message = write_error(path, "contents");
  EXPECT_NE(message.find("cannot write " + path + ": Is a directory"), std::string::npos)
      << message;
  EXPECT_EQ(testing::temporary_files(dir.path()), std::vector<std::string>{});
  EXPECT_TRUE(fs::is_directory(fs::path(path) / "inside"));
}

}  // namespace
}  // namespace zoobench
