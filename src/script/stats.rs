//! The statistics objects `done(summary, latency, requests)` receives (`wrk.stats` userdata).
//!
//! wrk2 backs them with its HdrHistograms, so every number here comes from
//! [`crate::stats::hdr`]: a script reading `latency:percentile(99)` gets the same value the text
//! report prints. `s(i)` (wrk's i-th distinct value) fails in wrk2; tsumo answers it from the
//! histogram's buckets so scripts written for wrk work too.

use hdrhistogram::Histogram;
use mlua::{MetaMethod, UserData, UserDataFields, UserDataMethods, Value};

use crate::stats::hdr;

/// A histogram seen from Lua. Latency in µs, requests in requests per second.
pub(crate) struct Stats {
    hist: Histogram<u64>,
}

impl Stats {
    pub fn new(hist: Histogram<u64>) -> Stats {
        Stats { hist }
    }

    /// wrk2's `s[i]`: an "emulated raw sample", the value at percentile `100 × i / count`.
    fn at_index(&self, index: f64) -> f64 {
        let index = index.trunc();
        let percentile = 100.0 * index / self.hist.len() as f64;
        hdr::value_at_percentile(&self.hist, percentile) as f64
    }

    /// wrk's `s(i)`: the `i`-th (1-based) distinct recorded value and its count; 0, 0 past the end.
    fn distinct(&self, index: f64) -> (f64, f64) {
        if index.is_nan() || index < 1.0 {
            return (0.0, 0.0);
        }
        let skip = (index.trunc() - 1.0) as usize;
        hdr::buckets(&self.hist)
            .filter(|b| b.count != 0)
            .nth(skip)
            .map_or((0.0, 0.0), |b| (b.value_from_index as f64, b.count as f64))
    }
}

impl UserData for Stats {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("min", |_, this| Ok(hdr::min(&this.hist) as f64));
        fields.add_field_method_get("max", |_, this| Ok(hdr::max(&this.hist) as f64));
        fields.add_field_method_get("mean", |_, this| Ok(hdr::mean(&this.hist)));
        fields.add_field_method_get("stdev", |_, this| Ok(hdr::stdev(&this.hist)));
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("percentile", |_, this, percentile: f64| {
            Ok(hdr::value_at_percentile(&this.hist, percentile) as f64)
        });
        methods.add_meta_method(MetaMethod::Index, |_, this, key: Value| {
            let index = match key {
                Value::Integer(i) => Some(i as f64),
                Value::Number(n) => Some(n),
                // Lua 5.1's lua_isnumber accepts numeric strings too.
                Value::String(s) => s.to_str().ok().and_then(|s| s.trim().parse::<f64>().ok()),
                _ => None,
            };
            Ok(index.map_or(Value::Nil, |i| Value::Number(this.at_index(i))))
        });
        methods.add_meta_method(MetaMethod::Len, |_, this, ()| Ok(this.hist.len() as f64));
        methods.add_meta_method(MetaMethod::Call, |_, this, index: f64| {
            Ok(this.distinct(index))
        });
    }
}
