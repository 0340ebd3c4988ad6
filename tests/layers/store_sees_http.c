/* Must NOT compile: the store sees core, never http (see check.cmake). */
#include "http/http.h"
int layer_probe_store_sees_http;
