// zoobench_fuzz: feeds seeded mutants of a corpus to one of zoobench's file readers, each in a
// forked process of its own, and counts how each ended: read, refused with a message that names
// the file, refused vaguely, out of memory, hung, killed by a signal. Exits 1 when any mutant
// hung, ran out of memory or died by a signal (its bytes are kept under --artifacts), else 0.
//
//   zoobench_fuzz TARGET [--mutants N] [--seconds S] [--seed N] [--corpus DIR]
//                        [--hang-seconds S] [--memory-mb M] [--artifacts DIR]
//
// A fork per mutant costs about a millisecond and makes every failure observable without a
// sanitizer; `make fuzz` and CI (`make fuzz-ci`) run it under AddressSanitizer and
// UndefinedBehaviorSanitizer too (docs/reliability.md).
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <new>
#include <sstream>

#include "targets.h"

namespace fs = std::filesystem;
using namespace zoobench::fuzz;

#ifdef __SANITIZE_ADDRESS__
// The sanitized build's defaults (ASAN_OPTIONS / UBSAN_OPTIONS still override them). A report
// must end the mutant's process by a signal, which the fuzzer counts: by default ASan exits with
// status 1 and UBSan goes on, and both read as a refusal. LibTorch is not instrumented, so its
// new/delete pairs look mismatched to ASan; leaks of a forked child that _exits are not findings.
// A failed malloc returns null (ASan's own operator new still aborts on a failed allocation:
// the self-check expects a signal there).
extern "C" const char* __asan_default_options() {
  return "abort_on_error=1:detect_leaks=0:alloc_dealloc_mismatch=0:allocator_may_return_null=1";
}
extern "C" const char* __ubsan_default_options() {
  return "halt_on_error=1:abort_on_error=1:print_stacktrace=1";
}
#endif

namespace {

enum class Ending { kRead, kRefused, kRefusedVaguely, kOutOfMemory, kHang, kSignal };

const char* ending_name(Ending ending) {
  switch (ending) {
    case Ending::kRead: return "read";
    case Ending::kRefused: return "refused";
    case Ending::kRefusedVaguely: return "refused_without_naming_the_file";
    case Ending::kOutOfMemory: return "out_of_memory";
    case Ending::kHang: return "hang";
    case Ending::kSignal: return "signal";
  }
  return "?";
}

struct Settings {
  std::string target;
  std::string corpus_dir;
  std::string artifacts_dir;
  uint64_t seed = 1;
  long mutants = 10000;
  double seconds = 0;  // 0: no time bound
  unsigned hang_seconds = 30;
  long memory_mb = 1024;
};

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

long address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  long size_pages = 0;
  statm >> size_pages;
  return size_pages * ::sysconf(_SC_PAGESIZE);
}

bool looks_like_out_of_memory(const std::string& message) {
  for (const char* sign : {"bad_alloc", "can't allocate memory", "Cannot allocate memory",
                           "max_size", "out of memory"}) {
    if (message.find(sign) != std::string::npos) return true;
  }
  return false;
}

// In the child: read, then report how it ended through the exit status and a message file.
[[noreturn]] void read_in_child(const Target& target, const fs::path& mutant,
                                const fs::path& message_file, const Settings& settings) {
  ::alarm(settings.hang_seconds);  // SIGALRM's default action ends the child: a hang
  // The memory limit is on top of what the harness (LibTorch loaded; under ASan, its shadow
  // memory too, reserved at start) already maps.
  const rlim_t limit = static_cast<rlim_t>(address_space_bytes()) +
                       static_cast<rlim_t>(settings.memory_mb) * 1024 * 1024;
  struct rlimit rl{limit, limit};
  ::setrlimit(RLIMIT_AS, &rl);
  int code = 0;
  std::string message;
  try {
    target.read(mutant.string());
  } catch (const std::bad_alloc& e) {
    code = 3, message = e.what();
  } catch (const std::exception& e) {
    message = e.what();
    code = looks_like_out_of_memory(message)                               ? 3
           : message.find(target.named_in_refusals()) != std::string::npos ? 1
                                                                           : 2;
  } catch (...) {
    code = 2, message = "a non-standard exception";
  }
  if (!message.empty()) {
    std::ofstream(message_file) << message.substr(0, 400);
  }
  ::_exit(code);
}

struct Result {
  Ending ending;
  long peak_kb = 0;
  int signal = 0;
};

Result run_one(const Target& target, const fs::path& scratch, const std::string& bytes,
               const Settings& settings) {
  const fs::path mutant = scratch / target.file_name, message_file = scratch / "message.txt";
  write_bytes(mutant, bytes);
  fs::remove(message_file);
  std::cout.flush();  // else the child inherits, and prints again, what is buffered
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) read_in_child(target, mutant, message_file, settings);
  int status = 0;
  struct rusage usage {};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  Result result{Ending::kRead, usage.ru_maxrss, 0};
  if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    result.ending = result.signal == SIGALRM ? Ending::kHang : Ending::kSignal;
  } else {
    switch (WEXITSTATUS(status)) {
      case 0: result.ending = Ending::kRead; break;
      case 1: result.ending = Ending::kRefused; break;
      case 3: result.ending = Ending::kOutOfMemory; break;
      default: result.ending = Ending::kRefusedVaguely; break;
    }
  }
  return result;
}

// What a child that reads nothing peaks at: the base the mutants' peaks are measured from (a
// forked child's peak counts only the pages it touches, not the harness's resident size).
long idle_child_kb(const fs::path& scratch, const Settings& settings) {
  const Target idle{"idle", "", "idle.bin", [](const std::string&) {}, nullptr};
  return run_one(idle, scratch, "", settings).peak_kb;
}

// The harness's own check (target "self_check"): readers that crash, hang and exhaust memory
// must be counted as such, or a clean run would prove nothing.
int self_check(Settings settings) {
  settings.memory_mb = 256;
  const fs::path scratch = fs::temp_directory_path() / fmt::format("zoobench-fuzz-self-{}", ::getpid());
  fs::create_directories(scratch);
  auto reader = [](auto body) {
    return Target{"self_check", "", "input.bin", body, nullptr};
  };
  const std::vector<std::pair<Target, Ending>> cases = {
      {reader([](const std::string&) {}), Ending::kRead},
      {reader([](const std::string& path) { throw std::runtime_error("bad " + path); }),
       Ending::kRefused},
      {reader([](const std::string&) { throw std::runtime_error("stoll"); }),
       Ending::kRefusedVaguely},
      {reader([](const std::string&) { std::raise(SIGSEGV); }), Ending::kSignal},
      {reader([](const std::string&) { for (;;) ::pause(); }), Ending::kHang},
      {reader([](const std::string&) {
         std::vector<std::vector<char>> hog;
         for (;;) hog.emplace_back(64 << 20, 'x');  // 64 MB at a time, touched
       }),
#ifdef __SANITIZE_ADDRESS__
       // ASan dies when the address-space limit refuses it memory (its report on stderr says
       // so): a signal, still a failure, just not told apart.
       Ending::kSignal},
#else
       Ending::kOutOfMemory},
#endif
  };
  int wrong = 0;
  const long idle_kb = idle_child_kb(scratch, settings);
  for (const auto& [target, expected] : cases) {
    Settings these = settings;
    these.hang_seconds = expected == Ending::kHang ? 1 : 60;
    const Result result = run_one(target, scratch, "x", these);
    const Ending got = result.ending;
    // The memory hog's peak shows that the peak is measured (up to the 256 MB limit).
    std::cout << fmt::format("self_check: expected {}, got {} (peak {:.0f} MB above an idle child)\n",
                             ending_name(expected), ending_name(got),
                             (result.peak_kb - idle_kb) / 1024.0);
    wrong += got != expected;
  }
  fs::remove_all(scratch);
  return wrong == 0 ? 0 : 1;
}

// The corpus's seed files in name order (the same order everywhere: the same mutants).
std::vector<fs::path> seed_files(const fs::path& corpus_dir) {
  std::vector<fs::path> seeds;
  for (const auto& entry : fs::directory_iterator(corpus_dir)) {
    if (entry.is_regular_file()) seeds.push_back(entry.path());
  }
  std::sort(seeds.begin(), seeds.end());
  return seeds;
}

// How the mutants ended, and the worst of what they cost.
struct Tally {
  std::map<Ending, long> counts;
  std::vector<std::string> vague_examples;
  long peak_extra_kb = 0, failures = 0, done = 0;
  double slowest_s = 0;
};

// A mutant that hung, ran out of memory or died by a signal: its bytes kept under --artifacts,
// and a line naming them (so that a CI failure names the bytes to reproduce it with).
void report_failure(const Target& target, const Settings& settings, const std::string& bytes,
                    const fs::path& seed, long index, const Result& result) {
  std::string kept;
  if (!settings.artifacts_dir.empty()) {
    fs::create_directories(settings.artifacts_dir);
    const fs::path artifact = fs::absolute(settings.artifacts_dir) /
                              fmt::format("{}-seed{}-{}-{}", target.name, settings.seed, index,
                                          ending_name(result.ending));
    write_bytes(artifact, bytes);
    kept = ", kept as " + artifact.string();
  }
  std::cerr << fmt::format("mutant {} of {}: {}{}{}\n", index, seed.filename().string(),
                           ending_name(result.ending),
                           result.signal ? fmt::format(" (signal {})", result.signal) : "", kept);
}

void print_tally(const Target& target, const Settings& settings, const Tally& tally,
                 double seconds) {
  std::string ends;
  for (const auto& [ending, count] : tally.counts)
    ends += fmt::format("{}\"{}\": {}", ends.empty() ? "" : ", ", ending_name(ending), count);
  std::cout << fmt::format(
      "{{\"target\": \"{}\", \"seed\": {}, \"mutants\": {}, \"seconds\": {:.1f}, "
      "\"slowest_mutant_s\": {:.3f}, \"peak_rss_above_idle_mb\": {:.1f}, \"ends\": {{{}}}}}\n",
      target.name, settings.seed, tally.done, seconds, tally.slowest_s,
      tally.peak_extra_kb / 1024.0, ends);
  for (const auto& example : tally.vague_examples) std::cout << "  vague: " << example << "\n";
}

// Mutants of the corpus until --mutants or --seconds, each read in a process of its own.
Tally run_mutants(const Target& target, const Settings& settings, const fs::path& scratch,
                  const std::vector<fs::path>& seeds, const std::vector<std::string>& corpus) {
  const long idle_kb = idle_child_kb(scratch, settings);
  Mutator mutator(settings.seed);
  Tally tally;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (; tally.done < settings.mutants; ++tally.done) {
    if (settings.seconds > 0 && elapsed() >= settings.seconds) break;
    const std::size_t which = mutator.below(corpus.size());
    const std::string bytes = target.mutate(corpus[which], corpus, mutator);
    const double before = elapsed();
    Result result = run_one(target, scratch, bytes, settings);
    tally.slowest_s = std::max(tally.slowest_s, elapsed() - before);
    tally.counts[result.ending]++;
    tally.peak_extra_kb = std::max(tally.peak_extra_kb, result.peak_kb - idle_kb);
    if (result.ending == Ending::kRefusedVaguely && tally.vague_examples.size() < 5)
      tally.vague_examples.push_back(read_bytes(scratch / "message.txt"));
    if (result.ending == Ending::kHang || result.ending == Ending::kSignal ||
        result.ending == Ending::kOutOfMemory) {
      ++tally.failures;
      report_failure(target, settings, bytes, seeds[which], tally.done, result);
    }
  }
  return tally;
}

int fuzz(const Settings& settings) {
  if (settings.target == "self_check") return self_check(settings);
  const Target* target = find_target(settings.target);
  if (!target) {
    std::string names;
    for (const auto& t : all_targets()) names += " " + t.name;
    std::cerr << "unknown target '" << settings.target << "'; targets:" << names << "\n";
    return 2;
  }
  const fs::path corpus_dir = settings.corpus_dir.empty()
                                  ? fs::path(ZOOBENCH_FUZZ_CORPUS) / target->name
                                  : fs::path(settings.corpus_dir);
  const std::vector<fs::path> seeds = seed_files(corpus_dir);
  std::vector<std::string> corpus;
  for (const auto& seed : seeds) corpus.push_back(read_bytes(seed));
  if (corpus.empty()) {
    std::cerr << "no seed files in " << corpus_dir << "\n";
    return 2;
  }
  const fs::path scratch =
      fs::temp_directory_path() / fmt::format("zoobench-fuzz-{}-{}", target->name, ::getpid());
  fs::create_directories(scratch);

  // The seeds themselves must read: a corpus the reader refuses tests only its first check.
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    Result seed = run_one(*target, scratch, corpus[i], settings);
    if (seed.ending != Ending::kRead) {
      std::cerr << "seed " << seeds[i] << " does not read (" << ending_name(seed.ending)
                << "): " << read_bytes(scratch / "message.txt") << "\n";
      fs::remove_all(scratch);
      return 2;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const Tally tally = run_mutants(*target, settings, scratch, seeds, corpus);
  fs::remove_all(scratch);
  print_tally(*target, settings, tally,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return tally.failures > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Settings settings;
  CLI::App app{"zoobench_fuzz: seeded mutants of a corpus through one of zoobench's readers"};
  std::string targets_help = "one of:";
  for (const auto& t : all_targets()) targets_help += " " + t.name + " (" + t.what + ");";
  bool list = false;
  app.add_flag("--list", list, "print the targets' names, one a line, and exit");
  app.add_option("target", settings.target, targets_help);
  app.add_option("--mutants", settings.mutants, "how many mutants")->capture_default_str();
  app.add_option("--seconds", settings.seconds, "stop after this long (0: no bound)");
  app.add_option("--seed", settings.seed, "the mutator's seed")->capture_default_str();
  app.add_option("--corpus", settings.corpus_dir, "seed files (default: fuzz/corpus/TARGET)");
  app.add_option("--hang-seconds", settings.hang_seconds, "a mutant slower than this hangs")
      ->capture_default_str();
  app.add_option("--memory-mb", settings.memory_mb, "memory a mutant may take beyond the harness's")
      ->capture_default_str();
  app.add_option("--artifacts", settings.artifacts_dir, "keep failing mutants here");
  CLI11_PARSE(app, argc, argv);
  if (list) {
    for (const auto& t : all_targets()) std::cout << t.name << "\n";
    return 0;
  }
  if (settings.target.empty()) {
    std::cerr << "name a target (zoobench_fuzz --list)\n";
    return 2;
  }
  try {
    return fuzz(settings);
  } catch (const std::exception& e) {
    std::cerr << "zoobench_fuzz: " << e.what() << "\n";
    return 2;
  }
}
