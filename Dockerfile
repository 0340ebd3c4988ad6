# capledger in a container: the same Debian packages and CMake build that scripts/run uses,
# then `capledger serve` on 0.0.0.0:8080. PostgreSQL is not in this image: docker-compose.yml
# runs it beside capledger and points CAPLEDGER_DATABASE_URL at it.
FROM debian:bookworm

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config libcivetweb-dev libpq-dev libjansson-dev \
      libsodium-dev libcmocka-dev libcurl4-openssl-dev zlib1g-dev ca-certificates curl \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY . /app
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
 && cmake --build build -j "$(nproc)" --target capledger \
 && useradd --system --home-dir /var/lib/capledger --create-home capledger

# The server migrates the database at start (db/migrations, relative to /app) and keeps its
# signing key in the capledger-keys volume.
ENV CAPLEDGER_LISTEN=0.0.0.0:8080 \
    CAPLEDGER_STATIC_DIR=/app/static \
    CAPLEDGER_KEY_FILE=/var/lib/capledger/server.key
USER capledger
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s \
  CMD curl -fsS http://127.0.0.1:8080/healthz >/dev/null || exit 1
STOPSIGNAL SIGTERM
CMD ["/app/build/capledger", "serve"]
