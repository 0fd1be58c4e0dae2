#include "cluster/openssl_errors.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>

namespace kvactor::cluster {
namespace {

template <class T, void (*Free)(T*)>
struct freer {
  void operator()(T* p) const { Free(p); }
};
using ctx_ptr = std::unique_ptr<SSL_CTX, freer<SSL_CTX, SSL_CTX_free>>;
using ssl_ptr = std::unique_ptr<SSL, freer<SSL, SSL_free>>;
using key_ptr = std::unique_ptr<EVP_PKEY, freer<EVP_PKEY, EVP_PKEY_free>>;
using cert_ptr = std::unique_ptr<X509, freer<X509, X509_free>>;

// A server context with a fresh self-signed P-256 certificate.
ctx_ptr server_context() {
  key_ptr key{EVP_EC_gen("P-256")};
  cert_ptr cert{X509_new()};
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME_add_entry_by_txt(X509_get_subject_name(cert.get()), "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("kvactor test"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  X509_sign(cert.get(), key.get(), EVP_sha256());
  ctx_ptr ctx{SSL_CTX_new(TLS_server_method())};
  SSL_CTX_use_certificate(ctx.get(), cert.get());
  SSL_CTX_use_PrivateKey(ctx.get(), key.get());
  return ctx;
}

// A client and a server session joined by a BIO pair, past their handshake
// and with nothing left to read: the client's next read has no data, which
// is SSL_ERROR_WANT_READ.
struct idle_connection {
  ctx_ptr server_ctx = server_context();
  ctx_ptr client_ctx{SSL_CTX_new(TLS_client_method())};
  ssl_ptr server{SSL_new(server_ctx.get())};
  ssl_ptr client{SSL_new(client_ctx.get())};

  idle_connection() {
    BIO *client_end = nullptr, *server_end = nullptr;
    BIO_new_bio_pair(&client_end, 0, &server_end, 0);
    SSL_set_bio(client.get(), client_end, client_end);
    SSL_set_bio(server.get(), server_end, server_end);
    SSL_set_connect_state(client.get());
    SSL_set_accept_state(server.get());
    for (int i = 0; i < 8 && !finished(); ++i) {
      SSL_do_handshake(client.get());
      SSL_do_handshake(server.get());
    }
    EXPECT_TRUE(finished());
    char buf[16];
    const int r = SSL_read(client.get(), buf, sizeof buf); // takes the session tickets
    EXPECT_EQ(SSL_get_error(client.get(), r), SSL_ERROR_WANT_READ);
  }

  bool finished() const {
    return SSL_is_init_finished(client.get()) && SSL_is_init_finished(server.get());
  }
};

// What another session's refused handshake leaves in this thread's queue.
void leave_an_error_behind() {
  ERR_raise(ERR_LIB_SSL, SSL_R_CERTIFICATE_VERIFY_FAILED);
}

TEST(openssl_errors, the_interposing_calls_are_the_ones_linked) {
  EXPECT_TRUE(openssl_errors_isolated());
}

TEST(openssl_errors, a_read_is_not_blamed_for_an_error_another_session_left) {
  idle_connection c;
  leave_an_error_behind();
  char buf[16];
  const int r = SSL_read(c.client.get(), buf, sizeof buf);
  EXPECT_EQ(r, -1);
  EXPECT_EQ(SSL_get_error(c.client.get(), r), SSL_ERROR_WANT_READ);
}

// The hazard itself: libssl's own SSL_read, called with the error left
// behind, reports that error as its own, and CAF closes the connection.
TEST(openssl_errors, without_interposition_the_left_error_fails_the_read) {
  using read_fn = int (*)(SSL*, void*, int);
  auto libssl_read = reinterpret_cast<read_fn>(dlsym(RTLD_NEXT, "SSL_read"));
  ASSERT_NE(libssl_read, nullptr);
  ASSERT_NE(reinterpret_cast<void*>(libssl_read), reinterpret_cast<void*>(&SSL_read));
  idle_connection c;
  leave_an_error_behind();
  char buf[16];
  const int r = libssl_read(c.client.get(), buf, sizeof buf);
  EXPECT_EQ(SSL_get_error(c.client.get(), r), SSL_ERROR_SSL);
  ERR_clear_error();
}

} // namespace
} // namespace kvactor::cluster
