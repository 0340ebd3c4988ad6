/* Stack size of every thread the process creates, Civetweb's workers included. */
#ifndef CAPLEDGER_CMD_THREADSTACK_H
#define CAPLEDGER_CMD_THREADSTACK_H

#include <stddef.h>

/* Threads created from now on get at least bytes of stack. Call before any thread starts. */
void threadstack_set_min(size_t bytes);

#endif
