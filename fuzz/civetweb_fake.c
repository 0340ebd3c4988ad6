/* Civetweb's connection functions over a request in memory; see civetweb_fake.h. */
#include "civetweb_fake.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

const struct mg_request_info *mg_get_request_info(const struct mg_connection *conn)
{
    return &conn->ri;
}

const char *mg_get_header(const struct mg_connection *conn, const char *name)
{
    for (int i = 0; i < conn->ri.num_headers; i++)
        if (strcasecmp(conn->ri.http_headers[i].name, name) == 0)
            return conn->ri.http_headers[i].value;
    return NULL;
}

int mg_read(struct mg_connection *conn, void *buf, size_t len)
{
    size_t left = conn->body_len - conn->body_pos;
    size_t n = left < len ? left : len;
    if (n > (size_t)conn->chunk)
        n = (size_t)conn->chunk;
    memcpy(buf, conn->body + conn->body_pos, n);
    conn->body_pos += n;
    return (int)n;
}

int mg_write(struct mg_connection *conn, const void *buf, size_t len)
{
    conn->writes++;
    const char *s = buf;
    if (len < 12 || memcmp(s, "HTTP/1.1 ", 9) != 0)
        abort(); /* every reply is written whole, status line first */
    memcpy(conn->status_line, s, 12);
    conn->status_line[12] = '\0';
    conn->problem_json = memmem(s, len, "application/problem+json", 24) != NULL;
    return (int)len;
}

void mg_disable_connection_keep_alive(struct mg_connection *conn)
{
    (void)conn;
}
