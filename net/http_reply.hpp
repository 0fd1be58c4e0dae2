#pragma once
// http_reply: a response as its producer hands it to the HTTP session, in
// one piece or (a stream of Server-Sent Events) in several, and its bytes on
// the wire. Pure.

#include <string>
#include <string_view>

namespace kvactor::net {

struct reply_part {
  int status = 0;           // on a response's first part only: starts it
  std::string content_type; // with the status
  bool chunked = false;     // on every part of a stream: the body comes in parts
  std::string body;         // the whole body, or one part of a chunked one
  bool last = true;         // the response is complete
};

// A whole response in one part.
reply_part whole_reply(int status, std::string content_type, std::string body);

// The bytes of one part: the status line and headers on a first part, then
// the body (one chunk of it when chunked, and the closing chunk on the last).
// `headers`: more header lines, each ending in CRLF.
std::string wire_bytes(const reply_part& part, bool keep_alive, std::string_view headers = {});

std::string_view reason_phrase(int status);

} // namespace kvactor::net
