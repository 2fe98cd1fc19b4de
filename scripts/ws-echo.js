// A WebSocket server on the pinned `ws` package, for tests/ws_echo.rs and tests/ws_script.rs:
//   node ws-echo.js PORT [--stall-after N] [--close-after N] [--mode echo|rpc|chat]
// Echoes every message on 127.0.0.1:PORT. With --close-after N, each connection's N-th message
// is not answered: the server closes that connection with 1001 (going away). With --stall-after N, the N-th message of each
// connection (1-based) starts a stall: that message and every one after it are held for
// 300 ms from the N-th's arrival, then echoed in order, as a server that stops answering for
// 300 ms would. Prints "listening PORT" once it listens.
//
// --mode rpc: JSON-RPC. Each request {"id":N,...} is answered {"jsonrpc":"2.0","id":N,
// "result":...} after 0-2 ms; before every 2nd answer comes a notification without an id
// ({"jsonrpc":"2.0","method":"tick"}), and before every 4th the previous request's answer is
// sent again (a reply out of order, to an id no longer in flight).
// --mode chat: a chat room. Each message {"seq":N,"text":...} is sent to every connection as
// {"from":...,"text":...} (pushes, the sender's own included), then acknowledged to its
// sender with {"ack":N}. A chat connection must send an X-Chat-Name header and ask for the
// "chat" subprotocol, or it is closed with 4000.
'use strict';
const { WebSocketServer } = require('ws');

const port = Number(process.argv[2]);
const option = (name) => {
    const at = process.argv.indexOf(name);
    return at > 0 ? process.argv[at + 1] : undefined;
};
const stallAfter = Number(option('--stall-after') || 0);
const closeAfter = Number(option('--close-after') || 0);
const mode = option('--mode') || 'echo';
const STALL_MS = 300;

const server = new WebSocketServer({ host: '127.0.0.1', port });
let nextClient = 0;

function rpc(socket, state, data) {
    let request;
    try {
        request = JSON.parse(data.toString());
    } catch (e) {
        socket.close(1003, 'not JSON');
        return;
    }
    state.count += 1;
    const count = state.count;
    const previous = state.previous;
    state.previous = request.id;
    setTimeout(() => {
        if (count % 2 === 0) {
            socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'tick', params: [count] }));
        }
        if (count % 4 === 0 && previous !== undefined) {
            socket.send(JSON.stringify({ jsonrpc: '2.0', id: previous, result: 'again' }));
        }
        socket.send(JSON.stringify({ jsonrpc: '2.0', id: request.id, result: count }));
    }, Math.floor(Math.random() * 3));
}

function chat(socket, state, data) {
    let message;
    try {
        message = JSON.parse(data.toString());
    } catch (e) {
        socket.close(1003, 'not JSON');
        return;
    }
    const push = JSON.stringify({ from: state.name, text: message.text });
    for (const other of server.clients) {
        if (other.readyState === 1) {
            other.send(push);
        }
    }
    socket.send(JSON.stringify({ ack: message.seq }));
}

server.on('connection', (socket, request) => {
    let count = 0;
    let stalledUntil = 0;
    nextClient += 1;
    const name = request.headers['x-chat-name'];
    const state = { count: 0, previous: undefined, name: name || `user${nextClient}` };
    if (mode === 'chat' && (!name || socket.protocol !== 'chat')) {
        // The chat room wants a name header and the "chat" subprotocol.
        socket.close(4000, 'no name or no chat subprotocol');
        return;
    }
    socket.on('message', (data, isBinary) => {
        if (mode === 'rpc') {
            rpc(socket, state, data);
            return;
        }
        if (mode === 'chat') {
            chat(socket, state, data);
            return;
        }
        count += 1;
        if (closeAfter > 0 && count === closeAfter) {
            socket.close(1001, 'going away');
            return;
        }
        if (stallAfter > 0 && count === stallAfter) {
            stalledUntil = Date.now() + STALL_MS;
        }
        const wait = stalledUntil - Date.now();
        if (wait > 0) {
            setTimeout(() => socket.send(data, { binary: isBinary }), wait);
        } else {
            socket.send(data, { binary: isBinary });
        }
    });
});
server.on('listening', () => console.log(`listening ${port}`));
