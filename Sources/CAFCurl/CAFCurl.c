#define _GNU_SOURCE
#include "CAFCurl.h"

#include <openssl/ssl.h>
#include <pthread.h>

static pthread_once_t cafcurl_once = PTHREAD_ONCE_INIT;
static CURLcode cafcurl_init_result = CURLE_OK;

static void cafcurl_global_init_body(void) {
    OPENSSL_init_ssl(OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_LOAD_SSL_STRINGS | OPENSSL_INIT_LOAD_CRYPTO_STRINGS, NULL);
    cafcurl_init_result = curl_global_init(CURL_GLOBAL_ALL);
}

CURLcode cafcurl_global_init_once(void) {
    pthread_once(&cafcurl_once, cafcurl_global_init_body);
    return cafcurl_init_result;
}

CURLcode cafcurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode cafcurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode cafcurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode cafcurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode cafcurl_easy_setopt_blob(CURL *handle, CURLoption option, const void *data, size_t length) {
    struct curl_blob blob = { (void *)data, length, CURL_BLOB_COPY };
    return curl_easy_setopt(handle, option, &blob);
}

CURLcode cafcurl_easy_setopt_write_function(CURL *handle, CURLoption option,
                                            size_t (*function)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(handle, option, function);
}

CURLcode cafcurl_easy_setopt_xferinfo_function(CURL *handle,
                                               int (*function)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t)) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, function);
}

CURLcode cafcurl_easy_setopt_seek_function(CURL *handle, int (*function)(void *, curl_off_t, int)) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, function);
}

CURLcode cafcurl_easy_setopt_ssl_ctx_function(CURL *handle, CURLcode (*function)(CURL *, void *, void *)) {
    return curl_easy_setopt(handle, CURLOPT_SSL_CTX_FUNCTION, function);
}

CURLcode cafcurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode cafcurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode cafcurl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode cafcurl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLMcode cafcurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

CURLcode cafcurl_message_result(const CURLMsg *message) {
    return message->data.result;
}

CURLSHcode cafcurl_share_setopt_long(CURLSH *share, CURLSHoption option, long value) {
    return curl_share_setopt(share, option, value);
}

void cafcurl_name_current_thread(const char *name) {
    pthread_setname_np(pthread_self(), name);
}
