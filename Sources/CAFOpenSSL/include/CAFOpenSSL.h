#ifndef CAFOPENSSL_H
#define CAFOPENSSL_H

#include <stddef.h>
#include <stdint.h>

/* OpenSSL types are only forward-declared: Swift sees them as OpaquePointer and
 * never has to import (and type-check) the whole OpenSSL header set. */
struct x509_st;
struct x509_store_st;
struct stack_st_X509;
struct x509_store_ctx_st;

/* Coarse classification of an X509_V_ERR_* code; keeps OpenSSL's many macro
 * constants on the C side. */
typedef enum {
    CAFSSL_VERIFY_OK = 0,
    CAFSSL_VERIFY_EXPIRED = 1,
    CAFSSL_VERIFY_NOT_YET_VALID = 2,
    CAFSSL_VERIFY_UNTRUSTED = 3,
    CAFSSL_VERIFY_MALFORMED = 4,
    CAFSSL_VERIFY_INVALID = 5,
} cafssl_verify_kind;

/* Outcome of one chain verification. */
typedef struct {
    int code;   /* first X509_V_ERR_* seen, 0 (X509_V_OK) when none */
    int depth;  /* chain depth of that error, -1 when none */
    cafssl_verify_kind kind;
    /* First breach of the floor (a key too small, a weak signature digest, a
     * CA certificate as the server's own), 0 when none: kept apart from `code`
     * because the first error is often an untrusted root, and a pinned chain
     * with allowInvalidCertificates must still keep the floor. */
    int floor_code;
    int floor_depth;  /* chain depth of floor_code, -1 when none */
    int floor_is_ca_leaf;  /* 1 when the breach is a CA certificate as the leaf */
} cafssl_verify_result;

/* Loads error strings once, without registering an atexit handler that could
 * tear OpenSSL down under threads still verifying at process exit. */
void cafssl_init(void);

/* The OpenSSL security level every verification and handshake of the package
 * uses: 2 (RSA/DH keys of at least 2048 bits, no SHA-1 or MD5 signatures), or
 * the system configuration's when that is higher. */
int cafssl_security_level(void);

/* d2i_X509 advances a pointer-to-pointer; this also rejects trailing bytes. */
struct x509_st *cafssl_cert_from_der(const uint8_t *der, size_t length);

/* Frees a certificate from cafssl_cert_from_der or cafssl_stack_get_owned; NULL is fine. */
void cafssl_cert_free(struct x509_st *cert);

/* i2d_X509 writes through a pointer-to-pointer; this gives a two-call
 * "ask length, then copy" API. Returns the DER length, or -1. */
long cafssl_cert_to_der(const struct x509_st *cert, uint8_t *buffer, size_t capacity);

/* Same two-call API for the SubjectPublicKeyInfo, which needs
 * X509_get_X509_PUBKEY + i2d_X509_PUBKEY. Returns the DER length, or -1. */
long cafssl_cert_spki_to_der(const struct x509_st *cert, uint8_t *buffer, size_t capacity);

/* Whether `cert`'s signature verifies with the public key of `issuer`:
 * 1 yes, 0 no, -1 error. A pinned key above the leaf counts only when each
 * certificate below it really hangs from the next one (a chain OpenSSL built
 * by names alone, its failures ignored, may not). */
int cafssl_cert_signed_by(const struct x509_st *cert, const struct x509_st *issuer);

/* SHA-256 through EVP (Foundation on Linux has no digest API). Returns 1 on success. */
int cafssl_sha256(const uint8_t *data, size_t length, uint8_t out[32]);

/* X509_STORE_new, optionally with X509_STORE_set_default_paths (which reads
 * SSL_CERT_FILE / SSL_CERT_DIR at call time). Returns NULL on failure. */
struct x509_store_st *cafssl_store_new(int load_system_defaults);

/* Adds a trust anchor; the store takes its own reference. Returns 1 on success. */
int cafssl_store_add_cert(struct x509_store_st *store, struct x509_st *cert);

/* Frees a store; NULL is fine. */
void cafssl_store_free(struct x509_store_st *store);

/* Adds the certificates of a PEM bundle `file` and a hashed directory
 * `directory` (either may be NULL) to `store`, as libcurl's CURLOPT_CAINFO
 * and CURLOPT_CAPATH would. X509_STORE_load_file/_path take OpenSSL 3 types
 * through this one call. Returns 1, or 0 when one could not be loaded. */
int cafssl_store_load_locations(struct x509_store_st *store, const char *file, const char *directory);

/* STACK_OF(X509) is a macro family Swift cannot call. */
struct stack_st_X509 *cafssl_stack_new(void);

/* Pushes a certificate, taking a new reference to it. Returns 1 on success. */
int cafssl_stack_push(struct stack_st_X509 *stack, struct x509_st *cert);

/* Number of certificates in a stack (0 for NULL). */
int cafssl_stack_count(const struct stack_st_X509 *stack);

/* Certificate at index with a new reference (free with cafssl_cert_free), or NULL. */
struct x509_st *cafssl_stack_get_owned(const struct stack_st_X509 *stack, int index);

/* Frees a stack and releases every certificate in it; NULL is fine. */
void cafssl_stack_free(struct stack_st_X509 *stack);

/* Builds and verifies a chain with X509_STORE_CTX. A verify callback records
 * the first error and lets OpenSSL go on, so the chain comes back as complete
 * as it could be built even when it is not trusted (pinning needs it).
 *   at_time < 0       : now
 *   ssl_server        : check the TLS server purpose (EKU) as well
 *   partial_chain     : a non-self-signed anchor ends the chain
 *   built_chain (out) : the chain as built, leaf first; free with cafssl_stack_free
 * Returns 1 when verification ran (see *result), 0 on an internal failure. */
int cafssl_verify(struct x509_store_st *store, struct x509_st *leaf,
                  struct stack_st_X509 *untrusted, int64_t at_time,
                  int ssl_server, int partial_chain,
                  cafssl_verify_result *result, struct stack_st_X509 **built_chain);

/* Static English text for an X509_V_ERR_* code. */
const char *cafssl_verify_error_string(int code);

/* RFC 9525 name check of a leaf: IP literals against IP SANs only, DNS names
 * against DNS SANs (single left-most wildcard label), never the subject CN.
 * `name` must be NUL-terminated without brackets.
 * Returns 1 match, 0 mismatch, -1 error. */
int cafssl_check_host(const struct x509_st *cert, const char *name);

/* ---- Inside the TLS handshake (called from libcurl's CURLOPT_SSL_CTX_FUNCTION) ---- */

/* Checks cafssl_ctx_apply_floor adds to OpenSSL's own chain verification. */
enum {
    /* The leaf must carry a DNS or IP subjectAltName (no subject-CN fallback). */
    CAFSSL_FLOOR_CHECK_NAMES = 1,
    /* The leaf must not be a CA certificate (unless it is the anchor itself). */
    CAFSSL_FLOOR_CHECK_LEAF = 2,
};

/* Applies the package's TLS floor to a context libcurl is setting up: the
 * security level of cafssl_security_level, TLS 1.2 or newer, and `checks`
 * (CAFSSL_FLOOR_CHECK_*) on the leaf when OpenSSL's own verification runs,
 * and no renegotiation. Returns 1, or 0 when OpenSSL refused a setting. */
int cafssl_ctx_apply_floor(void *ssl_ctx, int checks);

/* Whether a client context with the floor applied refuses a server's
 * request to renegotiate (1) — for the tests, which have no TLS 1.2 server
 * that renegotiates on a kept-alive connection. */
int cafssl_floor_refuses_renegotiation(void);

/* Why: SSL_CTX_get_verify_mode needs OpenSSL's SSL_CTX type, which this
 * header does not import; the context comes from libcurl as a plain pointer.
 * Whether `ssl_ctx` asks OpenSSL to verify the peer (1) or not (0): libcurl
 * 7.88 calls its context callback for an HTTPS proxy's connection too, with
 * the proxy's own verification settings. */
int cafssl_ctx_verifies_peer(void *ssl_ctx);

/* SSL_CTX_set1_cert_store takes OpenSSL types this header does not import;
 * the context comes from libcurl as a plain pointer. Gives the context a
 * reference to `store` (one store shared by many connections instead of a
 * CA bundle parsed into each). Returns 1, or 0 for a NULL argument. */
int cafssl_ctx_use_store(void *ssl_ctx, struct x509_store_st *store);

/* SSL_CTX_set_cert_verify_callback takes OpenSSL types this header does not
 * import; the context comes from libcurl as a plain pointer. The callback
 * replaces OpenSSL's own chain verification for connections made from this
 * context and returns 1 to accept, 0 to abort the handshake — also when
 * libcurl was told not to verify (so that it loads no CA store the callback
 * would not use): the context's verify mode is set to SSL_VERIFY_PEER. */
void cafssl_ctx_set_verify_callback(void *ssl_ctx,
                                    int (*callback)(struct x509_store_ctx_st *store_ctx, void *arg),
                                    void *arg);

/* How many certificates the server sent (leaf first, then the rest of what it
 * sent, without repeating the leaf). */
int cafssl_store_ctx_peer_count(struct x509_store_ctx_st *store_ctx);

/* DER of the peer certificate at `index` with the two-call length/copy API of
 * cafssl_cert_to_der. Returns the DER length, or -1. */
long cafssl_store_ctx_peer_der(struct x509_store_ctx_st *store_ctx, int index, uint8_t *buffer, size_t capacity);

/* Marks the verification as failed by the application (X509_V_ERR_APPLICATION_VERIFICATION). */
void cafssl_store_ctx_reject(struct x509_store_ctx_st *store_ctx);

/* The SNI host name the client sent on this connection, or NULL (IP literals
 * are sent without SNI). Reached through the SSL that owns the store context,
 * which takes an ex_data index lookup Swift cannot spell. */
const char *cafssl_store_ctx_server_name(struct x509_store_ctx_st *store_ctx);

/* ---- Client certificates (checked before they are handed to libcurl) ---- */

/* Whether a PEM certificate chain and a PEM private key (encrypted with
 * `passphrase` when it is not NULL) form a usable client identity: both parse
 * and the key belongs to the first certificate. PEM parsing takes BIOs and a
 * password callback Swift cannot spell. Returns 1, or 0 with a reason in
 * `message` (NUL-terminated, at most `capacity` bytes). */
int cafssl_check_pem_identity(const uint8_t *chain, size_t chain_length, const uint8_t *key, size_t key_length,
                              const char *passphrase, char *message, size_t capacity);

/* The same for a PKCS#12 bundle (PKCS12_parse with `passphrase`, "" when NULL).
 * Returns 1, or 0 with a reason in `message`. */
int cafssl_check_pkcs12_identity(const uint8_t *bundle, size_t length, const char *passphrase,
                                 char *message, size_t capacity);

#endif
