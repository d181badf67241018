#ifndef CLIBMAXMINDDB_SHIM_H
#define CLIBMAXMINDDB_SHIM_H

// Debian's libmaxminddb-dev puts the header in /usr/include/<triplet>; `pkg-config --cflags libmaxminddb`
// says so and SwiftPM passes that flag through (the target's pkgConfig).
#include <maxminddb.h>

// The two paths a country lookup reads, as MMDB_aget_value's NULL-terminated arrays. MMDB_get_value is
// variadic, which Swift cannot call, and it callocs a copy of its arguments on every call; these static
// arrays make a lookup allocation-free.
static inline int clibmaxminddb_country_iso_code(MMDB_entry_s *entry, MMDB_entry_data_s *out) {
    static const char *const path[] = {"country", "iso_code", (const char *)0};
    return MMDB_aget_value(entry, out, path);
}

static inline int clibmaxminddb_registered_country_iso_code(MMDB_entry_s *entry, MMDB_entry_data_s *out) {
    static const char *const path[] = {"registered_country", "iso_code", (const char *)0};
    return MMDB_aget_value(entry, out, path);
}

#endif
