#include "net/numeric_fields.hpp"

namespace kvactor::net {

std::optional<field_fault> read_numeric(const integer_field& field, simdjson::ondemand::value v,
                                        generate_request& req) {
  int64_t n;
  if (v.get_int64().get(n))
    return field_fault{true, "an integer"};
  if (auto wrong = field.check(n))
    return field_fault{false, std::move(*wrong)};
  req.*field.member = static_cast<int32_t>(n);
  return std::nullopt;
}

std::optional<field_fault> read_numeric(const number_field& field, simdjson::ondemand::value v,
                                        generate_request& req) {
  double d;
  if (v.get_double().get(d))
    return field_fault{true, "a number"};
  if (auto wrong = field.check(d))
    return field_fault{false, std::move(*wrong)};
  req.*field.member = static_cast<float>(d);
  return std::nullopt;
}

} // namespace kvactor::net
