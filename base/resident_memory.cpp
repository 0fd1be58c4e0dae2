#include "base/resident_memory.hpp"

#include <charconv>
#include <fstream>
#include <sstream>

namespace kvactor {
namespace {

// The kB count of the line "<key>:   123 kB", in bytes.
std::optional<int64_t> field_kb(std::string_view status, std::string_view key) {
  for (std::size_t at = 0; at < status.size();) {
    const std::size_t end = std::min(status.find('\n', at), status.size());
    std::string_view line = status.substr(at, end - at);
    at = end + 1;
    if (line.substr(0, key.size()) != key || line.size() <= key.size() || line[key.size()] != ':')
      continue;
    line.remove_prefix(key.size() + 1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    int64_t kb = 0;
    const auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), kb);
    if (ec != std::errc{} || std::string_view(p, line.data() + line.size()) != " kB")
      return std::nullopt;
    return kb * 1024;
  }
  return std::nullopt;
}

} // namespace

std::optional<resident_memory> parse_resident_memory(std::string_view status) {
  const std::optional<int64_t> total = field_kb(status, "VmRSS");
  const std::optional<int64_t> file = field_kb(status, "RssFile");
  if (!total || !file) return std::nullopt;
  return resident_memory{*total, *file};
}

std::optional<resident_memory> current_resident_memory() {
  std::ifstream in("/proc/self/status");
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return parse_resident_memory(text.str());
}

} // namespace kvactor
