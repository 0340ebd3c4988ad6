/* Must compile: the control beside the refusals — http sees every layer below it. */
#include "core/problems.h"
#include "http/http.h"
#include "store/store.h"
int layer_probe_http_sees_below;
