#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H

// Debian's libpq-dev puts the header in /usr/include/postgresql; `pkg-config --cflags libpq` says so and
// SwiftPM passes that flag through (the target's pkgConfig), so the plain name is found.
#include <libpq-fe.h>

#endif
