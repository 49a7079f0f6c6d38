//! How a qdisc declares its parameters: each key with its doc line, its type and
//! its default, side by side, so every default is written once, where the key is.
//!
//! ```text
//! qdisc_params! {
//!     /// DropTail parameters.
//!     pub struct DropTailParams {
//!         /// Capacity in packets (Linux `txqueuelen`).
//!         limit: u32 = 1000,
//!     }
//! }
//! ```
//!
//! expands to the struct with `pub` fields, serde with `deny_unknown_fields` and
//! `default` (a scenario names only what it changes; a misspelt key is an error
//! that names it), and `Default` from the values written there. Validation stays
//! in the qdisc's file. RED-based qdiscs declare theirs with
//! [`red_params!`](crate::parts::red_params), which adds RED's shared keys.

/// Declares a qdisc's parameter struct; see the module docs.
macro_rules! qdisc_params {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty = $default:expr ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl Default for $name {
            fn default() -> Self {
                $name { $( $field: $default, )* }
            }
        }
    };
}
pub(crate) use qdisc_params;
