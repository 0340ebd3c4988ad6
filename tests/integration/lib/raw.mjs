// Raw HTTP/1.1 exchanges, for what node:http will not send (ambiguous framing, preflights).
import net from 'node:net';

// Writes raw bytes on one connection; resolves to everything the server sent until it closed
// the connection (closed: true) or went quiet for quietMs (closed: false).
export function rawExchange(url, bytes, { quietMs = 1_500, localAddress } = {}) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: hostname, port: Number(port), localAddress });
    const chunks = [];
    let timer;
    const done = (closed) => { clearTimeout(timer); sock.destroy(); resolve({ text: Buffer.concat(chunks).toString('latin1'), closed }); };
    const arm = () => { clearTimeout(timer); timer = setTimeout(() => done(false), quietMs); };
    sock.on('connect', () => { sock.write(bytes); arm(); });
    sock.on('data', (c) => { chunks.push(c); arm(); });
    sock.on('end', () => done(true));
    sock.on('error', (e) => (chunks.length ? done(true) : reject(e)));
  });
}
