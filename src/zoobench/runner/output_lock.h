// One zoobench run per output folder at a time: two runs appending to the same CSVs (a
// --resume started while the first run, or an orphan of it, is still going) would interleave
// rows and timings.
#pragma once

#include <string>

namespace zoobench {

class OutputLock {
 public:
  // Takes the lock of `directory` (created if missing): `<directory>/.zoobench.lock`, holding the
  // owner's pid. Throws UsageError naming that pid when another run holds it.
  static OutputLock acquire(const std::string& directory);

  OutputLock(OutputLock&& other) noexcept;
  OutputLock& operator=(OutputLock&&) = delete;
  OutputLock(const OutputLock&) = delete;
  ~OutputLock();

 private:
  explicit OutputLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace zoobench
