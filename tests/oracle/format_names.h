/* Test oracle: the ?format= names of an upload kind looked up by the kind's name in
 * core/formats/formats.h's FORMAT_KINDS (the server reaches each kind's list directly). Built
 * only into tests (CMake's capledger_test_oracle). */
#ifndef CAPLEDGER_TESTS_ORACLE_FORMAT_NAMES_H
#define CAPLEDGER_TESTS_ORACLE_FORMAT_NAMES_H

#include "core/formats/formats.h"

/* The ?format= values of an upload kind, or NULL for a kind without any. */
const char *const *format_names_of(const char *kind);

#endif
