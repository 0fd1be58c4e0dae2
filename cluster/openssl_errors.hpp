#pragma once
// OpenSSL's error queue kept apart between CAF's TLS sessions.
//
// CAF 0.17's OpenSSL sessions ask SSL_get_error why a call returned short
// without first emptying the thread's OpenSSL error queue, and they empty it
// after a failure only to log it (logging is compiled out of Debian's CAF).
// Every session of a node runs on the middleman's one I/O thread, so a peer
// refused for its certificate left an error behind that the next session's
// nonblocking read took for its own: the node dropped its good connections.
// OpenSSL requires an empty queue before each I/O call; openssl_errors.cpp
// interposes the four calls CAF makes (SSL_connect, SSL_accept, SSL_read,
// SSL_write) and empties it first. The interposition works when this file's
// object is linked into the executable (the dynamic linker then prefers it
// to libssl's definitions), as kvactor-serve does.

namespace kvactor::cluster {

// Whether the dynamic linker resolved SSL_read to the interposing
// definition; a node must not serve TLS when it did not.
bool openssl_errors_isolated();

// Why a node refuses TLS when openssl_errors_isolated() is false.
inline constexpr const char* tls_unavailable =
  "TLS needs cluster/openssl_errors.cpp linked into the executable (CAF's OpenSSL sessions "
  "share one error queue without it)";

} // namespace kvactor::cluster
