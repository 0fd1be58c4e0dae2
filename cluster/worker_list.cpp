#include "cluster/worker_list.hpp"

#include <algorithm>
#include <charconv>

namespace kvactor::cluster {

std::string endpoint::str() const {
  return host.find(':') != std::string::npos ? "[" + host + "]:" + std::to_string(port)
                                              : host + ":" + std::to_string(port);
}

namespace {

result<endpoint> parse_entry(std::string_view entry) {
  auto bad = [&](std::string_view why) {
    return error{"--workers: '" + std::string(entry) + "' " + std::string(why)};
  };
  if (entry.empty())
    return error{"--workers: an empty entry (expected host:port,host:port)"};
  size_t colon = entry.rfind(':');
  if (colon == std::string_view::npos)
    return bad("has no port (expected host:port)");
  std::string_view host = entry.substr(0, colon);
  std::string_view port = entry.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  else if (host.find(':') != std::string_view::npos)
    return bad("is ambiguous (write an IPv6 host in brackets: [::1]:7900)");
  if (host.empty())
    return bad("has no host");
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || value == 0 ||
      value > 65535)
    return bad("has a bad port '" + std::string(port) + "' (expected 1..65535)");
  return endpoint{std::string(host), static_cast<uint16_t>(value)};
}

} // namespace

result<std::vector<endpoint>> parse_worker_list(std::string_view list) {
  std::vector<endpoint> out;
  if (list.empty())
    return error{"--workers: the list is empty (expected host:port,host:port)"};
  for (;;) {
    size_t comma = list.find(',');
    auto entry = parse_entry(list.substr(0, comma));
    if (!entry)
      return entry.error();
    if (std::ranges::find(out, *entry) != out.end())
      return error{"--workers: " + entry->str() + " is listed twice"};
    out.push_back(std::move(*entry));
    if (comma == std::string_view::npos)
      return out;
    list.remove_prefix(comma + 1);
  }
}

} // namespace kvactor::cluster
