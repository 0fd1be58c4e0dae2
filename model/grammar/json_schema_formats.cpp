#include "model/grammar/json_schema_formats.hpp"

#include <vector>

namespace kvactor::model {

namespace {

// The byte classes and sequences the formats are written in.
class format_parts {
public:
  explicit format_parts(grammar_builder& b) : b_(b) {}

  grammar_element range(char lo, char hi) {
    byte_set set;
    set.add_range(static_cast<uint8_t>(lo), static_cast<uint8_t>(hi));
    return b_.bytes(set);
  }
  grammar_element one_of(std::string_view chars) {
    byte_set set;
    for (char c : chars) set.add(static_cast<uint8_t>(c));
    return b_.bytes(set);
  }
  grammar_element digit() { return range('0', '9'); }
  grammar_element nonzero() { return range('1', '9'); }
  grammar_element hex() { return one_of("0123456789ABCDEFabcdef"); }
  grammar_element c(char ch) { return b_.byte(static_cast<uint8_t>(ch)); }
  grammar_element repeat(grammar_element e, int64_t min, int64_t max) {
    return b_.repeat({e}, min, max).value(); // counts here are small
  }
  grammar_element any_of(std::string_view hint, std::vector<grammar_sequence> alternatives) {
    return b_.any_of(hint, std::move(alternatives));
  }

  grammar_element date();
  grammar_element time();
  grammar_element uuid();
  grammar_element email();
  grammar_element ipv4();

private:
  grammar_builder& b_;
};

grammar_element format_parts::date() {
  const grammar_element d = digit(), nz = nonzero();
  const grammar_element year = any_of(
    "year",
    {{c('0'), c('0'), c('0'), nz}, {c('0'), c('0'), nz, d}, {c('0'), nz, d, d}, {nz, d, d, d}});
  const grammar_element day28 =
    any_of("day", {{c('0'), nz}, {c('1'), d}, {c('2'), range('0', '8')}});
  const grammar_element day30 = any_of("day", {{c('0'), nz}, {one_of("12"), d}, {c('3'), c('0')}});
  const grammar_element day31 =
    any_of("day", {{c('0'), nz}, {one_of("12"), d}, {c('3'), one_of("01")}});
  const grammar_element month_day = any_of("month-day", {{c('0'), one_of("13578"), c('-'), day31},
                                                         {c('1'), one_of("02"), c('-'), day31},
                                                         {c('0'), one_of("469"), c('-'), day30},
                                                         {c('1'), c('1'), c('-'), day30},
                                                         {c('0'), c('2'), c('-'), day28}});
  // NOTE: a leap year ends in a non-zero multiple of 4, or is one of those
  // followed by "00" (divisible by 400); year 0 is no year to a validator.
  const grammar_element four = any_of(
    "multiple-of-4",
    {{c('0'), one_of("48")}, {one_of("2468"), one_of("048")}, {one_of("13579"), one_of("26")}});
  const grammar_element leap_year = any_of("leap-year", {{d, d, four}, {four, c('0'), c('0')}});
  return any_of("date", {{year, c('-'), month_day},
                         {leap_year, c('-'), c('0'), c('2'), c('-'), c('2'), c('9')}});
}

grammar_element format_parts::time() {
  const grammar_element d = digit();
  const grammar_element hour = any_of("hour", {{one_of("01"), d}, {c('2'), range('0', '3')}});
  const grammar_element sixty = any_of("minute", {{range('0', '5'), d}});
  // NOTE: no leap second (:60): validators refuse it outside real ones;
  // fractions are bounded at 9 digits (nanoseconds).
  const grammar_element fraction = any_of("fraction", {{c('.'), repeat(d, 1, 9)}, {}});
  const grammar_element offset = any_of("offset", {{c('Z')}, {one_of("+-"), hour, c(':'), sixty}});
  return any_of("time", {{hour, c(':'), sixty, c(':'), sixty, fraction, offset}});
}

grammar_element format_parts::uuid() {
  const grammar_element h = hex();
  return any_of("uuid", {{repeat(h, 8, 8), c('-'), repeat(h, 4, 4), c('-'), repeat(h, 4, 4), c('-'),
                          repeat(h, 4, 4), c('-'), repeat(h, 12, 12)}});
}

grammar_element format_parts::email() {
  const grammar_element atom =
    repeat(one_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                  "!#$%&'*+/=?^_`{|}~-"),
           1, -1);
  const grammar_element local = any_of("local", {{atom, b_.repeat({c('.'), atom}, 0, -1).value()}});
  const grammar_element alnum = repeat(one_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                              "0123456789"),
                                       1, -1);
  const grammar_element label =
    any_of("label", {{alnum, b_.repeat({c('-'), alnum}, 0, -1).value()}});
  const grammar_element subdomains = b_.repeat({label, c('.')}, 1, -1).value();
  const grammar_element tld =
    repeat(one_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"), 2, -1);
  return any_of("email", {{local, c('@'), subdomains, tld}});
}

grammar_element format_parts::ipv4() {
  const grammar_element d = digit();
  const grammar_element part = any_of("ipv4-part", {{c('2'), c('5'), range('0', '5')},
                                                    {c('2'), range('0', '4'), d},
                                                    {c('1'), d, d},
                                                    {nonzero(), d},
                                                    {d}});
  return any_of("ipv4", {{part, c('.'), part, c('.'), part, c('.'), part}});
}

} // namespace

std::optional<grammar_element> add_string_format(grammar_builder& b, std::string_view format) {
  format_parts parts(b);
  if (format == "date") return parts.date();
  if (format == "time") return parts.time();
  if (format == "date-time")
    return parts.any_of("date-time", {{parts.date(), parts.c('T'), parts.time()}});
  if (format == "uuid") return parts.uuid();
  if (format == "email") return parts.email();
  if (format == "ipv4") return parts.ipv4();
  return std::nullopt;
}

} // namespace kvactor::model
