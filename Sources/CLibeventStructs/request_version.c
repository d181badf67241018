#include "clibevent_structs.h"

#include <sys/types.h>
#include <event2/http.h>
#include <event2/http_struct.h>

void clibevent_request_version(const struct evhttp_request *request, int *major, int *minor) {
    *major = request->major;
    *minor = request->minor;
}
