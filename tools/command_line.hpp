#pragma once
// command_line: a tool's options read through CAF's configuration (command
// line, and an ini file where the tool takes one), with CAF's parser errors
// said in words: an unknown option and the nearest known one, a malformed
// value and the type its option takes. Used by every tool whose options are
// CAF's (kvactor-serve, kvactor-stress, kvactor-bench).

#include <caf/actor_system_config.hpp>

#include <string>
#include <string_view>

namespace kvactor::tools {

// The options a configuration declares (CAF keeps them protected).
const caf::config_option_set& options_of(const caf::actor_system_config& cfg);

// Edit distance (insertions, deletions, substitutions and swaps of two
// neighbours count one each).
size_t edit_distance(std::string_view a, std::string_view b);

// The known option nearest to `name` (given without dashes), as given on a
// command line ("port", "openssl.cafile"); empty when none is near.
std::string nearest_option(const caf::config_option_set& options, std::string_view name);

// What is wrong, for an error of caf::actor_system_config::parse:
//   unknown option --prot=5 (did you mean --port?); --help lists the options
//   malformed value for --port: "abc" is not an integer (int32)
// errors CAF does not locate as CAF renders them.
std::string explain_parse_error(const caf::error& err, const caf::config_option_set& options,
                                std::string_view ini_file = {});

// Parses the command line (and `ini_file`, when given) into cfg; on an error
// prints "tool: what is wrong" to stderr and returns false (exit with 2).
bool parse_command_line(caf::actor_system_config& cfg, int argc, char** argv, std::string_view tool,
                        const char* ini_file = nullptr);

} // namespace kvactor::tools
