/* Fuzz target for the request path: a request (request line, headers, body) goes through the
 * real router and handlers — framing checks, path and query checks, route matching, roles,
 * credentials, body reading and JSON parsing (nesting scan, numbers), the handler — as
 * Civetweb would hand it over, but without a socket: the few mg_* functions the HTTP layer
 * calls on a connection are defined over the input in civetweb_fake.c, and they take
 * precedence over libcivetweb's. The store points at a database that does not exist, so what needs
 * one answers 503. Checked: exactly one well-formed reply is written, never a 500 (an internal
 * error is a bug whatever the input), and a 4xx/5xx reply is problem+json.
 *
 * Input: "METHOD TARGET\n", then "Name: value\n" header lines, an empty line, then the body.
 * Every request writes an access-log line on stderr: fuzz with -close_fd_mask=2. */
#include <civetweb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "civetweb_fake.h"
#include "http/http.h"
#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_HEADERS MG_MAX_HEADERS

static struct http_server *server(void)
{
    static struct http_server *srv;
    if (srv)
        return srv;
    static unsigned char sk[64];
    static struct http_config cfg = {
        .listen = "127.0.0.1:0",
        .static_dir = "/nonexistent",
        .migrations_dir = "/nonexistent",
        .openapi_path = "/nonexistent/openapi.yaml",
        .log_origin = "fuzz/capledger",
        .server_sk = sk,
        .max_body_bytes = 1u << 20,
        .max_upload_bytes = 1u << 20,
        .threads = 8,
        .body_min_bytes_per_s = 0,
        .cors_origins = "https://ui.example",
        /* The log's proofs answer anyone: with no database to authenticate against, they are
         * the handlers that read typed query parameters (res_query) before the store. */
        .log_public = 1,
    };
    struct store *store = store_open("host=/nonexistent dbname=none connect_timeout=1", 1);
    if (!store)
        abort();
    srv = http_server_detached(&cfg, store);
    if (!srv)
        abort();
    return srv;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mg_connection conn;
    memset(&conn, 0, sizeof conn);
    conn.text = malloc(size + 1);
    if (!conn.text)
        return 0;
    memcpy(conn.text, data, size);
    conn.text[size] = '\0';
    conn.chunk = size ? 1 + data[0] % 97 * 700 : 1;
    char *line = conn.text, *end = conn.text + size;
    char *nl = memchr(line, '\n', (size_t)(end - line));
    if (!nl)
        goto out;
    *nl = '\0';
    char *space = strchr(line, ' ');
    if (!space || space == line)
        goto out;
    *space = '\0';
    conn.ri.request_method = line;
    char *target = space + 1;
    char *q = strchr(target, '?');
    if (q)
        *q++ = '\0';
    conn.ri.local_uri = target[0] == '/' ? target : "/";
    conn.ri.request_uri = conn.ri.local_uri;
    conn.ri.query_string = q;
    conn.ri.http_version = "1.1";
    conn.ri.content_length = -1;
    snprintf(conn.ri.remote_addr, sizeof conn.ri.remote_addr, "127.0.0.1");
    conn.ri.remote_port = 40000;
    line = nl + 1;
    while (line < end && conn.ri.num_headers < MAX_HEADERS) {
        nl = memchr(line, '\n', (size_t)(end - line));
        if (!nl)
            nl = end;
        *nl = '\0';
        if (!*line) {
            line = nl + 1;
            break;
        }
        char *colon = strchr(line, ':');
        if (colon) {
            *colon = '\0';
            char *value = colon + 1;
            while (*value == ' ')
                value++;
            conn.ri.http_headers[conn.ri.num_headers].name = line;
            conn.ri.http_headers[conn.ri.num_headers].value = value;
            if (strcasecmp(line, "Content-Length") == 0)
                conn.ri.content_length = strtoll(value, NULL, 10);
            conn.ri.num_headers++;
        }
        line = nl + 1;
    }
    conn.body = line < end ? line : end;
    conn.body_len = (size_t)(end - conn.body);
    int status = http_server_handle(server(), &conn);
    if (conn.writes != 1 || status == 500 || strncmp(conn.status_line, "HTTP/1.1 500", 12) == 0)
        abort();
    if (status >= 400 && !conn.problem_json)
        abort();
out:
    free(conn.text);
    return 0;
}
