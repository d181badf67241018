#ifndef CLIBEVENT_SHIM_H
#define CLIBEVENT_SHIM_H

// libc first: Debian's event-config.h defines _GNU_SOURCE, which must not change libc's view afterwards.
#include <sys/types.h>
#include <sys/socket.h>
#include <linux/filter.h>
#include <sys/eventfd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>
#include <netinet/tcp.h>

// A restart with no gap: the stopping process steers the SO_REUSEPORT group's new connections to the socket
// at `index` (the first one the newer process bound, since a group's sockets are numbered in bind order and
// the survivors of a handover end up first), so that none lands in the accept queue it is about to close,
// where the kernel would reset it. An index past the group's end (no newer process) falls back to the
// kernel's usual hashing. Returns 0, or -1 with errno.
static inline int clibevent_steer_reuseport(int fd, unsigned index) {
    struct sock_filter code[] = { { BPF_RET | BPF_K, 0, 0, index } };
    struct sock_fprog program = { 1, code };
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &program, sizeof(program));
}

// A process that joins a group removes the steering a stopped one left behind (which would send it every
// connection once a third process joins). Harmless when there is none.
static inline void clibevent_unsteer_reuseport(int fd) {
#ifdef SO_DETACH_REUSEPORT_BPF
    int zero = 0;
    (void)setsockopt(fd, SOL_SOCKET, SO_DETACH_REUSEPORT_BPF, &zero, sizeof(zero));
#endif
}

// The listener's options, named once: SO_REUSEPORT gives every loop thread its own accept queue, which
// one listener per process could not.
static inline unsigned clibevent_listener_flags(void) {
    return LEV_OPT_REUSEABLE | LEV_OPT_REUSEABLE_PORT | LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC;
}

// evutil_socket_t is a macro for int on Linux.
static inline int clibevent_listener_fd(struct evconnlistener *listener) {
    return (int)evconnlistener_get_fd(listener);
}

#endif
