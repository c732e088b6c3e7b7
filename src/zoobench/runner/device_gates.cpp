#include "zoobench/runner/device_gates.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "zoobench/runner/child_device.h"
#include "zoobench/util/errors.h"

namespace zoobench {
namespace fs = std::filesystem;

namespace {

// A file name's part from a GPU's name (an index, "GPU-<uuid>", "MIG-<uuid>/1/2" on older
// drivers): what is not a letter, a digit, '.', '_' or '-' becomes '_'.
std::string file_name_part(std::string name) {
  for (char& c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '_' || c == '-';
    if (!plain) c = '_';
  }
  return name;
}

// Made open to every user of the machine and sticky, as /tmp is: another user's run on the
// same GPU takes the same gate (a lock file it cannot write it opens read-only: flock needs no
// more).
void make_machine_gate_folder(const std::string& folder) {
  std::error_code error;
  if (fs::is_directory(folder, error)) return;
  if (!fs::create_directories(folder, error) && !fs::is_directory(folder)) {
    throw UsageError("cannot create " + folder + ", the folder of this machine's GPU gates (" +
                     error.message() +
                     "); set ZOOBENCH_DEVICE_GATE_DIR to a folder that every zoobench run on "
                     "this machine can write");
  }
  ::chmod(folder.c_str(), 01777);  // best effort: a folder another user made stays theirs
}

std::string machine_gate_folder() {
  const char* chosen = std::getenv("ZOOBENCH_DEVICE_GATE_DIR");
  return chosen && *chosen ? chosen : "/tmp/zoobench-device-gates";
}

// A gate file this user can neither find nor create (a folder another user made without
// letting others write) is refused before any model starts, saying what to do.
void check_can_take(const std::string& folder, const std::string& file) {
  if (fs::exists(file) || ::access(folder.c_str(), W_OK) == 0) return;
  throw UsageError(folder + ", the folder of this machine's GPU gates, does not let this user " +
                   "create " + fs::path(file).filename().string() +
                   "; make it writable by every user (chmod 1777, as /tmp) or set "
                   "ZOOBENCH_DEVICE_GATE_DIR to a folder that every zoobench run on this "
                   "machine can write");
}

}  // namespace

std::string device_gate_path(const std::string& device, const std::string& run_folder,
                             const char* cuda_visible_devices) {
  if (device.rfind("cuda", 0) == 0) {
    const std::string folder = machine_gate_folder();
    make_machine_gate_folder(folder);
    // "cuda" is torch's cuda:0.
    const std::string gpu =
        file_name_part(visible_gpu(device == "cuda" ? "cuda:0" : device, cuda_visible_devices));
    const std::string file = (fs::path(folder) / ("gpu-" + gpu + ".lock")).string();
    check_can_take(folder, file);
    return file;
  }
  std::string part = device;
  for (char& c : part) c = c == ':' ? '_' : c;
  return (fs::path(run_folder) / (".device-gate-" + part + ".lock")).string();
}

}  // namespace zoobench
