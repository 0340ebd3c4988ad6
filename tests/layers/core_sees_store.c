/* Must NOT compile: core is the ground layer and sees no store (see check.cmake). */
#include "store/store.h"
int layer_probe_core_sees_store;
