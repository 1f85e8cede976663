//! How far an agent's wall clock is from the controller's: NTP's estimate
//! from one exchange, the exchange with the shortest round trip kept (its
//! error is at most half that round trip).

/// One exchange: the controller's clock when it asked (`t0`) and when the
/// answer came (`t3`), and the agent's clock when it answered, ns since
/// the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange {
    pub t0_ns: i64,
    pub agent_ns: i64,
    pub t3_ns: i64,
}

/// The estimate kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockEstimate {
    /// Agent clock minus controller clock, ns.
    pub offset_ns: i64,
    /// The round trip of the exchange it came from, ns.
    pub rtt_ns: u64,
}

impl Exchange {
    /// The agent answered halfway through the round trip (the symmetric
    /// path NTP assumes): offset = agent - (t0 + t3) / 2.
    pub fn estimate(&self) -> ClockEstimate {
        let mid = self.t0_ns + (self.t3_ns - self.t0_ns) / 2;
        ClockEstimate {
            offset_ns: self.agent_ns - mid,
            rtt_ns: (self.t3_ns - self.t0_ns).max(0) as u64,
        }
    }
}

/// The estimate of the exchange with the shortest round trip.
pub fn best(exchanges: &[Exchange]) -> Option<ClockEstimate> {
    exchanges
        .iter()
        .map(Exchange::estimate)
        .min_by_key(|e| e.rtt_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shortest_round_trip_wins_and_its_offset_is_exact_on_a_symmetric_path() {
        // The agent is 5 ms ahead. Exchange 1: 2 ms each way. Exchange 2:
        // 100 us each way. Exchange 3: asymmetric (the answer slow).
        let off = 5_000_000;
        let xs = [
            Exchange {
                t0_ns: 0,
                agent_ns: 2_000_000 + off,
                t3_ns: 4_000_000,
            },
            Exchange {
                t0_ns: 10_000_000,
                agent_ns: 10_100_000 + off,
                t3_ns: 10_200_000,
            },
            Exchange {
                t0_ns: 20_000_000,
                agent_ns: 20_100_000 + off,
                t3_ns: 29_000_000,
            },
        ];
        let b = best(&xs).expect("an estimate");
        assert_eq!(b.offset_ns, off);
        assert_eq!(b.rtt_ns, 200_000);
        // The asymmetric exchange alone is off by about half its path
        // difference, within half its round trip.
        let bad = xs[2].estimate();
        assert!((bad.offset_ns - off).unsigned_abs() <= bad.rtt_ns / 2);
        assert!(best(&[]).is_none());
    }
}
