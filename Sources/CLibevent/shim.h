#ifndef CLIBEVENT_SHIM_H
#define CLIBEVENT_SHIM_H

// libc first: Debian's event-config.h defines _GNU_SOURCE, which must not change libc's view afterwards.
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/http.h>
#include <event2/buffer.h>
#include <event2/listener.h>
#include <event2/bufferevent.h>
#include <event2/util.h>
#include <event2/keyvalq_struct.h>

// Walking a request's headers: the list is a BSD TAILQ, whose fields Swift sees through anonymous structs.
static inline struct evkeyval *clibevent_headers_first(struct evkeyvalq *headers) {
    return headers ? headers->tqh_first : NULL;
}
static inline struct evkeyval *clibevent_headers_next(struct evkeyval *header) {
    return header->next.tqe_next;
}

// The listener's options, named once: SO_REUSEPORT gives every loop thread its own accept queue, which
// evhttp_bind_socket cannot do (it never sets SO_REUSEPORT and hard-codes a backlog of 128).
static inline unsigned clibevent_listener_flags(void) {
    return LEV_OPT_REUSEABLE | LEV_OPT_REUSEABLE_PORT | LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC;
}

// evutil_socket_t is a macro for int on Linux.
static inline int clibevent_listener_fd(struct evconnlistener *listener) {
    return (int)evconnlistener_get_fd(listener);
}

// Every method evhttp knows: the gateway answers the ones it does not serve with 405 itself, where
// evhttp on its own would answer 501.
static inline unsigned short clibevent_all_methods(void) {
    return EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
           EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH;
}

// Milliseconds since the Unix epoch, for the records' timestamps and the token checks.
static inline long long clibevent_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

// Microseconds on the monotonic clock, for request durations.
static inline long long clibevent_monotonic_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

#endif
