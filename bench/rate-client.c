/*
 * bench/rate-client.c: an open-loop, constant-rate HTTP/1.1 load generator for linkout, on libevent.
 *
 *   gcc -O2 -Wall -o rate-client bench/rate-client.c $(pkg-config --cflags --libs libevent) -lpthread
 *   rate-client -p PORT -r RATE [-h 127.0.0.1] [-P /nl] [-d 15] [-w 2] [-c 64] [-t 2] [-D 10] [-T FILE]
 *   rate-client -p PORT -S        # print one request path with a fresh token and exit
 *   rate-client -p PORT -r RATE -f FILE   # send FILE's raw requests, in turn, instead of link-outs
 *
 * Why not wrk: wrk is closed-loop (a connection sends its next request only when the previous answer came
 * back), so it cannot hold a rate, and when the server stalls it simply sends less and never sees the
 * latency the missing requests would have had ("coordinated omission").
 *
 * How it works: T threads, each with its own event_base and C/T keep-alive connections (non-blocking
 * sockets with libevent events, send/recv directly: no bufferevents, to keep the client's cost per request
 * low on a machine it shares with the server; no pipelining: one request in flight per connection, like a
 * browser). Thread k schedules its i-th request
 * at start + k/RATE + i*T/RATE, so together the threads send RATE requests per second, evenly spaced.
 * A precise one-shot timer fires at the next scheduled time and hands every request that is due to an idle
 * connection; a connection that becomes idle takes the oldest request that is due. If every connection is
 * busy, due requests wait in the (implicit) queue. Latency is measured from the request's SCHEDULED time
 * to the end of its response, so time spent waiting for a connection counts, as it would for a shopper.
 *
 * Every request carries a new valid token, made the way bench/new-token.lua makes them: base64url without
 * padding of
 *   {"appAppleId":1234567890,"bundleId":"com.example","tokenCreationDate":<now ms>,"externalPurchaseId":"<uuid>"}
 * with uuid = 20 random hex digits per thread (from /dev/urandom; version-4 and variant nibbles set) and a
 * 48-bit per-thread counter. Only 302 counts as success: any other status is a status error, a request
 * lost with its connection is a socket error, and a request not answered by the end of the drain period
 * (or never sent because every connection was busy) is unfinished. All three are errors.
 *
 * With -f FILE, the requests are FILE's instead: whole raw HTTP/1.1 requests (head and body), each ended by
 * a NUL byte, sent in turn (thread k starts at request k and steps by the number of threads). Any status
 * then counts as an answer (the statuses line says which came); bench/notifications floods linkout's
 * notification path with them.
 *
 * The first -w seconds are a warm-up: sent at the same rate but not measured. Measured are the requests
 * scheduled in the -d seconds that follow. After that no new requests are scheduled; the run waits up to
 * -D seconds for the ones in flight or still queued, then prints a summary and one machine-readable line:
 *   RATE target_rps=.. achieved_rps=.. sent=.. completed=.. errors=.. status_errors=.. socket_errors=..
 *        unfinished=.. connect_errors=.. p50_us=.. p90_us=.. p99_us=.. p999_us=.. max_us=.. cpu_pct=..
 * achieved_rps = responses received inside the measurement window / its length; cpu_pct = the client's own
 * CPU time (getrusage) over the run, in % of one core (it shares the machine with the server).
 * Histogram: 1 us buckets up to 1 s, 1 ms buckets up to 100 s, exact max.
 *
 * -T FILE: also writes every measured request that got an answer to FILE, for latency over time
 * (bench/latency-plot): pairs of little-endian uint32, the request's scheduled time in us after the
 * measurement window opened and its latency in us, in no particular order; the RATE line then also says
 * measure_mono_ns= (the window's start on CLOCK_MONOTONIC, to line the trace up with other samples).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/util.h>

#define US_BUCKETS 1000000u  /* 0 .. 999,999 us, 1 us each */
#define MS_BUCKETS 100000u   /* 1 s .. 100 s, 1 ms each */
#define MAX_HEADER 65536

/* ---- options ---- */
static const char *opt_host = "127.0.0.1";
static int opt_port = 0;
static const char *opt_path = "/nl";
static double opt_rate = 0;
static double opt_duration = 15;
static double opt_warmup = 2;
static double opt_drain = 10;
static int opt_connections = 64;
static int opt_threads = 2;
static const char *opt_bundle = "com.example";
static unsigned long long opt_app_id = 1234567890ULL;
static int opt_sample = 0;
static const char *opt_file = NULL;

/* -f: the requests, and their count */
static char **file_requests = NULL;
static size_t *file_lengths = NULL;
static size_t file_count = 0;
static const char *opt_trace = NULL;

/* ---- shared timing ---- */
static struct sockaddr_in server_addr;
static uint64_t start_ns, measure_ns, end_ns, drain_end_ns;
static pthread_barrier_t barrier_connected, barrier_started;

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static long long real_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* ---- tokens ---- */
static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static size_t base64url(const unsigned char *in, size_t n, char *out) {
    size_t i = 0, j = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[j++] = b64url[v >> 18];
        out[j++] = b64url[(v >> 12) & 63];
        out[j++] = b64url[(v >> 6) & 63];
        out[j++] = b64url[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        out[j++] = b64url[v >> 18];
        out[j++] = b64url[(v >> 12) & 63];
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
        out[j++] = b64url[v >> 18];
        out[j++] = b64url[(v >> 12) & 63];
        out[j++] = b64url[(v >> 6) & 63];
    }
    out[j] = 0;
    return j;
}

typedef struct {
    char prefix[32]; /* "xxxxxxxx-xxxx-4xxx-Vxxx-" */
    uint64_t counter;
} token_maker;

static void token_maker_init(token_maker *m) {
    unsigned char r[10];
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd < 0 || read(fd, r, sizeof r) != (ssize_t)sizeof r) {
        fprintf(stderr, "rate-client: cannot read /dev/urandom\n");
        exit(2);
    }
    close(fd);
    char hex[21];
    for (int i = 0; i < 10; i++) sprintf(hex + 2 * i, "%02x", r[i]);
    hex[12] = '4';                       /* version 4 */
    hex[16] = "89ab"[r[8] & 3];          /* RFC 4122 variant */
    snprintf(m->prefix, sizeof m->prefix, "%.8s-%.4s-%.4s-%.4s-", hex, hex + 8, hex + 12, hex + 16);
    m->counter = 0;
}

/* Writes the whole request path (with query) into out; returns its length. */
static int make_path(token_maker *m, char *out, size_t cap) {
    char json[256];
    m->counter++;
    int n = snprintf(json, sizeof json,
                     "{\"appAppleId\":%llu,\"bundleId\":\"%s\",\"tokenCreationDate\":%lld,"
                     "\"externalPurchaseId\":\"%s%012" PRIx64 "\"}",
                     opt_app_id, opt_bundle, real_ms(), m->prefix, (uint64_t)(m->counter & 0xffffffffffffULL));
    char token[400];
    base64url((const unsigned char *)json, (size_t)n, token);
    return snprintf(out, cap, "%s?externalPurchaseToken=%s&bundleId=%s", opt_path, token, opt_bundle);
}

/* ---- histogram ---- */
typedef struct {
    uint32_t *us;
    uint32_t *ms;
    uint64_t count, max_us;
} histogram;

static void hist_init(histogram *h) {
    h->us = calloc(US_BUCKETS, sizeof *h->us);
    h->ms = calloc(MS_BUCKETS, sizeof *h->ms);
    if (!h->us || !h->ms) { fprintf(stderr, "rate-client: out of memory\n"); exit(2); }
    h->count = h->max_us = 0;
}

static void hist_add(histogram *h, uint64_t us) {
    if (us < US_BUCKETS) h->us[us]++;
    else {
        uint64_t ms = us / 1000 - 1000;
        h->ms[ms < MS_BUCKETS ? ms : MS_BUCKETS - 1]++;
    }
    h->count++;
    if (us > h->max_us) h->max_us = us;
}

static void hist_merge(histogram *into, const histogram *from) {
    for (uint32_t i = 0; i < US_BUCKETS; i++) into->us[i] += from->us[i];
    for (uint32_t i = 0; i < MS_BUCKETS; i++) into->ms[i] += from->ms[i];
    into->count += from->count;
    if (from->max_us > into->max_us) into->max_us = from->max_us;
}

/* Smallest value v (us) with at least ceil(p/100 * count) samples <= v. */
static uint64_t hist_percentile(const histogram *h, double p) {
    if (h->count == 0) return 0;
    uint64_t rank = (uint64_t)(p / 100.0 * (double)h->count + 0.999999);
    if (rank < 1) rank = 1;
    uint64_t seen = 0;
    for (uint32_t i = 0; i < US_BUCKETS; i++) {
        seen += h->us[i];
        if (seen >= rank) return i;
    }
    for (uint32_t i = 0; i < MS_BUCKETS; i++) {
        seen += h->ms[i];
        if (seen >= rank) {
            uint64_t v = (uint64_t)(i + 1000 + 1) * 1000 - 1; /* upper edge of the bucket */
            return v < h->max_us ? v : h->max_us;
        }
    }
    return h->max_us;
}

/* ---- connections and workers ---- */
typedef struct worker worker;

#define IN_CAP 16384

typedef struct conn {
    worker *w;
    int fd;                /* -1 when closed */
    struct event *rev;     /* EV_READ | EV_PERSIST once connected */
    struct event *wev;     /* EV_WRITE: connect completion, or the rest of a partial send */
    int connected;
    int busy;
    uint64_t sched_ns;     /* scheduled time of the request in flight */
    int status;
    int close_after;
    size_t need;           /* bytes of the whole response once its head is in; 0 = head not parsed yet */
    char in[IN_CAP];
    size_t inlen;
    char outbuf[1024];
    const char *out;       /* outbuf, or a request of -f's file */
    size_t outlen, outoff;
    struct conn *next_idle;
    int in_idle;
} conn;

struct worker {
    int id;
    pthread_t thread;
    struct event_base *base;
    struct event *timer;
    struct event *deadline;
    conn *conns;
    int nconns;
    int nconnected;
    int connecting_phase;
    conn *idle;
    uint64_t next_idx;     /* index of the next request to send */
    uint64_t next_file;    /* -f: index of the next request of the file */
    uint64_t total;        /* requests this worker schedules (warm-up + measurement) */
    double interval_ns;
    double phase_ns;
    token_maker tokens;
    char host_header[64];
    /* statistics (measured requests only, unless said otherwise) */
    histogram hist;
    uint64_t sent, completed, status_errors, socket_errors, unfinished;
    uint64_t completed_in_window;  /* responses (any) received inside the measurement window */
    uint64_t connect_errors, reconnects, unsolicited;
    uint64_t status_counts[600];
    int finished;
    /* -T: (scheduled us after measure_ns, latency us) of every measured answer */
    uint32_t *trace;
    size_t trace_len, trace_cap;
};

static void start_connect(conn *c);
static void pump(worker *w);

static void retry_cb(evutil_socket_t fd, short what, void *arg) {
    (void)fd; (void)what;
    conn *c = arg;
    if (!c->w->finished && c->fd < 0) start_connect(c);
}

/* Reconnect after 10 ms (a refused connect must not spin). */
static void retry_later(conn *c) {
    struct timeval tv = {0, 10000};
    event_base_once(c->w->base, -1, EV_TIMEOUT, retry_cb, c, &tv);
}

static uint64_t sched_of(worker *w, uint64_t i) {
    return start_ns + (uint64_t)(w->phase_ns + (double)i * w->interval_ns);
}

static void push_idle(conn *c) {
    if (c->in_idle) return;
    c->next_idle = c->w->idle;
    c->w->idle = c;
    c->in_idle = 1;
}

static conn *pop_idle(worker *w) {
    conn *c = w->idle;
    if (c) { w->idle = c->next_idle; c->in_idle = 0; c->next_idle = NULL; }
    return c;
}

static int busy_count(worker *w) {
    int n = 0;
    for (int i = 0; i < w->nconns; i++) n += w->conns[i].busy;
    return n;
}

static void maybe_finish(worker *w) {
    if (w->finished) return;
    if (w->next_idx >= w->total && busy_count(w) == 0) {
        w->finished = 1;
        event_base_loopbreak(w->base);
    }
}

/* Lost a connection (error, EOF, bad response, or Connection: close): count the request in flight as a
 * socket error, reconnect (after 10 ms if it was the connect that failed). */
static void drop_conn(conn *c, int was_connect_failure) {
    worker *w = c->w;
    if (c->busy && c->sched_ns >= measure_ns) w->socket_errors++;
    if (was_connect_failure) w->connect_errors++;
    c->busy = 0;
    if (c->in_idle) {
        conn **p = &w->idle;
        while (*p && *p != c) p = &(*p)->next_idle;
        if (*p) *p = c->next_idle;
        c->in_idle = 0;
    }
    if (c->connected) w->nconnected--;
    c->connected = 0;
    if (c->rev) { event_free(c->rev); c->rev = NULL; }
    if (c->wev) { event_free(c->wev); c->wev = NULL; }
    if (c->fd >= 0) { close(c->fd); c->fd = -1; }
    w->reconnects++;
    if (!w->finished) {
        if (was_connect_failure) retry_later(c);
        else start_connect(c);
    }
    maybe_finish(w);
}

/* Send what is left of c->out; 0 ok (maybe pending on EV_WRITE), -1 the connection failed. */
static int flush_out(conn *c) {
    while (c->outoff < c->outlen) {
        ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL);
        if (n > 0) { c->outoff += (size_t)n; continue; }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) { event_add(c->wev, NULL); return 0; }
        return -1;
    }
    return 0;
}

static void send_request(conn *c, uint64_t sched) {
    worker *w = c->w;
    if (file_count > 0) {
        size_t i = (size_t)(w->next_file % file_count);
        w->next_file += (uint64_t)opt_threads;
        c->out = file_requests[i];
        c->outlen = file_lengths[i];
    } else {
        char path[1024];
        make_path(&w->tokens, path, sizeof path);
        int n = snprintf(c->outbuf, sizeof c->outbuf, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, w->host_header);
        c->out = c->outbuf;
        c->outlen = (size_t)n;
    }
    c->outoff = 0;
    c->busy = 1;
    c->sched_ns = sched;
    c->need = 0;
    c->status = 0;
    c->close_after = 0;
    if (sched >= measure_ns) w->sent++;
    if (flush_out(c) < 0) drop_conn(c, 0);
}

static void on_response_done(conn *c) {
    worker *w = c->w;
    uint64_t now = mono_ns();
    if (now >= measure_ns && now < end_ns) w->completed_in_window++;
    if (c->sched_ns >= measure_ns) {
        w->completed++;
        uint64_t lat_us = now > c->sched_ns ? (now - c->sched_ns) / 1000 : 0;
        hist_add(&w->hist, lat_us);
        if (opt_trace) {
            if (w->trace_len + 2 > w->trace_cap) {
                w->trace_cap = w->trace_cap ? w->trace_cap * 2 : 1 << 20;
                w->trace = realloc(w->trace, w->trace_cap * sizeof *w->trace);
                if (!w->trace) { fprintf(stderr, "rate-client: out of memory\n"); exit(2); }
            }
            w->trace[w->trace_len++] = (uint32_t)((c->sched_ns - measure_ns) / 1000);
            w->trace[w->trace_len++] = (uint32_t)(lat_us > UINT32_MAX ? UINT32_MAX : lat_us);
        }
        if (c->status >= 0 && c->status < 600) w->status_counts[c->status]++;
        if (c->status != 302 && file_count == 0) w->status_errors++;
    }
    c->busy = 0;
    if (c->close_after) { drop_conn(c, 0); w->reconnects--; pump(w); return; }
    push_idle(c);
    pump(w);
    maybe_finish(w);
}

static int header_is(const char *line, size_t len, const char *name) {
    size_t n = strlen(name);
    return len > n && strncasecmp(line, name, n) == 0 && line[n] == ':';
}

/* Parse the head of the response in c->in; 1 parsed, 0 need more, -1 malformed. */
static int parse_head(conn *c) {
    char *end = memmem(c->in, c->inlen, "\r\n\r\n", 4);
    if (!end) return c->inlen >= IN_CAP ? -1 : 0;
    size_t hlen = (size_t)(end - c->in) + 4;
    char *h = c->in;
    if (hlen < 12 || strncmp(h, "HTTP/1.", 7) != 0) return -1;
    c->status = atoi(h + 9);
    if (h[7] == '0') c->close_after = 1;
    long long content_length = 0;
    char *line = memchr(h, '\n', hlen);
    char *stop = h + hlen;
    while (line && line + 1 < stop) {
        line++;
        char *eol = memchr(line, '\n', (size_t)(stop - line));
        if (!eol) break;
        size_t llen = (size_t)(eol - line);
        if (header_is(line, llen, "Content-Length")) content_length = atoll(line + 15);
        else if (header_is(line, llen, "Connection")) {
            if (memmem(line, llen, "close", 5) || memmem(line, llen, "Close", 5)) c->close_after = 1;
        } else if (header_is(line, llen, "Transfer-Encoding")) return -1; /* linkout never sends chunked */
        line = eol;
    }
    if (content_length < 0 || content_length > 1 << 20) return -1;
    c->need = hlen + (size_t)content_length;
    return 1;
}

static void read_cb(evutil_socket_t fd, short what, void *arg) {
    (void)what;
    conn *c = arg;
    for (;;) {
        if (c->inlen == IN_CAP) {
            /* a body larger than the buffer: consume what is counted and keep reading */
            if (c->need > c->inlen) { c->need -= c->inlen; c->inlen = 0; }
            else { drop_conn(c, 0); return; }
        }
        ssize_t n = recv(fd, c->in + c->inlen, IN_CAP - c->inlen, 0);
        if (n == 0) { drop_conn(c, 0); return; }
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            drop_conn(c, 0);
            return;
        }
        c->inlen += (size_t)n;
        while (c->inlen > 0) {
            if (!c->busy) { c->w->unsolicited++; c->inlen = 0; break; }
            if (c->need == 0) {
                int r = parse_head(c);
                if (r < 0) { drop_conn(c, 0); return; }
                if (r == 0) break;
            }
            if (c->inlen < c->need) break;
            size_t rest = c->inlen - c->need;
            memmove(c->in, c->in + c->need, rest);
            c->inlen = rest;
            c->need = 0;
            int fd_before = c->fd;
            on_response_done(c);
            if (c->fd != fd_before || c->fd < 0) return; /* closed (Connection: close) and replaced */
        }
        return; /* level-triggered: anything left in the socket wakes us again */
    }
}

static void write_cb(evutil_socket_t fd, short what, void *arg) {
    (void)fd; (void)what;
    conn *c = arg;
    worker *w = c->w;
    if (!c->connected) {
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err != 0) { drop_conn(c, 1); return; }
        int one = 1;
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c->connected = 1;
        w->nconnected++;
        c->inlen = 0;
        c->need = 0;
        event_add(c->rev, NULL);
        push_idle(c);
        if (w->connecting_phase) {
            if (w->nconnected == w->nconns) event_base_loopbreak(w->base);
        } else {
            pump(w);
        }
        return;
    }
    if (flush_out(c) < 0) drop_conn(c, 0);
}

static void start_connect(conn *c) {
    worker *w = c->w;
    c->connected = 0;
    c->busy = 0;
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) { w->connect_errors++; retry_later(c); return; }
    c->rev = event_new(w->base, c->fd, EV_READ | EV_PERSIST, read_cb, c);
    c->wev = event_new(w->base, c->fd, EV_WRITE, write_cb, c);
    if (connect(c->fd, (struct sockaddr *)&server_addr, sizeof server_addr) < 0 && errno != EINPROGRESS) {
        event_free(c->rev); c->rev = NULL;
        event_free(c->wev); c->wev = NULL;
        close(c->fd); c->fd = -1;
        w->connect_errors++;
        retry_later(c);
        return;
    }
    event_add(c->wev, NULL);  /* writable = connected (or failed: SO_ERROR) */
}

static void timer_cb(evutil_socket_t fd, short what, void *arg) {
    (void)fd; (void)what;
    pump(arg);
}

/* Hand every due request to an idle connection; arm the timer for the next one. */
static void pump(worker *w) {
    if (w->finished) return;
    uint64_t now = mono_ns();
    while (w->next_idx < w->total) {
        uint64_t sched = sched_of(w, w->next_idx);
        if (sched > now) break;
        conn *c = pop_idle(w);
        if (!c) return;  /* all busy: the next response to arrive calls pump again */
        w->next_idx++;
        send_request(c, sched);
    }
    if (w->next_idx < w->total) {
        uint64_t delay = sched_of(w, w->next_idx) - now;
        struct timeval tv = {(time_t)(delay / 1000000000ULL), (suseconds_t)((delay % 1000000000ULL) / 1000)};
        evtimer_add(w->timer, &tv);
    }
}

static void deadline_cb(evutil_socket_t fd, short what, void *arg) {
    (void)fd; (void)what;
    worker *w = arg;
    w->finished = 1;
    event_base_loopbreak(w->base);
}

static void *worker_main(void *arg) {
    worker *w = arg;
    struct event_config *cfg = event_config_new();
    event_config_set_flag(cfg, EVENT_BASE_FLAG_NOLOCK);
    event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
    event_config_set_flag(cfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
    w->base = event_base_new_with_config(cfg);
    event_config_free(cfg);
    if (!w->base) { fprintf(stderr, "rate-client: event_base_new failed\n"); exit(2); }
    w->timer = evtimer_new(w->base, timer_cb, w);
    w->deadline = evtimer_new(w->base, deadline_cb, w);
    w->connecting_phase = 1;
    for (int i = 0; i < w->nconns; i++) { w->conns[i].w = w; w->conns[i].fd = -1; start_connect(&w->conns[i]); }
    /* a timer, not event_base_loopexit: a pending loopexit would also end the measured loop later */
    struct event *connect_limit = evtimer_new(w->base, deadline_cb, w);
    struct timeval ten = {10, 0};
    evtimer_add(connect_limit, &ten);
    event_base_dispatch(w->base);
    evtimer_del(connect_limit);
    event_free(connect_limit);
    w->finished = 0;
    if (w->nconnected < w->nconns) {
        fprintf(stderr, "rate-client: thread %d connected %d of %d connections (connect errors %" PRIu64 ")\n",
                w->id, w->nconnected, w->nconns, w->connect_errors);
        exit(3);
    }
    w->connecting_phase = 0;
    pthread_barrier_wait(&barrier_connected);
    pthread_barrier_wait(&barrier_started);
    uint64_t now = mono_ns();
    uint64_t until_deadline = drain_end_ns > now ? drain_end_ns - now : 0;
    struct timeval dl = {(time_t)(until_deadline / 1000000000ULL), (suseconds_t)((until_deadline % 1000000000ULL) / 1000)};
    evtimer_add(w->deadline, &dl);
    pump(w);
    event_base_dispatch(w->base);
    /* whatever is still in flight or was never sent is unfinished */
    for (int i = 0; i < w->nconns; i++)
        if (w->conns[i].busy && w->conns[i].sched_ns >= measure_ns) w->unfinished++;
    for (uint64_t i = w->next_idx; i < w->total; i++)
        if (sched_of(w, i) >= measure_ns) w->unfinished++;
    return NULL;
}

static void usage(void) {
    fprintf(stderr,
            "usage: rate-client -p PORT -r RATE [-h HOST] [-P PATH] [-d SECONDS] [-w WARMUP] [-D DRAIN]\n"
            "                   [-c CONNECTIONS] [-t THREADS] [-b BUNDLE_ID] [-a APP_APPLE_ID] [-T TRACE_FILE]\n"
            "                   [-f REQUESTS_FILE]  raw requests, each ended by a NUL byte, instead of link-outs\n"
            "       rate-client -S [-P PATH]     print one request path with a fresh token\n");
    exit(2);
}

int main(int argc, char **argv) {
    int ch;
    while ((ch = getopt(argc, argv, "h:p:P:r:d:w:D:c:t:b:a:Sf:T:")) != -1) {
        switch (ch) {
        case 'h': opt_host = optarg; break;
        case 'p': opt_port = atoi(optarg); break;
        case 'P': opt_path = optarg; break;
        case 'r': opt_rate = atof(optarg); break;
        case 'd': opt_duration = atof(optarg); break;
        case 'w': opt_warmup = atof(optarg); break;
        case 'D': opt_drain = atof(optarg); break;
        case 'c': opt_connections = atoi(optarg); break;
        case 't': opt_threads = atoi(optarg); break;
        case 'b': opt_bundle = optarg; break;
        case 'a': opt_app_id = strtoull(optarg, NULL, 10); break;
        case 'S': opt_sample = 1; break;
        case 'f': opt_file = optarg; break;
        case 'T': opt_trace = optarg; break;
        default: usage();
        }
    }
    if (opt_sample) {
        token_maker m;
        token_maker_init(&m);
        char path[1024];
        make_path(&m, path, sizeof path);
        printf("%s\n", path);
        return 0;
    }
    if (opt_port <= 0 || opt_rate <= 0 || opt_threads < 1 || opt_connections < opt_threads || opt_duration <= 0)
        usage();
    if (opt_file) {
        FILE *f = fopen(opt_file, "rb");
        if (!f) { fprintf(stderr, "rate-client: cannot open %s\n", opt_file); return 2; }
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fseek(f, 0, SEEK_SET);
        char *all = malloc((size_t)size + 1);
        if (!all || fread(all, 1, (size_t)size, f) != (size_t)size) { fprintf(stderr, "rate-client: cannot read %s\n", opt_file); return 2; }
        fclose(f);
        all[size] = 0;
        for (long i = 0; i < size; i++) if (all[i] == 0) file_count++;
        if (file_count == 0) { fprintf(stderr, "rate-client: %s holds no NUL-ended request\n", opt_file); return 2; }
        file_requests = calloc(file_count, sizeof *file_requests);
        file_lengths = calloc(file_count, sizeof *file_lengths);
        size_t k = 0;
        for (char *p = all; k < file_count; k++) {
            file_requests[k] = p;
            file_lengths[k] = strlen(p);
            p += file_lengths[k] + 1;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    memset(&server_addr, 0, sizeof server_addr);
    server_addr.sin_family = AF_INET;
    server_addr.sin_port = htons((uint16_t)opt_port);
    if (inet_pton(AF_INET, opt_host, &server_addr.sin_addr) != 1) { fprintf(stderr, "rate-client: bad host\n"); return 2; }

    int T = opt_threads;
    worker *workers = calloc((size_t)T, sizeof *workers);
    pthread_barrier_init(&barrier_connected, NULL, (unsigned)T + 1);
    pthread_barrier_init(&barrier_started, NULL, (unsigned)T + 1);
    double total_s = opt_warmup + opt_duration;
    for (int k = 0; k < T; k++) {
        worker *w = &workers[k];
        w->id = k;
        w->nconns = opt_connections / T + (k < opt_connections % T ? 1 : 0);
        w->conns = calloc((size_t)w->nconns, sizeof *w->conns);
        w->interval_ns = 1e9 * T / opt_rate;
        w->phase_ns = 1e9 * k / opt_rate;
        /* requests with scheduled time < total_s */
        double n = (total_s * 1e9 - w->phase_ns) / w->interval_ns;
        w->total = n > 0 ? (uint64_t)n + ((double)(uint64_t)n < n ? 1 : 0) : 0;
        snprintf(w->host_header, sizeof w->host_header, "%s:%d", opt_host, opt_port);
        w->next_file = (uint64_t)k;
        token_maker_init(&w->tokens);
        hist_init(&w->hist);
        pthread_create(&w->thread, NULL, worker_main, w);
    }
    pthread_barrier_wait(&barrier_connected);
    start_ns = mono_ns() + 50000000ULL; /* 50 ms from now: every thread is waiting on its timer by then */
    measure_ns = start_ns + (uint64_t)(opt_warmup * 1e9);
    end_ns = start_ns + (uint64_t)(total_s * 1e9);
    drain_end_ns = end_ns + (uint64_t)(opt_drain * 1e9);
    pthread_barrier_wait(&barrier_started);

    histogram all;
    hist_init(&all);
    uint64_t sent = 0, completed = 0, status_errors = 0, socket_errors = 0, unfinished = 0, in_window = 0;
    uint64_t connect_errors = 0, reconnects = 0, unsolicited = 0, statuses[600] = {0};
    for (int k = 0; k < T; k++) {
        worker *w = &workers[k];
        pthread_join(w->thread, NULL);
        hist_merge(&all, &w->hist);
        sent += w->sent; completed += w->completed; status_errors += w->status_errors;
        socket_errors += w->socket_errors; unfinished += w->unfinished; in_window += w->completed_in_window;
        connect_errors += w->connect_errors; reconnects += w->reconnects; unsolicited += w->unsolicited;
        for (int s = 0; s < 600; s++) statuses[s] += w->status_counts[s];
    }
    uint64_t finished_ns = mono_ns();
    if (opt_trace) {
        FILE *f = fopen(opt_trace, "wb");
        if (!f) { fprintf(stderr, "rate-client: cannot write %s\n", opt_trace); return 2; }
        for (int k = 0; k < T; k++)
            if (workers[k].trace_len) fwrite(workers[k].trace, sizeof(uint32_t), workers[k].trace_len, f);
        fclose(f);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    double wall_s = (double)(finished_ns - start_ns) / 1e9;
    double achieved = (double)in_window / opt_duration;
    uint64_t errors = status_errors + socket_errors + unfinished;
    printf("rate-client: target %.0f req/s, %d threads, %d keep-alive connections, warm-up %.1f s, measured %.1f s, "
           "drain %.1f s used of %.1f s\n", opt_rate, T, opt_connections, opt_warmup, opt_duration,
           finished_ns > end_ns ? (double)(finished_ns - end_ns) / 1e9 : 0.0, opt_drain);
    printf("  measured requests: scheduled %.0f, sent %" PRIu64 ", completed %" PRIu64 ", errors %" PRIu64
           " (non-302 %" PRIu64 ", lost with connection %" PRIu64 ", unfinished %" PRIu64 ")\n",
           opt_rate * opt_duration, sent, completed, errors, status_errors, socket_errors, unfinished);
    printf("  achieved: %.0f responses/s inside the window; connect errors %" PRIu64 ", reconnects %" PRIu64
           ", unsolicited responses %" PRIu64 "\n", achieved, connect_errors, reconnects, unsolicited);
    printf("  client CPU: %.2f s over %.2f s from start (%.0f %% of one core)\n", cpu_s, wall_s, 100.0 * cpu_s / wall_s);
    printf("  statuses:");
    for (int s = 0; s < 600; s++) if (statuses[s]) printf(" %d=%" PRIu64, s, statuses[s]);
    printf("\n");
    printf("  latency from scheduled send (us): p50 %" PRIu64 ", p90 %" PRIu64 ", p99 %" PRIu64 ", p99.9 %" PRIu64
           ", max %" PRIu64 "\n", hist_percentile(&all, 50), hist_percentile(&all, 90), hist_percentile(&all, 99),
           hist_percentile(&all, 99.9), all.max_us);
    printf("RATE target_rps=%.0f achieved_rps=%.0f sent=%" PRIu64 " completed=%" PRIu64 " errors=%" PRIu64
           " status_errors=%" PRIu64 " socket_errors=%" PRIu64 " unfinished=%" PRIu64 " connect_errors=%" PRIu64
           " p50_us=%" PRIu64 " p90_us=%" PRIu64 " p99_us=%" PRIu64 " p999_us=%" PRIu64 " max_us=%" PRIu64
           " cpu_pct=%.0f measure_mono_ns=%" PRIu64 "\n",
           opt_rate, achieved, sent, completed, errors, status_errors, socket_errors, unfinished, connect_errors,
           hist_percentile(&all, 50), hist_percentile(&all, 90), hist_percentile(&all, 99),
           hist_percentile(&all, 99.9), all.max_us, 100.0 * cpu_s / wall_s, measure_ns);
    return 0;
}
