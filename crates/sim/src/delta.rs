//! Counters that only grow, and what happened between two readings of them: the
//! measured interval is the run's counters minus a snapshot taken when the warm-up
//! ends. `counters!` declares a struct of counters and its field-by-field
//! difference in one place, so adding a counter is one line.
//!
//! It sits below the two that keep such counters, a flow (`flow.rs`, the engine's
//! data) and a monitored link (`observe`), so the engine's data need not name
//! `observe` for it. The macro is reached by its path, `crate::delta::counters!`,
//! which `tests/arrows.rs` reads as naming this module; a `#[macro_export]` macro
//! is named from the crate's root, which hid that `flow.rs` used `observe`.

/// The change of a counter since an earlier reading of it.
pub trait Delta {
    fn delta(&self, earlier: &Self) -> Self;
}

macro_rules! scalar_delta {
    ($($t:ty),*) => {$(
        impl Delta for $t {
            #[inline]
            fn delta(&self, earlier: &Self) -> Self {
                self - earlier
            }
        }
    )*};
}
scalar_delta!(u32, u64, u128, f64);

impl<T: Delta, const N: usize> Delta for [T; N] {
    fn delta(&self, earlier: &Self) -> Self {
        std::array::from_fn(|i| self[i].delta(&earlier[i]))
    }
}

impl<T: Delta> Delta for Vec<T> {
    fn delta(&self, earlier: &Self) -> Self {
        self.iter().zip(earlier).map(|(a, b)| a.delta(b)).collect()
    }
}

impl Delta for aqm::QueueCounts {
    fn delta(&self, earlier: &Self) -> Self {
        self.since(earlier)
    }
}

/// Declares a struct of counters and implements [`Delta`] for it (`since`), and
/// serde's traits (a warm-up snapshot is kept packed: `observe::packed`).
macro_rules! counters {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[$fmeta:meta])* pub $field:ident : $ty:ty,)* }) => {
        $(#[$meta])*
        #[derive(serde::Serialize, serde::Deserialize)]
        pub struct $name { $($(#[$fmeta])* pub $field: $ty,)* }

        impl $crate::delta::Delta for $name {
            fn delta(&self, earlier: &Self) -> Self {
                $name { $($field: $crate::delta::Delta::delta(&self.$field, &earlier.$field),)* }
            }
        }

        impl $name {
            /// What happened since `earlier`, a reading of the same counters.
            pub fn since(&self, earlier: &Self) -> Self {
                $crate::delta::Delta::delta(self, earlier)
            }
        }
    };
}
pub(crate) use counters;
