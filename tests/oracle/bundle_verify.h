/* Test oracle: the audit bundle's checks (core/ledger/bundle.h) over a bundle held whole in
 * memory — the leaves of bundle["leaves"] fed one by one to bundle_check_begin / _leaf / _end.
 * The server and `capledger verify` never hold a bundle whole (they stream it: core/ledger/
 * bundle_reader.h); unit tests and fuzz targets build bundles in memory and call this. Built
 * only into tests (CMake's capledger_test_oracle). */
#ifndef CAPLEDGER_TESTS_ORACLE_BUNDLE_VERIFY_H
#define CAPLEDGER_TESTS_ORACLE_BUNDLE_VERIFY_H

#include <jansson.h>
#include <stddef.h>

#include "core/ledger/bundle.h"

/* Runs every check of core/ledger/bundle.h on bundle (borrowed). Returns 0 when everything
 * verifies; else 1 with the first bad item named in why, as the streamed checks name it. On
 * success report (a JSON object, or NULL) receives what bundle_check_end reports. */
int bundle_verify(const json_t *bundle, const struct bundle_trust *trust, json_t *report, char *why,
                  size_t why_size) __attribute__((warn_unused_result));

#endif
