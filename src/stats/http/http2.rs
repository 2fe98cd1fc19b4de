//! What an HTTP/2 run counts beyond HTTP/1.1's counters: the frames by which a server ends
//! streams and connections (RST_STREAM and GOAWAY, by error code) and the concurrency it
//! granted (SETTINGS_MAX_CONCURRENT_STREAMS): in each connection's first SETTINGS, and as later
//! SETTINGS lowered it, as the frame observer in `net` saw them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// HTTP/2 counters of one worker, or of a whole run once merged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Http2Counters {
    /// GOAWAY frames received, by error code name (`NO_ERROR`, `PROTOCOL_ERROR`, …).
    pub goaway: BTreeMap<String, u64>,
    /// RST_STREAM frames received, by error code name.
    pub rst_stream: BTreeMap<String, u64>,
    /// Connections whose server SETTINGS were seen.
    pub settings_seen: u64,
    /// The smallest and largest SETTINGS_MAX_CONCURRENT_STREAMS a server granted; `None`
    /// while every server left it unlimited (or none was seen).
    pub granted_min: Option<u32>,
    pub granted_max: Option<u32>,
    /// Connections whose server left the number of streams unlimited.
    pub unlimited: u64,
    /// Connections whose server lowered its limit after its first SETTINGS.
    pub lowered: u64,
    /// The lowest limit such a later SETTINGS set (`None`: no server lowered it).
    pub lowered_min: Option<u32>,
}

impl Http2Counters {
    pub fn count_goaway(&mut self, code: u32) {
        *self.goaway.entry(error_name(code)).or_default() += 1;
    }

    pub fn count_rst_stream(&mut self, code: u32) {
        *self.rst_stream.entry(error_name(code)).or_default() += 1;
    }

    /// A connection's server SETTINGS (the first of the connection): its stream limit, if it
    /// set one.
    pub fn count_settings(&mut self, max_concurrent_streams: Option<u32>) {
        self.settings_seen += 1;
        match max_concurrent_streams {
            Some(n) => {
                self.granted_min = Some(self.granted_min.map_or(n, |m| m.min(n)));
                self.granted_max = Some(self.granted_max.map_or(n, |m| m.max(n)));
            }
            None => self.unlimited += 1,
        }
    }

    /// A later SETTINGS of a connection lowered its limit to `limit`; `first_time` on that
    /// connection.
    pub fn count_lowered(&mut self, limit: u32, first_time: bool) {
        if first_time {
            self.lowered += 1;
        }
        self.lowered_min = min_opt(self.lowered_min, Some(limit));
    }

    /// The lowest limit any server granted, first or later (`None`: unlimited everywhere).
    pub fn lowest_granted(&self) -> Option<u32> {
        min_opt(self.granted_min, self.lowered_min)
    }

    pub fn add(&mut self, other: &Http2Counters) {
        for (code, n) in &other.goaway {
            *self.goaway.entry(code.clone()).or_default() += n;
        }
        for (code, n) in &other.rst_stream {
            *self.rst_stream.entry(code.clone()).or_default() += n;
        }
        self.settings_seen += other.settings_seen;
        self.unlimited += other.unlimited;
        self.granted_min = min_opt(self.granted_min, other.granted_min);
        self.granted_max = self.granted_max.max(other.granted_max);
        self.lowered += other.lowered;
        self.lowered_min = min_opt(self.lowered_min, other.lowered_min);
    }

    pub fn goaways(&self) -> u64 {
        self.goaway.values().sum()
    }

    pub fn resets(&self) -> u64 {
        self.rst_stream.values().sum()
    }
}

fn min_opt(a: Option<u32>, b: Option<u32>) -> Option<u32> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The name of an HTTP/2 error code (RFC 9113, section 7), or its number when unknown.
pub fn error_name(code: u32) -> String {
    const NAMES: [&str; 14] = [
        "NO_ERROR",
        "PROTOCOL_ERROR",
        "INTERNAL_ERROR",
        "FLOW_CONTROL_ERROR",
        "SETTINGS_TIMEOUT",
        "STREAM_CLOSED",
        "FRAME_SIZE_ERROR",
        "REFUSED_STREAM",
        "CANCEL",
        "COMPRESSION_ERROR",
        "CONNECT_ERROR",
        "ENHANCE_YOUR_CALM",
        "INADEQUATE_SECURITY",
        "HTTP_1_1_REQUIRED",
    ];
    match NAMES.get(code as usize) {
        Some(name) => (*name).to_string(),
        None => format!("0x{code:x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_code_and_merges_grants() {
        let mut a = Http2Counters::default();
        a.count_goaway(0);
        a.count_rst_stream(7);
        a.count_rst_stream(0x99);
        a.count_settings(Some(128));
        let mut b = Http2Counters::default();
        b.count_goaway(0);
        b.count_settings(Some(1));
        b.count_settings(None);
        b.count_lowered(3, true);
        b.count_lowered(0, false);
        a.add(&b);
        assert_eq!(a.goaway["NO_ERROR"], 2);
        assert_eq!(a.rst_stream["REFUSED_STREAM"], 1);
        assert_eq!(a.rst_stream["0x99"], 1);
        assert_eq!((a.granted_min, a.granted_max), (Some(1), Some(128)));
        assert_eq!((a.settings_seen, a.unlimited), (3, 1));
        assert_eq!(
            (a.lowered, a.lowered_min, a.lowest_granted()),
            (1, Some(0), Some(0))
        );
    }
}
