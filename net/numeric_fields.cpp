#include "net/numeric_fields.hpp"

#include <type_traits>

namespace kvactor::net {

namespace {

// `value` as T (a fault naming `type` if it is not one), checked by the
// field's rule, then stored in its member.
template <class Field, class T>
std::optional<field_fault> read_as(const Field& field, simdjson::simdjson_result<T> value,
                                   const char* type, generate_request& req) {
  T x;
  if (std::move(value).get(x))
    return field_fault{true, type};
  if (auto wrong = field.check(x))
    return field_fault{false, std::move(*wrong)};
  using member = std::remove_reference_t<decltype(req.*field.member)>;
  req.*field.member = static_cast<member>(x);
  return std::nullopt;
}

} // namespace

std::optional<field_fault> read_numeric(const integer_field& field, simdjson::ondemand::value v,
                                        generate_request& req) {
  return read_as(field, v.get_int64(), "an integer", req);
}

std::optional<field_fault> read_numeric(const number_field& field, simdjson::ondemand::value v,
                                        generate_request& req) {
  return read_as(field, v.get_double(), "a number", req);
}

} // namespace kvactor::net
