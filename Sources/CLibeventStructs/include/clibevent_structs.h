#ifndef CLIBEVENT_STRUCTS_H
#define CLIBEVENT_STRUCTS_H

struct evhttp_request;

// The HTTP version evhttp parsed from the request line ("HTTP/%d.%d"; it refuses a major version above
// 1). libevent 2.1 keeps it in the request but has no function that returns it.
void clibevent_request_version(const struct evhttp_request *request, int *major, int *minor);

#endif
