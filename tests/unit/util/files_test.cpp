// remove_tree (our replacement for std::filesystem::remove_all, which PyTorch's pip wheels
// break) and the atomic write.
#include "zoobench/util/files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testing/testing.h"

namespace zoobench {
namespace {

namespace fs = std::filesystem;

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

}  // namespace
}  // namespace zoobench
