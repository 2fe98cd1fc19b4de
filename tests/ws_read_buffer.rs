//! A long message's memory goes back once the next messages are read: tungstenite's read buffer
//! grows to the longest frame and has no way to shrink, so without `ws::transport`'s care every
//! socket that once read a game record (about 16 KB) would keep that much for good. Measured
//! with a counting allocator, in a test binary of its own so that it counts nothing else.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::net::SocketAddr;

use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message as Sent;
use tsumo::net::stream::Endpoint;
use tsumo::ws::transport::{connect, Message};

/// The system allocator, counting the bytes live that each thread allocated.
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn count(bytes: isize) {
    let _ = LIVE.try_with(|live| live.set(live.get() + bytes));
}

fn live() -> isize {
    LIVE.with(Cell::get)
}

// SAFETY: every call goes to System with the caller's arguments; counting allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const LONG: usize = 20_000;

/// The messages a player reads, in order, each with whether the server waits for the client's
/// answer before the next (so that it is read alone): short ones, a long one read alone and
/// then only tiny ones (a game record, then socket.io pings), then long ones with another
/// right behind.
fn script() -> Vec<(String, bool)> {
    let short = |i: usize| (format!("{i:0>100}"), true);
    let mut messages: Vec<(String, bool)> = (0..20).map(short).collect();
    messages.push(("L".repeat(LONG), true));
    messages.extend((0..5).map(|_| ("2".to_string(), true)));
    for i in 0..3 {
        messages.push((format!("{i}").repeat(LONG), false));
        messages.push(short(i));
    }
    messages
}

/// The index of the last tiny message after the long one read alone.
const AFTER_LONG: usize = 25;

/// Serves `script()` on its own thread (its allocations are not this thread's).
fn serve() -> SocketAddr {
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = std_listener.local_addr().unwrap();
    std_listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = TcpListener::from_std(std_listener).unwrap();
            let (stream, _) = listener.accept().await.unwrap();
            let mut ws = tokio_tungstenite::accept_async(stream).await.unwrap();
            for (message, wait) in script() {
                ws.send(Sent::text(message)).await.unwrap();
                if wait {
                    assert_eq!(ws.next().await.unwrap().unwrap(), Sent::text("ok"));
                }
            }
            assert_eq!(ws.next().await.unwrap().unwrap(), Sent::text("done"));
        });
    });
    addr
}

#[tokio::test]
async fn a_long_message_is_not_kept_once_read() {
    let addr = serve();
    let endpoint = Endpoint {
        addr,
        tls: None,
        source: None,
    };
    let url = format!("ws://{addr}/socket.io/?EIO=4&transport=websocket");
    let mut ws = connect(&endpoint, &url, "").await.unwrap();
    let messages = script();
    let mut before_long = 0;
    let mut kept = 0;
    for (i, (expected, wait)) in messages.iter().enumerate() {
        match ws.next().await.unwrap() {
            Message::Text(text) => assert_eq!(text, expected, "message {i}"),
            other => panic!("{other:?}"),
        }
        if *wait {
            ws.send_text("ok").await.unwrap();
        }
        if i == 19 {
            before_long = live();
        }
        if i == AFTER_LONG {
            kept = live() - before_long;
        }
    }
    ws.send_text("done").await.unwrap();
    assert!(
        kept < (LONG / 2) as isize,
        "{kept} bytes more live after the long message than before it"
    );
}
