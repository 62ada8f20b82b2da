#ifndef CAFCURL_H
#define CAFCURL_H

#include <curl/curl.h>
#include <stddef.h>

// Why this target exists: libcurl's configuration and query entry points
// (curl_easy_setopt, curl_easy_getinfo, curl_multi_setopt) are C variadic
// functions, which Swift cannot call. Each wrapper below fixes one argument
// type so the Swift side stays type-checked. Everything is prefixed `cafcurl_`
// so it can never collide with another module that also imports libcurl.

/// Initialises OpenSSL without its atexit handler, then libcurl, exactly once
/// per process. Returns CURLE_OK or the error from curl_global_init.
/// Why: OpenSSL's default atexit cleanup races with threads (our network
/// thread) still using TLS at process exit; OPENSSL_INIT_NO_ATEXIT avoids it,
/// and it must happen before curl_global_init initialises OpenSSL itself.
CURLcode cafcurl_global_init_once(void);

/// Why: curl_easy_setopt is variadic; this is its `long` flavour.
CURLcode cafcurl_easy_setopt_long(CURL *handle, CURLoption option, long value);
/// Why: curl_easy_setopt is variadic; this is its `curl_off_t` flavour (sizes).
CURLcode cafcurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
/// Why: curl_easy_setopt is variadic; this is its `char *` flavour (curl copies
/// strings for every option we use except COPYPOSTFIELDS' size pairing).
CURLcode cafcurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value);
/// Why: curl_easy_setopt is variadic; this is its opaque pointer flavour
/// (userdata, PRIVATE, header lists, error buffer).
CURLcode cafcurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);

/// Why: function-pointer options must be passed with their exact C type.
CURLcode cafcurl_easy_setopt_write_function(CURL *handle, CURLoption option,
                                            size_t (*function)(char *, size_t, size_t, void *));
/// Why: CURLOPT_XFERINFOFUNCTION takes a pointer of this exact type.
CURLcode cafcurl_easy_setopt_xferinfo_function(CURL *handle,
                                               int (*function)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t));
/// Why: CURLOPT_SEEKFUNCTION takes a pointer of this exact type.
CURLcode cafcurl_easy_setopt_seek_function(CURL *handle, int (*function)(void *, curl_off_t, int));
/// Why: CURLOPT_SSL_CTX_FUNCTION takes a pointer of this exact type.
CURLcode cafcurl_easy_setopt_ssl_ctx_function(CURL *handle,
                                              CURLcode (*function)(CURL *, void *, void *));

/// Why: curl_easy_setopt is variadic, and blob options take a `struct curl_blob *`
/// (curl copies the bytes: CURL_BLOB_COPY), e.g. a client certificate in memory.
CURLcode cafcurl_easy_setopt_blob(CURL *handle, CURLoption option, const void *data, size_t length);
/// Why: curl_easy_getinfo is variadic; `long` results.
CURLcode cafcurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
/// Why: curl_easy_getinfo is variadic; `curl_off_t` results.
CURLcode cafcurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);
/// Why: curl_easy_getinfo is variadic; `char *` results (owned by curl).
CURLcode cafcurl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value);
/// Why: curl_easy_getinfo is variadic; opaque pointer results (CURLINFO_PRIVATE).
CURLcode cafcurl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value);

/// Why: curl_multi_setopt is variadic; `long` flavour.
CURLMcode cafcurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

/// Why: curl_share_setopt is variadic; `long` flavour (CURLSHOPT_SHARE).
CURLSHcode cafcurl_share_setopt_long(CURLSH *share, CURLSHoption option, long value);

/// Why: libcurl's CURLAUTH_* values are macros with casts, which Swift does not import.
static const long CAFCURL_AUTH_BASIC = (long)CURLAUTH_BASIC;
static const long CAFCURL_AUTH_DIGEST = (long)CURLAUTH_DIGEST;

/// Why: these are macros built from casts or from other macros, which Swift
/// does not import. Returning a PAUSE value from a write or read callback is how
/// a transfer applies back-pressure (the engine later lifts it with
/// curl_easy_pause); the masks are curl_easy_pause's arguments.
static const size_t CAFCURL_WRITEFUNC_PAUSE = CURL_WRITEFUNC_PAUSE;
static const size_t CAFCURL_READFUNC_PAUSE = CURL_READFUNC_PAUSE;
static const size_t CAFCURL_READFUNC_ABORT = CURL_READFUNC_ABORT;
static const int CAFCURL_PAUSE_RECV = CURLPAUSE_RECV;
static const int CAFCURL_PAUSE_SEND = CURLPAUSE_SEND;
static const int CAFCURL_PAUSE_ALL = CURLPAUSE_ALL;
static const int CAFCURL_PAUSE_CONT = CURLPAUSE_CONT;

/// Names the calling thread as the OS sees it (ps, top -H, perf, gdb).
/// Why: pthread_setname_np is a GNU extension Swift's Glibc module does not
/// expose, and Foundation's Thread.name does not reliably reach the OS.
void cafcurl_name_current_thread(const char *name);

/// Why: CURLMsg's `data` member is an anonymous union; reading it through a
/// function keeps the Swift side independent of how the importer names it.
CURLcode cafcurl_message_result(const CURLMsg *message);

#endif
