// The advisory lock files zoobench's processes agree through (the device gate, a zoo's locks):
// opened the one way, taken through interrupted waits.
#pragma once

#include <string>

namespace zoobench {

// Opens (creating) `path` for flock: never through a symbolic link, closed in exec'd children
// (a child takes its own hold). Throws std::runtime_error naming the file.
int open_lock_file(const std::string& path);

// flock(fd, operation), waiting through signals. False only when a non-blocking take
// (LOCK_NB) finds the lock held; any other failure is a broken lock file: std::runtime_error
// naming it.
bool take_lock(int fd, int operation, const std::string& path);

}  // namespace zoobench
