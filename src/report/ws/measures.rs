//! What objectives measure on a WebSocket run ([`Measured`] for [`SavedWsRun`]): the corrected
//! round trip's percentiles, the messages without a reply, the rate answered and the
//! connections the server ended. Measured on the saved layout, so that a file read back is
//! judged exactly as the run was.

use super::saved::SavedWsRun;
use crate::slo::{Measure, Measured};

impl Measured for SavedWsRun {
    fn measure(&self, measure: &Measure) -> Option<f64> {
        let m = &self.messages;
        match measure {
            Measure::Latency(p) => Some(self.round_trip.at(*p, &self.label, "round_trip")? as f64),
            Measure::ErrorShare => {
                // Every message due ends answered, without a reply, or never sent.
                let unsent = m.due.map_or(0, |due| due.saturating_sub(m.sent));
                let failed = m.timed_out + m.unanswered + unsent;
                let due = m.due.unwrap_or(0).max(m.sent);
                (due > 0).then(|| failed as f64 * 100.0 / due as f64)
            }
            Measure::RateShare => {
                let due = m.due.filter(|due| *due > 0)?;
                Some((m.answered as f64 * 100.0 / due as f64).min(100.0))
            }
            Measure::Disconnects => Some(self.connections.closes.values().sum::<u64>() as f64),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::slo::{judge, parse_ws, Measure, Measured, Percentile};

    use super::super::saved::tests::run;

    #[test]
    fn messages_without_a_reply_and_closes_are_measured() {
        let mut s = run();
        s.messages.due = Some(1_000);
        s.messages.sent = 990;
        s.messages.answered = 980;
        s.messages.timed_out = 6;
        s.messages.unanswered = 4;
        s.connections.closes.insert("close 1001".into(), 2);
        assert_eq!(s.measure(&Measure::ErrorShare), Some(2.0));
        assert_eq!(s.measure(&Measure::RateShare), Some(98.0));
        assert_eq!(s.measure(&Measure::Disconnects), Some(2.0));
        assert_eq!(s.measure(&Measure::Latency(Percentile::P99)), None);
        let objectives = ["errors<1%", "disconnects<3"].map(|e| parse_ws(e).unwrap());
        let held: Vec<bool> = judge(&objectives, &s).iter().map(|v| v.held).collect();
        assert_eq!(held, [false, true]);
    }
}
