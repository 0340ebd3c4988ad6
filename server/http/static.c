/* Static UI files from static_dir. Only regular files under the directory, never a listing;
 * "/" is index.html. Paths with "..", backslashes or NUL are refused outright. A few fixed URLs
 * map to files of Debian packages (VENDOR): the UI uses the distribution's own, maintained
 * copy of a library instead of a vendored one. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http/internal.h"

#define STATIC_MAX_BYTES (8u << 20)

static const struct {
    const char *ext, *type;
} TYPES[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".ico", "image/x-icon"},
    {".json", "application/json"},
    {".yaml", "application/yaml"},
    {".txt", "text/plain; charset=utf-8"},
};

/* URL → file of a Debian package; exact matches only. */
static const struct {
    const char *url, *file;
} VENDOR[] = {
    /* libjs-chart.js (scripts/lib.sh installs it): Chart.js, its UMD build */
    {"/vendor/chart.js/chart.min.js", "/usr/share/javascript/chart.js/chart.min.js"},
};

static const char *content_type(const char *path)
{
    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot && i < sizeof TYPES / sizeof TYPES[0]; i++)
        if (strcmp(dot, TYPES[i].ext) == 0)
            return TYPES[i].type;
    return "application/octet-stream";
}

int static_serve(struct req *r)
{
    const char *dir = r->app->cfg->static_dir;
    const char *rel = r->path;
    if (!dir || !*dir || strstr(rel, "..") || strchr(rel, '\\'))
        return 0;
    if (strcmp(rel, "/") == 0)
        rel = "/index.html";
    char full[4096];
    const char *vendor = NULL;
    for (size_t i = 0; i < sizeof VENDOR / sizeof VENDOR[0]; i++)
        if (strcmp(rel, VENDOR[i].url) == 0)
            vendor = VENDOR[i].file;
    if ((size_t)snprintf(full, sizeof full, "%s%s", vendor ? "" : dir, vendor ? vendor : rel) >=
        sizeof full)
        return 0;
    int fd = open(full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > STATIC_MAX_BYTES) {
        close(fd);
        return 0;
    }
    char *body = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (body && got < (size_t)st.st_size) {
        ssize_t n = read(fd, body + got, (size_t)st.st_size - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (!body || got != (size_t)st.st_size) {
        free(body);
        return 0;
    }
    char etag[64];
    snprintf(etag, sizeof etag, "\"%llx-%llx\"", (unsigned long long)st.st_mtime,
             (unsigned long long)st.st_size);
    const char *inm = req_header(r, "If-None-Match");
    char extra[160];
    snprintf(extra, sizeof extra, "ETag: %s\r\nCache-Control: no-cache\r\n", etag);
    if (inm && strcmp(inm, etag) == 0)
        resp_bytes(r, 304, NULL, "", 0, extra);
    else
        resp_bytes(r, 200, content_type(full), body, got, extra);
    free(body);
    return 1;
}
