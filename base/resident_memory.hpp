#pragma once
// How much of this process is in memory: Linux's VmRSS, and the part of it
// that is pages of mapped files (RssFile), from /proc/self/status. What
// kvactor-serve reports once the model is loaded.

#include <cstdint>
#include <optional>
#include <string_view>

namespace kvactor {

struct resident_memory {
  int64_t bytes = 0;      // VmRSS
  int64_t file_bytes = 0; // RssFile: mapped files' pages
};

// From the text of a /proc/PID/status file; nullopt when a field is missing.
std::optional<resident_memory> parse_resident_memory(std::string_view status);

// This process's, now; nullopt where /proc is not there.
std::optional<resident_memory> current_resident_memory();

} // namespace kvactor
