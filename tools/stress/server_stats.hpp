#pragma once
// A line-protocol server's stats, read into the end state the stress checks
// compare (pools idle, invariants sound).

#include "tools/stress/checker.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvactor::stress {

// Parses a stats line into an end state; nullopt if it is not one.
std::optional<end_state> parse_stats(std::string_view line);

// Asks a line-protocol server for stats until it is idle (a few seconds at
// most); nullopt if it does not answer.
std::optional<end_state> stats_when_idle(const std::string& host, uint16_t port);

} // namespace kvactor::stress
