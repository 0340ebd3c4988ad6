# Debian's haproxy package (2.6 in bookworm), the same HAProxy tests/scale runs.
FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends haproxy \
 && rm -rf /var/lib/apt/lists/*
COPY deploy/scale/haproxy.cfg deploy/scale/503.http /etc/capledger/
ENV CAPLEDGER_HAPROXY_ERRORS=/etc/capledger
USER haproxy
CMD ["haproxy", "-db", "-f", "/etc/capledger/haproxy.cfg"]
