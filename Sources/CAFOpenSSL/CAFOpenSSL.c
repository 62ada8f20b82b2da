#include "CAFOpenSSL.h"

#include <limits.h>
#include <stdio.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>

/* Every function below that may fail brackets its work with ERR_set_mark /
 * ERR_pop_to_mark: these helpers can run inside a TLS handshake, and stray
 * entries on the thread's error queue would make libssl misreport the
 * connection's own state. */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* The package's floor: OpenSSL security level 2 (RSA/DH keys of 2048 bits,
 * no SHA-1 or MD5 signatures), or the system's level when that is stricter. */
enum { CAFSSL_MINIMUM_SECURITY_LEVEL = 2 };
static int security_level = CAFSSL_MINIMUM_SECURITY_LEVEL;
/* Where a context made for one connection keeps its CAFSSL_FLOOR_CHECK_* bits. */
static int floor_checks_index = -1;

static void init_openssl(void) {
    OPENSSL_init_ssl(OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_LOAD_SSL_STRINGS
                     | OPENSSL_INIT_LOAD_CRYPTO_STRINGS, NULL);
    /* A fresh context carries the level of the system's configuration
     * (openssl.cnf may raise it); never go below the package's floor. */
    ERR_set_mark();
    SSL_CTX *probe = SSL_CTX_new(TLS_client_method());
    if (probe != NULL) {
        int system_level = SSL_CTX_get_security_level(probe);
        if (system_level > security_level) security_level = system_level;
        SSL_CTX_free(probe);
    }
    floor_checks_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
    ERR_pop_to_mark();
}

void cafssl_init(void) {
    pthread_once(&init_once, init_openssl);
}

int cafssl_security_level(void) {
    cafssl_init();
    return security_level;
}

struct x509_st *cafssl_cert_from_der(const uint8_t *der, size_t length) {
    if (der == NULL || length == 0 || length > (size_t)LONG_MAX) {
        return NULL;
    }
    ERR_set_mark();
    const unsigned char *cursor = der;
    X509 *cert = d2i_X509(NULL, &cursor, (long)length);
    /* A certificate followed by anything else is not one certificate. */
    if (cert != NULL && cursor != der + length) {
        X509_free(cert);
        cert = NULL;
    }
    ERR_pop_to_mark();
    return cert;
}

void cafssl_cert_free(struct x509_st *cert) {
    X509_free(cert);
}

long cafssl_cert_to_der(const struct x509_st *cert, uint8_t *buffer, size_t capacity) {
    if (cert == NULL) {
        return -1;
    }
    ERR_set_mark();
    int needed = i2d_X509(cert, NULL);
    if (needed > 0 && buffer != NULL && capacity >= (size_t)needed) {
        unsigned char *cursor = buffer;
        needed = i2d_X509(cert, &cursor);
    }
    ERR_pop_to_mark();
    return needed > 0 ? needed : -1;
}

int cafssl_cert_signed_by(const struct x509_st *cert, const struct x509_st *issuer) {
    if (cert == NULL || issuer == NULL) return -1;
    EVP_PKEY *key = X509_get0_pubkey((X509 *)issuer);
    if (key == NULL) return -1;
    ERR_set_mark();
    int verified = X509_verify((X509 *)cert, key);
    ERR_pop_to_mark();
    return verified == 1 ? 1 : (verified == 0 ? 0 : -1);
}

long cafssl_cert_spki_to_der(const struct x509_st *cert, uint8_t *buffer, size_t capacity) {
    if (cert == NULL) {
        return -1;
    }
    const X509_PUBKEY *key = X509_get_X509_PUBKEY(cert);
    if (key == NULL) {
        return -1;
    }
    ERR_set_mark();
    int needed = i2d_X509_PUBKEY(key, NULL);
    if (needed > 0 && buffer != NULL && capacity >= (size_t)needed) {
        unsigned char *cursor = buffer;
        needed = i2d_X509_PUBKEY(key, &cursor);
    }
    ERR_pop_to_mark();
    return needed > 0 ? needed : -1;
}

int cafssl_sha256(const uint8_t *data, size_t length, uint8_t out[32]) {
    if ((data == NULL && length > 0) || out == NULL) {
        return 0;
    }
    static const uint8_t empty = 0;
    unsigned int written = 0;
    ERR_set_mark();
    int ok = EVP_Digest(data != NULL ? data : &empty, length, out, &written, EVP_sha256(), NULL);
    ERR_pop_to_mark();
    return ok == 1 && written == 32;
}

struct x509_store_st *cafssl_store_new(int load_system_defaults) {
    ERR_set_mark();
    X509_STORE *store = X509_STORE_new();
    if (store != NULL && load_system_defaults) {
        /* A missing default file or directory is not fatal: the store is then
         * simply empty and every chain comes out untrusted. */
        (void)X509_STORE_set_default_paths(store);
    }
    ERR_pop_to_mark();
    return store;
}

int cafssl_store_add_cert(struct x509_store_st *store, struct x509_st *cert) {
    if (store == NULL || cert == NULL) {
        return 0;
    }
    ERR_set_mark();
    int ok = X509_STORE_add_cert(store, cert);
    ERR_pop_to_mark();
    return ok == 1;
}

int cafssl_store_load_locations(struct x509_store_st *store, const char *file, const char *directory) {
    if (store == NULL) return 0;
    if (file != NULL && X509_STORE_load_file(store, file) != 1) return 0;
    if (directory != NULL && X509_STORE_load_path(store, directory) != 1) return 0;
    return 1;
}

void cafssl_store_free(struct x509_store_st *store) {
    X509_STORE_free(store);
}

struct stack_st_X509 *cafssl_stack_new(void) {
    return sk_X509_new_null();
}

int cafssl_stack_push(struct stack_st_X509 *stack, struct x509_st *cert) {
    if (stack == NULL || cert == NULL || X509_up_ref(cert) != 1) {
        return 0;
    }
    if (sk_X509_push(stack, cert) <= 0) {
        X509_free(cert);
        return 0;
    }
    return 1;
}

int cafssl_stack_count(const struct stack_st_X509 *stack) {
    return stack == NULL ? 0 : sk_X509_num(stack);
}

struct x509_st *cafssl_stack_get_owned(const struct stack_st_X509 *stack, int index) {
    if (stack == NULL || index < 0 || index >= sk_X509_num(stack)) {
        return NULL;
    }
    X509 *cert = sk_X509_value(stack, index);
    if (cert == NULL || X509_up_ref(cert) != 1) {
        return NULL;
    }
    return cert;
}

void cafssl_stack_free(struct stack_st_X509 *stack) {
    sk_X509_pop_free(stack, X509_free);
}

static cafssl_verify_kind classify(int code) {
    switch (code) {
    case X509_V_OK:
        return CAFSSL_VERIFY_OK;
    case X509_V_ERR_CERT_HAS_EXPIRED:
        return CAFSSL_VERIFY_EXPIRED;
    case X509_V_ERR_CERT_NOT_YET_VALID:
        return CAFSSL_VERIFY_NOT_YET_VALID;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_UNTRUSTED:
    case X509_V_ERR_CERT_REJECTED:
        return CAFSSL_VERIFY_UNTRUSTED;
    case X509_V_ERR_ERROR_IN_CERT_NOT_BEFORE_FIELD:
    case X509_V_ERR_ERROR_IN_CERT_NOT_AFTER_FIELD:
    case X509_V_ERR_UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY:
    case X509_V_ERR_UNABLE_TO_DECRYPT_CERT_SIGNATURE:
        return CAFSSL_VERIFY_MALFORMED;
    default:
        return CAFSSL_VERIFY_INVALID;
    }
}

/* Whether the leaf names its server in a DNS or IP subjectAltName: without
 * one, a host name could only be matched against the subject CN, which RFC
 * 9525 (6.3) forbids. */
static int has_server_name(X509 *leaf) {
    GENERAL_NAMES *names = X509_get_ext_d2i(leaf, NID_subject_alt_name, NULL, NULL);
    int found = 0;
    for (int i = 0; i < sk_GENERAL_NAME_num(names) && !found; i++) {
        int type = sk_GENERAL_NAME_value(names, i)->type;
        found = type == GEN_DNS || type == GEN_IPADD;
    }
    GENERAL_NAMES_free(names);
    return found;
}

/* Whether the store `ctx` verifies against holds `cert` itself as trusted. */
static int is_trusted_itself(X509_STORE_CTX *ctx, X509 *cert) {
    STACK_OF(X509) *same_subject = X509_STORE_CTX_get1_certs(ctx, X509_get_subject_name(cert));
    int found = 0;
    for (int i = 0; i < sk_X509_num(same_subject) && !found; i++) {
        found = X509_cmp(sk_X509_value(same_subject, i), cert) == 0;
    }
    sk_X509_pop_free(same_subject, X509_free);
    return found;
}

/* A CA certificate (basicConstraints CA:TRUE) is not a server's own
 * certificate (CA/B Forum 7.1.2.7), unless it is itself trusted or pinned
 * (in the store): a self-signed certificate trusted directly, which
 * `openssl req -x509` marks CA:TRUE by default, or a CA certificate pinned as
 * the server's, whose issuer OpenSSL may still place above it. */
static int is_ca_used_as_leaf(X509_STORE_CTX *ctx, X509 *leaf) {
    if ((X509_get_extension_flags(leaf) & EXFLAG_CA) == 0) return 0;
    return sk_X509_num(X509_STORE_CTX_get0_chain(ctx)) > 1 && !is_trusted_itself(ctx, leaf);
}

/* The verification errors that are the package's floor (the security level's
 * key sizes and signature digests, and a CA certificate as the leaf). */
static int is_floor_error(int code) {
    return code == X509_V_ERR_EE_KEY_TOO_SMALL || code == X509_V_ERR_CA_KEY_TOO_SMALL
        || code == X509_V_ERR_CA_MD_TOO_WEAK || code == X509_V_ERR_INVALID_NON_CA;
}

/* Remembers the first failure and tells OpenSSL to carry on, so that the
 * chain is built as far as possible and the most fundamental error wins. */
static int record_first_error(int ok, X509_STORE_CTX *ctx) {
    if (!ok) {
        cafssl_verify_result *result = X509_STORE_CTX_get_ex_data(ctx, 0);
        int code = X509_STORE_CTX_get_error(ctx);
        if (result != NULL && result->code == X509_V_OK) {
            result->code = code;
            result->depth = X509_STORE_CTX_get_error_depth(ctx);
        }
        if (result != NULL && result->floor_code == X509_V_OK && is_floor_error(code)) {
            result->floor_code = code;
            result->floor_depth = X509_STORE_CTX_get_error_depth(ctx);
        }
    }
    return 1;
}

int cafssl_verify(struct x509_store_st *store, struct x509_st *leaf,
                  struct stack_st_X509 *untrusted, int64_t at_time,
                  int ssl_server, int partial_chain,
                  cafssl_verify_result *result, struct stack_st_X509 **built_chain) {
    if (store == NULL || leaf == NULL || result == NULL) {
        return 0;
    }
    result->code = X509_V_OK;
    result->depth = -1;
    result->kind = CAFSSL_VERIFY_OK;
    result->floor_code = X509_V_OK;
    result->floor_depth = -1;
    result->floor_is_ca_leaf = 0;
    if (built_chain != NULL) {
        *built_chain = NULL;
    }

    ERR_set_mark();
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    int ran = 0;
    if (ctx != NULL && X509_STORE_CTX_init(ctx, store, leaf, untrusted) == 1) {
        X509_STORE_CTX_set_ex_data(ctx, 0, result);
        X509_STORE_CTX_set_verify_cb(ctx, record_first_error);
        if (ssl_server) {
            X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
        }
        if (partial_chain) {
            X509_STORE_CTX_set_flags(ctx, X509_V_FLAG_PARTIAL_CHAIN);
        }
        if (at_time >= 0) {
            X509_STORE_CTX_set_time(ctx, 0, (time_t)at_time);
        }
        /* Without a level OpenSSL checks neither key sizes nor signature
         * digests: the same floor as the handshake's. */
        X509_VERIFY_PARAM_set_auth_level(X509_STORE_CTX_get0_param(ctx), cafssl_security_level());
        int verified = X509_verify_cert(ctx);
        /* Failures that bypass the callback (allocation, internal) still count. */
        if (verified <= 0 && result->code == X509_V_OK) {
            int code = X509_STORE_CTX_get_error(ctx);
            result->code = code != X509_V_OK ? code : X509_V_ERR_UNSPECIFIED;
            result->depth = X509_STORE_CTX_get_error_depth(ctx);
        }
        if (ssl_server && is_ca_used_as_leaf(ctx, leaf)) {
            if (result->code == X509_V_OK) {
                result->code = X509_V_ERR_INVALID_NON_CA;
                result->depth = 0;
            }
            if (result->floor_code == X509_V_OK) {
                result->floor_code = X509_V_ERR_INVALID_NON_CA;
                result->floor_depth = 0;
                result->floor_is_ca_leaf = 1;
            }
        }
        result->kind = classify(result->code);
        if (built_chain != NULL) {
            *built_chain = X509_STORE_CTX_get1_chain(ctx);
        }
        ran = 1;
    }
    X509_STORE_CTX_free(ctx);
    ERR_pop_to_mark();
    return ran;
}

const char *cafssl_verify_error_string(int code) {
    return X509_verify_cert_error_string(code);
}

int cafssl_check_host(const struct x509_st *cert, const char *name) {
    if (cert == NULL || name == NULL || name[0] == '\0') {
        return -1;
    }
    ERR_set_mark();
    /* -2 means "not an IP literal": only then is the name a DNS name. */
    int matched = X509_check_ip_asc((X509 *)cert, name, 0);
    if (matched == -2) {
        matched = X509_check_host((X509 *)cert, name, strlen(name),
                                  X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS | X509_CHECK_FLAG_NEVER_CHECK_SUBJECT, NULL);
    }
    ERR_pop_to_mark();
    return matched == 1 ? 1 : (matched == 0 ? 0 : -1);
}

/* ---- Inside the TLS handshake ---- */

/* OpenSSL's chain verification on libcurl's own path calls this for every
 * certificate; the leaf (depth 0), once its chain verified, gets the checks
 * OpenSSL leaves out. Returning 0 with an error set makes
 * SSL_get_verify_result report it, which libcurl turns into its
 * "SSL certificate problem" failure before sending anything. */
static int floor_verify_callback(int ok, X509_STORE_CTX *store_ctx) {
    if (!ok || X509_STORE_CTX_get_error_depth(store_ctx) != 0) return ok;
    X509 *leaf = X509_STORE_CTX_get_current_cert(store_ctx);
    if (leaf == NULL) return ok;
    SSL *ssl = X509_STORE_CTX_get_ex_data(store_ctx, SSL_get_ex_data_X509_STORE_CTX_idx());
    int checks = ssl == NULL || floor_checks_index < 0
        ? 0 : (int)(intptr_t)SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), floor_checks_index);
    if ((checks & CAFSSL_FLOOR_CHECK_NAMES) && !has_server_name(leaf)) {
        X509_STORE_CTX_set_error(store_ctx, X509_V_ERR_HOSTNAME_MISMATCH);
        return 0;
    }
    if ((checks & CAFSSL_FLOOR_CHECK_LEAF) && is_ca_used_as_leaf(store_ctx, leaf)) {
        X509_STORE_CTX_set_error(store_ctx, X509_V_ERR_INVALID_NON_CA);
        return 0;
    }
    return 1;
}

int cafssl_ctx_apply_floor(void *ssl_ctx, int checks) {
    SSL_CTX *ctx = ssl_ctx;
    if (ctx == NULL) return 0;
    int level = cafssl_security_level();
    ERR_set_mark();
    int applied = 1;
    if (SSL_CTX_get_security_level(ctx) < level) SSL_CTX_set_security_level(ctx, level);
    /* A TLS 1.2 server asking to renegotiate would run the verification
     * again on a pooled connection, long after the transfer that installed
     * its callback data is gone (and a new certificate would not be checked
     * against the host again): refused. TLS 1.3 has no renegotiation. */
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
    long minimum = SSL_CTX_get_min_proto_version(ctx);
    /* 0 means "the lowest this OpenSSL supports". */
    if (minimum < TLS1_2_VERSION && SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) applied = 0;
    if (applied && checks != 0) {
        /* The context is libcurl's, made for this one connection. */
        if (floor_checks_index < 0 || SSL_CTX_set_ex_data(ctx, floor_checks_index, (void *)(intptr_t)checks) != 1) {
            applied = 0;
        } else {
            SSL_CTX_set_verify(ctx, SSL_CTX_get_verify_mode(ctx), floor_verify_callback);
        }
    }
    ERR_pop_to_mark();
    return applied;
}

int cafssl_floor_refuses_renegotiation(void) {
    cafssl_init();
    ERR_set_mark();
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    int refuses = 0;
    if (ctx != NULL) {
        refuses = cafssl_ctx_apply_floor(ctx, 0) == 1 && (SSL_CTX_get_options(ctx) & SSL_OP_NO_RENEGOTIATION) != 0;
        SSL_CTX_free(ctx);
    }
    ERR_pop_to_mark();
    return refuses;
}

int cafssl_ctx_verifies_peer(void *ssl_ctx) {
    if (ssl_ctx == NULL) return 0;
    return (SSL_CTX_get_verify_mode((SSL_CTX *)ssl_ctx) & SSL_VERIFY_PEER) != 0;
}

int cafssl_ctx_use_store(void *ssl_ctx, struct x509_store_st *store) {
    if (ssl_ctx == NULL || store == NULL) return 0;
    SSL_CTX_set1_cert_store((SSL_CTX *)ssl_ctx, store);
    return 1;
}

void cafssl_ctx_set_verify_callback(void *ssl_ctx,
                                    int (*callback)(struct x509_store_ctx_st *store_ctx, void *arg),
                                    void *arg) {
    SSL_CTX_set_cert_verify_callback((SSL_CTX *)ssl_ctx, callback, arg);
    /* A refusal must end the handshake whatever libcurl set. */
    SSL_CTX_set_verify((SSL_CTX *)ssl_ctx, SSL_VERIFY_PEER, NULL);
}

/* The untrusted stack of a client-side handshake holds what the server sent,
 * normally leaf included; the leaf is reported once, first. */
static X509 *peer_at(X509_STORE_CTX *store_ctx, int index) {
    X509 *leaf = X509_STORE_CTX_get0_cert(store_ctx);
    if (leaf == NULL) return NULL;
    if (index == 0) return leaf;
    STACK_OF(X509) *sent = X509_STORE_CTX_get0_untrusted(store_ctx);
    int seen = 0;
    for (int i = 0; i < sk_X509_num(sent); i++) {
        X509 *cert = sk_X509_value(sent, i);
        if (X509_cmp(cert, leaf) == 0) continue;
        if (++seen == index) return cert;
    }
    return NULL;
}

int cafssl_store_ctx_peer_count(struct x509_store_ctx_st *store_ctx) {
    int count = 0;
    while (peer_at(store_ctx, count) != NULL) count++;
    return count;
}

long cafssl_store_ctx_peer_der(struct x509_store_ctx_st *store_ctx, int index, uint8_t *buffer, size_t capacity) {
    X509 *cert = peer_at(store_ctx, index);
    return cert == NULL ? -1 : cafssl_cert_to_der(cert, buffer, capacity);
}

void cafssl_store_ctx_reject(struct x509_store_ctx_st *store_ctx) {
    X509_STORE_CTX_set_error(store_ctx, X509_V_ERR_APPLICATION_VERIFICATION);
}

const char *cafssl_store_ctx_server_name(struct x509_store_ctx_st *store_ctx) {
    SSL *ssl = X509_STORE_CTX_get_ex_data(store_ctx, SSL_get_ex_data_X509_STORE_CTX_idx());
    return ssl == NULL ? NULL : SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
}

/* ---- Client certificates ---- */

static void cafssl_message(char *message, size_t capacity, const char *prefix) {
    if (message == NULL || capacity == 0) return;
    unsigned long code = ERR_peek_last_error();
    char reason[256] = "";
    if (code != 0) ERR_error_string_n(code, reason, sizeof reason);
    snprintf(message, capacity, "%s%s%s", prefix, reason[0] ? ": " : "", reason);
}

/* Why: a chain with a damaged intermediate would otherwise pass the check
 * and only fail in the handshake, as "the server did not accept". Reads the
 * certificates after the leaf until the data ends; 1 when all of them parse. */
static int cafssl_rest_of_chain_parses(BIO *chain_bio) {
    for (;;) {
        X509 *next = PEM_read_bio_X509(chain_bio, NULL, NULL, NULL);
        if (next == NULL) {
            unsigned long code = ERR_peek_last_error();
            return ERR_GET_LIB(code) == ERR_LIB_PEM && ERR_GET_REASON(code) == PEM_R_NO_START_LINE;
        }
        X509_free(next);
    }
}

static int cafssl_password(char *buffer, int size, int rwflag, void *userdata) {
    (void)rwflag;
    const char *passphrase = userdata;
    if (passphrase == NULL || size <= 0) return 0;
    size_t length = strlen(passphrase);
    if (length > (size_t)size) length = (size_t)size;
    memcpy(buffer, passphrase, length);
    return (int)length;
}

int cafssl_check_pem_identity(const uint8_t *chain, size_t chain_length, const uint8_t *key, size_t key_length,
                              const char *passphrase, char *message, size_t capacity) {
    cafssl_init();
    ERR_set_mark();
    int usable = 0;
    X509 *leaf = NULL;
    EVP_PKEY *private_key = NULL;
    BIO *chain_bio = NULL, *key_bio = NULL;
    if (chain_length > INT_MAX || key_length > INT_MAX) {
        cafssl_message(message, capacity, "the certificate or key is too large");
        goto done;
    }
    chain_bio = BIO_new_mem_buf(chain, (int)chain_length);
    leaf = chain_bio ? PEM_read_bio_X509(chain_bio, NULL, NULL, NULL) : NULL;
    if (leaf == NULL) {
        cafssl_message(message, capacity, "the certificate is not a PEM certificate");
        goto done;
    }
    if (!cafssl_rest_of_chain_parses(chain_bio)) {
        cafssl_message(message, capacity, "a certificate after the first one in the chain is damaged");
        goto done;
    }
    key_bio = BIO_new_mem_buf(key, (int)key_length);
    private_key = key_bio ? PEM_read_bio_PrivateKey(key_bio, NULL, cafssl_password, (void *)passphrase) : NULL;
    if (private_key == NULL) {
        cafssl_message(message, capacity, "the private key is not a PEM private key, or the passphrase is wrong");
        goto done;
    }
    if (X509_check_private_key(leaf, private_key) != 1) {
        cafssl_message(message, capacity, "the private key does not belong to the certificate");
        goto done;
    }
    usable = 1;
done:
    EVP_PKEY_free(private_key);
    X509_free(leaf);
    BIO_free(key_bio);
    BIO_free(chain_bio);
    ERR_pop_to_mark();
    return usable;
}

int cafssl_check_pkcs12_identity(const uint8_t *bundle, size_t length, const char *passphrase,
                                 char *message, size_t capacity) {
    cafssl_init();
    ERR_set_mark();
    const unsigned char *cursor = bundle;
    PKCS12 *p12 = length <= LONG_MAX ? d2i_PKCS12(NULL, &cursor, (long)length) : NULL;
    if (p12 == NULL) {
        cafssl_message(message, capacity, "the data is not a PKCS#12 bundle");
        ERR_pop_to_mark();
        return 0;
    }
    EVP_PKEY *private_key = NULL;
    X509 *leaf = NULL;
    STACK_OF(X509) *extra = NULL;
    int parsed = PKCS12_parse(p12, passphrase ? passphrase : "", &private_key, &leaf, &extra);
    PKCS12_free(p12);
    int usable = parsed == 1 && private_key != NULL && leaf != NULL && X509_check_private_key(leaf, private_key) == 1;
    if (!usable) cafssl_message(message, capacity, parsed == 1 ? "the PKCS#12 bundle has no matching certificate and key"
                                                               : "the PKCS#12 bundle cannot be opened (wrong passphrase?)");
    EVP_PKEY_free(private_key);
    X509_free(leaf);
    sk_X509_pop_free(extra, X509_free);
    ERR_pop_to_mark();
    return usable ? 1 : 0;
}
