//! ALQD's register of the longest queue (Suter et al., INFOCOM 1998; Sun & Shin,
//! 003 IV), shared by ALQD and ALQD+.
//!
//! Instead of searching for the longest queue when a drop is needed, one register
//! names the queue that was longest as of the previous queue operation. Every
//! operation (arrival, departure, drop) compares the length of the queue it touched
//! with the registered queue's and takes over the register if strictly longer.
//! "Longest" is relative to the weighted fair share, i.e. `len / weight` (any
//! common factor, such as B / sum w, leaves the comparison unchanged).
//!
//! The register reads the registered queue's *current* length, so it can be wrong
//! only in one way: the registered queue shrank (it sent or lost packets) while a
//! longer queue has not been touched since. It then names a queue that is no
//! longer the longest until the longer one's next operation. Under arrivals alone
//! it always names a longest queue.

use super::classes::{ClassId, Classes};

#[derive(Debug, Clone, Default)]
pub struct LongestRegister {
    reg: Option<ClassId>,
}

impl LongestRegister {
    /// The registered class.
    pub fn get(&self) -> Option<ClassId> {
        self.reg
    }

    /// A queue operation touched class `c`: it takes the register if longer.
    #[inline]
    pub fn touched(&mut self, classes: &Classes, c: ClassId) {
        match self.reg {
            Some(r) if r == c => {}
            Some(r) if classes.normalized(c) <= classes.normalized(r) => {}
            _ if classes.len_of(c) > 0 => self.reg = Some(c),
            _ => {}
        }
    }

    /// Class `c` is going away.
    pub fn released(&mut self, c: ClassId) {
        if self.reg == Some(c) {
            self.reg = None;
        }
    }

    /// The queue a full buffer takes a packet from, for an arrival to `k`: the
    /// registered one, unless `k` counting the arrival (this operation's compare)
    /// is at least as long; ties go to `k`.
    #[inline]
    pub fn victim(&self, classes: &Classes, k: ClassId) -> ClassId {
        let own = (classes.len_of(k) + 1) as f64 / classes.weight(k);
        match self.reg {
            Some(r) if r != k && classes.normalized(r) > own => r,
            _ => k,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fq::classes::Classify;
    use crate::packet::{FlowId, Packet};
    use crate::qdisc::LinkInfo;
    use crate::units::Rate;

    #[test]
    fn the_register_lags_only_after_its_queue_shrinks() {
        let mut c =
            Classes::new(Classify::Flow, 100, &LinkInfo::new(Rate::from_mbps(1)), &[]).unwrap();
        let mut reg = LongestRegister::default();
        let push = |c: &mut Classes, reg: &mut LongestRegister, f: u32| {
            let p = Packet::new(FlowId(f), 100);
            let (id, _) = c.lookup_or_create(&p);
            c.push(id, p);
            reg.touched(c, id);
            id
        };
        for _ in 0..5 {
            push(&mut c, &mut reg, 1);
        }
        let mut b = 0;
        for _ in 0..4 {
            b = push(&mut c, &mut reg, 2);
        }
        let a = c.find(1).unwrap();
        assert_eq!(reg.get(), Some(a), "arrivals only: the longest");
        // A sends three packets: 2 against B's 4, but nothing has touched B.
        for _ in 0..3 {
            c.pop_front(a);
            reg.touched(&c, a);
        }
        assert_eq!(reg.get(), Some(a), "stale: LQD would name B");
        // The next operation on B puts it back in the register.
        push(&mut c, &mut reg, 2);
        assert_eq!(reg.get(), Some(b));
        // The victim for an arrival counts the arrival in its own queue: A would
        // need 5 to beat B's 5; ties go to the arrival's queue.
        assert_eq!(reg.victim(&c, a), b);
        push(&mut c, &mut reg, 1);
        push(&mut c, &mut reg, 1);
        assert_eq!(reg.victim(&c, a), a);
        reg.released(b);
        assert_eq!(reg.get(), None);
    }
}
