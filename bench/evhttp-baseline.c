/*
 * Raw libevent evhttp baseline for bench/run: the fastest a linkout-shaped server on evhttp can be.
 *
 *   evhttp-baseline HOST PORT THREADS
 *
 * THREADS threads, each with its own event_base (NOLOCK | EPOLL_USE_CHANGELIST) and its own
 * SO_REUSEPORT listener bound to HOST:PORT, handed to evhttp with evhttp_bind_listener. Every request
 * gets the same empty 302 linkout sends (Location, Cache-Control, Referrer-Policy, no Content-Type).
 * Prints "evhttp-baseline listening on HOST:PORT" once every thread is bound. Runs until killed.
 *
 * Build: gcc -O2 -o evhttp-baseline evhttp-baseline.c $(pkg-config --cflags --libs libevent) -lpthread
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#define LOCATION "https://checkout.example.com/nl?externalPurchaseId=00000000-0000-0000-0000-000000000000"

struct loop {
    struct event_base *base;
    struct evhttp *http;
    pthread_t thread;
};

static void on_request(struct evhttp_request *request, void *argument) {
    (void)argument;
    struct evkeyvalq *headers = evhttp_request_get_output_headers(request);
    evhttp_add_header(headers, "Location", LOCATION);
    evhttp_add_header(headers, "Cache-Control", "no-store");
    evhttp_add_header(headers, "Referrer-Policy", "no-referrer");
    evhttp_send_reply(request, 302, "Found", NULL);
}

static void *run(void *argument) {
    struct loop *loop = argument;
    event_base_dispatch(loop->base);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s HOST PORT THREADS\n", argv[0]);
        return 2;
    }
    const char *host = argv[1];
    int port = atoi(argv[2]);
    int threads = atoi(argv[3]);
    if (port <= 0 || port > 65535 || threads <= 0 || threads > 256) {
        fprintf(stderr, "bad port or thread count\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);

    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons((unsigned short)port);
    if (inet_pton(AF_INET, host, &address.sin_addr) != 1) {
        fprintf(stderr, "HOST must be a numeric IPv4 address\n");
        return 2;
    }

    struct loop *loops = calloc((size_t)threads, sizeof *loops);
    for (int i = 0; i < threads; i++) {
        struct event_config *config = event_config_new();
        event_config_set_flag(config, EVENT_BASE_FLAG_NOLOCK | EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
        loops[i].base = event_base_new_with_config(config);
        event_config_free(config);
        if (!loops[i].base) { fprintf(stderr, "event_base_new_with_config failed\n"); return 1; }
        loops[i].http = evhttp_new(loops[i].base);
        if (!loops[i].http) { fprintf(stderr, "evhttp_new failed\n"); return 1; }
        evhttp_set_default_content_type(loops[i].http, NULL);
        evhttp_set_gencb(loops[i].http, on_request, NULL);
        struct evconnlistener *listener = evconnlistener_new_bind(
            loops[i].base, NULL, NULL,
            LEV_OPT_REUSEABLE | LEV_OPT_REUSEABLE_PORT | LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
            1024, (struct sockaddr *)&address, sizeof address);
        if (!listener) { perror("evconnlistener_new_bind"); return 1; }
        if (!evhttp_bind_listener(loops[i].http, listener)) { fprintf(stderr, "evhttp_bind_listener failed\n"); return 1; }
    }
    printf("evhttp-baseline listening on %s:%d (%d threads)\n", host, port, threads);
    fflush(stdout);
    for (int i = 0; i < threads; i++) pthread_create(&loops[i].thread, NULL, run, &loops[i]);
    for (int i = 0; i < threads; i++) pthread_join(loops[i].thread, NULL);
    return 0;
}
