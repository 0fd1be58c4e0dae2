// Interposes the OpenSSL calls CAF's TLS sessions make so that each starts
// with an empty error queue (see openssl_errors.hpp).

#include "cluster/openssl_errors.hpp"

#include "base/assert.hpp"

#include <dlfcn.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

namespace {

// The definition the dynamic linker would have chosen without this file.
template <class Fn>
Fn next_definition(const char* name) {
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
  KVACTOR_ASSERT(fn != nullptr, "libssl lacks a call interposed here");
  return fn;
}

} // namespace

extern "C" {

int SSL_connect(SSL* ssl) {
  static const auto next = next_definition<int (*)(SSL*)>("SSL_connect");
  ERR_clear_error();
  return next(ssl);
}

int SSL_accept(SSL* ssl) {
  static const auto next = next_definition<int (*)(SSL*)>("SSL_accept");
  ERR_clear_error();
  return next(ssl);
}

int SSL_read(SSL* ssl, void* buf, int num) {
  static const auto next = next_definition<int (*)(SSL*, void*, int)>("SSL_read");
  ERR_clear_error();
  return next(ssl, buf, num);
}

int SSL_write(SSL* ssl, const void* buf, int num) {
  static const auto next = next_definition<int (*)(SSL*, const void*, int)>("SSL_write");
  ERR_clear_error();
  return next(ssl, buf, num);
}

} // extern "C"

namespace kvactor::cluster {

bool openssl_errors_isolated() {
  return dlsym(RTLD_DEFAULT, "SSL_read") == reinterpret_cast<void*>(&SSL_read);
}

} // namespace kvactor::cluster
