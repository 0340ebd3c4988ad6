/* capledger import telemetry --from-url: the live DCGM scrape (import_live.c). */
#ifndef CAPLEDGER_CMD_IMPORT_LIVE_H
#define CAPLEDGER_CMD_IMPORT_LIVE_H

#include "cmd/import_client.h"

/* The live scrape loop: a->from_url every a->every_ms → POST target&at=… Returns the exit
 * status; zeroes token. Civetweb's library is initialised by the caller. */
int import_live(const struct import_args *a, const struct import_url *server, const char *target,
                char *token);

#endif
