/* Must NOT compile: http sees store and core, never the binary's cmd (see check.cmake). */
#include "cmd/cmd.h"
int layer_probe_http_sees_cmd;
