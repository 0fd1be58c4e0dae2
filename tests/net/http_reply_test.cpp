#include "net/http_reply.hpp"

#include <gtest/gtest.h>

namespace kvactor::net {
namespace {

TEST(http_reply, writes_a_whole_response_with_its_length) {
  EXPECT_EQ(wire_bytes(whole_reply(404, "application/json", "{}"), true),
            "HTTP/1.1 404 Not Found\r\nServer: kvactor\r\nContent-Type: application/json\r\n"
            "Content-Length: 2\r\nConnection: keep-alive\r\n\r\n{}");
  EXPECT_NE(wire_bytes(whole_reply(200, "text/plain", ""), false).find("Connection: close\r\n\r\n"),
            std::string::npos);
}

TEST(http_reply, writes_a_stream_in_chunks_and_closes_it) {
  reply_part head{200, "text/event-stream", true, "data: a\n\n", false};
  EXPECT_EQ(
    wire_bytes(head, true),
    "HTTP/1.1 200 OK\r\nServer: kvactor\r\nContent-Type: text/event-stream\r\n"
    "Transfer-Encoding: chunked\r\nCache-Control: no-cache\r\nConnection: keep-alive\r\n\r\n"
    "9\r\ndata: a\n\n\r\n");
  EXPECT_EQ(wire_bytes({0, "", true, std::string(26, 'x'), false}, true),
            "1a\r\n" + std::string(26, 'x') + "\r\n");
  EXPECT_EQ(wire_bytes({0, "", true, "", true}, true), "0\r\n\r\n");
  EXPECT_EQ(wire_bytes({0, "", true, "z", true}, true), "1\r\nz\r\n0\r\n\r\n");
}

} // namespace
} // namespace kvactor::net
