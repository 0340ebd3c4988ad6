/* The Civetweb connection of fuzz_request: a request held in memory instead of a socket. The
 * mg_* functions the HTTP layer calls on a connection (civetweb_fake.c) read and write it, and
 * take precedence over libcivetweb's. */
#ifndef CAPLEDGER_FUZZ_CIVETWEB_FAKE_H
#define CAPLEDGER_FUZZ_CIVETWEB_FAKE_H

#include <civetweb.h>
#include <stddef.h>

struct mg_connection {
    struct mg_request_info ri;
    char *text; /* the input, split in place */
    const char *body;
    size_t body_len, body_pos;
    int chunk; /* mg_read hands out at most this much at once */
    int writes;
    char status_line[16];
    int problem_json;
};

#endif
