//! The HTTP/3 wire: a QUIC connection on quinn with h3 over it, opened (and counted) by
//! `net::http3`, and one stream's exchange: the request's head and body, its response, what
//! ended it by kind. quinn keeps the server's stream limit itself (a stream past it waits in
//! `send_request`, its wait in the latency as any other). A request's send is its hand-off, or
//! the first datagram its connection sent at or after it when that went over 200 µs later
//! (`net::http3::sent`, as HTTP/2's first write after the hand-off to hyper).

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::net::IpAddr;
use std::rc::Rc;
use std::sync::Arc;

use bytes::Buf;
use h3::error::StreamError;

use super::{Conn, Kept, MessageBytes, Received, StreamEnd, Tally, Wire};
use crate::net::http2::request::H2Request;
use crate::net::http3::errors::{stream_failure, StreamFailure};
use crate::net::http3::sent::SendLog;
use crate::net::http3::{ConnectFailure, Opened, Packets, QuicClient, QuicHandshake, Sender};
use crate::stats::http::http3::Http3Counters;
use crate::timing::clock::{self, Nanos};
use crate::timing::deadline::Deadline;
use crate::web::gauges::{Down, Progress};
use crate::web::shared::Shared;

/// What every HTTP/3 connection of one worker shares: the QUIC client, and the connections
/// open now (their packets are read when they are retired, and at the run's end).
pub struct H3Worker {
    pub client: QuicClient,
    /// `-m`: each connection's streams at once.
    streams: usize,
    /// The connections open now, and their sockets' local ports.
    pub open: RefCell<Vec<(quinn::Connection, u16)>>,
}

impl H3Worker {
    pub fn new(client: QuicClient, streams: usize) -> Rc<H3Worker> {
        Rc::new(H3Worker {
            client,
            streams,
            open: RefCell::default(),
        })
    }

    /// Opens a connection from `source`, counting it (and its 0-RTT, if it sent early).
    pub async fn connect(
        &self,
        shared: &Rc<Shared>,
        source: Option<IpAddr>,
    ) -> Result<Opened, ConnectFailure> {
        let opened = self.client.connect(source, self.streams).await;
        let Ok(opened) = opened else {
            shared.count_connect_error();
            return opened;
        };
        shared.recorder.borrow_mut().counters.connections_opened += 1;
        let port = opened.endpoint.local_addr().map_or(0, |a| a.port());
        self.open
            .borrow_mut()
            .push((opened.connection.clone(), port));
        let mut opened = opened;
        if let (QuicHandshake::ZeroRtt, Some(accepted)) = (opened.handshake, opened.zero_rtt.take())
        {
            shared.http3.borrow_mut().zero_rtt_sent += 1;
            let counters = Rc::clone(&shared.http3);
            tokio::task::spawn_local(async move {
                if accepted.await {
                    counters.borrow_mut().zero_rtt_accepted += 1;
                }
            });
        }
        Ok(opened)
    }

    /// Adds the packets (and its socket's drops) of a connection that is done with, and
    /// forgets it: its socket closes with it.
    fn forget(&self, connection: &quinn::Connection, counters: &mut Http3Counters) {
        let mut open = self.open.borrow_mut();
        let Some(at) = open
            .iter()
            .position(|(c, _)| c.stable_id() == connection.stable_id())
        else {
            return;
        };
        let (connection, port) = open.swap_remove(at);
        add_packets(counters, Packets::of(&connection));
        counters.receive_buffer_drops += crate::sys::udp::drops(&[port].into_iter().collect());
    }

    /// At the run's end: the packets of the connections still open, and their sockets' drops,
    /// into this worker's counters.
    pub fn finish(&self, shared: &Shared) {
        let mut counters = shared.http3.borrow_mut();
        let open = self.open.borrow();
        for (connection, _) in open.iter() {
            add_packets(&mut counters, Packets::of(connection));
        }
        counters.receive_buffer_drops +=
            crate::sys::udp::drops(&open.iter().map(|(_, port)| *port).collect());
    }
}

fn add_packets(counters: &mut Http3Counters, packets: Packets) {
    counters.packets_sent += packets.sent;
    counters.packets_lost += packets.lost;
    counters.bytes_lost += packets.lost_bytes;
    counters.congestion_events += packets.congestion_events;
    counters.datagrams_received += packets.datagrams_received;
}

/// One connection of the run's HTTP/3 connections, opened again and again.
pub struct H3Wire {
    worker: Rc<H3Worker>,
    /// The connection opened before the start gate, taken by the first open.
    ready: Option<Opened>,
}

impl H3Wire {
    pub fn new(worker: Rc<H3Worker>, ready: Option<Opened>) -> H3Wire {
        H3Wire { worker, ready }
    }
}

/// An open HTTP/3 connection.
pub struct H3Conn {
    sender: Sender,
    connection: quinn::Connection,
    /// Its UDP socket, open as long as it is.
    _endpoint: quinn::Endpoint,
    closed: Rc<Cell<Option<&'static str>>>,
    /// The server sent GOAWAY: no new streams on it.
    going_away: Rc<Cell<bool>>,
    open: Rc<Cell<usize>>,
    counters: Rc<RefCell<Http3Counters>>,
    /// Its socket's sends.
    sends: Arc<SendLog>,
}

impl Wire for H3Wire {
    type Conn = H3Conn;

    /// 0, 4, 8…: a client's bidirectional streams.
    fn stream_id(k: u64) -> u64 {
        4 * k
    }

    async fn open(
        &mut self,
        shared: &Rc<Shared>,
        deadline: &Deadline,
        source: Option<IpAddr>,
        progress: &Progress,
    ) -> Option<H3Conn> {
        let opened = match self.ready.take() {
            Some(opened) => opened,
            None => match deadline
                .guard(clock::now(), self.worker.connect(shared, source))
                .await
            {
                Ok(Ok(opened)) => opened,
                Ok(Err(_)) => {
                    progress.down.set(Some(Down::ConnectFailed));
                    return None;
                }
                Err(_elapsed) => {
                    shared.count_connect_error();
                    progress.down.set(Some(Down::ConnectTimedOut));
                    return None;
                }
            },
        };
        progress.down.set(None);
        Some(H3Conn {
            sender: opened.sender,
            connection: opened.connection,
            _endpoint: opened.endpoint,
            closed: opened.closed,
            going_away: Rc::default(),
            open: Rc::default(),
            counters: Rc::clone(&shared.http3),
            sends: opened.sends,
        })
    }

    fn retire(&mut self, conn: H3Conn) {
        let mut counters = conn.counters.borrow_mut();
        if let Some(how) = conn.closed.get() {
            counters.count_closed(how);
        }
        self.worker.forget(&conn.connection, &mut counters);
    }
}

impl Conn for H3Conn {
    type Tally = H3Tally;

    fn usable(&self) -> bool {
        self.closed.get().is_none()
            && !self.going_away.get()
            && self.connection.close_reason().is_none()
    }

    fn granted(&self) -> Option<usize> {
        None
    }

    async fn changed(&self) {
        // No limit of the server's is kept here (quinn keeps it): nothing to wait for.
        std::future::pending::<()>().await;
    }

    fn open_streams(&self) -> &Rc<Cell<usize>> {
        &self.open
    }

    fn send(
        &mut self,
        request: &H2Request,
        collect: bool,
    ) -> (impl Future<Output = StreamEnd> + 'static, H3Tally) {
        let tally = H3Tally {
            bytes: MessageBytes::default(),
            sends: Arc::clone(&self.sends),
            send: self.sends.handed_off(),
        };
        let (head, body) = request.to_h3();
        let exchange = exchange(
            self.sender.clone(),
            (head, body, request.size()),
            collect,
            tally.bytes.clone(),
            Rc::clone(&self.going_away),
            Rc::clone(&self.counters),
        );
        (exchange, tally)
    }
}

/// One stream's bytes, counted as HTTP/2's are (the connection's are QUIC's, counted in its
/// packets), and the number of the first send at or after its hand-off.
#[derive(Debug, Clone)]
pub struct H3Tally {
    bytes: MessageBytes,
    sends: Arc<SendLog>,
    send: u64,
}

impl Tally for H3Tally {
    fn received(&self) -> Received {
        Received::NotKept
    }

    fn take_bytes(&self) -> (u64, u64) {
        self.bytes.take()
    }

    fn written(&self) -> Option<Nanos> {
        self.sends.sent_at(self.send)
    }
}

/// One request on its stream: its head and body sent, its response and body read.
async fn exchange(
    mut sender: Sender,
    (head, body, size): (http::Request<()>, bytes::Bytes, u64),
    collect: bool,
    bytes: MessageBytes,
    going_away: Rc<Cell<bool>>,
    counters: Rc<RefCell<Http3Counters>>,
) -> StreamEnd {
    let failed = |error: &StreamError| match stream_failure(error) {
        StreamFailure::Unprocessed(why) => {
            if why == "GOAWAY" && !going_away.replace(true) {
                counters.borrow_mut().goaway += 1;
            } else if why != "GOAWAY" {
                counters.borrow_mut().count_reset(&why);
            }
            StreamEnd::Unprocessed
        }
        StreamFailure::Reset(code) => {
            counters.borrow_mut().count_reset(&code);
            StreamEnd::Failed
        }
        StreamFailure::Connection(_) | StreamFailure::Other => StreamEnd::Failed,
    };
    let mut stream = match sender.send_request(head).await {
        Ok(stream) => stream,
        // Nothing written (a GOAWAY came first, say): no bytes to count.
        Err(e) => return failed(&e),
    };
    bytes.sent(size);
    if !body.is_empty() {
        if let Err(e) = stream.send_data(body).await {
            return failed(&e);
        }
    }
    if let Err(e) = stream.finish().await {
        return failed(&e);
    }
    let response = match stream.recv_response().await {
        Ok(response) => response,
        Err(e) => return failed(&e),
    };
    let status = response.status().as_u16();
    bytes.head(response.headers());
    let headers = collect.then(|| {
        response
            .headers()
            .iter()
            .map(|(name, value)| (name.as_str().to_string(), value.as_bytes().to_vec()))
            .collect::<Vec<_>>()
    });
    let mut kept = collect.then(Vec::new);
    loop {
        match stream.recv_data().await {
            Ok(Some(mut chunk)) => {
                bytes.add_read(chunk.remaining());
                match kept.as_mut() {
                    Some(kept) => {
                        while chunk.has_remaining() {
                            let part = chunk.chunk();
                            kept.extend_from_slice(part);
                            let n = part.len();
                            chunk.advance(n);
                        }
                    }
                    None => chunk.advance(chunk.remaining()),
                }
            }
            Ok(None) => break,
            Err(e) => return failed(&e),
        }
    }
    let kept: Option<Kept> = headers.zip(kept);
    StreamEnd::Response(status, kept)
}
