#ifndef CLIBMAXMINDDB_SHIM_H
#define CLIBMAXMINDDB_SHIM_H

// Debian's libmaxminddb-dev puts the header in /usr/include/<triplet>; `pkg-config --cflags libmaxminddb`
// says so and SwiftPM passes that flag through (the target's pkgConfig).
#include <maxminddb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

// MMDB_get_value is variadic, which Swift cannot call. These fixed paths go through it from C, with string
// literals, so a lookup builds no path array per call.
static inline int clibmaxminddb_country_iso_code(MMDB_entry_s *entry, MMDB_entry_data_s *out) {
    return MMDB_get_value(entry, out, "country", "iso_code", (const char *)0);
}

static inline int clibmaxminddb_registered_country_iso_code(MMDB_entry_s *entry, MMDB_entry_data_s *out) {
    return MMDB_get_value(entry, out, "registered_country", "iso_code", (const char *)0);
}

#endif
