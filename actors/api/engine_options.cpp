// The names of engine_config's modes (to_string) and reading them back from
// the tools' options (parse_option): one table per mode.

#include "kvactor/kvactor.hpp"

#include <array>
#include <iterator>
#include <span>

namespace kvactor {

namespace {

template <class T>
struct named {
  const char* name;
  T value;
};

constexpr named<preemption_mode> preemption_names[] = {
  {"swap", preemption_mode::swap}, {"recompute", preemption_mode::recompute}};
constexpr named<batching_mode> batching_names[] = {{"continuous", batching_mode::continuous},
                                                   {"static", batching_mode::fixed},
                                                   {"padded", batching_mode::padded}};
constexpr named<kv_reservation> reservation_names[] = {
  {"paged", kv_reservation::paged}, {"contiguous", kv_reservation::contiguous}};
constexpr named<number_format> format_names[] = {{"f32", number_format::f32},
                                                 {"bf16", number_format::bf16},
                                                 {"q8_0", number_format::q8_0},
                                                 {"q4_0", number_format::q4_0},
                                                 {"q4_1", number_format::q4_1},
                                                 {"q5_0", number_format::q5_0},
                                                 {"q5_1", number_format::q5_1},
                                                 {"q2_k", number_format::q2_k},
                                                 {"q3_k", number_format::q3_k},
                                                 {"q4_k", number_format::q4_k},
                                                 {"q5_k", number_format::q5_k},
                                                 {"q6_k", number_format::q6_k},
                                                 {"iq4_nl", number_format::iq4_nl},
                                                 {"iq4_xs", number_format::iq4_xs}};
// The same, after "auto" (nullopt).
constexpr auto format_or_auto_names = [] {
  std::array<named<std::optional<number_format>>, std::size(format_names) + 1> out{};
  out[0] = {"auto", std::nullopt};
  for (std::size_t i = 0; i < std::size(format_names); ++i)
    out[i + 1] = {format_names[i].name, format_names[i].value};
  return out;
}();

template <class T>
const char* name_of(std::span<const named<T>> names, T value) {
  for (const auto& n : names)
    if (n.value == value)
      return n.name;
  return "unknown";
}

template <class T>
caf::error parse(std::string_view option, std::string_view name, std::span<const named<T>> names,
                 T& out) {
  std::string choices;
  for (const auto& n : names) {
    if (name == n.name) {
      out = n.value;
      return {};
    }
    choices += (choices.empty() ? "" : " or ") + std::string(n.name);
  }
  return make_error(errc::invalid_config,
                    std::string(option) + " '" + std::string(name) + "' is not " + choices);
}

} // namespace

const char* to_string(preemption_mode x) { return name_of<preemption_mode>(preemption_names, x); }
const char* to_string(batching_mode x) { return name_of<batching_mode>(batching_names, x); }
const char* to_string(kv_reservation x) { return name_of<kv_reservation>(reservation_names, x); }
const char* to_string(number_format x) { return name_of<number_format>(format_names, x); }

caf::error parse_option(std::string_view option, std::string_view name, preemption_mode& out) {
  return parse<preemption_mode>(option, name, preemption_names, out);
}

caf::error parse_option(std::string_view option, std::string_view name, batching_mode& out) {
  return parse<batching_mode>(option, name, batching_names, out);
}

caf::error parse_option(std::string_view option, std::string_view name, kv_reservation& out) {
  return parse<kv_reservation>(option, name, reservation_names, out);
}

caf::error parse_option(std::string_view option, std::string_view name, number_format& out) {
  return parse<number_format>(option, name, format_names, out);
}

caf::error parse_option(std::string_view option, std::string_view name,
                        std::optional<number_format>& out) {
  return parse<std::optional<number_format>>(option, name, format_or_auto_names, out);
}

} // namespace kvactor
