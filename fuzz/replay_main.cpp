// retcon fuzzing: a plain main for a fuzz target, without libFuzzer. It runs every file named on
// the command line, or every file in a named directory (sorted, not recursive), through
// LLVMFuzzerTestOneInput once. ctest runs each target's committed corpus this way in every
// build (gcc included), so an input that once crashed stays a regression test.
//   fuzz_<target>_replay fuzz/corpus/<target>/          replay a corpus
//   fuzz_<target>_replay crash-1234                      replay one input
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool run_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.string().c_str());
    return false;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Copied into an exactly sized heap buffer, as libFuzzer does, so ASan catches over-reads.
  std::vector<uint8_t> exact(bytes.begin(), bytes.end());
  std::fprintf(stderr, "running %s (%zu bytes)\n", path.string().c_str(), exact.size());
  static const uint8_t empty = 0;  // libFuzzer never passes null, even for no bytes
  LLVMFuzzerTestOneInput(exact.empty() ? &empty : exact.data(), exact.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <corpus directory or input file>...\n", argv[0]);
    return 2;
  }
  size_t runs = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    std::error_code error;
    if (std::filesystem::is_directory(arg, error)) {
      std::vector<std::filesystem::path> files;
      for (const auto& entry : std::filesystem::directory_iterator(arg))
        if (entry.is_regular_file()) files.push_back(entry.path());
      std::sort(files.begin(), files.end());
      if (files.empty()) {
        std::fprintf(stderr, "%s: empty corpus\n", arg.string().c_str());
        ok = false;
      }
      for (const auto& f : files) {
        ok = run_file(f) && ok;
        ++runs;
      }
    } else {
      ok = run_file(arg) && ok;
      ++runs;
    }
  }
  if (ok) std::fprintf(stderr, "%zu inputs replayed without a failure\n", runs);
  else std::fprintf(stderr, "failed: a corpus was missing, empty or unreadable\n");
  return ok ? 0 : 1;
}
