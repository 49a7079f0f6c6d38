//! A windowed running maximum in constant space (Kathleen Nichols' algorithm, as
//! Linux's `lib/minmax.c` keeps it): the best, second-best and third-best samples
//! of the window, each younger than the one before, so the maximum over the last
//! `win` time units is always the first. BBR uses it over rounds for its
//! bandwidth estimate.

#[derive(Copy, Clone, Debug, Default, PartialEq)]
struct Entry {
    t: u32,
    v: f64,
}

/// The running maximum of `v` over a window of `t`.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct MaxFilter {
    s: [Entry; 3],
}

impl MaxFilter {
    /// The maximum over the window.
    pub fn get(&self) -> f64 {
        self.s[0].v
    }

    /// Forgets every sample: the maximum becomes `v` at `t`.
    pub fn reset(&mut self, t: u32, v: f64) -> f64 {
        self.s = [Entry { t, v }; 3];
        v
    }

    /// Adds the sample `v` at time `t` to a window of `win`; returns the maximum.
    pub fn update(&mut self, win: u32, t: u32, v: f64) -> f64 {
        let e = Entry { t, v };
        if v >= self.s[0].v || t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, v); // a new maximum, or nothing left in the window
        }
        if v >= self.s[1].v {
            self.s[1] = e;
            self.s[2] = e;
        } else if v >= self.s[2].v {
            self.s[2] = e;
        }
        self.age(win, e)
    }

    /// Retires samples older than the window, and keeps the second and third
    /// choices spread over it.
    fn age(&mut self, win: u32, e: Entry) -> f64 {
        let dt = e.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // The best left the window: the second and third move up.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = e;
            if e.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = e;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window passed with no second choice: take this one.
            self.s[1] = e;
            self.s[2] = e;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = e;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A maximum holds for the window and no longer: after 10 rounds of lower
    /// samples it gives way to the best of them.
    #[test]
    fn a_maximum_lasts_its_window() {
        let mut f = MaxFilter::default();
        f.update(10, 0, 100.0);
        for t in 1..=10 {
            assert_eq!(f.update(10, t, 50.0 + t as f64), 100.0, "round {t}");
        }
        let after = f.update(10, 11, 50.0);
        assert!((55.0..100.0).contains(&after), "{after}");
    }

    /// A higher sample replaces the maximum at once.
    #[test]
    fn a_higher_sample_wins_at_once() {
        let mut f = MaxFilter::default();
        f.update(10, 0, 10.0);
        assert_eq!(f.update(10, 1, 20.0), 20.0);
        assert_eq!(f.update(10, 2, 15.0), 20.0);
    }
}
