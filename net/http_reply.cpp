#include "net/http_reply.hpp"

#include <cstdio>

namespace kvactor::net {

reply_part whole_reply(int status, std::string content_type, std::string body) {
  return {status, std::move(content_type), false, std::move(body), true};
}

std::string_view reason_phrase(int status) {
  switch (status) {
  case 200: return "OK";
  case 400: return "Bad Request";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 408: return "Request Timeout";
  case 413: return "Payload Too Large";
  case 429: return "Too Many Requests";
  case 431: return "Request Header Fields Too Large";
  case 500: return "Internal Server Error";
  case 503: return "Service Unavailable";
  default: return "Unknown";
  }
}

std::string wire_bytes(const reply_part& part, bool keep_alive, std::string_view headers) {
  std::string out;
  if (part.status != 0) {
    out = "HTTP/1.1 " + std::to_string(part.status) + " " +
          std::string(reason_phrase(part.status)) +
          "\r\nServer: kvactor\r\nContent-Type: " + part.content_type + "\r\n";
    if (part.chunked)
      out += "Transfer-Encoding: chunked\r\nCache-Control: no-cache\r\n";
    else
      out += "Content-Length: " + std::to_string(part.body.size()) + "\r\n";
    out += headers;
    out += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  }
  if (!part.chunked) {
    out += part.body;
    return out;
  }
  if (!part.body.empty()) {
    char size[20];
    std::snprintf(size, sizeof size, "%zx\r\n", part.body.size());
    out += size;
    out += part.body;
    out += "\r\n";
  }
  if (part.last)
    out += "0\r\n\r\n";
  return out;
}

} // namespace kvactor::net
