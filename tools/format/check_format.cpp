// kvactor-check-format: holds every C++ and CUDA source under the given
// folders to format_rules.hpp, and names each line at fault.
//
//   kvactor-check-format DIR...    exit 0: none; 1: issues (listed); 2: bad usage

#include "tools/format/format_rules.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace fs = std::filesystem;

namespace {

bool is_source(const fs::path& p) {
  static const std::string exts[] = {".cpp", ".hpp", ".h", ".inl", ".cu", ".cuh"};
  return std::find(std::begin(exts), std::end(exts), p.extension().string()) != std::end(exts);
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: kvactor-check-format DIR...\n";
    return 2;
  }
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (!fs::is_directory(argv[i], ec)) {
      std::cerr << "kvactor-check-format: '" << argv[i] << "' is not a folder\n";
      return 2;
    }
    for (const auto& e : fs::recursive_directory_iterator(argv[i]))
      if (e.is_regular_file() && is_source(e.path()))
        files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  size_t num_issues = 0;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    for (const auto& issue : kvactor::tools::check_format(text.str())) {
      std::cout << f.string() << ":" << issue.line << ": " << issue.what << "\n";
      ++num_issues;
    }
  }
  std::cout << files.size() << " files, " << num_issues << " issues\n";
  return num_issues == 0 ? 0 : 1;
}
