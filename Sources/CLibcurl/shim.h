#ifndef CLIBCURL_SHIM_H
#define CLIBCURL_SHIM_H

#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed wrapper per
// kind of argument. libcurl reads a long, a char *, a void * or a function pointer according to the option.

static inline CURLcode clibcurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode clibcurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode clibcurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode clibcurl_easy_setopt_write_function(CURL *handle, curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

static inline CURLcode clibcurl_easy_setopt_header_function(CURL *handle, curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
}

// curl_multi_setopt is variadic too.
static inline CURLMcode clibcurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

// curl_share_setopt too: which data the handles of a share hold in common.
static inline CURLSHcode clibcurl_share_data(CURLSH *share, curl_lock_data data) {
    return curl_share_setopt(share, CURLSHOPT_SHARE, data);
}

static inline CURLcode clibcurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

// CURL_GLOBAL_DEFAULT is a macro built from others, which Swift may not import.
static inline CURLcode clibcurl_global_init_default(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

// The message's union, read in C so Swift need not know its layout.
static inline CURLcode clibcurl_message_result(const CURLMsg *message) {
    return message->data.result;
}

static inline int clibcurl_message_is_done(const CURLMsg *message) {
    return message->msg == CURLMSG_DONE;
}

static inline long clibcurl_error_size(void) {
    return CURL_ERROR_SIZE;
}

#endif
